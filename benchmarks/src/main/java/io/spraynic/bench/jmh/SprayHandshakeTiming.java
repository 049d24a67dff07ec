package io.spraynic.bench.jmh;

import java.util.Locale;

/**
 * The operations of {@link SprayHandshakeBenchmark} timed in plain loops, reporting the fastest of many small
 * batches: on a machine shared with other load the fastest batch is close to the cost itself, where JMH's mean
 * measures the load (benchmarks/RESULTS.md section 11). Run: {@code java -cp <benchmark classpath>
 * io.spraynic.bench.jmh.SprayHandshakeTiming}.
 */
public final class SprayHandshakeTiming
{
    @FunctionalInterface
    private interface Op
    {
        Object run() throws Exception;
    }

    private SprayHandshakeTiming()
    {
    }

    private static void time(final String name, final Op op, final int batches, final int perBatch) throws Exception
    {
        long best = Long.MAX_VALUE;
        long total = 0;
        for (int b = 0; b < batches; b++)
        {
            final long start = System.nanoTime();
            for (int i = 0; i < perBatch; i++)
            {
                op.run();
            }
            final long took = System.nanoTime() - start;
            total += took;
            best = Math.min(best, took);
        }
        System.out.printf(Locale.ROOT, "%-16s fastest batch %8.1f us/op, mean %8.1f us/op (%d x %d)%n", name,
            best / 1e3 / perBatch, total / 1e3 / perBatch / batches, batches, perBatch);
    }

    public static void main(final String[] args) throws Exception
    {
        final SprayHandshakeBenchmark benchmark = new SprayHandshakeBenchmark();
        benchmark.setUp();
        try
        {
            for (int round = 0; round < 2; round++) // the first round warms up
            {
                System.out.println(round == 0 ? "warm-up" : "measured");
                time("x25519KeyPair", benchmark::x25519KeyPair, 100, 20);
                time("x25519Agreement", benchmark::x25519Agreement, 100, 20);
                time("handshake", benchmark::handshake, 60, 10);
            }
        }
        finally
        {
            benchmark.tearDown();
        }
    }
}
