package io.spraynic.cli;

import io.spraynic.bench.experiment.ExperimentOutput;
import io.spraynic.bench.experiment.LossSweep;
import io.spraynic.bench.experiment.ReorderExperiment;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code spraynic experiment NAME}: the published results reproduced on the emulated fabric, in
 * virtual time, with the real protocol code.
 */
@Command(name = "experiment", mixinStandardHelpOptions = true,
    description = "Reproduce an experiment on the emulated fabric in virtual time (CSV, PNG plot, JSON).",
    subcommands = {ExperimentCommand.LossSweepCommand.class, ExperimentCommand.ReorderCommand.class})
final class ExperimentCommand implements Runnable
{
    public void run()
    {
        throw new IllegalArgumentException("name an experiment: spraynic experiment loss-sweep --help");
    }

    @Command(name = "loss-sweep", mixinStandardHelpOptions = true,
        description = {
            "Goodput / lossless goodput at 0, 0.01, 0.1, 1, 2, 5, 10 and 20 % random loss on every fabric link.",
            "Spray (one connection, 8 paths over the planes) against the RoCEv2 RC baseline (one QP per plane)."})
    static final class LossSweepCommand implements Callable<Integer>
    {
        @Option(names = "--out", defaultValue = "experiments", description = "Output directory (default ${DEFAULT-VALUE}).")
        Path out;

        @Option(names = "--bytes", defaultValue = "64m", converter = SizeConverter.class,
            description = "Bytes written per point (default ${DEFAULT-VALUE}).")
        long bytes;

        @Option(names = "--planes", defaultValue = "4", description = "Planes (default ${DEFAULT-VALUE}).")
        int planes;

        @Option(names = "--json", description = "Print the result object (also written to the output directory).")
        boolean json;

        public Integer call() throws Exception
        {
            if (planes < 1 || planes > 16 || bytes < 1 << 20)
            {
                throw new IllegalArgumentException("--planes must be 1..16 and --bytes at least 1m (got " + planes + ", " + bytes + ")");
            }
            final LossSweep.Settings defaults = LossSweep.Settings.DEFAULT;
            final LossSweep.Settings settings = new LossSweep.Settings(planes, bytes, defaults.messageBytes(),
                defaults.timeLimitNanos(), defaults.seed(), defaults.paths(), defaults.streams());
            final List<LossSweep.Point> points = LossSweep.run(settings, LossSweep.DEFAULT_LOSS_PERCENT,
                line -> { if (!json) System.out.println(line); });
            final List<Path> files = ExperimentOutput.writeLossSweep(out, settings, points);
            if (json)
            {
                System.out.println(LossSweep.toJson(settings, points));
            }
            else
            {
                System.out.println("wrote " + files);
            }
            return 0;
        }
    }

    @Command(name = "reorder", mixinStandardHelpOptions = true,
        description = {
            "Spray over paths whose delays differ by 0 to 10 us, no loss: counts spurious retransmissions (goal 0)."})
    static final class ReorderCommand implements Callable<Integer>
    {
        @Option(names = "--out", defaultValue = "experiments", description = "Output directory (default ${DEFAULT-VALUE}).")
        Path out;

        @Option(names = "--bytes", defaultValue = "64m", converter = SizeConverter.class,
            description = "Bytes written per point (default ${DEFAULT-VALUE}).")
        long bytes;

        @Option(names = "--json", description = "Print the result object (also written to the output directory).")
        boolean json;

        public Integer call() throws Exception
        {
            if (bytes < 1 << 20)
            {
                throw new IllegalArgumentException("--bytes must be at least 1m (got " + bytes + ")");
            }
            final LossSweep.Settings defaults = LossSweep.Settings.DEFAULT;
            final LossSweep.Settings settings = new LossSweep.Settings(defaults.planes(), bytes, defaults.messageBytes(),
                defaults.timeLimitNanos(), defaults.seed(), defaults.paths(), defaults.streams());
            final List<ReorderExperiment.Point> points = ReorderExperiment.run(settings, ReorderExperiment.DEFAULT_STEPS_NS,
                line -> { if (!json) System.out.println(line); });
            final List<Path> files = ExperimentOutput.writeReorder(out, settings, points);
            System.out.println(json ? ReorderExperiment.toJson(settings, points) : "wrote " + files);
            return 0;
        }
    }
}
