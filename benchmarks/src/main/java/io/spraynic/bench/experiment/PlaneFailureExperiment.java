package io.spraynic.bench.experiment;

import io.spraynic.datapath.telemetry.OutputFile;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.Link;
import io.spraynic.datapath.fabric.Topology;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code plane-failure}: two hosts on {@code planes} planes (two parallel fabric links each), a bulk RDMA
 * WRITE running, and at {@code failAtNanos} every link of one plane, host links included, starts
 * dropping everything silently (a blackhole: no link-down signal). Nobody tells the application or the
 * transport. The timeline is goodput (bytes of completed messages) per bin; recovery is the first bin
 * after the failure from which goodput stays at or above 95 % of (N-1)/N of the goodput before it for
 * three bins running.
 * <p>
 * Spray: one connection, 8 paths over the planes. RoCEv2: one QP per plane (the usual deployment), the
 * bytes split evenly over them; the QP on the failed plane can only time out and, after its retries,
 * fail: without the application reposting its messages elsewhere they never arrive.
 */
public final class PlaneFailureExperiment
{
    private static final double RECOVERED_FRACTION = 0.95;
    private static final int RECOVERED_BINS = 3;

    public record Settings(int planes, int failedPlane, long bytes, int messageBytes, long failAtNanos, long binNanos,
        long timeLimitNanos, long seed)
    {
        public static final Settings DEFAULT = new Settings(4, 1, 96L << 20, 64 * 1024, 500_000, 20_000,
            20_000_000L, 42);
    }

    /**
     * @param timelineGbps          goodput per bin, bin i covering [i, i+1) x binNanos from the first post.
     * @param beforeGbps            mean goodput over the bins before the failure (the first one left out: start-up).
     * @param timelineRecoveryNanos from the failure to the first bin of a sustained (N-1)/N goodput (-1: none).
     * @param lowestGbps            lowest bin after the failure, before the transfer ended.
     */
    public record Side(String transport, boolean complete, boolean verified, boolean failedFlow, double goodputGbps,
        long completionNanos, double[] timelineGbps, double beforeGbps, long timelineRecoveryNanos, double lowestGbps,
        long bytesDone)
    {
        /**
         * @return from the failure to (N-1)/N goodput, when the transfer also completed with no application action;
         * -1 when it did not (holding (N-1)/N while the failed plane's share never arrives is not a recovery).
         */
        public long recoveryNanos()
        {
            return complete && verified ? timelineRecoveryNanos : -1;
        }
    }

    private PlaneFailureExperiment()
    {
    }

    public static List<Side> run(final Settings settings, final Consumer<String> log)
    {
        final List<Side> sides = new ArrayList<>();
        for (final Cluster.Transport transport : Cluster.Transport.values())
        {
            final Side side = runOne(settings, transport);
            sides.add(side);
            log.accept(String.format(Locale.ROOT,
                "%-6s: %.2f Gb/s before the failure, lowest %.2f after, goodput back to >= %.0f %% of %d/%d after %s us, " +
                "recovered %s; %s, %d of %d bytes%s",
                side.transport(), side.beforeGbps(), side.lowestGbps(), RECOVERED_FRACTION * 100, settings.planes() - 1,
                settings.planes(), side.timelineRecoveryNanos() < 0 ? "never" :
                LossSweep.number(side.timelineRecoveryNanos() / 1e3),
                side.recoveryNanos() < 0 ? "NO" : "in " + LossSweep.number(side.recoveryNanos() / 1e3) + " us",
                side.complete() ? "complete" : "INCOMPLETE", side.bytesDone(), settings.bytes(),
                side.verified() ? "" : " NOT VERIFIED"));
        }
        return sides;
    }

    static Side runOne(final Settings settings, final Cluster.Transport transport)
    {
        final int planes = settings.planes();
        try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withSeed(settings.seed()), planes, 2);
            Cluster cluster = new Cluster(fabric, transport, new Cluster.Options(8, 64, settings.seed())))
        {
            final int outstanding;
            if (transport == Cluster.Transport.SPRAY)
            {
                cluster.flow(0, 1, settings.bytes());
                outstanding = 64;
            }
            else
            {
                for (int p = 0; p < planes; p++)
                {
                    final long share = settings.bytes() / planes + (p < settings.bytes() % planes ? 1 : 0);
                    cluster.flow(0, 1, share, p);
                }
                outstanding = 16;
            }
            cluster.start();
            final long start = fabric.now();
            final long failAt = start + settings.failAtNanos();
            for (final Link link : fabric.links())
            {
                if (link.plane() == settings.failedPlane())
                {
                    fabric.blackholeAt(failAt, link);
                }
            }
            final long bin = settings.binNanos();
            final int bins = (int)(settings.timeLimitNanos() / bin) + 1;
            final long[] binBytes = new long[bins];
            final BulkTransfer.Result result = BulkTransfer.run(cluster, settings.messageBytes(), outstanding, 2_000,
                settings.timeLimitNanos(), false, new BulkTransfer.Observer()
                {
                    public void onMessage(final int flow, final long bytes, final long nowNanos)
                    {
                        binBytes[(int)Math.min(bins - 1, (nowNanos - start) / bin)] += bytes;
                    }
                });
            // the timeline runs to the last completion
            long lastCompletion = start;
            for (final long finish : result.finishNanos())
            {
                if (finish != Long.MAX_VALUE)
                {
                    lastCompletion = Math.max(lastCompletion, finish);
                }
            }
            int used = 0;
            for (int i = 0; i < bins; i++)
            {
                if (binBytes[i] > 0)
                {
                    used = i + 1;
                }
            }
            final long[] timelineBytes = Arrays.copyOf(binBytes, used);
            return side(transport.label, result.complete(), result.verified(), result.failed(), result.goodputGbps(),
                lastCompletion - start, timelineBytes, bin, settings.failAtNanos(), planes, result.totalBytes());
        }
    }

    /**
     * A transport's side from its goodput timeline, whichever clock it was measured on.
     *
     * @param binBytes    bytes completed in each bin of {@code binNanos} from the first post, to the last completion.
     * @param failAtNanos when the plane failed, from the first post.
     */
    static Side side(
        final String transport, final boolean complete, final boolean verified, final boolean failedFlow,
        final double goodputGbps, final long completionNanos, final long[] binBytes, final long binNanos,
        final long failAtNanos, final int planes, final long bytesDone)
    {
        final int used = binBytes.length;
        final double[] timeline = new double[used];
        for (int i = 0; i < used; i++)
        {
            timeline[i] = binBytes[i] * 8.0 / binNanos;
        }
        final int failBin = (int)(failAtNanos / binNanos);
        double before = 0;
        for (int i = 1; i < failBin && i < used; i++)
        {
            before += timeline[i];
        }
        before /= Math.max(1, Math.min(failBin, used) - 1);
        final double target = RECOVERED_FRACTION * before * (planes - 1) / planes;
        long recovery = -1;
        double lowest = Double.NaN;
        for (int i = failBin; i < used; i++)
        {
            lowest = Double.isNaN(lowest) ? timeline[i] : Math.min(lowest, timeline[i]);
            if (recovery < 0)
            {
                boolean sustained = true;
                for (int k = i; k < Math.min(used, i + RECOVERED_BINS); k++)
                {
                    sustained &= timeline[k] >= target;
                }
                // the transfer's last bin is partial: it cannot start a recovery on its own
                if (sustained && i + RECOVERED_BINS <= used - 1)
                {
                    recovery = Math.max(0, (long)i * binNanos - failAtNanos);
                }
            }
        }
        return new Side(transport, complete, verified, failedFlow, goodputGbps, completionNanos, timeline, before, recovery,
            lowest, bytesDone);
    }

    public static String toJson(final Settings settings, final List<Side> sides)
    {
        return toJson(settings, sides, false);
    }

    /** @param realTime whether the sides ran on DPDK in real time rather than in virtual time. */
    public static String toJson(final Settings settings, final List<Side> sides, final boolean realTime)
    {
        final StringBuilder json = new StringBuilder(String.format(Locale.ROOT,
            "{\"experiment\":\"plane-failure\",\"planes\":%d,\"failedPlane\":%d,\"bytes\":%d,\"failAtNanos\":%d," +
            "\"binNanos\":%d,\"clock\":\"%s\",\"recoveredFraction\":%s,\"sides\":[", settings.planes(), settings.failedPlane(),
            settings.bytes(), settings.failAtNanos(), settings.binNanos(), realTime ? "real" : "virtual",
            LossSweep.number(RECOVERED_FRACTION * (settings.planes() - 1) / settings.planes())));
        for (int i = 0; i < sides.size(); i++)
        {
            final Side side = sides.get(i);
            final StringBuilder timeline = new StringBuilder();
            for (int k = 0; k < side.timelineGbps().length; k++)
            {
                timeline.append(k == 0 ? "" : ",").append(LossSweep.number(side.timelineGbps()[k]));
            }
            json.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT,
                "{\"transport\":\"%s\",\"complete\":%b,\"verified\":%b,\"flowFailed\":%b,\"bytesDone\":%d," +
                "\"goodputGbps\":%s,\"completionNanos\":%d,\"beforeGbps\":%s,\"lowestAfterGbps\":%s," +
                "\"timelineRecoveryNanos\":%s,\"recoveryNanos\":%s,\"timelineGbps\":[%s]}",
                side.transport(), side.complete(), side.verified(), side.failedFlow(), side.bytesDone(),
                LossSweep.number(side.goodputGbps()), side.completionNanos(), LossSweep.number(side.beforeGbps()),
                LossSweep.number(side.lowestGbps()),
                side.timelineRecoveryNanos() < 0 ? "null" : String.valueOf(side.timelineRecoveryNanos()),
                side.recoveryNanos() < 0 ? "null" : String.valueOf(side.recoveryNanos()),
                timeline));
        }
        return json.append("]}").toString();
    }

    public static String toCsv(final Settings settings, final List<Side> sides)
    {
        int bins = 0;
        for (final Side side : sides)
        {
            bins = Math.max(bins, side.timelineGbps().length);
        }
        final StringBuilder csv = new StringBuilder("timeUs");
        for (final Side side : sides)
        {
            csv.append(',').append(side.transport()).append("Gbps");
        }
        csv.append('\n');
        for (int i = 0; i < bins; i++)
        {
            csv.append(LossSweep.number((i + 1) * settings.binNanos() / 1e3));
            for (final Side side : sides)
            {
                csv.append(',').append(i < side.timelineGbps().length ? String.format(Locale.ROOT, "%.3f",
                    side.timelineGbps()[i]) : "0");
            }
            csv.append('\n');
        }
        return csv.toString();
    }

    /** Writes {@code plane-failure.csv} (the timelines), {@code .png} and {@code .json}. @return the files. */
    public static List<Path> write(final Path directory, final Settings settings, final List<Side> sides)
        throws IOException
    {
        return write(directory, settings, sides, false);
    }

    /**
     * @param realTime whether the sides ran on DPDK in real time ({@link RealTimePlaneFailure}): the files are then
     *                 {@code plane-failure-realtime.*} and the plot's time axis is in milliseconds.
     */
    public static List<Path> write(final Path directory, final Settings settings, final List<Side> sides, final boolean realTime)
        throws IOException
    {
        OutputFile.createDirectory(directory);
        final String name = realTime ? "plane-failure-realtime" : "plane-failure";
        final double unitNanos = realTime ? 1e6 : 1e3;
        final String unit = realTime ? "ms" : "us";
        final Path csv = OutputFile.writeString(directory.resolve(name + ".csv"), toCsv(settings, sides));
        final Path json = OutputFile.writeString(directory.resolve(name + ".json"), toJson(settings, sides, realTime) + "\n");
        final Map<String, List<double[]>> series = new LinkedHashMap<>();
        double peak = 0;
        for (final Side side : sides)
        {
            final List<double[]> points = new ArrayList<>();
            for (int i = 0; i < side.timelineGbps().length; i++)
            {
                points.add(new double[] {(i + 0.5) * settings.binNanos() / unitNanos, side.timelineGbps()[i]});
                peak = Math.max(peak, side.timelineGbps()[i]);
            }
            series.put(side.transport().equals("spray") ? "spray (1 connection, 8 paths)" :
                "RoCEv2 RC (" + settings.planes() + " QPs, one per plane)", points);
        }
        final List<double[]> failure = new ArrayList<>();
        failure.add(new double[] {settings.failAtNanos() / unitNanos, 0});
        failure.add(new double[] {settings.failAtNanos() / unitNanos + 1e-3,
            realTime ? Math.max(1, peak * 1.1) : 100.0 * settings.planes()});
        series.put("plane " + settings.failedPlane() + " blackholed", failure);
        final Path png = directory.resolve(name + ".png");
        Charts.xy(png, "Goodput when one of " + settings.planes() + " planes is blackholed, no application action" +
                (realTime ? " (DPDK, real time)" : ""),
            "time (" + unit + ")", "goodput (Gb/s, per " + LossSweep.number(settings.binNanos() / unitNanos) + " " + unit + ")",
            series);
        return List.of(csv, png, json);
    }
}
