package io.spraynic.bench.experiment;

import io.spraynic.datapath.telemetry.OutputFile;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.Link;
import io.spraynic.datapath.fabric.LinkConfig;
import io.spraynic.datapath.fabric.Topology;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code incast}: N senders write to one receiver at once through one switch (one 100 Gb/s plane, the
 * receiver's downlink the bottleneck), spray against RoCEv2 RC with DCQCN on the same fabric, lossy (no PFC).
 * <ul>
 *     <li>Rate convergence: every microsecond the senders' own rates are sampled (spray: its pacing rate,
 *     {@link io.spraynic.datapath.transport.spray.SprayConnection#pacingRate()}; RoCEv2: DCQCN's R_C). Converged = from then
 *     on until the first sender finishes, every sender's rate stays within the band around the fair share
 *     (capacity / N).</li>
 *     <li>Goodput convergence, measured on the bottleneck link: bytes per sender in bins long enough to hold
 *     at least 8 frames at the fair share (so it cannot resolve below that bin), same band.</li>
 *     <li>Peak queue of the bottleneck link, drops, and Jain's fairness index of the bytes each sender got
 *     through the bottleneck before the first sender finished.</li>
 * </ul>
 */
public final class IncastExperiment
{
    public static final int[] DEFAULT_SENDERS = {8, 16, 32, 64};
    private static final int FRAME_BYTES = 4096 + 58 + LinkConfig.ETHERNET_OVERHEAD_BYTES;
    private static final long STEP_NANOS = 1_000;

    /**
     * @param band ± fraction of the fair share a rate must stay within to count as converged.
     */
    public record Settings(long bytesPerSender, int messageBytes, double band, long timeLimitNanos, long seed)
    {
        public static final Settings DEFAULT = new Settings(256 * 1024, 64 * 1024, 0.2, 200_000_000L, 42);
    }

    /**
     * One transport's incast.
     *
     * @param rateFirstInBandRtts  base RTTs until every sender's own rate was first in the band (NaN: never).
     * @param rateConvergedRtts    base RTTs until every sender's own rate stayed in the band (NaN: never did).
     * @param goodputConvergedRtts base RTTs until every sender's measured goodput stayed in the band (NaN: never).
     * @param jainFairness         Jain's index of the bytes each sender got through before the first finished.
     */
    public record Side(String transport, boolean complete, boolean verified, double goodputGbps, long completionNanos,
        double rateFirstInBandRtts, double rateConvergedRtts, double goodputConvergedRtts, int peakQueueBytes, int peakQueuePackets,
        long bottleneckDrops, long retransmitted, double jainFairness)
    {
    }

    public record Point(int senders, double fairShareGbps, long baseRttNanos, long binNanos, Side spray, Side rocev2)
    {
    }

    private IncastExperiment()
    {
    }

    public static List<Point> run(final Settings settings, final int[] senders, final Consumer<String> log)
    {
        final List<Point> points = new ArrayList<>();
        for (final int n : senders)
        {
            final Side spray = runOne(settings, n, Cluster.Transport.SPRAY);
            final Side rocev2 = runOne(settings, n, Cluster.Transport.ROCEV2);
            final Point point = new Point(n, fairShareGbps(n), baseRttNanos(), binNanos(n), spray, rocev2);
            points.add(point);
            log.accept(String.format(Locale.ROOT, "incast %2d -> 1: spray %s | rocev2 %s", n, describe(spray),
                describe(rocev2)));
        }
        return points;
    }

    private static String describe(final Side side)
    {
        return String.format(Locale.ROOT,
            "%6.2f Gb/s%s, rates in band after %s RTT, stayed from %s RTT, goodput stayed from %s RTT, " +
            "peak queue %d KiB, drops %d, Jain %.3f",
            side.goodputGbps(), side.complete() && side.verified() ? "" : " INCOMPLETE/UNVERIFIED",
            LossSweep.number(side.rateFirstInBandRtts()), LossSweep.number(side.rateConvergedRtts()), LossSweep.number(side.goodputConvergedRtts()),
            side.peakQueueBytes() / 1024, side.bottleneckDrops(), side.jainFairness());
    }

    static double fairShareGbps(final int senders)
    {
        return FabricConfig.DEFAULT.hostLink().rateBitsPerSecond() / 1e9 / senders;
    }

    /** Sender to switch to receiver and back: four propagation delays, a data frame serialised on two hops. */
    static long baseRttNanos()
    {
        final LinkConfig link = FabricConfig.DEFAULT.hostLink();
        return 4 * link.propagationDelayNs() + 2 * wireNanos(FRAME_BYTES, link.rateBitsPerSecond());
    }

    private static long wireNanos(final int bytes, final long bitsPerSecond)
    {
        return (long)Math.ceil(bytes * 8e9 / bitsPerSecond);
    }

    /** Bins hold at least 8 frames of one sender at its fair share, and at least one base RTT. */
    static long binNanos(final int senders)
    {
        final long eightFrames = (long)Math.ceil(8 * FRAME_BYTES * 8 / fairShareGbps(senders));
        return Math.max(baseRttNanos(), eightFrames);
    }

    static Side runOne(final Settings settings, final int senders, final Cluster.Transport transport)
    {
        final FabricConfig config = FabricConfig.DEFAULT.withSeed(settings.seed());
        try (Fabric fabric = Topology.twoTierClos(config, 1, 0, senders + 1, 1);
            Cluster cluster = new Cluster(fabric, transport, new Cluster.Options(2, 4, settings.seed())))
        {
            for (int s = 1; s <= senders; s++)
            {
                cluster.flow(s, 0, settings.bytesPerSender());
            }
            final Link bottleneck = fabric.link("p0/leaf0->host0");
            final SourceBytesTap tap = new SourceBytesTap(fabric.addresses());
            bottleneck.tap(tap);
            cluster.start();

            final double fair = fairShareGbps(senders) * 1e9;
            final long rtt = baseRttNanos();
            final long bin = binNanos(senders);
            final List<long[]> rateSamples = new ArrayList<>(); // {time, 1 if every active sender in band}
            final List<long[]> binSnapshots = new ArrayList<>(); // {time, bytes from sender 1, 2, ...}
            final long start = fabric.now();
            final boolean[] finished = new boolean[senders];
            final long[] done = new long[senders];
            final BulkTransfer.Result result = BulkTransfer.run(cluster, settings.messageBytes(), 4, STEP_NANOS,
                settings.timeLimitNanos(), new BulkTransfer.Observer()
                {
                    long nextRateSample = start;
                    long nextBin = start;

                    public void onStep(final long nowNanos)
                    {
                        if (nowNanos >= nextRateSample)
                        {
                            nextRateSample += STEP_NANOS;
                            boolean inBand = true;
                            for (int f = 0; f < senders; f++)
                            {
                                inBand &= finished[f] || Math.abs(cluster.senderRate(f) - fair) <= settings.band() * fair;
                            }
                            rateSamples.add(new long[] {nowNanos, inBand ? 1 : 0});
                        }
                        if (nowNanos >= nextBin)
                        {
                            nextBin += bin;
                            final long[] snapshot = new long[senders + 1];
                            snapshot[0] = nowNanos;
                            for (int s = 1; s <= senders; s++)
                            {
                                snapshot[s] = tap.bytesFrom(s);
                            }
                            binSnapshots.add(snapshot);
                        }
                    }

                    public void onMessage(final int flow, final long bytes, final long nowNanos)
                    {
                        done[flow] += bytes;
                        finished[flow] = done[flow] >= cluster.flowBytes(flow);
                    }
                });
            long firstFinish = Long.MAX_VALUE;
            for (final long t : result.finishNanos())
            {
                firstFinish = Math.min(firstFinish, t);
            }
            final double rateConverged = converged(rateSamples, firstFinish, start, rtt);
            double rateFirst = Double.NaN;
            for (final long[] sample : rateSamples)
            {
                if (sample[0] <= firstFinish && sample[1] == 1)
                {
                    rateFirst = (double)(sample[0] - start) / rtt;
                    break;
                }
            }
            final List<long[]> goodputInBand = new ArrayList<>();
            long[] lastShared = null;
            for (int i = 1; i < binSnapshots.size(); i++)
            {
                final long[] from = binSnapshots.get(i - 1);
                final long[] to = binSnapshots.get(i);
                if (to[0] > firstFinish)
                {
                    break;
                }
                lastShared = to;
                boolean inBand = true;
                for (int s = 1; s <= senders; s++)
                {
                    final double rate = (to[s] - from[s]) * 8e9 / (to[0] - from[0]);
                    inBand &= Math.abs(rate - fair) <= settings.band() * fair;
                }
                goodputInBand.add(new long[] {to[0], inBand ? 1 : 0});
            }
            final double goodputConverged = converged(goodputInBand, firstFinish, start, rtt);
            double sum = 0;
            double squares = 0;
            for (int s = 1; s <= senders; s++)
            {
                final double x = null == lastShared ? tap.bytesFrom(s) : lastShared[s];
                sum += x;
                squares += x * x;
            }
            final double jain = squares == 0 ? Double.NaN : sum * sum / (senders * squares);
            return new Side(transport.label, result.complete(), result.verified(), result.goodputGbps(),
                result.endNanos() - result.startNanos(), rateFirst, rateConverged, goodputConverged, bottleneck.peakQueueBytes(),
                tap.peakQueueFrames(), bottleneck.drops(), result.retransmitted(), jain);
        }
    }

    /**
     * @param samples {time, 1 if in band} in time order.
     * @return base RTTs from the start to the sample from which every later one before {@code until} is in band;
     * NaN when the last one is not (or there are none).
     */
    private static double converged(final List<long[]> samples, final long until, final long start, final long rtt)
    {
        long from = -1;
        for (final long[] sample : samples)
        {
            if (sample[0] > until)
            {
                break;
            }
            if (sample[1] == 0)
            {
                from = -1;
            }
            else if (from < 0)
            {
                from = sample[0];
            }
        }
        return from < 0 ? Double.NaN : (double)(from - start) / rtt;
    }

    public static String toJson(final Settings settings, final List<Point> points)
    {
        final StringBuilder json = new StringBuilder(String.format(Locale.ROOT,
            "{\"experiment\":\"incast\",\"bytesPerSender\":%d,\"band\":%s,\"baseRttNanos\":%d,\"points\":[",
            settings.bytesPerSender(), LossSweep.number(settings.band()), baseRttNanos()));
        for (int i = 0; i < points.size(); i++)
        {
            final Point point = points.get(i);
            json.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT,
                "{\"senders\":%d,\"fairShareGbps\":%s,\"binNanos\":%d,\"spray\":%s,\"rocev2\":%s}", point.senders(),
                LossSweep.number(point.fairShareGbps()), point.binNanos(), sideJson(point.spray()),
                sideJson(point.rocev2())));
        }
        return json.append("]}").toString();
    }

    private static String sideJson(final Side side)
    {
        return String.format(Locale.ROOT,
            "{\"complete\":%b,\"verified\":%b,\"goodputGbps\":%s,\"completionNanos\":%d,\"rateFirstInBandRtts\":%s," +
            "\"rateConvergedRtts\":%s," +
            "\"goodputConvergedRtts\":%s,\"peakQueueBytes\":%d,\"peakQueuePackets\":%d,\"bottleneckDrops\":%d," +
            "\"retransmitted\":%d,\"jainFairness\":%s}",
            side.complete(), side.verified(), LossSweep.number(side.goodputGbps()), side.completionNanos(),
            LossSweep.number(side.rateFirstInBandRtts()), LossSweep.number(side.rateConvergedRtts()), LossSweep.number(side.goodputConvergedRtts()),
            side.peakQueueBytes(), side.peakQueuePackets(), side.bottleneckDrops(), side.retransmitted(),
            LossSweep.number(side.jainFairness()));
    }

    public static String toCsv(final List<Point> points)
    {
        final StringBuilder csv = new StringBuilder("senders,transport,complete,verified,goodputGbps,completionNanos," +
            "rateFirstInBandRtts,rateConvergedRtts,goodputConvergedRtts,binNanos,peakQueueBytes,peakQueuePackets,bottleneckDrops," +
            "retransmitted,jainFairness\n");
        for (final Point point : points)
        {
            for (final Side side : new Side[] {point.spray(), point.rocev2()})
            {
                csv.append(String.format(Locale.ROOT, "%d,%s,%b,%b,%.3f,%d,%s,%s,%s,%d,%d,%d,%d,%d,%.4f%n", point.senders(),
                    side.transport(), side.complete(), side.verified(), side.goodputGbps(), side.completionNanos(),
                    csvNumber(side.rateFirstInBandRtts()), csvNumber(side.rateConvergedRtts()), csvNumber(side.goodputConvergedRtts()), point.binNanos(),
                    side.peakQueueBytes(), side.peakQueuePackets(), side.bottleneckDrops(), side.retransmitted(),
                    side.jainFairness()));
            }
        }
        return csv.toString();
    }

    static String csvNumber(final double value)
    {
        return Double.isFinite(value) ? LossSweep.number(value) : "";
    }

    /** Writes {@code incast.csv}, {@code incast.png} and {@code incast.json}. @return the files. */
    public static List<Path> write(final Path directory, final Settings settings, final List<Point> points)
        throws IOException
    {
        OutputFile.createDirectory(directory);
        final Path csv = OutputFile.writeString(directory.resolve("incast.csv"), toCsv(points));
        final Path json = OutputFile.writeString(directory.resolve("incast.json"), toJson(settings, points) + "\n");
        final List<String> categories = new ArrayList<>();
        final Map<String, List<Double>> series = new LinkedHashMap<>();
        final List<Double> sprayJain = new ArrayList<>();
        final List<Double> rocev2Jain = new ArrayList<>();
        final List<Double> sprayQueue = new ArrayList<>();
        final List<Double> rocev2Queue = new ArrayList<>();
        final List<Double> sprayGoodput = new ArrayList<>();
        final List<Double> rocev2Goodput = new ArrayList<>();
        for (final Point point : points)
        {
            sprayGoodput.add(point.spray().goodputGbps() / 100.0);
            rocev2Goodput.add(point.rocev2().goodputGbps() / 100.0);
            categories.add(point.senders() + " senders");
            sprayJain.add(point.spray().jainFairness());
            rocev2Jain.add(point.rocev2().jainFairness());
            sprayQueue.add(point.spray().peakQueueBytes() / (512.0 * 1024));
            rocev2Queue.add(point.rocev2().peakQueueBytes() / (512.0 * 1024));
        }
        series.put("spray goodput (fraction of 100 Gb/s)", sprayGoodput);
        series.put("RoCEv2 goodput (fraction of 100 Gb/s)", rocev2Goodput);
        series.put("spray Jain fairness", sprayJain);
        series.put("RoCEv2 Jain fairness", rocev2Jain);
        series.put("spray peak queue (fraction of 512 KiB)", sprayQueue);
        series.put("RoCEv2 peak queue (fraction of 512 KiB)", rocev2Queue);
        final Path png = directory.resolve("incast.png");
        Charts.lines(png, "Incast N -> 1 through one 100 Gb/s port", "senders", "index / fraction", categories, series);
        return List.of(csv, png, json);
    }
}
