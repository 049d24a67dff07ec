package io.spraynic.cli;

import io.spraynic.apps.exchange.PeerExchange;
import io.spraynic.datapath.telemetry.CountersFileReader;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code spraynic transfer --warmup}: what a visit does between its warm-up and its timed part. It reads the NIC's
 * spray connection counters from its own counters file when the warm-up was verified and again when the timed part
 * ended, so that the counts it reports are the timed part's alone ({@link #timedJson()}); with {@code --warmup-hold}
 * it also publishes {@value #WARM} into the exchange directory and waits for {@value #GO} there, so that whoever runs
 * the visit can read a fabric's counters (a lab's routers) at the same point. The connection is idle meanwhile.
 */
final class TransferPhases implements PeerExchange.VisitPhases
{
    /** Published once the warm-up was verified (with {@code --warmup-hold}). */
    static final String WARM = "visitor.warm";
    /** Awaited before the timed part starts (with {@code --warmup-hold}). */
    static final String GO = "visitor.go";
    /** A spray connection's counters that count the timed part's work: reported as deltas over it. */
    static final List<String> COUNTED = List.of("tx_packets", "rx_packets", "retransmitted", "lost", "moved",
        "timeouts", "spurious_timeouts", "spurious_timeouts_reported", "probes_sent", "acks_received", "acks_stale",
        "sack_gaps", "duplicates", "ecn_marks_received");
    /** The worker copies a connection's counters into the file once a millisecond: a read waits for two copies. */
    private static final long PUBLISHED_WITHIN_MILLIS = 3;
    private static final Pattern CONNECTION_COUNTER = Pattern.compile("conn 0x[0-9a-f]+: ([a-z_]+)");

    private final Path countersFile;
    private final Path exchange;
    private final boolean hold;
    private final Duration timeout;
    private Map<String, Long> atWarm = Map.of();
    private Map<String, Long> atEnd = Map.of();
    private long warmupNanos = -1;

    /**
     * @param countersFile the NIC's own counters file.
     * @param exchange     the visit's exchange directory.
     * @param hold         publish {@value #WARM} after the warm-up and wait for {@value #GO}.
     * @param timeout      how long to wait for {@value #GO}.
     */
    TransferPhases(final Path countersFile, final Path exchange, final boolean hold, final Duration timeout)
    {
        this.countersFile = countersFile;
        this.exchange = exchange;
        this.hold = hold;
        this.timeout = timeout;
    }

    @Override
    public void warmedUp(final long nanos) throws IOException
    {
        warmupNanos = nanos;
        atWarm = read();
        if (hold)
        {
            PeerExchange.publish(exchange, WARM, "warm " + nanos);
            PeerExchange.await(exchange, GO, timeout);
        }
    }

    @Override
    public void timed() throws IOException
    {
        atEnd = read();
    }

    /** @return the warm-up's time in nanoseconds, or -1 if it has not been verified. */
    long warmupNanos()
    {
        return warmupNanos;
    }

    /** @return {@link #COUNTED}'s growth over the timed part, summed over the NIC's connections. */
    Map<String, Long> timedCounts()
    {
        return delta(atWarm, atEnd);
    }

    /** @return {"lost":3,...}: the timed part's counts. */
    String timedJson()
    {
        final StringBuilder json = new StringBuilder("{");
        for (final Map.Entry<String, Long> e : timedCounts().entrySet())
        {
            json.append(json.length() > 1 ? "," : "").append('"').append(e.getKey()).append("\":").append(e.getValue());
        }
        return json.append('}').toString();
    }

    /** @return the timed part's counts in words: "lost 3, retransmitted 4, ...". */
    String describe()
    {
        final StringBuilder text = new StringBuilder();
        for (final Map.Entry<String, Long> e : timedCounts().entrySet())
        {
            text.append(text.isEmpty() ? "" : ", ").append(e.getKey()).append(' ').append(e.getValue());
        }
        return String.format(Locale.ROOT, "warm-up %.3f s; over the timed part: %s", warmupNanos / 1e9, text);
    }

    static Map<String, Long> delta(final Map<String, Long> before, final Map<String, Long> after)
    {
        final Map<String, Long> delta = new LinkedHashMap<>();
        for (final String name : COUNTED)
        {
            delta.put(name, after.getOrDefault(name, 0L) - before.getOrDefault(name, 0L));
        }
        return delta;
    }

    /** @return {@link #COUNTED} summed over the connections in {@code counters} (labels "conn 0x1a2: lost"). */
    static Map<String, Long> sumOverConnections(final List<CountersFileReader.Counter> counters)
    {
        final Map<String, Long> sums = new LinkedHashMap<>();
        for (final CountersFileReader.Counter counter : counters)
        {
            final Matcher matcher = CONNECTION_COUNTER.matcher(counter.label());
            if (matcher.matches() && COUNTED.contains(matcher.group(1)))
            {
                sums.merge(matcher.group(1), counter.value(), Long::sum);
            }
        }
        return sums;
    }

    private Map<String, Long> read() throws IOException
    {
        try
        {
            Thread.sleep(PUBLISHED_WITHIN_MILLIS);
        }
        catch (final InterruptedException e)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the counters", e);
        }
        try (CountersFileReader reader = CountersFileReader.open(countersFile))
        {
            return sumOverConnections(reader.read());
        }
    }
}
