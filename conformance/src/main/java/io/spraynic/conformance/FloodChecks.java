package io.spraynic.conformance;

import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Bounded reflection (S12.9): a burst of cookie-less CONNECTs, each from another initiator CID, faster than the
 * target's response bucket refills, draws at most {@code burst + rate * T} RETRYs and REJECTs over the T seconds
 * from the first CONNECT sent to the last answer received. Upper bound only: a target that loses CONNECTs in its
 * socket buffer answers fewer, which complies.
 */
final class FloodChecks extends Checks
{
    /** CONNECTs the suite sends; with the defaults of S12.9 it must send them, and the target answer, within about 75 ms to judge. */
    static final int CONNECTS = 4_000;
    /** Sends between two looks at the suite's own socket, so that its receive buffer does not drop answers. */
    private static final int SENDS_PER_DRAIN = 16;
    /** The longest one {@link #drain} reads. */
    static final long DRAIN_LIMIT_NANOS = 10_000_000_000L;

    FloodChecks(final Target target, final UdpLink link, final List<CheckResult> results)
    {
        super(target, link, results);
    }

    void run(final HandshakeChecks handshake) throws IOException
    {
        final double rate = target.responseRate();
        final int burst = target.responseBurst();
        must("limits.response-rate", "S12.9-2", CONNECTS + " cookie-less CONNECTs sent at once draw at most " +
            "connectResponseBurst + connectResponseRate * T RETRYs and REJECTs (" + burst + " + " + (long)rate +
            "/s; one engine)", () ->
        {
            final ConnectRequest request = handshake.request();
            final byte[][] frames = new byte[CONNECTS][];
            final Set<Integer> cids = new HashSet<>();
            for (int i = 0; i < CONNECTS; i++)
            {
                request.senderCid = 0x10_0000 + i; // nonzero, one per CONNECT: each answer names its own
                request.token = ConnectRequest.randomLong();
                frames[i] = request.frame();
                cids.add(request.senderCid);
            }
            final int[] answers = new int[1];
            final long[] lastAnswer = new long[1];
            final long start = System.nanoTime();
            for (int i = 0; i < CONNECTS; i++)
            {
                link.send(frames[i], false, UdpLink.NOT_ECT);
                if (i % SENDS_PER_DRAIN == SENDS_PER_DRAIN - 1)
                {
                    drain(cids, answers, lastAnswer, 0);
                }
            }
            final long sent = System.nanoTime();
            drain(cids, answers, lastAnswer, SILENCE_NANOS);
            if (answers[0] == 0)
            {
                throw new NotTested("no RETRY or REJECT answered any of the " + CONNECTS + " CONNECTs");
            }
            final double seconds = (lastAnswer[0] - start) / 1e9;
            final double allowed = burst + rate * seconds;
            final String seen = String.format(java.util.Locale.ROOT, "%d answers to %d CONNECTs (sent in %.1f ms) " +
                "within %.1f ms of the first, where the bucket allows %.0f", answers[0], CONNECTS,
                (sent - start) / 1e6, seconds * 1e3, allowed);
            if (answers[0] > allowed * 1.05 + 8)
            {
                return seen;
            }
            if (CONNECTS <= allowed)
            {
                throw new NotTested("the flood did not outrun the bucket (the CONNECTs went out, or were answered, " +
                    "no faster than it refills), so even a target without one would pass: " + seen);
            }
            measured(seen);
            return null;
        });
        awaitRefill(link, rate, burst); // the checks after this one connect again
    }

    /**
     * Gives a target's response bucket ({@code rate} a second, {@code burst}) time to refill after a check emptied
     * it (twice the burst's refill, at least 50 ms, at most a second), reading and dropping what comes meanwhile.
     */
    static void awaitRefill(final UdpLink link, final double rate, final int burst) throws IOException
    {
        final long refill = (long)(Math.min(1.0, 2.0 * burst / Math.max(1.0, rate)) * 1e9);
        final long until = System.nanoTime() + Math.max(refill, 50 * ScriptedPeer.MILLI);
        for (long left = until - System.nanoTime(); left > 0; left = until - System.nanoTime())
        {
            link.receive(left);
        }
    }

    /**
     * Counts RETRYs and REJECTs to the flood's CIDs until {@code nanos} pass with none (0: what is queued now), or
     * {@link #DRAIN_LIMIT_NANOS} in all: a target that never stops sending cannot hold the suite here.
     */
    private void drain(final Set<Integer> cids, final int[] answers, final long[] lastAnswer, final long nanos)
        throws IOException
    {
        final long limit = System.nanoTime() + DRAIN_LIMIT_NANOS;
        while (System.nanoTime() - limit < 0)
        {
            final Packet p = link.receive(nanos);
            if (null == p)
            {
                return;
            }
            if (p.icrcValid && (p.opcode() == SprayWire.CONNECT_RETRY || p.opcode() == SprayWire.CONNECT_REJECT) &&
                cids.contains(p.destQp()))
            {
                answers[0]++;
                lastAnswer[0] = System.nanoTime();
            }
        }
    }
}
