package io.spraynic.datapath.transport.spray;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * S8.4's window rate as the spray sender asks for it, once per pass of {@code DataSender.sendData} (on the shipped
 * 64 B path about once per packet): the build's {@link PathScheduler#windowRate}, which keeps the rate between changes
 * of its inputs, against main's (9bf48e05) sum over the live paths computed on every call, copied verbatim below,
 * alternated round by round in one JVM and timed by the thread's CPU time. One scheduler of 8 paths (the default);
 * every {@code ackEvery} calls one path takes an RTT sample as an ACK brings (the shipped bench takes one ACK per
 * about 8 data packets), and every 64th call a round's window change, so the build recomputes at that rate. Both
 * are first checked to give the same rate at every call. The copy runs first in each round unless told
 * {@code build-first}. In the benchmarks module, in the scheduler's package, for its package-private API.
 * <pre>
 *   java -cp ... io.spraynic.datapath.transport.spray.WindowRateCpuTime [ackEvery [rounds [copy-first|build-first]]]
 * </pre>
 */
public final class WindowRateCpuTime
{
    private static final int CALLS_PER_ROUND = 5_000_000;
    private static final int PATHS = 8;
    private static final int MTU = 4096;
    private static final int WARM_UP_ROUNDS = 3;

    private WindowRateCpuTime()
    {
    }

    /**
     * @param args calls per RTT sample (8), rounds (9), which loop runs first in each round (copy-first).
     */
    public static void main(final String[] args)
    {
        final int ackEvery = args.length > 0 ? Integer.parseInt(args[0]) : 8;
        final int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 9;
        final boolean buildFirst = args.length > 2 && "build-first".equals(args[2]);
        final PathScheduler scheduler = new PathScheduler(PATHS, new SprayConfig(), new SplittableRandom(7), 1000,
            50_000);
        final SplittableRandom random = new SplittableRandom(84);
        final long[] samples = new long[1024];
        for (int i = 0; i < samples.length; i++)
        {
            samples[i] = random.nextLong(10_000, 200_000);
        }
        for (int call = 0; call < 100_000; call++)
        {
            change(scheduler, samples, call, ackEvery);
            if (scheduler.windowRate(MTU) != mainWindowRate(scheduler, MTU))
            {
                throw new IllegalStateException("call " + call + ": the build and main's copy disagree");
            }
        }
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final double[] copyNs = new double[rounds];
        final double[] buildNs = new double[rounds];
        double sink = 0;
        for (int round = -WARM_UP_ROUNDS; round < rounds; round++)
        {
            for (int loop = 0; loop < 2; loop++)
            {
                final boolean build = buildFirst == (loop == 0);
                final long start = threads.getCurrentThreadCpuTime();
                sink += build ? buildCalls(scheduler, samples, ackEvery) : copyCalls(scheduler, samples, ackEvery);
                final double ns = (double)(threads.getCurrentThreadCpuTime() - start) / CALLS_PER_ROUND;
                if (round >= 0)
                {
                    (build ? buildNs : copyNs)[round] = ns;
                }
            }
        }
        Arrays.sort(copyNs);
        Arrays.sort(buildNs);
        System.out.printf("window rate, %d paths, an RTT sample every %d calls, %s, ns CPU per call (the changes " +
            "included) best / median: main's copy %.2f / %.2f, build %.2f / %.2f (build / copy %.3f best, %.3f " +
            "median; %d rounds; sink %d)%n", PATHS, ackEvery, buildFirst ? "build first" : "copy first", copyNs[0],
            copyNs[rounds / 2], buildNs[0], buildNs[rounds / 2], buildNs[0] / copyNs[0],
            buildNs[rounds / 2] / copyNs[rounds / 2], rounds, (long)sink & 1);
    }

    // what an ACK changes: an RTT sample every ackEvery calls, a round's window every 64th call (1..15 packets)
    private static void change(final PathScheduler scheduler, final long[] samples, final int call, final int ackEvery)
    {
        if (call % ackEvery == 0)
        {
            scheduler.rtt.onSample(call & (PATHS - 1), samples[call & (samples.length - 1)]);
        }
        if ((call & 63) == 0)
        {
            final int path = (call >>> 6) & (PATHS - 1);
            scheduler.congestionWindows.onAck(path, 1 + (call >>> 9) % 15, 0, call, Long.MAX_VALUE);
        }
    }

    private static double buildCalls(final PathScheduler scheduler, final long[] samples, final int ackEvery)
    {
        double sum = 0;
        for (int call = 0; call < CALLS_PER_ROUND; call++)
        {
            change(scheduler, samples, call, ackEvery);
            sum += scheduler.windowRate(MTU);
        }
        return sum;
    }

    private static double copyCalls(final PathScheduler scheduler, final long[] samples, final int ackEvery)
    {
        double sum = 0;
        for (int call = 0; call < CALLS_PER_ROUND; call++)
        {
            change(scheduler, samples, call, ackEvery);
            sum += mainWindowRate(scheduler, MTU);
        }
        return sum;
    }

    // main's PathScheduler.windowRate at 9bf48e05, verbatim but for reaching the scheduler's state from outside
    private static double mainWindowRate(final PathScheduler scheduler, final int mtu)
    {
        double rate = 0;
        for (int path = 0; path < PATHS; path++)
        {
            if (scheduler.isActive(path))
            {
                rate += (double)scheduler.congestionWindows.window(path) * mtu /
                    Math.max(1, scheduler.rtt.srttNanos(path, scheduler.siblingSrtt()));
            }
        }
        return rate;
    }
}
