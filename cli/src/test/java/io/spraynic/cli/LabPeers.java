package io.spraynic.cli;

import io.spraynic.datapath.telemetry.CountersFileReader;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.spraynic.cli.CliTestSupport.javaCommand;

/**
 * NIC processes on the Linux ECMP lab's hosts ({@link LinuxLab}, {@code --host-stack none}): a serving
 * {@code spraynic nic} ({@code --expose}) and visiting {@code spraynic transfer --peer-kind nic} processes, each on
 * {@code net_af_packet} ports over its host's plane interfaces (or {@code net_af_xdp}, or kernel UDP sockets on its
 * addresses: {@link #PORT}), given its own addresses and gateways, and the visitor
 * only the served NIC's published addresses. Every process it starts is destroyed by {@link #close()}.
 */
final class LabPeers implements AutoCloseable
{
    /**
     * RoCEv2's local ACK timeout exponent: {@code auto} (default) derives the visitor's from round trips measured to
     * the serving NIC just before it connects ({@link RoceAckTimeout}); a number (e.g. 12: 16.8 ms, the lab's fixed
     * value up to RESULTS.md section 38, which failed with RETRY_EXC_ERR at 10-13 runnable threads per core) sets it on
     * both ends.
     */
    static final String ROCEV2_ACK_TIMEOUT = System.getProperty("spraynic.lab.rocev2AckTimeout", "auto");
    /**
     * The NICs' ports, one per plane: {@code -Dspraynic.lab.port=af_packet} (the default), {@code af_xdp} or {@code udp}
     * (kernel UDP sockets on the hosts' kernels' addresses); the lab is built for it ({@link LinuxLab#upForNics}).
     */
    static final LabPortKind PORT = LabPortKind.parse("-Dspraynic.lab.port",
        System.getProperty("spraynic.lab.port", "af_packet"));
    private final LinuxLab lab;
    private final Path dir;
    private final int planes;
    private final List<Process> processes = new ArrayList<>();
    private int sequence;
    private String portRotation = System.getProperty("spraynic.lab.rotation", "16-32");
    private String reorderWindow = "off";
    private String warmupConnection = "same";
    private String rocev2AckTimeout = ROCEV2_ACK_TIMEOUT;
    private int samplerMillis = 5;
    private List<String> rocev2Options = List.of();

    LabPeers(final LinuxLab lab, final Path dir, final int planes)
    {
        this.lab = lab;
        this.dir = dir;
        this.planes = planes;
    }

    /** A spray process's rotation and reordering window (a RoCEv2 one refuses them: it would ignore them). */
    private List<String> sprayOptions()
    {
        return List.of("--port-rotation", portRotation, "--reorder-window", reorderWindow);
    }

    LinuxLab lab()
    {
        return lab;
    }

    /** Spray's reordering window for the processes started from now on ({@code --reorder-window}, PROTOCOL.md S6.5-3). */
    LabPeers reorderWindow(final String window)
    {
        this.reorderWindow = window;
        return this;
    }

    /** Spray's source-port rotation for the processes started from now on ({@code --port-rotation}). */
    LabPeers portRotation(final String rotation)
    {
        this.portRotation = rotation;
        return this;
    }

    /**
     * What the RoCEv2 NICs started from now on are told of the fabric ({@code --rocev2-line-rate RATE}, then each
     * {@code --dcqcn NAME=VALUE}), both ends alike, as an operator configures a NIC's DCQCN; null or empty: nothing (the
     * NIC's defaults: a 100 Gb/s line).
     */
    LabPeers rocev2Dcqcn(final String lineRate, final List<String> parameters)
    {
        final List<String> options = new ArrayList<>();
        if (null != lineRate)
        {
            options.addAll(List.of("--rocev2-line-rate", lineRate));
        }
        for (final String parameter : parameters)
        {
            options.addAll(List.of("--dcqcn", parameter));
        }
        this.rocev2Options = List.copyOf(options);
        return this;
    }

    /** RoCEv2's local ACK timeout for the NICs started from now on: {@code auto} or an exponent (1-31). */
    LabPeers rocev2AckTimeout(final String exponentOrAuto)
    {
        this.rocev2AckTimeout = exponentOrAuto;
        return this;
    }

    /**
     * After a warm-up, time the warm-up's connection ({@code same}, the default) or a new one ({@code fresh}: a cold
     * connection in a warm process), for the visits started from now on ({@code --warmup-connection}).
     */
    LabPeers warmupConnection(final String which)
    {
        this.warmupConnection = which;
        return this;
    }

    /**
     * How often the counters samplers of the processes started from now on read their counters files: 5 ms (the
     * default) catches a congestion window's smallest value; a slower one leaves the NICs' threads more of the cores.
     */
    LabPeers samplerMillis(final int millis)
    {
        this.samplerMillis = millis;
        return this;
    }

    /** A serving NIC in {@code host}: its exchange directory (nic.addr) and its counters as sampled. */
    record Served(String host, String mode, Process process, Path exchange, CountersSampler counters, Path output)
    {
    }

    /** @return the non-zero counters whose names contain {@code part}, for a failure's message. */
    static String nonZero(final Map<String, Long> counters, final String part)
    {
        final StringBuilder text = new StringBuilder();
        counters.forEach((name, value) ->
        {
            if (name.contains(part) && value != 0)
            {
                text.append(name.substring(name.indexOf(part) + part.length())).append(' ').append(value).append(", ");
            }
        });
        return text.isEmpty() ? "none" : text.substring(0, text.length() - 2);
    }

    /** A visit under way, or ended; {@code exchange} is its exchange directory. */
    record Visit(String host, Process process, Path output, CountersSampler counters, long startNanos, Path exchange,
        RoceAckTimeout.Choice ackTimeout)
    {
        /**
         * Waits for a visit started with a warm-up to have verified it and to hold ({@code --warmup-hold}); throws with
         * its output if it ends or does not get there in time.
         */
        void awaitWarm(final long seconds) throws IOException, InterruptedException
        {
            final Path warm = exchange.resolve(TransferPhases.WARM);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (!Files.exists(warm))
            {
                if (!process.isAlive() || System.nanoTime() >= deadline)
                {
                    process.destroyForcibly();
                    throw new IllegalStateException("the visit from " + host + " did not hold after its warm-up: " +
                        Files.readString(output) + "; the visitor's RoCEv2 counters as last sampled: " +
                        nonZero(counters.snapshot(), "rocev2 "));
                }
                Thread.sleep(5);
            }
        }

        /** Lets a holding visit go on to its timed part. */
        void go() throws IOException
        {
            io.spraynic.apps.exchange.PeerExchange.publish(exchange, TransferPhases.GO, "go");
        }

        /** Waits for the visit to end; throws with its output if it does not in time. */
        Result await(final long seconds) throws IOException, InterruptedException
        {
            final boolean done = process.waitFor(seconds, TimeUnit.SECONDS);
            final long end = System.nanoTime();
            final String out = Files.readString(output);
            if (!done)
            {
                process.destroyForcibly();
                throw new IllegalStateException("the visit from " + host + " did not end in " + seconds + " s: " + out);
            }
            counters.close();
            return new Result(process.exitValue(), out, json(out, "seconds"), out.contains("\"verified\":true"),
                (end - startNanos) / 1e9, counters.snapshot(), counters.smallest());
        }
    }

    /**
     * @param seconds the transfer's own time (its "seconds"), @param wallSeconds from start to exit, @param counters
     *                the visitor's counters, the largest value each had while it ran, @param smallest the smallest
     *                non-zero value each had (gauges: a path's congestion window).
     */
    record Result(int exitCode, String output, double seconds, boolean verified, double wallSeconds,
        Map<String, Long> counters, Map<String, Long> smallest)
    {
        /** @return the sum over the visitor's paths of the smallest congestion window each had (packets). */
        long smallestWindows()
        {
            return LabPeers.connection(smallest, "path \\d+ window_packets");
        }

        /**
         * The sum over the visitor's connections of their counter {@code name} (spray: lost, retransmitted, ...): over
         * the timed part alone as the visitor counted it ({@code "timed"} in its JSON) when it warmed up first, else
         * the largest value the sampler saw.
         */
        long connection(final String name)
        {
            final java.util.regex.Matcher timed = java.util.regex.Pattern.compile("\"timed\":\\{([^}]*)}").matcher(output);
            if (timed.find())
            {
                final double value = json(timed.group(1), name);
                if (Double.isNaN(value))
                {
                    throw new IllegalArgumentException("the visitor did not count " + name + " over its timed part: " +
                        timed.group(1));
                }
                return (long)value;
            }
            return LabPeers.connection(counters, name);
        }

        /** @return the smallest smoothed RTT any of the visitor's paths had while it ran, in milliseconds. */
        double smallestSrttMillis()
        {
            return LabPeers.smallestSrttMillis(smallest);
        }

        /** @return the largest smoothed RTT any of the visitor's paths had while it ran, in milliseconds. */
        double largestSrttMillis()
        {
            return LabPeers.largestSrttMillis(counters);
        }
    }

    /**
     * Reads the live counters file(s) in a run directory every few milliseconds on a thread of its own, keeping each
     * counter's largest value: a connection's counters leave the file when it closes, at the end of a transfer.
     */
    static final class CountersSampler implements AutoCloseable
    {
        private final Map<String, Long> max = new HashMap<>();
        private final Map<String, Long> min = new HashMap<>();
        private final Thread thread;
        private final Path runDir;
        private volatile boolean running = true;

        CountersSampler(final Path runDir, final int periodMillis)
        {
            this.runDir = runDir;
            thread = new Thread(() ->
            {
                while (running)
                {
                    sample(runDir);
                    try
                    {
                        Thread.sleep(periodMillis);
                    }
                    catch (final InterruptedException e)
                    {
                        return;
                    }
                }
                sample(runDir);
            }, "counters-sampler");
            thread.setDaemon(true);
            thread.start();
        }

        private void sample(final Path runDir)
        {
            try
            {
                final java.util.Optional<Path> live = CountersFileReader.findLive(runDir);
                if (live.isEmpty())
                {
                    return;
                }
                try (CountersFileReader reader = CountersFileReader.open(live.get()))
                {
                    final List<CountersFileReader.Counter> read = reader.read();
                    synchronized (max)
                    {
                        for (final CountersFileReader.Counter counter : read)
                        {
                            max.merge(counter.label(), counter.value(), Math::max);
                            if (counter.value() > 0) // a gauge is 0 until its first publication
                            {
                                min.merge(counter.label(), counter.value(), Math::min);
                            }
                        }
                    }
                }
            }
            catch (final RuntimeException e)
            {
                // the file went away between finding and reading it: the next sample
            }
        }

        /** @return every counter's value now, read at once (not the largest seen). */
        Map<String, Long> current()
        {
            final Map<String, Long> now = new HashMap<>();
            final java.util.Optional<Path> live = CountersFileReader.findLive(runDir);
            if (live.isPresent())
            {
                try (CountersFileReader reader = CountersFileReader.open(live.get()))
                {
                    for (final CountersFileReader.Counter counter : reader.read())
                    {
                        now.put(counter.label(), counter.value());
                    }
                }
            }
            return now;
        }

        /** Forgets the values seen so far: {@link #snapshot()} and {@link #smallest()} cover what comes after. */
        void restart()
        {
            synchronized (max)
            {
                max.clear();
                min.clear();
            }
        }

        Map<String, Long> smallest()
        {
            synchronized (max)
            {
                return new HashMap<>(min);
            }
        }

        Map<String, Long> snapshot()
        {
            synchronized (max)
            {
                return new HashMap<>(max);
            }
        }

        @Override
        public void close() throws InterruptedException
        {
            running = false;
            thread.join(5_000);
        }
    }

    /** The sum over connections of counter {@code name}: labels "conn 0x1a2: NAME" (not the per-path ones). */
    static long connection(final Map<String, Long> counters, final String name)
    {
        return connection(counters, name, Long::sum);
    }

    /** @return the smallest of the paths' smoothed RTTs in {@code smallest} (a sampler's smallest()), milliseconds. */
    static double smallestSrttMillis(final Map<String, Long> smallest)
    {
        return connection(smallest, "path \\d+ srtt_ns", (a, b) -> a == 0 ? b : Math.min(a, b)) / 1e6;
    }

    /** @return the largest of the paths' smoothed RTTs in {@code largest} (a sampler's snapshot()), milliseconds. */
    static double largestSrttMillis(final Map<String, Long> largest)
    {
        return connection(largest, "path \\d+ srtt_ns", Math::max) / 1e6;
    }

    /** Counter {@code name} (a regular expression) over connections, combined by {@code combine} from 0. */
    static long connection(final Map<String, Long> counters, final String name,
        final java.util.function.LongBinaryOperator combine)
    {
        long combined = 0;
        for (final Map.Entry<String, Long> e : counters.entrySet())
        {
            if (e.getKey().matches("conn 0x[0-9a-f]+: " + name))
            {
                combined = combine.applyAsLong(combined, e.getValue());
            }
        }
        return combined;
    }

    Served serve(final String host, final String mode, final long expose, final int paths)
        throws IOException, InterruptedException
    {
        final String name = "serve-" + host + "-" + mode + "-" + sequence++;
        final Path exchange = Files.createDirectories(dir.resolve(name));
        final Path runDir = Files.createDirectories(dir.resolve(name + "-run"));
        final Path output = dir.resolve(name + ".out");
        final List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", lab.netns(host)));
        command.addAll(javaCommand(List.of("nic", "--config", config(host, name).toString(), "--mode", mode,
            "--ip", perPlane(host, "ipv4"), "--gateway", perPlane(host, "gateway"), "--expose", Long.toString(expose),
            "--paths", Integer.toString(paths), "--exchange", exchange.toString(), "--seconds", "600",
            // a responder's timer never runs (only a requester times out): with auto, the nic command's default
            "--rocev2-ack-timeout", rocev2AckTimeout.equals("auto") ? "14" : rocev2AckTimeout)));
        command.addAll(mode.equals("rocev2") ? rocev2Options : sprayOptions());
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().put("SPRAYNIC_RUN_DIR", runDir.toString());
        final Process process = start(builder);
        final Path addr = exchange.resolve("nic.addr");
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!Files.exists(addr) && process.isAlive() && System.nanoTime() < deadline)
        {
            Thread.sleep(50);
        }
        if (!Files.exists(addr))
        {
            process.destroyForcibly();
            throw new IllegalStateException("the serving NIC in " + host + " published no address: " +
                Files.readString(output));
        }
        return new Served(host, mode, process, exchange, new CountersSampler(runDir, samplerMillis), output);
    }

    /** Starts a visit from {@code host} to a served NIC: WRITEs of {@code size} bytes, then READs of them back. */
    Visit visit(final String host, final Served served, final long size, final int paths, final int timeoutSeconds)
        throws IOException, InterruptedException
    {
        return visit(host, served, size, paths, timeoutSeconds, 0);
    }

    /**
     * {@link #visit(String, Served, long, int, int)} after a verified warm-up of {@code warmup} bytes over the same
     * connection ({@code --warmup}, 0: none); with one, the visit holds after it ({@code --warmup-hold}) until
     * {@link Visit#go()}, and its JSON counts the timed part alone.
     */
    Visit visit(final String host, final Served served, final long size, final int paths, final int timeoutSeconds,
        final long warmup) throws IOException, InterruptedException
    {
        final String name = "visit-" + host + "-" + served.mode() + "-" + sequence++;
        // spray: a directory of its own with B's addresses only; RoCEv2 exchanges queue pairs out of band, through B's
        final Path visitDir = served.mode().equals("rocev2") ? served.exchange() : Files.createDirectories(dir.resolve(name));
        if (!served.mode().equals("rocev2"))
        {
            Files.copy(served.exchange().resolve("nic.addr"), visitDir.resolve("nic.addr.tmp"));
            Files.move(visitDir.resolve("nic.addr.tmp"), visitDir.resolve("nic.addr"), StandardCopyOption.ATOMIC_MOVE);
        }
        final Path output = dir.resolve(name + ".out");
        final RoceAckTimeout.Choice ackTimeout = !served.mode().equals("rocev2") ? null :
            rocev2AckTimeout.equals("auto") ? RoceAckTimeout.fromRtt(lab.rtt(served.host(), RoceAckTimeout.ECHOES)) :
            RoceAckTimeout.given(Integer.parseInt(rocev2AckTimeout));
        final List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", lab.netns(host)));
        command.addAll(javaCommand(List.of("transfer", "--config", config(host, name).toString(), "--mode",
            served.mode(), "--peer-kind", "nic", "--ip", perPlane(host, "ipv4"), "--gateway", perPlane(host, "gateway"),
            "--paths", Integer.toString(paths), "--exchange", visitDir.toString(), "--size", Long.toString(size),
            "--timeout", Integer.toString(timeoutSeconds), "--rocev2-ack-timeout",
            Integer.toString(null == ackTimeout ? 14 : ackTimeout.exponent()), "--json",
            "--warmup", Long.toString(warmup))));
        command.addAll(served.mode().equals("rocev2") ? rocev2Options : sprayOptions());
        if (warmup > 0)
        {
            // RoCEv2 warms up over its one queue pair (a serving NIC connects one)
            command.addAll(List.of("--warmup-hold", "--warmup-connection",
                served.mode().equals("spray") ? warmupConnection : "same"));
        }
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        final Path runDir = Files.createDirectories(dir.resolve(name + "-run"));
        builder.environment().put("SPRAYNIC_RUN_DIR", runDir.toString());
        final long start = System.nanoTime();
        final Process process = start(builder);
        return new Visit(host, process, output, new CountersSampler(runDir, samplerMillis), start, visitDir,
            ackTimeout);
    }

    /** Stops a serving NIC (and waits for it to go, so that another can take its interfaces). */
    static void stop(final Served served) throws InterruptedException
    {
        served.counters().close();
        served.process().destroy();
        if (!served.process().waitFor(20, TimeUnit.SECONDS))
        {
            served.process().destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private Process start(final ProcessBuilder builder) throws IOException
    {
        final Process process = builder.start();
        processes.add(process);
        return process;
    }

    @Override
    public void close()
    {
        for (final Process process : processes)
        {
            process.destroyForcibly();
        }
        for (final Process process : processes)
        {
            try
            {
                process.waitFor(20, TimeUnit.SECONDS);
            }
            catch (final InterruptedException e)
            {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** The host's value of {@code key} in each plane, comma-separated (--ip, --gateway). */
    String perPlane(final String host, final String key)
    {
        final List<String> values = new ArrayList<>();
        for (int plane = 1; plane <= planes; plane++)
        {
            values.add(lab.status().get("hosts." + host + ".planes." + plane + "." + key));
        }
        return String.join(",", values);
    }

    /** A port of {@link #PORT}'s kind per plane, on the host's plane interfaces or addresses. */
    private Path config(final String host, final String name) throws IOException
    {
        final List<String> interfaces = new ArrayList<>();
        final List<String> addresses = new ArrayList<>();
        for (int plane = 1; plane <= planes; plane++)
        {
            interfaces.add(lab.status().get("hosts." + host + ".planes." + plane + ".dev"));
            addresses.add(lab.status().get("hosts." + host + ".planes." + plane + ".ipv4"));
        }
        return Files.writeString(dir.resolve(name + ".toml"),
            PORT.config("spraynic-lab-" + lab.id() + "-" + name, interfaces, addresses));
    }

    /** A number field of a one-line JSON object, or NaN. */
    static double json(final String text, final String field)
    {
        final java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"" + field + "\":(-?[0-9.eE+-]+)").matcher(text);
        return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
    }

    static String format(final String pattern, final Object... values)
    {
        return String.format(Locale.ROOT, pattern, values);
    }
}
