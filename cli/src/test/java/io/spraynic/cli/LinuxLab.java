package io.spraynic.cli;

import org.junit.jupiter.api.Assumptions;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One instance of the Linux ECMP lab ({@code deploy/lab/lab}) driven from a test: up, knobs, counters, the flow
 * generator, down. The script prints {@code key.path=value} lines with {@code --flat}; this reads them into maps.
 * {@link #close()} removes the instance (idempotent), and a shutdown hook does the same if the JVM is stopped first.
 * Namespaces are {@code spl<id>-...}: give each test class its own id (the pid in it) so that runs never collide.
 */
final class LinuxLab implements AutoCloseable
{
    static final Path SCRIPT = Path.of("..", "deploy", "lab", "lab").toAbsolutePath().normalize();
    /** The script's exit status when the id is another run's (deploy/lab/lab's ID_TAKEN_STATUS). */
    static final int ID_TAKEN_STATUS = 3;

    private final String id;
    private final Thread cleanupHook;
    private Map<String, String> status = Map.of();
    private boolean closed;

    private LinuxLab(final String id)
    {
        this.id = id;
        this.cleanupHook = new Thread(() -> runQuietly("down"), "linux-lab-" + id + "-cleanup");
    }

    /** Builds instance {@code id} with the given {@code up} options; on failure nothing of it is left. */
    static LinuxLab up(final String id, final String... options) throws IOException, InterruptedException
    {
        final LinuxLab lab = new LinuxLab(id);
        Runtime.getRuntime().addShutdownHook(lab.cleanupHook);
        final List<String> arguments = new ArrayList<>(List.of("up", "--flat"));
        arguments.addAll(List.of(options));
        try
        {
            final Result result = script(id, arguments.toArray(String[]::new));
            if (result.exitCode == ID_TAKEN_STATUS)
            {
                // another run's lab: a down would remove it, so this one is closed without one
                lab.closed = true;
                Runtime.getRuntime().removeShutdownHook(lab.cleanupHook);
                throw new IllegalStateException("lab up: id " + id + " is another run's: " + result.output);
            }
            if (result.exitCode != 0)
            {
                throw new IllegalStateException("lab up exited " + result.exitCode + ": " + result.output);
            }
            lab.status = flat(result.output);
        }
        catch (final RuntimeException | IOException | InterruptedException e)
        {
            lab.close();
            throw e;
        }
        return lab;
    }

    /**
     * Builds instance {@code id} for NIC processes ({@link LabPeers}): two planes, {@code hosts} hosts without kernel
     * addresses, the routers' neighbour entries for them static (for {@code -Dspraynic.lab.port=udp}: the hosts'
     * kernels hold their addresses, the NICs' sockets bound to them; {@link LabPortKind#labUpOptions}). Skips the test unless root with the lab's tools.
     */
    static LinuxLab upForNics(final String id, final int hosts) throws IOException, InterruptedException
    {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
            "SKIPPED: network namespaces, veth, nftables and AF_PACKET need root");
        for (final String tool : List.of("/usr/bin/python3", "/usr/sbin/nft", "/usr/sbin/tc", "/usr/sbin/ip"))
        {
            Assumptions.assumeTrue(Files.isExecutable(Path.of(tool)), "SKIPPED: " + tool + " is missing");
        }
        final List<String> options = new ArrayList<>(LabPeers.PORT.labUpOptions());
        options.addAll(List.of("--hosts", Integer.toString(hosts), "--planes",
            System.getProperty("spraynic.lab.planes", "2")));
        return up(id, options.toArray(String[]::new));
    }

    /** @return how much counter {@code key} grew from {@code before} to {@code after}. */
    static long delta(final Map<String, Long> before, final Map<String, Long> after, final String key)
    {
        return after.getOrDefault(key, 0L) - before.getOrDefault(key, 0L);
    }

    String id()
    {
        return id;
    }

    /** The {@code status --flat} of the instance as it came up: hosts.a.planes.1.ipv4=10.1.1.10/24 and so on. */
    Map<String, String> status()
    {
        return status;
    }

    String netns(final String node)
    {
        return "spl" + id + "-" + (node.startsWith("r") ? node : "h" + node);
    }

    /** Applies {@code lab set} to links: e.g. {@code set("p1", "--drop", "1%")}. */
    void set(final String... arguments) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of("set"));
        command.addAll(List.of(arguments));
        run(command.toArray(String[]::new));
    }

    /** Applies {@code lab balance}: {@code flow} (ECMP, the default) or {@code packet} on every plane. */
    void balance(final String mode) throws IOException, InterruptedException
    {
        run("balance", mode);
    }

    void link(final String action, final String... links) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of("link", action));
        command.addAll(List.of(links));
        run(command.toArray(String[]::new));
    }

    /** Every counter: links.p1l1.directions.ab.forwarded_packets and so on (flags as 0/1 are left out). */
    Map<String, Long> counters() throws IOException, InterruptedException
    {
        final Map<String, Long> values = new HashMap<>();
        for (final Map.Entry<String, String> e : flat(run("counters", "--flat")).entrySet())
        {
            if (e.getKey().startsWith("links.") && e.getValue().matches("\\d+"))
            {
                values.put(e.getKey(), Long.parseLong(e.getValue()));
            }
        }
        return values;
    }

    /** Runs the flow generator ({@code lab traffic}): planes.1.sent, planes.1.received, planes.1.ce, ... */
    Map<String, String> traffic(final String... arguments) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of("traffic", "--flat"));
        command.addAll(List.of(arguments));
        return flat(run(command.toArray(String[]::new)));
    }

    /** ICMP echo round trips from {@code host}'s plane-1 router to it ({@code lab rtt}): sent, received, max_ms, ... */
    Map<String, String> rtt(final String host, final int count) throws IOException, InterruptedException
    {
        return flat(run("rtt", host, "--count", Integer.toString(count), "--flat"));
    }

    /** Runs the script with this instance's id; throws with its output unless it exits 0. */
    String run(final String... arguments) throws IOException, InterruptedException
    {
        final Result result = script(id, arguments);
        if (result.exitCode != 0)
        {
            throw new IllegalStateException("lab " + String.join(" ", arguments) + " exited " + result.exitCode + ": " +
                result.output);
        }
        return result.output;
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        runQuietly("down");
        try
        {
            Runtime.getRuntime().removeShutdownHook(cleanupHook);
        }
        catch (final IllegalStateException ignored)
        {
            // the JVM is shutting down: the hook runs (or ran) the same down
        }
    }

    private void runQuietly(final String... arguments)
    {
        try
        {
            script(id, arguments);
        }
        catch (final IOException | InterruptedException ignored)
        {
            // best effort: a later down (or the next up's check) reports what is left
        }
    }

    record Result(int exitCode, String output)
    {
    }

    /** Runs {@code deploy/lab/lab --id ID ARGS...}, bounded to two minutes; stdout and stderr together. */
    static Result script(final String id, final String... arguments) throws IOException, InterruptedException
    {
        final List<String> command = new ArrayList<>(List.of("/usr/bin/python3", SCRIPT.toString(), "--id", id));
        command.addAll(List.of(arguments));
        final Path output = Files.createTempFile("spraynic-lab-", ".out");
        try
        {
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile())
                .start();
            if (!process.waitFor(120, TimeUnit.SECONDS))
            {
                process.destroyForcibly().waitFor();
                return new Result(-1, "timed out: " + Files.readString(output));
            }
            return new Result(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
        }
        finally
        {
            Files.deleteIfExists(output);
        }
    }

    static Map<String, String> flat(final String output)
    {
        return LinuxFabricDemo.flat(output);
    }
}
