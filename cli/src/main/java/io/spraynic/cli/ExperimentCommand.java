package io.spraynic.cli;

import io.spraynic.bench.experiment.CollectivesExperiment;
import io.spraynic.bench.experiment.ExperimentOutput;
import io.spraynic.bench.experiment.IncastExperiment;
import io.spraynic.bench.experiment.LossSweep;
import io.spraynic.bench.experiment.PlaneFailureExperiment;
import io.spraynic.bench.experiment.PlanesExperiment;
import io.spraynic.bench.experiment.RealTimeLossSweep;
import io.spraynic.bench.experiment.RealTimePlaneFailure;
import io.spraynic.bench.experiment.ReorderExperiment;
import io.spraynic.bench.experiment.ReorderWithinExperiment;
import io.spraynic.datapath.fabric.Switch;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code spraynic experiment NAME}: the published results reproduced on the emulated fabric, in
 * virtual time, with the real protocol code (and the loss sweep on DPDK in real time, {@code --realtime}).
 */
@Command(name = "experiment", mixinStandardHelpOptions = true,
    description = "Reproduce an experiment on the emulated fabric in virtual time (CSV, PNG plot, JSON); loss-sweep " +
        "and plane-failure --realtime run on DPDK in real time.",
    subcommands = {ExperimentCommand.LossSweepCommand.class, ExperimentCommand.ReorderCommand.class,
        ExperimentCommand.ReorderWithinCommand.class,
        ExperimentCommand.IncastCommand.class, ExperimentCommand.PlanesCommand.class,
        ExperimentCommand.PlaneFailureCommand.class, ExperimentCommand.CollectivesCommand.class})
final class ExperimentCommand implements Runnable
{
    public void run()
    {
        throw new IllegalArgumentException("name an experiment: spraynic experiment loss-sweep --help");
    }

    @Command(name = "loss-sweep", mixinStandardHelpOptions = true,
        description = {
            "Goodput / lossless goodput at 0, 0.01, 0.1, 1, 2, 5, 10 and 20 %% random loss on every fabric link.",
            "Spray (one connection, 8 paths over the planes) against the RoCEv2 RC baseline (one QP per plane).",
            "--realtime runs it on DPDK instead: two embedded NICs on net_ring ports through the fabric emulator in " +
            "real time (the demo's set-up), at 0, 0.1, 1, 2, 5 and 10 %%, into loss-sweep-realtime.*."})
    static final class LossSweepCommand extends Common
    {
        @Option(names = "--bytes", defaultValue = "64m", converter = SizeConverter.class,
            description = "Bytes written per point (default ${DEFAULT-VALUE}).")
        long bytes;

        @Option(names = "--planes", defaultValue = "4", description = "Planes (default ${DEFAULT-VALUE}; --realtime: 1..8).")
        int planes;

        @Option(names = "--realtime", description = "On DPDK net_ring ports in real time rather than in virtual time.")
        boolean realTime;

        @Option(names = "--repeats", defaultValue = "3",
            description = "With --realtime: runs per transport and loss rate, the median kept (default ${DEFAULT-VALUE}).")
        int repeats;

        @Option(names = "--loss", split = ",",
            description = "With --realtime: the loss rates in percent, comma-separated (default 0,0.1,1,2,5,10).")
        double[] lossPercent;

        Integer run() throws Exception
        {
            BadOption.range("--planes", planes, 1, realTime ? 8 : 16);
            BadOption.size("--bytes", bytes, 1 << 20, Long.MAX_VALUE);
            require(null == lossPercent || realTime, "--loss chooses the real-time sweep's rates: add --realtime");
            BadOption.range("--repeats", repeats, 1, 15);
            if (null != lossPercent)
            {
                for (final double pct : lossPercent)
                {
                    BadOption.below("--loss", pct, 0, 100, 1); // 100 % would deliver nothing
                }
            }
            final LossSweep.Settings defaults = realTime ? RealTimeLossSweep.DEFAULT : LossSweep.Settings.DEFAULT;
            final LossSweep.Settings settings = defaults.withPlanesAndBytes(planes, bytes);
            if (realTime)
            {
                final List<LossSweep.Point> points = RealTimeLossSweep.run(
                    settings, null == lossPercent ? RealTimeLossSweep.DEFAULT_LOSS_PERCENT : lossPercent, repeats, this::log);
                return finish(ExperimentOutput.writeLossSweep(out, settings, points, true), LossSweep.toJson(settings, points, true));
            }
            final List<LossSweep.Point> points = LossSweep.run(settings, LossSweep.DEFAULT_LOSS_PERCENT, this::log);
            return finish(ExperimentOutput.writeLossSweep(out, settings, points), LossSweep.toJson(settings, points));
        }
    }

    @Command(name = "reorder", mixinStandardHelpOptions = true,
        description = {
            "Spray over paths whose delays differ by up to 0, 2.5, 12.5 and 25 us (extra link delays in steps of 0, " +
            "1, 5 and 10 us), no loss: counts spurious retransmissions (goal 0)."})
    static final class ReorderCommand extends Common
    {
        @Option(names = "--bytes", defaultValue = "64m", converter = SizeConverter.class,
            description = "Bytes written per point (default ${DEFAULT-VALUE}).")
        long bytes;

        Integer run() throws Exception
        {
            BadOption.size("--bytes", bytes, 1 << 20, Long.MAX_VALUE);
            final LossSweep.Settings settings = LossSweep.Settings.DEFAULT.withPlanesAndBytes(
                LossSweep.Settings.DEFAULT.planes(), bytes);
            final List<ReorderExperiment.Point> points = ReorderExperiment.run(settings, ReorderExperiment.DEFAULT_STEPS_NS,
                this::log);
            return finish(ExperimentOutput.writeReorder(out, settings, points), ReorderExperiment.toJson(settings, points));
        }
    }

    @Command(name = "reorder-within", mixinStandardHelpOptions = true,
        description = {
            "Spray over switches that balance each packet on its own (PROTOCOL.md S6.5-3): a plane's two parallel links " +
            "taken in turn (round-robin, a LAG balanced per packet) or by the shorter queue (least-queued, adaptive " +
            "routing), one of them --skew-us longer, so a path's packets overtake each other. No reordering window, a " +
            "fixed one and a learnt one, beside ECMP, at 0 and 1 %% loss on every fabric link: goodput and spurious " +
            "copies."})
    static final class ReorderWithinCommand extends Common
    {
        @Option(names = "--bytes", defaultValue = "64m", converter = SizeConverter.class,
            description = "Bytes written per point (default ${DEFAULT-VALUE}).")
        long bytes;

        @Option(names = "--balance", defaultValue = "round-robin", paramLabel = "round-robin|least-queued",
            description = "How the switches balance each packet (default ${DEFAULT-VALUE}).")
        String balance;

        @Option(names = "--skew-us", defaultValue = "4", paramLabel = "US",
            description = "How much longer one link of each pair is, 0-1000 us (default ${DEFAULT-VALUE}).")
        long skewMicros;

        @Option(names = "--window-us", defaultValue = "15", paramLabel = "US",
            description = "The fixed reordering window, 1-1000 us (default ${DEFAULT-VALUE}).")
        long windowMicros;

        Integer run() throws Exception
        {
            BadOption.size("--bytes", bytes, 1 << 20, Long.MAX_VALUE);
            BadOption.range("--skew-us", skewMicros, 0, 1_000);
            BadOption.range("--window-us", windowMicros, 1, 1_000);
            final Switch.Balancing balancing = switch (balance)
            {
                case "round-robin" -> Switch.Balancing.ROUND_ROBIN;
                case "least-queued" -> Switch.Balancing.LEAST_QUEUED;
                default -> throw new BadOption("--balance", balance, "must be round-robin or least-queued",
                    "try --balance round-robin");
            };
            final LossSweep.Settings settings = LossSweep.Settings.DEFAULT.withPlanesAndBytes(
                LossSweep.Settings.DEFAULT.planes(), bytes);
            final List<ReorderWithinExperiment.Point> points = ReorderWithinExperiment.run(settings, balancing,
                skewMicros * 1_000, windowMicros * 1_000, ReorderWithinExperiment.DEFAULT_LOSS_PERCENT, this::log);
            return finish(ExperimentOutput.writeReorderWithin(out, settings, skewMicros * 1_000, points),
                ReorderWithinExperiment.toJson(settings, skewMicros * 1_000, points));
        }
    }

    /** What every experiment takes: where to write, and whether to print the JSON result. */
    abstract static class Common implements Callable<Integer>
    {
        @Option(names = "--out", defaultValue = "experiments", description = "Output directory (default ${DEFAULT-VALUE}).")
        Path out;

        @Option(names = "--json", description = "Print the result object (also written to the output directory).")
        boolean json;

        /** Makes (or takes) the output directory first: one that is refused must not cost a finished run's results. */
        public final Integer call() throws Exception
        {
            io.spraynic.datapath.telemetry.OutputFile.createDirectory(out);
            return run();
        }

        /** Runs the experiment and writes its outputs into {@link #out}. */
        abstract Integer run() throws Exception;

        void log(final String line)
        {
            if (!json)
            {
                System.out.println(line);
            }
        }

        int finish(final List<Path> files, final String jsonText)
        {
            System.out.println(json ? jsonText : "wrote " + files);
            return 0;
        }

        static void require(final boolean condition, final String message)
        {
            if (!condition)
            {
                throw new IllegalArgumentException(message);
            }
        }

        static void requireEach(final int[] values, final int min, final int max, final String option)
        {
            require(values.length > 0, option + " needs at least one value");
            for (final int value : values)
            {
                BadOption.range(option, value, min, max);
            }
        }
    }

    @Command(name = "incast", mixinStandardHelpOptions = true,
        description = {
            "N senders -> 1 receiver through one 100 Gb/s switch port: RTTs until the senders' rates settle within " +
            "the band around the fair share, peak queue, drops and Jain fairness; spray against RoCEv2 (DCQCN)."})
    static final class IncastCommand extends Common
    {
        @Option(names = "--senders", split = ",", defaultValue = "8,16,32,64", description = "Sender counts (default ${DEFAULT-VALUE}).")
        int[] senders;

        @Option(names = "--bytes", defaultValue = "256k", converter = SizeConverter.class,
            description = "Bytes each sender writes (default ${DEFAULT-VALUE}).")
        long bytes;

        @Option(names = "--band", defaultValue = "0.2", description = "Converged = within this fraction of the fair share (default ${DEFAULT-VALUE}).")
        double band;

        Integer run() throws Exception
        {
            requireEach(senders, 1, 250, "--senders");
            BadOption.size("--bytes", bytes, 4096, Long.MAX_VALUE);
            if (!(band > 0 && band < 1))
            {
                throw new BadOption("--band", BadOption.number(band), "must be a fraction above 0 and below 1", "try --band 0.2");
            }
            final IncastExperiment.Settings d = IncastExperiment.Settings.DEFAULT;
            final IncastExperiment.Settings settings = new IncastExperiment.Settings(bytes,
                (int)Math.min(d.messageBytes(), bytes), band, d.timeLimitNanos(), d.seed());
            final List<IncastExperiment.Point> points = IncastExperiment.run(settings, senders, this::log);
            return finish(IncastExperiment.write(out, settings, points), IncastExperiment.toJson(settings, points));
        }
    }

    @Command(name = "planes", mixinStandardHelpOptions = true,
        description = {
            "1, 2, 4, 8 planes and 10 to 4,000 connections between two hosts: throughput against capacity and " +
            "bytes of spray state per connection; RoCEv2 (one QP per connection, hashed to a plane) beside it."})
    static final class PlanesCommand extends Common
    {
        @Option(names = "--planes", split = ",", defaultValue = "1,2,4,8", description = "Plane counts (default ${DEFAULT-VALUE}).")
        int[] planes;

        @Option(names = "--connections", split = ",", defaultValue = "10,100,1000,4000",
            description = "Connection counts (default ${DEFAULT-VALUE}).")
        int[] connections;

        @Option(names = "--bytes", defaultValue = "16m", converter = SizeConverter.class,
            description = "Bytes per run, split over the connections (default ${DEFAULT-VALUE}).")
        long bytes;

        Integer run() throws Exception
        {
            requireEach(planes, 1, 16, "--planes");
            requireEach(connections, 1, 8000, "--connections");
            BadOption.size("--bytes", bytes, 1 << 20, Long.MAX_VALUE);
            final PlanesExperiment.Settings d = PlanesExperiment.Settings.DEFAULT;
            final PlanesExperiment.Settings settings = new PlanesExperiment.Settings(bytes, d.messageBytes(),
                d.timeLimitNanos(), d.seed());
            final List<PlanesExperiment.Point> points = PlanesExperiment.run(settings, planes, connections, this::log);
            return finish(PlanesExperiment.write(out, settings, points), PlanesExperiment.toJson(settings, points));
        }
    }

    @Command(name = "plane-failure", mixinStandardHelpOptions = true,
        description = {
            "A bulk write over N planes with one plane blackholed mid-transfer and no application action:",
            "goodput timeline and time to recover (N-1)/N; RoCEv2 with one QP per plane beside it.",
            "--realtime runs it on DPDK instead: two embedded NICs on net_ring ports through the fabric emulator in " +
            "real time (the demo's set-up), 10 ms bins, into plane-failure-realtime.*."})
    static final class PlaneFailureCommand extends Common
    {
        @Option(names = "--planes", defaultValue = "4", description = "Planes (default ${DEFAULT-VALUE}; --realtime: 2..8).")
        int planes;

        @Option(names = "--bytes", description = "Bytes written (default 96m; --realtime: 1g).", converter = SizeConverter.class)
        Long bytes;

        @Option(names = "--fail-at-us", description = "When the plane fails (default 500 us; --realtime: 500000 us).")
        Long failAtMicros;

        @Option(names = "--bin-us", defaultValue = "20", description = "Timeline resolution (default ${DEFAULT-VALUE} us; " +
            "--realtime: always 10000 us).")
        long binMicros;

        @Option(names = "--realtime", description = "On DPDK net_ring ports in real time rather than in virtual time.")
        boolean realTime;

        Integer run() throws Exception
        {
            final PlaneFailureExperiment.Settings d = realTime ? RealTimePlaneFailure.DEFAULT : PlaneFailureExperiment.Settings.DEFAULT;
            final long bytesToWrite = null == bytes ? d.bytes() : bytes;
            if (null != failAtMicros)
            {
                BadOption.range("--fail-at-us", failAtMicros, 1, 3_600_000_000L);
            }
            final long failAtNanos = null == failAtMicros ? d.failAtNanos() : failAtMicros * 1000;
            BadOption.range("--planes", planes, 2, realTime ? 8 : 16);
            BadOption.size("--bytes", bytesToWrite, 1 << 20, Long.MAX_VALUE);
            BadOption.range("--bin-us", binMicros, 1, 1_000_000_000L);
            final PlaneFailureExperiment.Settings settings = new PlaneFailureExperiment.Settings(planes, 1, bytesToWrite,
                d.messageBytes(), failAtNanos, realTime ? d.binNanos() : binMicros * 1000, d.timeLimitNanos(), d.seed());
            final List<PlaneFailureExperiment.Side> sides = realTime ?
                RealTimePlaneFailure.run(settings, this::log) : PlaneFailureExperiment.run(settings, this::log);
            return finish(PlaneFailureExperiment.write(out, settings, sides, realTime),
                PlaneFailureExperiment.toJson(settings, sides, realTime));
        }
    }

    @Command(name = "collectives", mixinStandardHelpOptions = true,
        description = {
            "Ring all-reduce and all-to-all across 16 to 64 nodes of a two-plane leaf-spine fabric:",
            "completion time and algorithmic bandwidth, spray against RoCEv2."})
    static final class CollectivesCommand extends Common
    {
        @Option(names = "--nodes", split = ",", defaultValue = "16,32,64",
            description = "Node counts, multiples of 8 (default ${DEFAULT-VALUE}).")
        int[] nodes;

        @Option(names = "--bytes", defaultValue = "1m", converter = SizeConverter.class,
            description = "All-reduce buffer per node (default ${DEFAULT-VALUE}).")
        long bytes;

        @Option(names = "--all-to-all-bytes", defaultValue = "1m", converter = SizeConverter.class,
            description = "All-to-all bytes each node sends in all (default ${DEFAULT-VALUE}).")
        long allToAllBytes;

        Integer run() throws Exception
        {
            requireEach(nodes, 8, 128, "--nodes");
            for (final int n : nodes)
            {
                if (n % 8 != 0)
                {
                    throw new BadOption("--nodes", Integer.toString(n), "must be a multiple of 8", "try --nodes " + (n + 7) / 8 * 8);
                }
            }
            BadOption.size("--bytes", bytes, 64 * 1024, Long.MAX_VALUE);
            BadOption.size("--all-to-all-bytes", allToAllBytes, 64 * 1024, Long.MAX_VALUE);
            final CollectivesExperiment.Settings d = CollectivesExperiment.Settings.DEFAULT;
            final CollectivesExperiment.Settings settings = new CollectivesExperiment.Settings(bytes, allToAllBytes,
                d.timeLimitNanos(), d.seed());
            final List<CollectivesExperiment.Point> points = CollectivesExperiment.run(settings, nodes, this::log);
            return finish(CollectivesExperiment.write(out, settings, points), CollectivesExperiment.toJson(settings, points));
        }
    }
}
