package io.spraynic.cli;

import io.spraynic.bench.raw.RawLoop;
import io.spraynic.bench.raw.RawLoopComparison;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code spraynic bench}: datapath benchmarks that are commands (the JMH suites live in
 * {@code benchmarks/}).
 */
@Command(name = "bench", mixinStandardHelpOptions = true,
    description = "Datapath benchmarks.",
    subcommands = {BenchCommand.Raw.class, BenchCommand.Nic.class})
final class BenchCommand implements Runnable
{
    public void run()
    {
        throw new IllegalArgumentException("name a benchmark: spraynic bench raw --help");
    }

    @Command(name = "raw", mixinStandardHelpOptions = true,
        description = {
            "The raw RX/TX loop on one core through the C shim, 64 B frames in bursts of 32 by default.",
            "With --with-c, the same loop in C (spraynic-rawloop) runs in the same invocation, alternating",
            "with the Java one, and the Java / C ratio is printed."})
    static final class Raw implements Callable<Integer>
    {
        @Option(names = "--pmd", defaultValue = "net_null", description = "net_null or net_ring (default ${DEFAULT-VALUE}).")
        String pmd;

        @Option(names = "--mode", defaultValue = "tx", description = "rx, tx or io (default ${DEFAULT-VALUE}).")
        String mode;

        @Option(names = "--seconds", defaultValue = "5", description = "Measured seconds per run (default ${DEFAULT-VALUE}).")
        double seconds;

        @Option(names = "--burst", defaultValue = "32", description = "Burst size (default ${DEFAULT-VALUE}).")
        int burst;

        @Option(names = "--length", defaultValue = "64", description = "Frame length in bytes (default ${DEFAULT-VALUE}).")
        int length;

        @Option(names = "--with-c", description = "Also run the C loop and print the Java / C ratio.")
        boolean withC;

        @Option(names = "--rounds", defaultValue = "3", description = "With --with-c: alternating rounds (default ${DEFAULT-VALUE}).")
        int rounds;

        @Option(names = "--json", description = "Print one JSON object.")
        boolean json;

        public Integer call() throws Exception
        {
            final RawLoop.Pmd parsedPmd = RawLoop.Pmd.parse(pmd);
            final RawLoop.Mode parsedMode = RawLoop.Mode.parse(mode);
            if (seconds <= 0 || burst < 1 || burst > 512 || length < 60 || length > 2048)
            {
                throw new IllegalArgumentException(
                    "--seconds must be > 0, --burst 1..512 and --length 60..2048 (got " + seconds + ", " + burst + ", " + length + ")");
            }
            if (!withC)
            {
                final RawLoop.Result result = RawLoop.run(parsedPmd, parsedMode, seconds, burst, length);
                System.out.println(json ? RawLoop.toJson(result) : String.format(Locale.ROOT,
                    "java %s %s: %d packets in %.2f s = %.2f Mpps (burst %d, %d B)",
                    result.pmd(), result.mode(), result.packets(), result.seconds(), result.mpps(), burst, length));
                return 0;
            }
            final RawLoopComparison.Summary summary = RawLoopComparison.run(
                parsedPmd, parsedMode, seconds, burst, length, rounds, line -> { if (!json) System.out.println(line); });
            System.out.println(json ? summary.toJson() : summary.toText());
            return 0;
        }
    }

    @Command(name = "nic", mixinStandardHelpOptions = true,
        description = {
            "The NIC runtime's receive side on net_null: one poll thread per RX queue, each parsing, classifying",
            "and counting every frame; prints Mpps for 1..N queues, measured in one invocation from the counters."})
    static final class Nic implements Callable<Integer>
    {
        @Option(names = "--queues", defaultValue = "2", description = "Largest queue count measured (default ${DEFAULT-VALUE}).")
        int queues;

        @Option(names = "--seconds", defaultValue = "3", description = "Measured seconds per queue count (default ${DEFAULT-VALUE}).")
        double seconds;

        @Option(names = "--json", description = "Print one JSON object.")
        boolean json;

        public Integer call() throws Exception
        {
            if (queues < 1 || queues > 16 || seconds <= 0)
            {
                throw new IllegalArgumentException("--queues must be 1..16 and --seconds > 0 (got " + queues + ", " + seconds + ")");
            }
            final StringBuilder results = new StringBuilder();
            for (int q = 1; q <= queues; q++)
            {
                // EAL starts once per process: each queue count runs in a process of its own.
                final double mpps = NicScaling.measureInChild(q, seconds);
                results.append(results.length() == 0 ? "" : ",").append(String.format(Locale.ROOT,
                    "{\"queues\":%d,\"mpps\":%.3f}", q, mpps));
                if (!json)
                {
                    System.out.printf(Locale.ROOT, "net_null, %d RX queue(s) / poll thread(s): %.2f Mpps classified%n", q, mpps);
                }
            }
            if (json)
            {
                System.out.println("{\"pmd\":\"net_null\",\"cores\":" + Runtime.getRuntime().availableProcessors() +
                    ",\"points\":[" + results + "]}");
            }
            return 0;
        }
    }
}
