package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

import io.spraynic.datapath.wire.SelectiveAckHeader;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link PathScheduler#pick} visits only the paths its bitmasks name (issue 13): it must pick exactly as the pick
 * that read every path's state, timeouts and windows did. The old pick is kept here as the reference, verbatim but
 * for reading the scheduler through its accessors and keeping the round robin's credits itself; both run on twin
 * schedulers (same seed) through the same random sends, ACKs, congestion-window changes, timeouts, failures and
 * restores, and must agree on every pick, every credit and every source port.
 */
class PathSchedulerPickTest
{
    private static final PathSendWindow.Listener IGNORED = new PathSendWindow.Listener()
    {
        public void onAcked(final long handle, final int psn, final long rttNanos)
        {
        }

        public void onLost(final long handle, final int psn)
        {
        }
    };

    // ---- the pick before issue 13's masks, as the reference

    private static int referencePick(final PathScheduler scheduler, final int paths, final SprayConfig config,
        final int[] credits)
    {
        boolean anyAnswering = false;
        for (int path = 0; path < paths && !anyAnswering; path++)
        {
            anyAnswering = scheduler.state(path) == SprayConnection.ACTIVE && scheduler.consecutiveTimeouts(path) == 0;
        }
        int best = referencePick(scheduler, paths, credits, anyAnswering, config.rotateMinPackets > 0);
        if (best < 0 && config.rotateMinPackets > 0)
        {
            best = referencePick(scheduler, paths, credits, anyAnswering, false);
        }
        if (best >= 0)
        {
            scheduler.placedOnPort(best);
        }
        return best;
    }

    private static int referencePick(final PathScheduler scheduler, final int paths, final int[] credits,
        final boolean anyAnswering, final boolean skipDraining)
    {
        int total = 0;
        int best = -1;
        for (int path = 0; path < paths; path++)
        {
            if (scheduler.state(path) != SprayConnection.ACTIVE ||
                (anyAnswering && scheduler.consecutiveTimeouts(path) > 0) ||
                (skipDraining && scheduler.portSpent(path) && scheduler.sendWindows[path].outstanding() > 0))
            {
                continue;
            }
            final int free = Math.min(scheduler.congestionWindows.window(path), PathSendWindow.CAPACITY) -
                scheduler.sendWindows[path].outstanding();
            if (free <= 0)
            {
                continue;
            }
            credits[path] += free;
            total += free;
            if (best < 0 || credits[path] > credits[best])
            {
                best = path;
            }
        }
        if (best >= 0)
        {
            credits[best] -= total;
        }
        return best;
    }

    // ---- the same random history on both

    @Test
    void shouldPickExactlyAsThePickThatVisitedEveryPath()
    {
        for (final int paths : new int[]{1, 3, 8, 64})
        {
            for (final boolean rotating : new boolean[]{false, true})
            {
                run(paths, rotating, 11L * paths + (rotating ? 1 : 0));
            }
        }
    }

    private static void run(final int paths, final boolean rotating, final long seed)
    {
        final SprayConfig config = new SprayConfig().window(4, 64);
        if (rotating)
        {
            config.portRotation(8, 24);
        }
        final PathScheduler masked = new PathScheduler(paths, config, new SplittableRandom(seed), 1000, 50_000);
        final PathScheduler reference = new PathScheduler(paths, config, new SplittableRandom(seed), 1000, 50_000);
        final int[] credits = new int[paths];
        final SplittableRandom random = new SplittableRandom(seed * 31);
        int picked = 0;
        int none = 0;
        long now = 0;
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment ack = arena.allocate(SelectiveAckHeader.LENGTH);
            for (int step = 0; step < 20_000; step++)
            {
                now += 1_000;
                final int path = random.nextInt(paths);
                final int action = random.nextInt(100);
                if (action < 50)
                {
                    final int expected = referencePick(reference, paths, config, credits);
                    final int actual = masked.pick();
                    assertEquals(expected, actual, "step " + step + ", " + paths + " paths");
                    if (actual >= 0)
                    {
                        picked++;
                        masked.sendWindows[actual].send(step, now);
                        reference.sendWindows[actual].send(step, now);
                    }
                    else
                    {
                        none++;
                    }
                }
                else if (action < 70)
                {
                    final int count = random.nextInt(1 + masked.sendWindows[path].outstanding());
                    acknowledge(masked.sendWindows[path], count, ack, now);
                    acknowledge(reference.sendWindows[path], count, ack, now);
                }
                else if (action < 82)
                {
                    final int acked = random.nextInt(8);
                    final int marked = random.nextInt(4) == 0 ? random.nextInt(acked + 1) : 0;
                    final long srtt = 1_000 + random.nextInt(20_000);
                    masked.congestionWindows.onAck(path, acked, marked, now, srtt);
                    reference.congestionWindows.onAck(path, acked, marked, now, srtt);
                }
                else if (action < 88)
                {
                    masked.onTimeout(path, now);
                    reference.onTimeout(path, now);
                }
                else if (action < 94)
                {
                    masked.onAckTaken(path, step, now);
                    reference.onAckTaken(path, step, now);
                }
                else if (action < 97)
                {
                    masked.fail(path, now);
                    reference.fail(path, now);
                }
                else
                {
                    masked.restore(path, now);
                    reference.restore(path, now);
                }
                for (int p = 0; p < paths; p++)
                {
                    assertEquals(credits[p], masked.roundRobinCredit(p), "credit of path " + p + " at step " + step);
                    assertEquals(reference.sourcePort(p), masked.sourcePort(p), "port of path " + p);
                    assertEquals(reference.sendWindows[p].outstanding(), masked.sendWindows[p].outstanding());
                }
            }
        }
        assertTrue(picked > 1_000 && none > 100, paths + " paths: " + picked + " picked, " + none + " none");
    }

    // the oldest `count` packets of the window acknowledged by a cumulative ACK
    private static void acknowledge(final PathSendWindow window, final int count, final MemorySegment ack, final long now)
    {
        final PathReceiveWindow receiver = new PathReceiveWindow(window.basePsn());
        for (int i = 0; i < count; i++)
        {
            receiver.onPacket(0, io.spraynic.datapath.transport.Psn.add(window.basePsn(), i));
        }
        receiver.writeTo(0, ack, 0);
        assertEquals(count, window.onAck(ack, 0, now, IGNORED));
    }
}
