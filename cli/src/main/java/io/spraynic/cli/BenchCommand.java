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
    subcommands = BenchCommand.Raw.class)
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
}
