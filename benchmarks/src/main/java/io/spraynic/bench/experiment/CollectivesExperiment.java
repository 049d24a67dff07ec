package io.spraynic.bench.experiment;

import io.spraynic.datapath.telemetry.OutputFile;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
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
 * {@code collectives}: the two collectives of the published results on a leaf-spine fabric of 16 to 64
 * nodes (8 per leaf, 8 spines per plane, so non-blocking, 2 planes of 100 Gb/s), the communication of each
 * played with real RDMA WRITEs (no arithmetic: a reduction is assumed free), spray against RoCEv2 RC.
 * <ul>
 *     <li>ring all-reduce of {@code allReduceBytes} per node: 2 (N-1) steps; in step k node i writes one
 *     chunk of {@code allReduceBytes / N} to node i+1, once its own step k-1 completed and node i-1's step
 *     k-1 (the chunk it forwards) completed. Algorithmic bandwidth = bytes per node / time; bus bandwidth =
 *     algorithmic x 2 (N-1) / N (what NCCL/RCCL report).</li>
 *     <li>all-to-all of {@code allToAllBytes} per node: every node writes {@code allToAllBytes / (N-1)} to
 *     every other, all at once. Algorithmic bandwidth = bytes per node / time.</li>
 * </ul>
 */
public final class CollectivesExperiment
{
    public static final int[] DEFAULT_NODES = {16, 32, 64};
    private static final int HOSTS_PER_LEAF = 8;
    private static final int SPINES = 8;
    private static final int PLANES = 2;
    private static final long STEP_NANOS = 500;

    public record Settings(long allReduceBytes, long allToAllBytes, long timeLimitNanos, long seed)
    {
        public static final Settings DEFAULT = new Settings(1L << 20, 1L << 20, 500_000_000L, 42);
    }

    public record Point(String collective, int nodes, String transport, boolean complete, boolean verified,
        long completionNanos, double algorithmicGbps, double busGbps, long retransmitted)
    {
    }

    private CollectivesExperiment()
    {
    }

    public static List<Point> run(final Settings settings, final int[] nodes, final Consumer<String> log)
    {
        final List<Point> points = new ArrayList<>();
        for (final int n : nodes)
        {
            for (final Cluster.Transport transport : Cluster.Transport.values())
            {
                final Point ring = allReduce(settings, n, transport);
                points.add(ring);
                log.accept(describe(ring));
            }
            for (final Cluster.Transport transport : Cluster.Transport.values())
            {
                final Point a2a = allToAll(settings, n, transport);
                points.add(a2a);
                log.accept(describe(a2a));
            }
        }
        return points;
    }

    private static String describe(final Point point)
    {
        return String.format(Locale.ROOT, "%-10s %2d nodes %-6s: %9.1f us, algbw %7.2f Gb/s, busbw %7.2f Gb/s, " +
            "retransmitted %d%s", point.collective(), point.nodes(), point.transport(), point.completionNanos() / 1e3,
            point.algorithmicGbps(), point.busGbps(), point.retransmitted(),
            point.complete() && point.verified() ? "" : " INCOMPLETE/UNVERIFIED");
    }

    private static Fabric fabric(final Settings settings, final int nodes)
    {
        if (nodes < 2 || nodes % HOSTS_PER_LEAF != 0 && nodes > HOSTS_PER_LEAF)
        {
            throw new IllegalArgumentException("nodes must be 2..8 or a multiple of 8: " + nodes);
        }
        final int leaves = Math.max(1, nodes / HOSTS_PER_LEAF);
        final int perLeaf = Math.min(nodes, HOSTS_PER_LEAF);
        return Topology.twoTierClos(FabricConfig.DEFAULT.withSeed(settings.seed()), leaves, leaves > 1 ? SPINES : 0,
            perLeaf, PLANES);
    }

    static Point allReduce(final Settings settings, final int nodes, final Cluster.Transport transport)
    {
        final int steps = 2 * (nodes - 1);
        final int chunk = (int)Math.max(64, (settings.allReduceBytes() / nodes + 63) / 64 * 64);
        try (Fabric fabric = fabric(settings, nodes);
            Cluster cluster = new Cluster(fabric, transport, new Cluster.Options(4, 2, settings.seed())))
        {
            for (int i = 0; i < nodes; i++)
            {
                cluster.flow(i, (i + 1) % nodes, (long)steps * chunk);
            }
            cluster.start();
            final int[] posted = new int[nodes];
            final int[] done = new int[nodes];
            final boolean[] failed = new boolean[1];
            final long start = fabric.now();
            final long deadline = start + settings.timeLimitNanos();
            int finished = 0;
            while (finished < nodes && fabric.now() < deadline && !failed[0])
            {
                for (int i = 0; i < nodes; i++)
                {
                    final int k = posted[i];
                    final int previous = (i + nodes - 1) % nodes;
                    if (k < steps && done[i] == k && (k == 0 || done[previous] >= k))
                    {
                        if (cluster.post(i, k, (long)k * chunk, chunk))
                        {
                            posted[i]++;
                        }
                    }
                }
                fabric.runUntil(fabric.now() + STEP_NANOS);
                cluster.poll((flow, message, success) ->
                {
                    if (success)
                    {
                        done[flow]++;
                    }
                    else
                    {
                        failed[0] = true;
                    }
                });
                finished = 0;
                for (int i = 0; i < nodes; i++)
                {
                    finished += done[i] == steps ? 1 : 0;
                }
            }
            final long nanos = fabric.now() - start;
            boolean verified = true;
            for (int i = 0; i < nodes; i++)
            {
                verified &= cluster.verify(i, (long)done[i] * chunk);
            }
            final boolean complete = finished == nodes;
            final double algorithmic = complete ? settings.allReduceBytes() * 8.0 / nanos : 0;
            return new Point("all-reduce", nodes, transport.label, complete, verified, nanos, algorithmic,
                algorithmic * 2 * (nodes - 1) / nodes, cluster.retransmitted());
        }
    }

    static Point allToAll(final Settings settings, final int nodes, final Cluster.Transport transport)
    {
        final long perPair = Math.max(64, (settings.allToAllBytes() / (nodes - 1) + 63) / 64 * 64);
        try (Fabric fabric = fabric(settings, nodes);
            Cluster cluster = new Cluster(fabric, transport, new Cluster.Options(4, 1, settings.seed())))
        {
            for (int i = 0; i < nodes; i++)
            {
                for (int k = 1; k < nodes; k++)
                {
                    // each node starts with a different peer, as all-to-all implementations stagger them
                    cluster.flow(i, (i + k) % nodes, perPair);
                }
            }
            cluster.start();
            final BulkTransfer.Result result = BulkTransfer.run(cluster, (int)Math.min(perPair, 1 << 20), 1, STEP_NANOS,
                settings.timeLimitNanos(), new BulkTransfer.Observer()
                {
                });
            final long nanos = result.endNanos() - result.startNanos();
            final double algorithmic = result.complete() ? perPair * (nodes - 1) * 8.0 / nanos : 0;
            return new Point("all-to-all", nodes, transport.label, result.complete(), result.verified(), nanos,
                algorithmic, algorithmic, result.retransmitted());
        }
    }

    public static String toJson(final Settings settings, final List<Point> points)
    {
        final StringBuilder json = new StringBuilder(String.format(Locale.ROOT,
            "{\"experiment\":\"collectives\",\"allReduceBytes\":%d,\"allToAllBytes\":%d,\"planes\":%d," +
            "\"hostsPerLeaf\":%d,\"spinesPerPlane\":%d,\"points\":[", settings.allReduceBytes(), settings.allToAllBytes(),
            PLANES, HOSTS_PER_LEAF, SPINES));
        for (int i = 0; i < points.size(); i++)
        {
            final Point point = points.get(i);
            json.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT,
                "{\"collective\":\"%s\",\"nodes\":%d,\"transport\":\"%s\",\"complete\":%b,\"verified\":%b," +
                "\"completionNanos\":%d,\"algorithmicGbps\":%s,\"busGbps\":%s,\"retransmitted\":%d}",
                point.collective(), point.nodes(), point.transport(), point.complete(), point.verified(),
                point.completionNanos(), LossSweep.number(point.algorithmicGbps()), LossSweep.number(point.busGbps()),
                point.retransmitted()));
        }
        return json.append("]}").toString();
    }

    public static String toCsv(final List<Point> points)
    {
        final StringBuilder csv = new StringBuilder(
            "collective,nodes,transport,complete,verified,completionNanos,algorithmicGbps,busGbps,retransmitted\n");
        for (final Point point : points)
        {
            csv.append(String.format(Locale.ROOT, "%s,%d,%s,%b,%b,%d,%.3f,%.3f,%d%n", point.collective(), point.nodes(),
                point.transport(), point.complete(), point.verified(), point.completionNanos(), point.algorithmicGbps(),
                point.busGbps(), point.retransmitted()));
        }
        return csv.toString();
    }

    /** Writes {@code collectives.csv}, {@code collectives.png} and {@code collectives.json}. @return the files. */
    public static List<Path> write(final Path directory, final Settings settings, final List<Point> points)
        throws IOException
    {
        OutputFile.createDirectory(directory);
        final Path csv = OutputFile.writeString(directory.resolve("collectives.csv"), toCsv(points));
        final Path json = OutputFile.writeString(directory.resolve("collectives.json"), toJson(settings, points) + "\n");
        final List<String> categories = new ArrayList<>();
        final Map<String, List<Double>> series = new LinkedHashMap<>();
        series.put("spray", new ArrayList<>());
        series.put("RoCEv2 RC", new ArrayList<>());
        for (final Point point : points)
        {
            final String category = point.collective() + ", " + point.nodes() + " nodes";
            if (!categories.contains(category))
            {
                categories.add(category);
            }
            series.get(point.transport().equals("spray") ? "spray" : "RoCEv2 RC").add(point.algorithmicGbps());
        }
        final Path png = directory.resolve("collectives.png");
        Charts.lines(png, "Collectives: algorithmic bandwidth per node", "collective", "Gb/s", categories, series);
        return List.of(csv, png, json);
    }
}
