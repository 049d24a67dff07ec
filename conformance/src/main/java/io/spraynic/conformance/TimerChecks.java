package io.spraynic.conformance;

import io.spraynic.conformance.HeldReads.Flight;
import io.spraynic.conformance.HeldReads.Held;
import io.spraynic.conformance.HeldReads.Report;

import java.io.IOException;
import java.util.List;
import java.util.Map;

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
 * copy cancel but for jitter. The late margin's checks (S6.8-2, S6.8-3) are {@link MarginChecks}; both hold READs
 * with {@link HeldReads}.
 */
final class TimerChecks extends Checks
{
    /** READs acknowledged at once before the first hold: the path's RTT samples of an unloaded round trip. */
    private static final int WARM_READS = 8;
    /** The flight of the floor check: its packets after the oldest give the samples (MTU 256: 16 packets). */
    private static final int FLOOR_READ_BYTES = 16 * 256;
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
    private final HeldReads holds;

    TimerChecks(final Target target, final UdpLink link, final List<CheckResult> results, final long regionOffset)
    {
        super(target, link, results);
        this.holds = new HeldReads(target, regionOffset);
    }

    void run(final ConnectRequest request) throws IOException
    {
        // every timeout on the path under test: "every path as silent" (S7.4.1)
        final Connection connection = openHeld(request, 1, holds);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        final boolean[] backedOff = new boolean[1];
        try
        {
            must("timers.rto-backoff", "S6.8-6", "with its ACKs withheld, the target's second timeout of a packet " +
                "comes at least " + BACKOFF_RATIO + " x as long after the first as the first after the original", () ->
            {
                DataChecks.requireConnection(why);
                holds.warm(c, WARM_READS);
                final Held h = holds.hold(c, HeldReads.HELD_READ_BYTES, 2, Report.NONE);
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
                holds.warm(c, 1, 0); // a fresh RTT sample: b = 0 before the timeout the report will call spurious
                Held trigger = holds.hold(c, HeldReads.HELD_READ_BYTES, 1, Report.UNLESS_PROBED);
                long slowed = 0;
                if (trigger.probes() > 0)
                {
                    slowed = slow(c, trigger.first(), trigger.probeAt() == 0 ? 0 : trigger.probeAt() - trigger.at());
                    trigger = holds.hold(c, HeldReads.HELD_READ_BYTES, 1, Report.UNLESS_PROBED);
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
                final long undone = holds.hold(c, HeldReads.HELD_READ_BYTES, 1, Report.NONE).first();
                holds.warm(c, 1, slowed); // a fresh RTT sample, as slow as the others: b = 0 whatever the report did
                final long reference = holds.hold(c, HeldReads.HELD_READ_BYTES, 1, Report.NONE).first();
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
                final long first = holds.hold(c, HeldReads.HELD_READ_BYTES, 1, Report.NONE).first();
                measured("timeout " + ms(first) + " after the original, srtt at least " + ms(lowest));
                return first >= FLOOR_SHARE * lowest ? null : "the timeout came " + ms(first) + " after the original, " +
                    "below its srtt of at least " + ms(lowest) + " (from the flight's RTT samples): an RTO below the " +
                    "path's own round trip";
            });
        }
        finally
        {
            holds.speakAgain(c);
        }
        closeQuietly(c);
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
            if (!holds.read(c, wait))
            {
                srttBound += (wait - srttBound) / 8;
            }
            atTarget += wait == target ? 1 : 0;
        }
        c.collect(SILENCE_NANOS / 20);
        HeldReads.ackEveryPath(c);
        return wait;
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
        final Flight f = holds.flight(c, FLOOR_READ_BYTES, 2);
        final Held h = holds.release(c, f, Report.NONE);
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
}
