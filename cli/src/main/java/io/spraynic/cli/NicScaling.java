package io.spraynic.cli;

import io.spraynic.apps.runtime.NicRuntime;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.telemetry.CountersFileReader;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PmdConfigs;
import org.agrona.concurrent.BusySpinIdleStrategy;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Receive-side scaling of the NIC runtime: {@code queues} poll threads on net_null, measured from the
 * counters they publish (the sum of every queue's "rx packets"), after a warm-up.
 */
final class NicScaling
{
    private NicScaling()
    {
    }

    static double measureInChild(final int queues, final double seconds) throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(argument -> argument.startsWith("--") || argument.startsWith("-Dspraynic")).toList());
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), NicScaling.class.getName(),
            Integer.toString(queues), Double.toString(seconds)));
        final Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        final String output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        if (!child.waitFor((long)seconds * 2 + 60, TimeUnit.SECONDS) || child.exitValue() != 0)
        {
            child.destroyForcibly();
            throw new IllegalStateException("nic scaling run with " + queues + " queue(s) failed: " + output);
        }
        return Double.parseDouble(output.lines().reduce((first, second) -> second).orElseThrow());
    }

    /**
     * Child process: args {@code queues seconds}; prints the Mpps on its last line.
     */
    public static void main(final String[] args) throws Exception
    {
        final int queues = Integer.parseInt(args[0]);
        final double seconds = Double.parseDouble(args[1]);
        final NicConfig loaded = PmdConfigs.load("net_null", Map.of("queues", Integer.toString(queues),
            "file_prefix", "spraynic-scaling-" + ProcessHandle.current().pid()));
        final NicConfig config = loaded.withEal(loaded.eal().withLogLevels(List.of("lib.eal:warning")));
        final Path directory = Files.createTempDirectory("spraynic-scaling");
        try (CountersFile counters = CountersFile.create(directory, "scaling", 256))
        {
            final NicRuntime runtime = NicRuntime.start(config, counters, BusySpinIdleStrategy::new, port -> port);
            try (CountersFileReader reader = CountersFileReader.open(counters.path()))
            {
                Thread.sleep((long)(seconds * 250)); // warm-up
                final long before = rxPackets(reader);
                final long start = System.nanoTime();
                Thread.sleep((long)(seconds * 1000));
                final long packets = rxPackets(reader) - before;
                final long nanos = System.nanoTime() - start;
                System.out.println(String.format(Locale.ROOT, "%.4f", packets * 1e3 / nanos));
            }
            finally
            {
                runtime.close();
            }
        }
        finally
        {
            Files.deleteIfExists(directory);
        }
    }

    private static long rxPackets(final CountersFileReader reader)
    {
        return reader.read().stream().filter(counter -> counter.label().matches("port null0/q\\d+: rx packets"))
            .mapToLong(CountersFileReader.Counter::value).sum();
    }
}
