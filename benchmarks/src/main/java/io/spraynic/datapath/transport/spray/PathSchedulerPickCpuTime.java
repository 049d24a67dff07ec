package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.Psn;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * The scheduler's pick (docs/PROTOCOL.md S7.2, S7.7) timed by the thread's CPU time, in one JVM: the {@link
 * PathScheduler#pick} of the build on the class path against a fixed copy of main 0c37d7e's two-pass pick (as in
 * {@code PathSchedulerPickTest}, read through the scheduler's accessors with its credits in an array of its own), each
 * on its own scheduler through the same history, alternated round by round. The fixed copy is the yardstick: run with
 * one build's class path and then another's, the ratio of the build's pick to it compares the builds' picks within
 * each JVM (issue 13, RESULTS section 49: a one-pass pick was measured so, and dropped). In this package (on the class
 * path beside the datapath's classes) because the scheduler is package-private.
 * <p>
 * The history keeps the windows full, as a sender with more queued than its windows take: each step picks and sends
 * until no path has room, then acknowledges each path's oldest packets, all of them one step in eight (a path then
 * drains and may take a new port), else all but a quarter (it stays draining once its port budget is spent). Both
 * picks choose the same paths, so both schedulers live the same history; a run checks that they did. The time per
 * pick includes the send and the ACK it stands for, the same for both.
 * <pre>
 *   java -cp ... io.spraynic.datapath.transport.spray.PathSchedulerPickCpuTime [paths [rounds [picks per round]]]
 * </pre>
 */
public final class PathSchedulerPickCpuTime
{
    private static final int WARM_UP_ROUNDS = 3;
    private static final PathSendWindow.Listener IGNORED = new PathSendWindow.Listener()
    {
        public void onAcked(final long handle, final int psn, final long rttNanos)
        {
        }

        public void onLost(final long handle, final int psn)
        {
        }
    };

    private final PathScheduler scheduler;
    private final int paths;
    private final SprayConfig config;
    private final int[] credits; // the two-pass pick's credits; null: the scheduler's own pick
    private final SplittableRandom random;
    private final PathReceiveWindow[] receivers;
    private final MemorySegment ack;
    private long now;
    long picks;
    long secondRounds;
    long history = 17;

    private PathSchedulerPickCpuTime(final int paths, final boolean twoPass, final MemorySegment ack)
    {
        this.paths = paths;
        this.config = new SprayConfig().window(64, 256); // SpraySendCpuTime's windows; rotation 16-32 packets
        this.scheduler = new PathScheduler(paths, config, new SplittableRandom(7), 1000, 50_000);
        this.credits = twoPass ? new int[paths] : null;
        this.random = new SplittableRandom(11);
        this.ack = ack;
        receivers = new PathReceiveWindow[paths];
        for (int path = 0; path < paths; path++)
        {
            receivers[path] = new PathReceiveWindow(scheduler.sendWindows[path].basePsn());
        }
    }

    /** @param args paths (4), rounds kept (9), picks per round (2,000,000). */
    public static void main(final String[] args)
    {
        final int paths = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        final int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 9;
        final long picksPerRound = args.length > 2 ? Long.parseLong(args[2]) : 2_000_000;
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        try (Arena arena = Arena.ofConfined())
        {
            final PathSchedulerPickCpuTime build = new PathSchedulerPickCpuTime(paths, false,
                arena.allocate(io.spraynic.datapath.wire.SelectiveAckHeader.LENGTH));
            final PathSchedulerPickCpuTime twoPass = new PathSchedulerPickCpuTime(paths, true,
                arena.allocate(io.spraynic.datapath.wire.SelectiveAckHeader.LENGTH));
            final double[] buildNs = new double[rounds];
            final double[] twoPassNs = new double[rounds];
            final double[] ratios = new double[rounds];
            for (int round = -WARM_UP_ROUNDS; round < rounds; round++)
            {
                final long start = threads.getCurrentThreadCpuTime();
                twoPass.run(picksPerRound);
                final long middle = threads.getCurrentThreadCpuTime();
                build.run(picksPerRound);
                final long end = threads.getCurrentThreadCpuTime();
                if (build.history != twoPass.history)
                {
                    throw new IllegalStateException("the picks differ in round " + round);
                }
                if (round >= 0)
                {
                    twoPassNs[round] = (double)(middle - start) / picksPerRound;
                    buildNs[round] = (double)(end - middle) / picksPerRound;
                    ratios[round] = buildNs[round] / twoPassNs[round];
                }
            }
            System.out.println("the build's pick ÷ the copy, per round: " + Arrays.toString(ratios));
            Arrays.sort(buildNs);
            Arrays.sort(twoPassNs);
            Arrays.sort(ratios);
            System.out.printf("pick + its send and ACK, CPU ns per pick, %d paths: 0c37d7e's copy %.1f best, %.1f median; " +
                "the build's %.1f best, %.1f median; build ÷ copy, median of rounds %.3f (%d rounds of %d picks; %.0f %% of " +
                "the picks by the round with draining paths)%n", paths, twoPassNs[0], twoPassNs[rounds / 2],
                buildNs[0], buildNs[rounds / 2], ratios[rounds / 2], rounds, picksPerRound,
                100.0 * twoPass.secondRounds / twoPass.picks);
        }
    }

    private void run(final long picksToMake)
    {
        long made = 0;
        while (made < picksToMake)
        {
            now += 1_000;
            int path;
            while ((path = null == credits ? scheduler.pick() : twoPassPick()) >= 0)
            {
                scheduler.sendWindows[path].send(made, now);
                history = history * 31 + path;
                made++;
            }
            final boolean drain = random.nextInt(8) == 0;
            for (int p = 0; p < paths; p++)
            {
                final PathSendWindow window = scheduler.sendWindows[p];
                final int outstanding = window.outstanding();
                acknowledge(p, window, drain ? outstanding : outstanding - outstanding / 4);
            }
        }
    }

    // the two-pass pick of main 0c37d7e
    private int twoPassPick()
    {
        final long candidates = candidates();
        int best = twoPassPick(candidates, config.rotateMinPackets > 0);
        picks++;
        if (best < 0 && config.rotateMinPackets > 0)
        {
            best = twoPassPick(candidates, false);
            secondRounds += best >= 0 ? 1 : 0;
        }
        if (best >= 0)
        {
            scheduler.placedOnPort(best);
        }
        return best;
    }

    private int twoPassPick(final long candidates, final boolean skipDraining)
    {
        int total = 0;
        int best = -1;
        int bestCredit = 0;
        for (long left = candidates; left != 0; left &= left - 1) // in path order: ties go to the lower path
        {
            final int path = Long.numberOfTrailingZeros(left);
            final int outstanding = scheduler.sendWindows[path].outstanding();
            if (skipDraining && outstanding > 0 && scheduler.portSpent(path))
            {
                continue;
            }
            final int free = Math.min(scheduler.congestionWindows.window(path), PathSendWindow.CAPACITY) - outstanding;
            if (free <= 0)
            {
                continue;
            }
            final int credit = credits[path] + free;
            credits[path] = credit;
            total += free;
            if (best < 0 || credit > bestCredit)
            {
                best = path;
                bestCredit = credit;
            }
        }
        if (best >= 0)
        {
            credits[best] -= total;
        }
        return best;
    }

    // every path is live and answers in this history
    private long candidates()
    {
        return paths == 64 ? -1L : (1L << paths) - 1;
    }

    // a cumulative ACK of the path's oldest `count` packets
    private void acknowledge(final int path, final PathSendWindow window, final int count)
    {
        final PathReceiveWindow receiver = receivers[path];
        for (int i = 0; i < count; i++)
        {
            receiver.onPacket(0, Psn.add(window.basePsn(), i));
        }
        receiver.writeTo(0, ack, 0);
        window.onAck(ack, 0, now, IGNORED);
    }
}
