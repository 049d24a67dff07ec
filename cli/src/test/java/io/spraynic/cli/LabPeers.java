package io.spraynic.cli;

import io.spraynic.datapath.nic.CountersFileReader;

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
 * {@code net_af_packet} ports over its host's plane interfaces, given its own addresses and gateways, and the visitor
 * only the served NIC's published addresses. Every process it starts is destroyed by {@link #close()}.
 */
final class LabPeers implements AutoCloseable
{
    private final LinuxLab lab;
    private final Path dir;
    private final int planes;
    private final List<Process> processes = new ArrayList<>();
    private int sequence;
    private String portRotation = "16-32";

    LabPeers(final LinuxLab lab, final Path dir, final int planes)
    {
        this.lab = lab;
        this.dir = dir;
        this.planes = planes;
    }

    /** Spray's source-port rotation for the processes started from now on ({@code --port-rotation}). */
    LabPeers portRotation(final String rotation)
    {
        this.portRotation = rotation;
        return this;
    }

    /** A serving NIC in {@code host}: its exchange directory (nic.addr) and its live counters. */
    record Served(String host, String mode, Process process, Path exchange, Path runDir, Path output)
    {
        /** Its counters now, label to value (read from its counters file, as {@code spraynic stat} does). */
        Map<String, Long> counters() throws IOException
        {
            final Path live = CountersFileReader.findLive(runDir).orElseThrow(() ->
                new IllegalStateException("the serving NIC has no live counters file in " + runDir));
            final Map<String, Long> values = new HashMap<>();
            try (CountersFileReader reader = CountersFileReader.open(live))
            {
                for (final CountersFileReader.Counter counter : reader.read())
                {
                    values.merge(counter.label(), counter.value(), Long::sum);
                }
            }
            return values;
        }
    }

    /** A visit under way, or ended. */
    record Visit(String host, Process process, Path output, Path countersOut, long startNanos)
    {
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
            final Map<String, Long> counters = new HashMap<>();
            if (Files.exists(countersOut))
            {
                for (final Map.Entry<String, String> e : LinuxLab.flat(Files.readString(countersOut)).entrySet())
                {
                    counters.merge(e.getKey(), Long.parseLong(e.getValue()), Long::sum);
                }
            }
            return new Result(process.exitValue(), out, json(out, "seconds"), out.contains("\"verified\":true"),
                (end - startNanos) / 1e9, counters);
        }
    }

    /**
     * @param seconds the transfer's own time (its "seconds"), @param wallSeconds from start to exit, @param counters
     *                the visitor's counters at the end.
     */
    record Result(int exitCode, String output, double seconds, boolean verified, double wallSeconds,
        Map<String, Long> counters)
    {
        /** The sum of the visitor's engine counters with this name (spray: lost, retransmitted, ...). */
        long engine(final String name)
        {
            return LabPeers.engine(counters, name);
        }
    }

    /**
     * The sum of the engine-wide counters named {@code name} (one per worker): labels "... spray NAME" are the
     * engines', "conn ... NAME" and "... path N: NAME" a connection's mirror of the same packets, left out.
     */
    static long engine(final Map<String, Long> counters, final String name)
    {
        long sum = 0;
        for (final Map.Entry<String, Long> e : counters.entrySet())
        {
            final String label = e.getKey();
            if ((label.endsWith(" " + name) || label.endsWith(":" + name) || label.endsWith("." + name)) &&
                !label.contains("conn") && !label.contains("path"))
            {
                sum += e.getValue();
            }
        }
        return sum;
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
            "--rocev2-ack-timeout", "12", "--port-rotation", portRotation)));
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
        return new Served(host, mode, process, exchange, runDir, output);
    }

    /** Starts a visit from {@code host} to a served NIC: WRITEs of {@code size} bytes, then READs of them back. */
    Visit visit(final String host, final Served served, final long size, final int paths, final int timeoutSeconds)
        throws IOException
    {
        final String name = "visit-" + host + "-" + served.mode() + "-" + sequence++;
        final Path visitDir = Files.createDirectories(dir.resolve(name));
        Files.copy(served.exchange().resolve("nic.addr"), visitDir.resolve("nic.addr.tmp"));
        Files.move(visitDir.resolve("nic.addr.tmp"), visitDir.resolve("nic.addr"), StandardCopyOption.ATOMIC_MOVE);
        final Path output = dir.resolve(name + ".out");
        final Path countersOut = dir.resolve(name + ".counters");
        final List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", lab.netns(host)));
        command.addAll(javaCommand(List.of("transfer", "--config", config(host, name).toString(), "--mode",
            served.mode(), "--peer-kind", "nic", "--ip", perPlane(host, "ipv4"), "--gateway", perPlane(host, "gateway"),
            "--paths", Integer.toString(paths), "--exchange", visitDir.toString(), "--size", Long.toString(size),
            "--timeout", Integer.toString(timeoutSeconds), "--rocev2-ack-timeout", "12", "--json", "--counters-out",
            countersOut.toString(), "--port-rotation", portRotation)));
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().put("SPRAYNIC_RUN_DIR", Files.createDirectories(dir.resolve(name + "-run")).toString());
        final long start = System.nanoTime();
        return new Visit(host, start(builder), output, countersOut, start);
    }

    /** Stops a serving NIC (and waits for it to go, so that another can take its interfaces). */
    static void stop(final Served served) throws InterruptedException
    {
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

    /**
     * A net_af_packet port per plane, on the host's plane interfaces; socket rings of 8192 frames. The parameters
     * are those {@code spraynic transfer} fills (file_prefix, queues).
     */
    private Path config(final String host, final String name) throws IOException
    {
        final StringBuilder toml = new StringBuilder(String.join("\n", "[eal]", "lcores = \"0\"", "no_huge = true",
            "memory_mb = 512", "no_pci = true", "file_prefix = \"${file_prefix:-spraynic-lab-" + lab.id() + "-" + name +
                "}\"", ""));
        for (int plane = 1; plane <= planes; plane++)
        {
            toml.append(String.join("\n", "", "[[port]]", "name = \"afp" + (plane - 1) + "\"", "kind = \"vdev\"",
                "device = \"net_af_packet" + (plane - 1) + "\"",
                "args = { iface = \"" + lab.status().get("hosts." + host + ".planes." + plane + ".dev") +
                    "\", qpairs = \"${queues:-1}\", blocksz = 4096, framesz = 2048, framecnt = 8192 }",
                "rx_queues = ${queues:-1}", "tx_queues = ${queues:-1}", "promiscuous = true", ""));
        }
        return Files.writeString(dir.resolve(name + ".toml"), toml.toString());
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
