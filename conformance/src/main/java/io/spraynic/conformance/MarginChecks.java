package io.spraynic.conformance;

import io.spraynic.conformance.HeldReads.Flight;
import io.spraynic.conformance.HeldReads.Held;
import io.spraynic.conformance.HeldReads.Report;

import java.io.IOException;
import java.util.List;

/**
 * The late margin of S6.8.1 as the wire shows it, on holds of {@link HeldReads}: widened at a spurious timeout
 * (S6.8-2, {@link #runMarginWidened}: the all-silent timeout grows by the widening S6.8.1's table owes), and left out
 * of the RTO of a path silent alone (S6.8-3, {@link #runSilentAlone}: on a connection of two paths, once reports of
 * spurious timeouts have raised the all-silent timeout by a margin, a path silenced alone while the other acknowledges
 * first transmissions times out within the first timeout plus half of that margin).
 */
final class MarginChecks extends Checks
{
    /** The silent-alone check's most holds reported spurious, each widening the target's late margin (S6.8-2). */
    private static final int LEARNING_HOLDS = 8;
    /**
     * The all-silent timeout past which the silent-alone check teaches no more: a target's margin may start high (a
     * new connection starts from what its engine learnt, S6.8.1, after the checks above: 350 ms on a loaded host).
     */
    private static final long LEARNING_CEILING_NANOS = 1_500 * ScriptedPeer.MILLI;
    /** The all-silent timeout a learnt margin is taken to have raised at least: twice the first, and by this much. */
    static final long MARGIN_LEARNT_NANOS = 40 * ScriptedPeer.MILLI;
    /** The silent-alone check's READs, asked at once: the live path carries first transmissions for a while. */
    private static final int ALONE_READS = 16;
    private static final int ALONE_READ_BYTES = 64 * 1024;
    /**
     * Quick READs before each timed hold of the silent-alone check: from a hold's samples (S6.8.1, gains 1/8 and 1/4)
     * srtt falls to 1/200 of them and rttvar to 1e-5.
     */
    private static final int SETTLE_READS = 40;
    /** The path the silent-alone check drops, each way (a dead link that takes only its route). */
    private static final int SILENCED_PATH = 0;

    private final long base;
    private final int rkey;
    private final HeldReads holds;

    MarginChecks(final Target target, final UdpLink link, final List<CheckResult> results, final long regionOffset)
    {
        super(target, link, results);
        this.base = target.regionAddress() + regionOffset;
        this.rkey = target.rkey();
        this.holds = new HeldReads(target, regionOffset);
    }

    /**
     * S6.8-3 on a connection of two paths. First the target learns a late margin (S6.8-2): single-packet READs held
     * with every path silent until the target's timeout sends the packet again, the release reporting the duplicate
     * (S6.8-1 c: the timeout was spurious, which widens the margin), until its all-silent timeout has at least doubled
     * and grown by {@link #MARGIN_LEARNT_NANOS} (or {@link #LEARNING_HOLDS} holds; not tested when it did not: a target
     * with {@code lateMarginMax} 0 learns none). Then the suite drops every packet of path {@link #SILENCED_PATH} (so
     * it acknowledges none of them) and acknowledges the other path at once, while {@link #ALONE_READS} READs keep it
     * carrying first transmissions: once one of those sent after the silenced path's oldest packet was due has been
     * acknowledged, that path's RTO leaves the margin out, and its oldest packet goes again (S7.4.1: elsewhere) within
     * about the RTO without it. Judged: that copy arrives, after the original, within the first all-silent timeout
     * plus half of what the margin added to it; with the margin in, it would come no sooner than the whole. Not tested
     * when no first transmission of the live path arrived between the first all-silent timeout after the original and
     * a quarter of the margin later (the READs ended too soon for the rule to apply within the bound).
     */
    void runSilentAlone(final ConnectRequest request) throws IOException
    {
        final Connection connection = openHeld(request, 2, holds);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        try
        {
            must("timers.margin-silent-alone", "S6.8-3", "once the target's all-silent timeout grew by a late margin, " +
                "a path the suite silences alone while the other acknowledges first transmissions times its oldest " +
                "packet out within the first timeout plus half that margin", () ->
            {
                DataChecks.requireConnection(why);
                if (c.paths < 2)
                {
                    throw new NotTested("the connection has one path");
                }
                // each hold is timed after SETTLE_READS quick READs: the probes a hold answers late are RTT samples
                // as long as it (S6.7), which would otherwise raise the RTO without the margin, and the backoff is
                // reset (S6.8.1), so what a timeout gains over the first is the margin
                holds.warm(c, SETTLE_READS);
                final long first = holds.hold(c, HeldReads.HELD_READ_BYTES, 1, Report.NONE).first();
                long all = first;
                int reported = 0;
                while (reported < LEARNING_HOLDS && !learnt(first, all) && all < LEARNING_CEILING_NANOS)
                {
                    // quick READs on every path first: a path whose last timeout is undecided would count its copy
                    // among those that could make the duplicate (S6.8-1 c), and the report would show nothing
                    holds.warm(c, SETTLE_READS);
                    reported++;
                    holds.hold(c, HeldReads.HELD_READ_BYTES, 1, Report.ALWAYS);
                    holds.warm(c, SETTLE_READS);
                    all = holds.hold(c, HeldReads.HELD_READ_BYTES, 1, Report.NONE).first();
                }
                if (!learnt(first, all))
                {
                    throw new NotTested("the all-silent timeout went from " + ms(first) + " to " + ms(all) + " over " +
                        reported + " reports of a spurious timeout: no late margin learnt (lateMarginMax 0?)");
                }
                holds.warm(c, SETTLE_READS);
                final Alone alone = silenceOnePath(c, first, 2 * all + ANSWER_NANOS);
                final long bound = first + (all - first) / 2;
                measured("all-silent timeout " + ms(first) + ", " + ms(all) + " after " + reported + " report(s) of a " +
                    "spurious timeout; path " + SILENCED_PATH + " silenced alone: " + alone);
                if (alone.oldestAt() == 0)
                {
                    throw new NotTested("no READ_RESPONSE came on path " + SILENCED_PATH);
                }
                final long took = alone.copyAt() == 0 ? Long.MAX_VALUE : alone.copyAt() - alone.oldestAt();
                if (took <= bound)
                {
                    return null; // with the margin in, it could not have come before the whole margin
                }
                // a first transmission that left after the oldest was due (its RTO without the margin, no longer than
                // the first all-silent timeout), acknowledged at once: the margin is out a round trip later
                if (alone.liveAt() == 0 || alone.liveAt() - alone.oldestAt() > first + (all - first) / 4)
                {
                    throw new NotTested("no first transmission of the live path arrived between " + ms(first) +
                        " and " + ms(first + (all - first) / 4) + " after path " + SILENCED_PATH + "'s oldest " +
                        "packet: the READs did not keep it busy long enough for the rule to apply within the bound");
                }
                return "path " + SILENCED_PATH + "'s oldest packet " + (alone.copyAt() == 0 ? "did not time out " +
                    "within " + ms(2 * all + ANSWER_NANOS) : "timed out " + ms(took) + " after it") + ", though the " +
                    "other path had a first transmission acknowledged " + ms(alone.liveAt() - alone.oldestAt()) +
                    " after it; the all-silent timeout was " + ms(first) + " before the margin and " + ms(all) +
                    " with it: the margin stayed in the silenced path's RTO (at most " + ms(bound) + " allowed); " + alone;
            });
        }
        finally
        {
            if (null != c)
            {
                c.deadPaths.clear(SILENCED_PATH);
            }
            holds.speakAgain(c);
        }
        closeQuietly(c);
    }

    /**
     * The copies of the held packet before the release that shows its timeout spurious (a third timeout would fail the
     * path, S7.4): released about 3.25 all-silent timeouts after the first copy, its packet owes a widening (S6.8.1)
     * of about 2.8 of them, half of which is more than doubling a margin already in that timeout could add.
     */
    private static final int WIDENING_COPIES = 2;
    static final String WIDENED_TITLE = "after a timeout the suite shows spurious (S6.8-1 c), the target's all-silent " +
        "timeout grows by its late margin's widening: at least half of min(lateMarginMax - T1, 1.25 x (R' - T1)), T1 " +
        "the timeout before, R' the spurious packet's round trip";

    /**
     * S6.8-2 on a fresh connection of one path, against a target said to have {@code lateMarginMax} above 0 (S6.8-5:
     * the suite assumes no timer it was not told). After {@link #SETTLE_READS} quick READs before each hold: the
     * all-silent timeout T1 of a held single-packet READ; a READ held until the target sent its packet
     * {@link #WIDENING_COPIES} times (as many timeouts, backed off) and released an all-silent timeout and a quarter
     * after the last with the duplicates reported, which shows its last timeout spurious (S6.8-1 c), its
     * packet acknowledged R' after the first copy arrived (the transmission before the spurious one: R' from the
     * original would be longer), its tail probes acknowledged only after that ACK (no RTT sample as long as the hold
     * before the report); then the all-silent timeout T2. S6.8.1's table widens the margin L to at
     * least {@code min(lateMarginMax, 1.25 x (R' - the RTO without L))}, so it grows by at least {@code W =
     * min(lateMarginMax - T1, 1.25 x (R' - T1))} whatever part of T1 was margin already (the engine's seed, S6.8.1).
     * Judged: T2 - T1 at least W / 2 (the rest for the RTO's own variation between holds on a loaded host). Not tested
     * when W is under {@link #MARGIN_LEARNT_NANOS} (a margin near its ceiling already).
     */
    void runMarginWidened(final ConnectRequest request) throws IOException
    {
        if (target.lateMarginMaxSeconds() <= 0)
        {
            notTested("timers.margin-widened", "S6.8-2", "MUST", WIDENED_TITLE, "the target's lateMarginMax was not " +
                "given (spraynic conformance --target-late-margin-max SECONDS): S6.8-2 binds a target whose " +
                "lateMarginMax is above 0, and the suite assumes none of its timers (S6.8-5)");
            return;
        }
        final Connection connection = openHeld(request, 1, holds);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        try
        {
            must("timers.margin-widened", "S6.8-2", WIDENED_TITLE, () ->
            {
                DataChecks.requireConnection(why);
                holds.warm(c, SETTLE_READS);
                final long before = holds.hold(c, HeldReads.HELD_READ_BYTES, 1, Report.NONE).first();
                holds.warm(c, SETTLE_READS);
                // its tail probes are acknowledged only after the report: with it they would be RTT samples as long
                // as the hold, and whether the widening is reckoned from the RTO before or after them S6.8.1 leaves
                // open
                c.deferProbes = true;
                final Held spurious;
                try
                {
                    final Flight flight = holds.flight(c, HeldReads.HELD_READ_BYTES, WIDENING_COPIES);
                    // an all-silent timeout later still (the third, the path's failure, is twice as far off): the
                    // widening owed grows with the wait, what doubling a margin already there adds does not
                    c.collect(flight.copies()[0] - flight.at());
                    spurious = holds.release(c, flight, Report.ALWAYS);
                }
                finally
                {
                    c.deferProbes = false;
                    c.takeInDeferredProbes();
                    HeldReads.ackEveryPath(c);
                }
                // R' from the transmission before the spurious timeout's copy: the first copy, or the original
                final long late = spurious.released() - spurious.copies()[0];
                holds.warm(c, SETTLE_READS);
                final long after = holds.hold(c, HeldReads.HELD_READ_BYTES, 1, Report.NONE).first();
                final long ceiling = (long)(target.lateMarginMaxSeconds() * 1e9);
                final long owed = Math.min(ceiling - before, (long)(1.25 * (late - before)));
                measured("all-silent timeout " + ms(before) + "; a packet timed out " + WIDENING_COPIES + " times (the " +
                    "first " + ms(spurious.first()) + " after it, the last " + ms(spurious.copies()[WIDENING_COPIES - 1] -
                    spurious.at()) + " after it) acknowledged " + ms(late) + " after its first copy " +
                    "arrived, with its duplicates reported; then " + ms(after) + ": grown by " + ms(after - before) +
                    ", at least " + ms(owed / 2) + " asked");
                if (owed < MARGIN_LEARNT_NANOS)
                {
                    throw new NotTested("the widening owed, " + ms(owed) + " (the all-silent timeout " + ms(before) +
                        ", the spurious packet acknowledged " + ms(late) + " after its first copy, lateMarginMax " +
                        ms(ceiling) + "), is too small to tell from the RTO's own variation");
                }
                return after - before >= owed / 2 ? null : "the all-silent timeout went from " + ms(before) + " to " +
                    ms(after) + " after a timeout shown spurious whose packet was acknowledged " + ms(late) + " after " +
                    "its first copy arrived: the margin grew by at most " + ms(Math.max(0, after - before)) + ", " +
                    "where S6.8.1's widening owes at least " + ms(owed) + " (half of it allowed)";
            });
        }
        finally
        {
            holds.speakAgain(c);
        }
        closeQuietly(c);
    }

    private static boolean learnt(final long first, final long all)
    {
        return all >= 2 * first && all - first >= MARGIN_LEARNT_NANOS;
    }

    /**
     * What {@link #silenceOnePath} saw, arrival times (the kernel's, nanoseconds; 0: none): the silenced path's oldest
     * packet (its first READ_RESPONSE), the first packet its timeout sent (on any path), the first transmission of the
     * live path that arrived first at least the given delay after the oldest; and how many of those came after the
     * oldest.
     */
    private record Alone(long oldestAt, long copyAt, long liveAt, int copyPath, int liveFirsts)
    {
        @Override
        public String toString()
        {
            return oldestAt == 0 ? "nothing came on it" : (copyAt == 0 ? "its oldest packet not sent again" :
                "its oldest packet's timeout " + ms(copyAt - oldestAt) + " after it (seen on path " + copyPath + ")") +
                "; the live " +
                "path's first transmissions after it: " + liveFirsts + (liveAt == 0 ? "" : ", the first past the " +
                "all-silent timeout " + ms(liveAt - oldestAt) + " after it");
        }
    }

    /**
     * Drops path {@link #SILENCED_PATH}'s packets (never acknowledged), acknowledges the other at once with a rate
     * hint that spreads them over about twice {@code waitNanos}, asks {@link #ALONE_READS} READs at once, and waits
     * up to {@code waitNanos} for a copy of the silenced path's oldest
     * READ_RESPONSE: the first packet its timeout sent, the dropped path's own included (its data again at its PSN,
     * S6.8, or a payload-free probe there when the data went elsewhere, S7.4.1), or its data on another path (S7.4.1,
     * S7.4). So a target that re-sends on the path at its RTO and moves the data only at failure (S7.4-1 allows it)
     * is timed by its RTO too. The READs finish after (the caller's clean-up).
     *
     * @param liveAfterNanos the live path's first transmission reported is the first to arrive this long after the
     *                       oldest or later.
     */
    private Alone silenceOnePath(final ScriptedPeer c, final long liveAfterNanos, final long waitNanos)
        throws IOException
    {
        final java.util.Set<Integer> msns = new java.util.HashSet<>();
        final long[] oldest = {0, -1, -1, -1}; // arrival, msn, offset, PSN
        final long[] copy = {0, -1}; // arrival, path
        final long[] live = {0, 0}; // arrival, first transmissions after the oldest
        c.deadPaths.set(SILENCED_PATH);
        c.silent = false;
        // a rate hint (S8.4) spreads the READs' first transmissions over about twice the wait, so that the live path
        // still carries them when the silenced one is due, however fast the target (headers: half the payload again)
        c.rateHintMbps = (int)Math.max(1, ALONE_READS * (long)ALONE_READ_BYTES * 12 * 1_000 / (2 * waitNanos));
        HeldReads.ackEveryPath(c);
        try
        {
            for (int i = 0; i < ALONE_READS; i++)
            {
                final int msn = c.takeMsn(0);
                msns.add(msn);
                c.send(c.readRequest(0, 0, msn, base, rkey, ALONE_READ_BYTES));
            }
            c.awaitPacket(waitNanos, p ->
            {
                if (!p.icrcValid || !p.wholeHeaders() || p.destQp() != c.localCid() || p.h8(0) >= c.paths)
                {
                    return false;
                }
                // the timeout's own: a payload-free probe left at the oldest's PSN when it went elsewhere (S7.4.1)
                if (oldest[0] != 0 && p.opcode() == SprayWire.PROBE && p.h8(0) == SILENCED_PATH && p.psn() == oldest[3])
                {
                    copy[0] = p.arrivalNanos;
                    copy[1] = p.h8(0);
                    return true;
                }
                if (p.opcode() != SprayWire.READ_RESPONSE || !msns.contains(p.h32(4)))
                {
                    return false;
                }
                final boolean firstTransmission = (p.h8(1) & SprayWire.SETH_RETRANSMIT) == 0;
                if (oldest[0] == 0)
                {
                    if (p.h8(0) == SILENCED_PATH && firstTransmission)
                    {
                        oldest[0] = p.arrivalNanos;
                        oldest[1] = p.h32(4);
                        oldest[2] = p.h32(8);
                        oldest[3] = p.psn();
                    }
                    return false;
                }
                // a copy of its data, on its own path at its PSN (S6.8) or elsewhere (S7.4.1, S7.4)
                if (p.h32(4) == oldest[1] && p.h32(8) == oldest[2])
                {
                    copy[0] = p.arrivalNanos;
                    copy[1] = p.h8(0);
                    return true;
                }
                if (p.h8(0) != SILENCED_PATH && firstTransmission)
                {
                    live[1]++;
                    if (live[0] == 0 && p.arrivalNanos - oldest[0] >= liveAfterNanos)
                    {
                        live[0] = p.arrivalNanos;
                    }
                }
                return false;
            });
        }
        finally
        {
            c.deadPaths.clear(SILENCED_PATH);
            c.rateHintMbps = 0;
        }
        return new Alone(oldest[0], copy[0], live[0], (int)copy[1], (int)live[1]);
    }
}
