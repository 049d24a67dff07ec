package io.spraynic.bench.jmh;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.function.LongSupplier;

/**
 * Loops timed by the thread's CPU time, not the wall clock, in rounds: on a machine loaded by other work, where a
 * thread waits for a core much of the time and this VM exposes no hardware counters for {@code -prof perfnorm}, the
 * CPU time an item (a packet, a frame) costs is what stays comparable between runs. Each round runs every loop once,
 * in the order added; {@link #WARM_UP_ROUNDS} rounds come first and are not kept. The harness of
 * {@link WireCpuTime} and {@link FrameWriteCpuTime}.
 */
final class CpuTimeRounds
{
    /** Rounds run first and not kept: the loops' methods are compiled by then. */
    static final int WARM_UP_ROUNDS = 3;

    /** One timed loop: its own method, compiled as a whole rather than on-stack-replaced in the caller. */
    @FunctionalInterface
    interface Loop
    {
        /** @return a value the caller folds into a sink, so that the JIT keeps the loop's work. */
        long run();
    }

    private final LongSupplier cpuNanos;
    private final int rounds;
    private final long itemsPerLoop;
    private Loop[] loops = new Loop[0];
    private double[][] nanosPerItem = new double[0][];
    private long sink;

    /**
     * @param rounds       rounds kept (at least 1).
     * @param itemsPerLoop items one run of a loop handles: what its CPU time is divided by.
     */
    CpuTimeRounds(final int rounds, final long itemsPerLoop)
    {
        this(rounds, itemsPerLoop, ManagementFactory.getThreadMXBean()::getCurrentThreadCpuTime);
    }

    /** As above, with the clock given (tests). */
    CpuTimeRounds(final int rounds, final long itemsPerLoop, final LongSupplier cpuNanos)
    {
        if (rounds < 1 || itemsPerLoop < 1)
        {
            throw new IllegalArgumentException("rounds and items per loop must be at least 1: " + rounds + ", " +
                itemsPerLoop);
        }
        this.rounds = rounds;
        this.itemsPerLoop = itemsPerLoop;
        this.cpuNanos = cpuNanos;
    }

    /** @param loop timed in every round, after those added before. @return this. */
    CpuTimeRounds add(final Loop loop)
    {
        loops = Arrays.copyOf(loops, loops.length + 1);
        loops[loops.length - 1] = loop;
        nanosPerItem = Arrays.copyOf(nanosPerItem, loops.length);
        nanosPerItem[loops.length - 1] = new double[rounds];
        return this;
    }

    /** Runs the warm-up and the kept rounds. @return this. */
    CpuTimeRounds run()
    {
        for (int round = -WARM_UP_ROUNDS; round < rounds; round++)
        {
            for (int l = 0; l < loops.length; l++)
            {
                final long start = cpuNanos.getAsLong();
                sink += loops[l].run();
                final long spent = cpuNanos.getAsLong() - start;
                if (round >= 0)
                {
                    nanosPerItem[l][round] = (double)spent / itemsPerLoop;
                }
            }
        }
        for (final double[] perRound : nanosPerItem)
        {
            Arrays.sort(perRound);
        }
        return this;
    }

    /** @param loop index, in the order added. @return its fastest kept round, CPU ns per item. */
    double best(final int loop)
    {
        return nanosPerItem[loop][0];
    }

    /** @param loop index, in the order added. @return its median kept round (the upper one of an even count). */
    double median(final int loop)
    {
        return nanosPerItem[loop][rounds / 2];
    }

    /** @return what the loops returned, summed: printed (its low bit) so that no loop is dead code. */
    long sink()
    {
        return sink;
    }
}
