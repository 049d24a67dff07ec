package io.spraynic.bench.e2e;

import org.HdrHistogram.Histogram;

import java.util.Locale;

/**
 * Round-trip times of one ping-pong run, in nanoseconds.
 *
 * @param name       what ran (e.g. {@code spray}, {@code raw-java}, {@code raw-c}).
 * @param iterations round trips measured (after the warm-up).
 * @param mismatches round trips whose answer did not carry what was sent: must be 0.
 */
public record LatencyResult(String name, long iterations, long mismatches, double meanNs, long p50Ns, long p99Ns,
    long p999Ns, long maxNs)
{
    public static LatencyResult of(final String name, final Histogram histogram, final long mismatches)
    {
        return new LatencyResult(name, histogram.getTotalCount(), mismatches, histogram.getMean(),
            histogram.getValueAtPercentile(50), histogram.getValueAtPercentile(99), histogram.getValueAtPercentile(99.9),
            histogram.getMaxValue());
    }

    /** A histogram for round trips of 1 ns to 10 s at 3 significant digits (recording allocates nothing). */
    public static Histogram newHistogram()
    {
        return new Histogram(1, 10_000_000_000L, 3);
    }

    public String toJson()
    {
        return String.format(Locale.ROOT,
            "{\"name\":\"%s\",\"iterations\":%d,\"mismatches\":%d,\"meanNs\":%.1f,\"p50Ns\":%d,\"p99Ns\":%d," +
            "\"p999Ns\":%d,\"maxNs\":%d}", name, iterations, mismatches, meanNs, p50Ns, p99Ns, p999Ns, maxNs);
    }

    public String toText()
    {
        return String.format(Locale.ROOT, "%-9s round trip: p50 %,d ns  p99 %,d ns  p99.9 %,d ns  mean %,.0f ns  (%,d round trips)",
            name, p50Ns, p99Ns, p999Ns, meanNs, iterations);
    }
}
