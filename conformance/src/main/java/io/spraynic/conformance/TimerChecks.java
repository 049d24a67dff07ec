package io.spraynic.conformance;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A sender's retransmission timer (S6.8) as the wire shows it: the suite withholds its ACKs of the target's READ
 * responses on a one-path connection and times the copies the target sends at the held packet's PSN (its timeouts:
 * with every path silent, S7.4.1, the RTO sends the oldest packet again on its own path). Backoff (S6.8-6): the
 * second timeout comes at least 1.5 x as long after the first as the first after the original, or after the
 * target's first tail probe before it when there was one (S6.7-2: a probe may re-arm the RTO). Undo (S6.8-1): a
 * report of duplicates that only the timeout's copy can explain (S6.8-1 c) puts the next timeout back at the
 * un-backed-off value, measured after it from a timeout that a fresh RTT sample started from b = 0. The report must
 * acknowledge no tail probe (S6.7): a probe's RTT sample resets b by itself (S6.8.1). A target whose first probe comes
 * before its RTO has its round trip slowed first (the suite holding its ACKs a while, {@link #slow}), since an RTO of
 * about srtt plus a constant part then comes before a probe at 2 x srtt. Floor (S6.8-4):
 * after a flight whose ACK the suite held long (every packet but the oldest acknowledged without a copy: Karn's
 * samples), the next timeout comes no sooner than 3/4 of the smoothed RTT those samples give at the least.
 * Times are arrivals at the suite's socket (the kernel's receive times); the one-way delays of the original and its
 * copy cancel but for jitter. Late margin left out (S6.8-3, {@link #runSilentAlone}): on a connection of two paths,
 * once reports of spurious timeouts have raised the all-silent timeout by a margin, a path silenced alone while the
 * other acknowledges first transmissions times out within the first timeout plus half of that margin.
 */
final class TimerChecks extends Checks
{
    /** READs acknowledged at once before the first hold: the path's RTT samples of an unloaded round trip. */
    private static final int WARM_READS = 8;
    /** One packet at any MTU: a held READ whose only packet is the one the timer sends again. */
    private static final int HELD_READ_BYTES = 64;
    /** The flight of the floor check: its packets after the oldest give the samples (MTU 256: 16 packets). */
    private static final int FLOOR_READ_BYTES = 16 * 256;
    /** How long the suite waits for a timeout's copy (backed off, on a loaded host). */
    private static final long COPY_WAIT_NANOS = 8 * ANSWER_NANOS;
    /** The second timeout must come this much longer after the first than the first after the original. */
    static final double BACKOFF_RATIO = 1.5;
    /** The timeout after a spurious one may be this much longer than the un-backed-off reference, no more. */
    static final double UNDONE_RATIO = 1.5;
    /** The share of the sampled RTT's lower bound a timeout must reach (jitter between original and copy). */
    static final double FLOOR_SHARE = 0.75;
    /**
     * A first timeout this long may already sit at the target's ceiling (S6.8.1: rtoMax plus the late margin), which
     * caps the backoff: a second one not 1.5 x as long then proves nothing.
     */
    static final long CEILING_SUSPECT_NANOS = 250 * ScriptedPeer.MILLI;
    /** The round trip the undo check slows a probing target's path to: 3 x its RTO, within these bounds. */
    private static final long SLOW_RTT_MIN_NANOS = 20 * ScriptedPeer.MILLI;
    private static final long SLOW_RTT_MAX_NANOS = 500 * ScriptedPeer.MILLI;
    /** The shortest wait while slowing (the bound starts from 0). */
    private static final long SLOW_WAIT_MIN_NANOS = 100_000;
    /** READs at the slowed round trip: srtt within 5 % of it (7/8 a sample), rttvar down by 3/4 a sample. */
    private static final int SLOW_READS = 24;
    /** The most READs slowing may take: from 0.1 ms the bound grows 10 % a READ (waits 1.8 x it). */
    private static final int SLOW_READS_MAX = 128;
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

    /** How a held READ's ACK reports the duplicates received (S5.1-3). */
    private enum Report
    {
        /** 0: no report, which judges nothing (S6.8-1 c). */
        NONE,
        /**
         * The duplicates received (the original and each copy make one each) if no tail probe of the target arrived
         * while held, else none.
         */
        UNLESS_PROBED,
        /** The duplicates received, probes or not (the silent-alone check teaches the target a late margin). */
        ALWAYS
    }

    private final long base;
    private final int rkey;

    TimerChecks(final Target target, final UdpLink link, final List<CheckResult> results, final long regionOffset)
    {
        super(target, link, results);
        this.base = target.regionAddress() + regionOffset;
        this.rkey = target.rkey();
    }

    /**
     * A READ the suite held: when its first packet arrived, when each copy of that packet's PSN did, when the ACK
     * left, how many of the target's probes (S6.7, first transmissions) that ACK and the one after it (for a probe on
     * its way) acknowledged, and when the first of them arrived if before the first copy (0 if none did).
     */
    private record Held(int psn, long at, long[] copies, long released, int probes, long probeAt)
    {
        long first()
        {
            return copies[0] - at;
        }

        /** S6.7-2: the first timeout after what its RTO may be timed from: the original, or a later tail probe. */
        long firstRearmed()
        {
            return copies[0] - Math.max(at, probeAt);
        }

        long second()
        {
            return copies[1] - copies[0];
        }
    }

    void run(final ConnectRequest request) throws IOException
    {
        request.paths = 1; // every timeout on the path under test: "every path as silent" (S7.4.1)
        request.mtu = 256;
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        final boolean[] backedOff = new boolean[1];
        silence(c);
        try
        {
            must("timers.rto-backoff", "S6.8-6", "with its ACKs withheld, the target's second timeout of a packet " +
                "comes at least " + BACKOFF_RATIO + " x as long after the first as the first after the original", () ->
            {
                DataChecks.requireConnection(why);
                warm(c, WARM_READS);
                final Held h = hold(c, HELD_READ_BYTES, 2, Report.NONE);
                // S6.7-2: a target may time its RTO from its first tail probe: the first timeout from that probe
                final long r1 = h.firstRearmed();
                final long r2 = h.second();
                measured("first timeout " + ms(h.first()) + " after the original" + (r1 == h.first() ? "" : " (" +
                    ms(r1) + " after the target's first tail probe)") + ", the second " + ms(r2) + " after it");
                if (r2 >= BACKOFF_RATIO * r1)
                {
                    backedOff[0] = true;
                    return null;
                }
                if (r1 > CEILING_SUSPECT_NANOS)
                {
                    throw new NotTested("the first timeout came " + ms(r1) + " after the original or probe, the " +
                        "second " + ms(r2) + " after it: a timeout that long may already be at the target's ceiling " +
                        "(rtoMax plus its late margin, S6.8.1), which caps the backoff");
                }
                return "the second timeout came " + ms(r2) + " after the first, which came " + ms(h.first()) +
                    " after the original" + (r1 == h.first() ? "" : " (" + ms(r1) + " after the target's first tail " +
                    "probe)") + ": not backed off (at least " + BACKOFF_RATIO + " x)";
            });
            must("timers.spurious-undo", "S6.8-1", "after an ACK reporting more duplicates than the path's other copies " +
                "could make (the backed-off timeout was spurious, S6.8-1 c), the next timeout is no more than " +
                UNDONE_RATIO + " x the un-backed-off one", () ->
            {
                DataChecks.requireConnection(why);
                if (!backedOff[0])
                {
                    throw new NotTested("no backoff seen to undo (timers.rto-backoff)");
                }
                warm(c, 1, 0); // a fresh RTT sample: b = 0 before the timeout the report will call spurious
                Held trigger = hold(c, HELD_READ_BYTES, 1, Report.UNLESS_PROBED);
                long slowed = 0;
                if (trigger.probes() > 0)
                {
                    slowed = slow(c, trigger.first(), trigger.probeAt() == 0 ? 0 : trigger.probeAt() - trigger.at());
                    trigger = hold(c, HELD_READ_BYTES, 1, Report.UNLESS_PROBED);
                }
                if (trigger.probes() > 0)
                {
                    // S6.8.1: a probe is a packet sent once: its sample resets b whatever the report did
                    throw new NotTested(trigger.probes() + " tail probe(s) of the target (S6.7) came while its " +
                        "packet was held (" + (trigger.probeAt() == 0 ? "none before its timeout, " : "the first " +
                        ms(trigger.probeAt() - trigger.at()) + " after it, ") + "the timeout " + ms(trigger.first()) +
                        "), with the path's round trip slowed to " + ms(slowed) + " too: the ACK " +
                        "reporting the duplicates, or the one after it, would acknowledge them, and their RTT " +
                        "samples reset its backoff by themselves (S6.8.1), so the undo the report calls for cannot " +
                        "be told apart on the wire");
                }
                final long undone = hold(c, HELD_READ_BYTES, 1, Report.NONE).first();
                warm(c, 1, slowed); // a fresh RTT sample, as slow as the others: b = 0 whatever the report did
                final long reference = hold(c, HELD_READ_BYTES, 1, Report.NONE).first();
                measured("the spurious timeout " + ms(trigger.first()) + " after the original" + (slowed == 0 ? "" :
                    " (the path's round trip slowed to " + ms(slowed) + ": no tail probe before it)") + "; the next " +
                    ms(undone) + " after the report, " + ms(reference) + " after a fresh sample");
                return undone <= UNDONE_RATIO * reference ? null : "the timeout after the report of duplicates came " +
                    ms(undone) + " after the original, against " + ms(reference) + " once a fresh RTT sample had " +
                    "reset the backoff: the spurious timeout's backoff was not undone";
            });
            must("timers.rto-floor", "S6.8-4", "after a flight whose ACK the suite held long, the next timeout comes no " +
                "sooner than " + FLOOR_SHARE + " x the smoothed RTT the flight's samples give at the least", () ->
            {
                DataChecks.requireConnection(why);
                final long lowest = flightSrttBound(c);
                if (lowest <= 0)
                {
                    throw new NotTested("the held flight gave the target no RTT sample");
                }
                final long first = hold(c, HELD_READ_BYTES, 1, Report.NONE).first();
                measured("timeout " + ms(first) + " after the original, srtt at least " + ms(lowest));
                return first >= FLOOR_SHARE * lowest ? null : "the timeout came " + ms(first) + " after the original, " +
                    "below its srtt of at least " + ms(lowest) + " (from the flight's RTT samples): an RTO below the " +
                    "path's own round trip";
            });
        }
        finally
        {
            if (null != c)
            {
                c.silent = false;
                c.reportDuplicates(false);
                ackEveryPath(c);
                c.collect(SILENCE_NANOS / 4);
            }
        }
        closeQuietly(c);
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
        request.paths = 2;
        request.mtu = 256;
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        silence(c);
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
                warm(c, SETTLE_READS);
                final long first = hold(c, HELD_READ_BYTES, 1, Report.NONE).first();
                long all = first;
                int reported = 0;
                while (reported < LEARNING_HOLDS && !learnt(first, all) && all < LEARNING_CEILING_NANOS)
                {
                    // quick READs on every path first: a path whose last timeout is undecided would count its copy
                    // among those that could make the duplicate (S6.8-1 c), and the report would show nothing
                    warm(c, SETTLE_READS);
                    reported++;
                    hold(c, HELD_READ_BYTES, 1, Report.ALWAYS);
                    warm(c, SETTLE_READS);
                    all = hold(c, HELD_READ_BYTES, 1, Report.NONE).first();
                }
                if (!learnt(first, all))
                {
                    throw new NotTested("the all-silent timeout went from " + ms(first) + " to " + ms(all) + " over " +
                        reported + " reports of a spurious timeout: no late margin learnt (lateMarginMax 0?)");
                }
                warm(c, SETTLE_READS);
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
                c.silent = false;
                c.reportDuplicates(false);
                ackEveryPath(c);
                c.collect(SILENCE_NANOS / 4);
            }
        }
        closeQuietly(c);
    }

    /** The suite acknowledges only when a check says so, and keeps the connection from closing for idleness. */
    private void silence(final ScriptedPeer c)
    {
        if (null != c)
        {
            c.silent = true;
            // a hold outlasts a target's idleTimeout when its RTO grows past it (srtt from the held probes' samples,
            // its late margin): without a packet of the suite the target closes the connection (S12.10) and never
            // sends the copy (SprayNIC with idleTimeout 3 s: RTO 3.4 s after a hold, idle_closed counted)
            c.keepaliveNanos = target.idleTimeoutSeconds() > 0 ? (long)(target.idleTimeoutSeconds() * 1e9 / 4) : 0;
        }
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
        ackEveryPath(c);
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

    /**
     * READs {@code reads} single packets, each acknowledged {@code ackDelayNanos} after it arrived: RTT samples of the
     * path (S6.8.1).
     */
    private void warm(final ScriptedPeer c, final int reads, final long ackDelayNanos) throws IOException, NotTested
    {
        for (int i = 0; i < reads; i++)
        {
            read(c, ackDelayNanos);
        }
        c.collect(SILENCE_NANOS / 20); // a probe or ACK still on its way
        ackEveryPath(c);
    }

    private void warm(final ScriptedPeer c, final int reads) throws IOException, NotTested
    {
        warm(c, reads, 0);
    }

    /**
     * READs one packet and acknowledges it {@code ackDelayNanos} after it arrived, at once if the target sends it
     * again before (its RTO was shorter than the wait).
     *
     * @return whether it did.
     */
    private boolean read(final ScriptedPeer c, final long ackDelayNanos) throws IOException, NotTested
    {
        final int msn = c.takeMsn(0);
        c.send(c.readRequest(0, 0, msn, base, rkey, HELD_READ_BYTES));
        final Packet response = c.awaitPacket(ANSWER_NANOS, p -> isResponse(c, p, msn));
        if (null == response)
        {
            throw new NotTested("no READ_RESPONSE within 1 s");
        }
        final Packet copy = ackDelayNanos <= 0 ? null : c.awaitPacket(
            Math.max(0, response.arrivalNanos + ackDelayNanos - System.nanoTime()),
            p -> isResponse(c, p, msn) && p.psn() == response.psn());
        ackEveryPath(c);
        return null != copy;
    }

    /**
     * Slows the path's round trip for the undo check: READs acknowledged a wait after their response arrived, the
     * wait growing to D = 3 x the target's RTO (see the bounds) and held there for {@link #SLOW_READS} READs, so that
     * srtt nears D and rttvar falls (S6.8.1). An RTO of about srtt plus its constant part (rtoSlack, a late margin: at
     * most the RTO seen, D / 3) then comes before the first tail probe, 2 x srtt after the packet (S6.7). A probe
     * during a wait would be acknowledged with the response, and its short sample would hold srtt at half the wait,
     * so each wait stays under 0.9 x the probe timer as the suite can bound it from below: the larger of the first
     * probe's delay seen and twice a smoothed RTT of the waits from 0 (the target's samples are no shorter than
     * them). A wait the target's RTO cut short (a copy came) gives it no sample (Karn) and the bound none either.
     *
     * @param firstProbeNanos how long after the held packet the target's first tail probe came (0: unknown).
     * @return D, or the longest wait reached within {@link #SLOW_READS_MAX} READs.
     */
    private long slow(final ScriptedPeer c, final long rtoNanos, final long firstProbeNanos)
        throws IOException, NotTested
    {
        final long target = Math.clamp(3 * rtoNanos, SLOW_RTT_MIN_NANOS, SLOW_RTT_MAX_NANOS);
        long srttBound = 0;
        long wait = 0;
        int atTarget = 0;
        for (int reads = 0; reads < SLOW_READS_MAX && atTarget < SLOW_READS; reads++)
        {
            wait = Math.min(target, Math.max(SLOW_WAIT_MIN_NANOS, Math.max(firstProbeNanos, 2 * srttBound) * 9 / 10));
            if (!read(c, wait))
            {
                srttBound += (wait - srttBound) / 8;
            }
            atTarget += wait == target ? 1 : 0;
        }
        c.collect(SILENCE_NANOS / 20);
        ackEveryPath(c);
        return wait;
    }

    /**
     * READs {@code bytes} and withholds every ACK until {@code copies} copies of its first packet's PSN arrived (the
     * target's timeouts; on a connection of several paths also a payload-free probe at that PSN or the packet's data
     * on another path, where a timeout moved it, S7.4.1), then a quarter of the first timeout more (so that the ACK comes later after the last copy
     * than any RTT sampled: S6.8-1 b judges nothing), then acknowledges everything, reporting the duplicates received
     * as {@code report} says.
     */
    private Held hold(final ScriptedPeer c, final int bytes, final int copies, final Report report)
        throws IOException, NotTested
    {
        final Flight f = flight(c, bytes, copies);
        return release(c, f, report);
    }

    /** What a held flight received: the arrival of each PSN's first packet (data or probe), and its copies. */
    private record Flight(int oldest, long at, long[] copies, Map<Integer, Long> firsts, java.util.Set<Integer> copied,
        int probes, long probeAt)
    {
    }

    private Flight flight(final ScriptedPeer c, final int bytes, final int copies) throws IOException, NotTested
    {
        final int msn = c.takeMsn(0);
        final Map<Integer, Long> firsts = new TreeMap<>((a, b) -> SprayWire.psnDistance(b, a));
        final java.util.Set<Integer> copied = new java.util.HashSet<>();
        final long[] copyAt = new long[copies];
        final int[] oldest = {-1, -1, -1}; // the held packet's PSN, path and offset in its READ
        final int[] seen = {0};
        final java.util.Set<Integer> probes = new java.util.HashSet<>();
        final long[] probeAt = {0};
        final int from = c.received.size();
        c.send(c.readRequest(0, 0, msn, base, rkey, bytes));
        c.awaitPacket(COPY_WAIT_NANOS, p ->
        {
            if (!p.icrcValid || !p.wholeHeaders() || p.destQp() != c.localCid() || p.h8(0) >= c.paths)
            {
                return false;
            }
            final boolean response = isResponse(c, p, msn);
            final boolean probe = isProbe(c, p);
            if (!response && !probe)
            {
                return false;
            }
            final long now = p.arrivalNanos; // the kernel's time: the suite's thread may run late on a loaded host
            if (probe)
            {
                probes.add(p.psn());
                if (probeAt[0] == 0 && seen[0] == 0 && oldest[0] >= 0)
                {
                    probeAt[0] = now; // the first tail probe before the first timeout's copy (S6.7-2)
                }
            }
            if (null != firsts.putIfAbsent(p.psn(), now))
            {
                copied.add(p.psn());
                // its data again at its PSN (S6.8), or a payload-free probe there: its data went to another path
                if (p.psn() == oldest[0] && seen[0] < copies)
                {
                    copyAt[seen[0]++] = now;
                }
            }
            else if (response && oldest[0] >= 0 && p.h8(0) != oldest[1] && p.h32(8) == oldest[2])
            {
                copied.add(p.psn());
                if (seen[0] < copies)
                {
                    copyAt[seen[0]++] = now; // its data on another path (S7.4.1: the target thought another answered)
                }
            }
            else if (response && (oldest[0] < 0 || SprayWire.psnDistance(oldest[0], p.psn()) < 0))
            {
                oldest[0] = p.psn();
                oldest[1] = p.h8(0);
                oldest[2] = p.h32(8);
            }
            return seen[0] == copies;
        });
        if (oldest[0] < 0)
        {
            throw new NotTested("no READ_RESPONSE within " + COPY_WAIT_NANOS / 1_000_000_000L + " s");
        }
        if (seen[0] < copies)
        {
            throw new NotTested("the target sent the held packet (PSN " + oldest[0] + ") again " + seen[0] +
                " time(s) in " + COPY_WAIT_NANOS / 1_000_000_000L + " s without an ACK, not " + copies +
                " (S6.7-1: a lost tail must be recovered by a probe or the RTO); it sent meanwhile: " +
                sentMeanwhile(c, from));
        }
        return new Flight(oldest[0], firsts.get(oldest[0]), copyAt, firsts, copied, probes.size(), probeAt[0]);
    }

    private Held release(final ScriptedPeer c, final Flight f, final Report report) throws IOException
    {
        int probes = f.probes();
        for (final Packet p : c.collect((f.copies()[0] - f.at()) / 4))
        {
            probes += isProbe(c, p) ? 1 : 0;
        }
        c.reportDuplicates(report == Report.ALWAYS || report == Report.UNLESS_PROBED && probes == 0);
        final long released = System.nanoTime();
        ackEveryPath(c);
        c.reportDuplicates(false);
        // a probe of the target that crossed that ACK would stay outstanding, older than the next flight's packets,
        // and the target's RTO sends the oldest again (S6.8), a payload-free probe, not the next held packet: the
        // next check then saw no copy, the path failed after three timeouts and the target closed the connection
        // for idleness (SprayNIC, one run in 20). So it is acknowledged too, as warm() does; its RTT sample resets
        // the backoff as the report's probes do (S6.8.1), and is counted with them
        for (final Packet p : c.collect(SILENCE_NANOS / 20))
        {
            probes += isProbe(c, p) ? 1 : 0;
        }
        ackEveryPath(c);
        return new Held(f.oldest(), f.at(), f.copies(), released, probes, f.probeAt());
    }

    /**
     * Holds a flight of {@link #FLOOR_READ_BYTES} until two timeouts sent its oldest packet again, then acknowledges
     * it: each other packet (and probe) of it is a sample of the target's RTT no shorter than from its arrival here
     * to the ACK leaving (it left the target before, and the ACK reaches the target after). Fed in PSN order into
     * S6.8.1's smoothing from any earlier srtt (0 at the least), they bound the target's srtt from below.
     *
     * @return that bound in nanoseconds.
     */
    private long flightSrttBound(final ScriptedPeer c) throws IOException, NotTested
    {
        final Flight f = flight(c, FLOOR_READ_BYTES, 2);
        final Held h = release(c, f, Report.NONE);
        long srtt = 0;
        for (final Map.Entry<Integer, Long> e : f.firsts().entrySet())
        {
            if (!f.copied().contains(e.getKey()))
            {
                final long sample = h.released() - e.getValue();
                srtt += (sample - srtt) / 8;
            }
        }
        return srtt;
    }

    /** @return whether {@code p} is a probe of one of the target's paths (S6.7; not a RESYNC, S7.5). */
    private static boolean isProbe(final ScriptedPeer c, final Packet p)
    {
        return p.icrcValid && p.opcode() == SprayWire.PROBE && p.wholeHeaders() && p.destQp() == c.localCid() &&
            p.h8(0) < c.paths && (p.h8(1) & SprayWire.PRBH_RESYNC) == 0;
    }

    /** Acknowledges every path of the connection (what it received: a path with nothing new gets its last ACK). */
    private static void ackEveryPath(final ScriptedPeer c)
    {
        for (int path = 0; path < c.paths; path++)
        {
            c.sendAck(path);
        }
    }

    private static boolean isResponse(final ScriptedPeer c, final Packet p, final int msn)
    {
        return p.icrcValid && p.opcode() == SprayWire.READ_RESPONSE && p.wholeHeaders() &&
            p.destQp() == c.localCid() && p.h32(4) == msn;
    }
}
