package io.spraynic.conformance;

import io.spraynic.conformance.Checks.NotTested;

import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;

import static io.spraynic.conformance.Checks.ANSWER_NANOS;
import static io.spraynic.conformance.Checks.SILENCE_NANOS;
import static io.spraynic.conformance.Checks.sentMeanwhile;

/**
 * The timer checks' instrument (S6.8): single-packet READs of the target's region acknowledged at once or a chosen
 * while later (RTT samples for the target, {@link #warm}), and READs whose ACKs the suite withholds until the
 * target's timeouts sent the held packet again a number of times ({@link #hold}), timed by the arrivals at the
 * suite's socket (the kernel's receive times), then released with or without a report of the duplicates (S5.1-3).
 * Shared by {@link TimerChecks} and {@link MarginChecks}; it judges nothing itself.
 */
final class HeldReads
{
    /** One packet at any MTU: a held READ whose only packet is the one the timer sends again. */
    static final int HELD_READ_BYTES = 64;
    /** How long the suite waits for a timeout's copy (backed off, on a loaded host). */
    static final long COPY_WAIT_NANOS = 8 * ANSWER_NANOS;

    private final Target target;
    private final long base;
    private final int rkey;

    HeldReads(final Target target, final long regionOffset)
    {
        this.target = target;
        this.base = target.regionAddress() + regionOffset;
        this.rkey = target.rkey();
    }

    /** How a held READ's ACK reports the duplicates received (S5.1-3). */
    enum Report
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

    /**
     * A READ the suite held: when its first packet arrived, when each copy of that packet's PSN did, when the ACK
     * left, how many of the target's probes (S6.7, first transmissions) that ACK and the one after it (for a probe on
     * its way) acknowledged, and when the first of them arrived if before the first copy (0 if none did).
     */
    record Held(int psn, long at, long[] copies, long released, int probes, long probeAt)
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

    /** The suite acknowledges only when a check says so, and keeps the connection from closing for idleness. */
    void silence(final ScriptedPeer c)
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

    /** Ends a check's holds: the suite acknowledges as a peer again, every path at once (null: no connection). */
    void speakAgain(final ScriptedPeer c) throws IOException
    {
        if (null != c)
        {
            c.silent = false;
            c.reportDuplicates(false);
            ackEveryPath(c);
            c.collect(SILENCE_NANOS / 4);
        }
    }

    /**
     * READs {@code reads} single packets, each acknowledged {@code ackDelayNanos} after it arrived: RTT samples of the
     * path (S6.8.1).
     */
    void warm(final ScriptedPeer c, final int reads, final long ackDelayNanos) throws IOException, NotTested
    {
        for (int i = 0; i < reads; i++)
        {
            read(c, ackDelayNanos);
        }
        c.collect(SILENCE_NANOS / 20); // a probe or ACK still on its way
        ackEveryPath(c);
    }

    void warm(final ScriptedPeer c, final int reads) throws IOException, NotTested
    {
        warm(c, reads, 0);
    }

    /**
     * READs one packet and acknowledges it {@code ackDelayNanos} after it arrived, at once if the target sends it
     * again before (its RTO was shorter than the wait).
     *
     * @return whether it did.
     */
    boolean read(final ScriptedPeer c, final long ackDelayNanos) throws IOException, NotTested
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
     * READs {@code bytes} and withholds every ACK until {@code copies} copies of its first packet's PSN arrived (the
     * target's timeouts; on a connection of several paths also a payload-free probe at that PSN or the packet's data
     * on another path, where a timeout moved it, S7.4.1), then a quarter of the first timeout more (so that the ACK comes later after the last copy
     * than any RTT sampled: S6.8-1 b judges nothing), then acknowledges everything, reporting the duplicates received
     * as {@code report} says.
     */
    Held hold(final ScriptedPeer c, final int bytes, final int copies, final Report report)
        throws IOException, NotTested
    {
        final Flight f = flight(c, bytes, copies);
        return release(c, f, report);
    }

    /** What a held flight received: the arrival of each PSN's first packet (data or probe), and its copies. */
    record Flight(int oldest, long at, long[] copies, Map<Integer, Long> firsts, java.util.Set<Integer> copied,
        int probes, long probeAt)
    {
    }

    Flight flight(final ScriptedPeer c, final int bytes, final int copies) throws IOException, NotTested
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

    Held release(final ScriptedPeer c, final Flight f, final Report report) throws IOException
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

    /** @return whether {@code p} is a probe of one of the target's paths (S6.7; not a RESYNC, S7.5). */
    static boolean isProbe(final ScriptedPeer c, final Packet p)
    {
        return p.icrcValid && p.opcode() == SprayWire.PROBE && p.wholeHeaders() && p.destQp() == c.localCid() &&
            p.h8(0) < c.paths && (p.h8(1) & SprayWire.PRBH_RESYNC) == 0;
    }

    /** Acknowledges every path of the connection (what it received: a path with nothing new gets its last ACK). */
    static void ackEveryPath(final ScriptedPeer c)
    {
        for (int path = 0; path < c.paths; path++)
        {
            c.sendAck(path);
        }
    }

    static boolean isResponse(final ScriptedPeer c, final Packet p, final int msn)
    {
        return p.icrcValid && p.opcode() == SprayWire.READ_RESPONSE && p.wholeHeaders() &&
            p.destQp() == c.localCid() && p.h32(4) == msn;
    }
}
