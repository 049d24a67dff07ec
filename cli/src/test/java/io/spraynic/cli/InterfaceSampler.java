package io.spraynic.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Samples the packet and byte counters of a network namespace's interfaces ({@code ip -s -j link show}) as fast as a
 * process can be started, on a thread of its own, until closed: to see when traffic through a lab node stalls and
 * resumes, or how two senders share a link, while a transfer runs.
 */
final class InterfaceSampler implements AutoCloseable
{
    private static final Pattern ENTRY = Pattern.compile(
        "\"ifname\":\"([^\"]+)\".*?\"stats64\":\\{\"rx\":\\{\"bytes\":(\\d+),\"packets\":(\\d+).*?\"tx\":\\{\"bytes\":" +
            "(\\d+),\"packets\":(\\d+)");

    /** One sample: when (System.nanoTime) and per interface {rx bytes, rx packets, tx bytes, tx packets}. */
    record Sample(long nanos, Map<String, long[]> interfaces)
    {
        long get(final String ifname, final int field)
        {
            final long[] values = interfaces.get(ifname);
            return null == values ? 0 : values[field];
        }
    }

    static final int RX_BYTES = 0;
    static final int RX_PACKETS = 1;
    static final int TX_BYTES = 2;
    static final int TX_PACKETS = 3;

    private final String netns;
    private final List<Sample> samples = new ArrayList<>();
    private final Thread thread;
    private volatile boolean running = true;

    InterfaceSampler(final String netns)
    {
        this.netns = netns;
        this.thread = new Thread(this::loop, "interface-sampler-" + netns);
        thread.setDaemon(true);
        thread.start();
    }

    private void loop()
    {
        while (running)
        {
            try
            {
                final Process process = new ProcessBuilder("ip", "-n", netns, "-s", "-j", "link", "show")
                    .redirectErrorStream(true).start();
                final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                process.waitFor(10, TimeUnit.SECONDS);
                final long now = System.nanoTime();
                final Map<String, long[]> interfaces = new HashMap<>();
                for (final String entry : out.split("\\{\"ifindex\""))
                {
                    final Matcher m = ENTRY.matcher(entry);
                    if (m.find())
                    {
                        interfaces.put(m.group(1), new long[] {Long.parseLong(m.group(2)), Long.parseLong(m.group(3)),
                            Long.parseLong(m.group(4)), Long.parseLong(m.group(5))});
                    }
                }
                synchronized (samples)
                {
                    samples.add(new Sample(now, interfaces));
                }
                Thread.sleep(10);
            }
            catch (final IOException | InterruptedException e)
            {
                return;
            }
        }
    }

    List<Sample> samples()
    {
        synchronized (samples)
        {
            return List.copyOf(samples);
        }
    }

    /**
     * @return the longest time, in seconds, from {@code fromNanos} on during which the sum of {@code field} over
     * {@code ifnames} did not grow, up to the last sample in which it grew (the traffic's end is no stall).
     */
    double longestStallAfter(final long fromNanos, final int field, final String... ifnames)
    {
        long lastGrowth = fromNanos;
        long longest = 0;
        long previous = -1;
        for (final Sample sample : samples())
        {
            long total = 0;
            for (final String ifname : ifnames)
            {
                total += sample.get(ifname, field);
            }
            if (sample.nanos() >= fromNanos && previous >= 0 && total > previous)
            {
                longest = Math.max(longest, sample.nanos() - lastGrowth);
                lastGrowth = sample.nanos();
            }
            else if (sample.nanos() < fromNanos)
            {
                lastGrowth = fromNanos;
            }
            previous = total;
        }
        return longest / 1e9;
    }

    /** @return the mean time between samples, seconds. */
    double meanInterval()
    {
        final List<Sample> all = samples();
        return all.size() < 2 ? Double.NaN :
            (all.get(all.size() - 1).nanos() - all.get(0).nanos()) / 1e9 / (all.size() - 1);
    }

    @Override
    public void close() throws InterruptedException
    {
        running = false;
        thread.join(15_000);
    }
}
