package io.spraynic.bench.e2e;

import io.spraynic.datapath.nic.DpdkNic;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.ToLongFunction;

/**
 * {@code spraynic bench latency}: in one invocation, alternating rounds of the 64 B RDMA WRITE ping-pong
 * through each transport, the Java raw-frame ping-pong and (optionally) the C raw-frame ping-pong, all on
 * {@code net_ring}; per name the medians over rounds of each percentile, and the Java / C ratio.
 */
public final class LatencyComparison
{
    /** Everything measured, by name in first-run order. */
    public record Summary(int length, Map<String, List<LatencyResult>> rounds)
    {
        public long median(final String name, final ToLongFunction<LatencyResult> percentile)
        {
            final long[] values = rounds.get(name).stream().mapToLong(percentile).sorted().toArray();
            return values.length % 2 == 1 ? values[values.length / 2] :
                (values[values.length / 2 - 1] + values[values.length / 2]) / 2;
        }

        /** @return raw Java p50 ÷ raw C p50, or NaN without the C side. */
        public double javaOverC()
        {
            return rounds.containsKey("raw-c") ?
                (double)median("raw-java", LatencyResult::p50Ns) / median("raw-c", LatencyResult::p50Ns) : Double.NaN;
        }

        public String toText()
        {
            final StringBuilder text = new StringBuilder(String.format(Locale.ROOT,
                "round trips, %d B, medians over %d rounds:%n", length, rounds.values().iterator().next().size()));
            for (final String name : rounds.keySet())
            {
                text.append(String.format(Locale.ROOT, "  %-9s p50 %,7d ns  p99 %,7d ns  p99.9 %,7d ns%n", name,
                    median(name, LatencyResult::p50Ns), median(name, LatencyResult::p99Ns),
                    median(name, LatencyResult::p999Ns)));
            }
            if (!Double.isNaN(javaOverC()))
            {
                text.append(String.format(Locale.ROOT, "  raw java / raw c (p50) = %.3f (goal <= 1.5)%n", javaOverC()));
            }
            return text.toString();
        }

        public String toJson()
        {
            final StringBuilder json = new StringBuilder(String.format(Locale.ROOT, "{\"frameOrMessageBytes\":%d,\"results\":[", length));
            boolean first = true;
            for (final Map.Entry<String, List<LatencyResult>> entry : rounds.entrySet())
            {
                final String name = entry.getKey();
                json.append(first ? "" : ",").append(String.format(Locale.ROOT,
                    "{\"name\":\"%s\",\"p50Ns\":%d,\"p99Ns\":%d,\"p999Ns\":%d,\"rounds\":[", name,
                    median(name, LatencyResult::p50Ns), median(name, LatencyResult::p99Ns), median(name, LatencyResult::p999Ns)));
                json.append(String.join(",", entry.getValue().stream().map(LatencyResult::toJson).toList())).append("]}");
                first = false;
            }
            json.append("]");
            if (!Double.isNaN(javaOverC()))
            {
                json.append(String.format(Locale.ROOT, ",\"rawJavaOverC\":%.4f", javaOverC()));
            }
            return json.append("}").toString();
        }
    }

    private LatencyComparison()
    {
    }

    /**
     * @param transports the transports to measure.
     * @param length     bytes per WRITE and per raw frame (a raw frame is at least 60 B).
     * @param withC      also run the C raw ping-pong.
     * @param idle       the transports' poll threads' idle strategy (the raw ping-pongs always spin).
     */
    public static Summary run(
        final List<TransportPair.Kind> transports, final int length, final int warmup, final int iterations,
        final int rounds, final boolean withRaw, final boolean withC, final Idle idle, final Consumer<String> log)
        throws IOException, InterruptedException
    {
        final Map<String, List<LatencyResult>> results = new LinkedHashMap<>();
        final int frameLength = Math.max(60, length);
        try (DpdkNic nic = RingNic.start())
        {
            for (int round = 1; round <= rounds; round++)
            {
                for (final TransportPair.Kind kind : transports)
                {
                    add(results, PingPong.run(nic, kind, length, warmup, iterations, Duration.ofSeconds(120), idle), round, log);
                }
                if (withRaw)
                {
                    add(results, RawPingPong.run(nic, frameLength, warmup, iterations, Duration.ofSeconds(60)), round, log);
                }
                if (withC)
                {
                    add(results, CPingPong.run(frameLength, warmup, iterations), round, log);
                }
            }
        }
        return new Summary(length, results);
    }

    private static void add(
        final Map<String, List<LatencyResult>> results, final LatencyResult result, final int round, final Consumer<String> log)
    {
        if (result.mismatches() != 0)
        {
            throw new IllegalStateException(result.name() + ": " + result.mismatches() + " answers did not match what was sent");
        }
        results.computeIfAbsent(result.name(), name -> new ArrayList<>()).add(result);
        log.accept("round " + round + ": " + result.toText());
    }
}
