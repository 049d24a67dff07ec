package io.spraynic.bench.experiment;

import io.spraynic.datapath.telemetry.OutputFile;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.Topology;
import io.spraynic.datapath.transport.spray.ConnectionFootprint;
import io.spraynic.datapath.transport.spray.SprayConnection;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;

/**
 * {@code planes}: two hosts joined by 1, 2, 4 or 8 planes of 100 Gb/s (two parallel fabric links each),
 * carrying 10 to 4,000 concurrent connections host 0 to host 1. The same total bytes are split evenly over
 * the connections (so the many-connection runs stay short: at 4,000 each carries a few packets), posted
 * all at once. Throughput = total bytes / time to the last completion, against the planes' capacity.
 * <p>
 * Spray: one connection per flow, 8 paths spread over the planes, whatever their number; its state
 * ({@link SprayConnection#stateBytes()}) is reported per connection. RoCEv2: one QP per flow, on the plane
 * its UDP source port hashes to (a single-path transport cannot use more than one).
 */
public final class PlanesExperiment
{
    public static final int[] DEFAULT_PLANES = {1, 2, 4, 8};
    public static final int[] DEFAULT_CONNECTIONS = {10, 100, 1000, 4000};
    private static final int PATHS = 8;

    public record Settings(long totalBytes, int messageBytes, long timeLimitNanos, long seed)
    {
        public static final Settings DEFAULT = new Settings(16L << 20, 64 * 1024, 200_000_000L, 42);
    }

    /**
     * @param stateBytesPerConnection spray: every byte of one connection's state; RoCEv2: not measured (-1).
     */
    public record Point(int planes, int connections, String transport, long bytesPerConnection, boolean complete,
        boolean verified, double goodputGbps, double capacityGbps, long stateBytesPerConnection)
    {
        public double utilisation()
        {
            return goodputGbps / capacityGbps;
        }
    }

    private PlanesExperiment()
    {
    }

    public static List<Point> run(final Settings settings, final int[] planes, final int[] connections,
        final Consumer<String> log)
    {
        final List<Point> points = new ArrayList<>();
        for (final int n : connections)
        {
            for (final int p : planes)
            {
                for (final Cluster.Transport transport : Cluster.Transport.values())
                {
                    final Point point = runOne(settings, p, n, transport);
                    points.add(point);
                    log.accept(String.format(Locale.ROOT,
                        "%d planes, %4d connections of %6d B, %-6s: %7.2f Gb/s (%.3f of %.0f)%s%s", p, n,
                        point.bytesPerConnection(), transport.label, point.goodputGbps(), point.utilisation(),
                        point.capacityGbps(), point.complete() && point.verified() ? "" : " INCOMPLETE/UNVERIFIED",
                        point.stateBytesPerConnection() < 0 ? "" : ", " + point.stateBytesPerConnection() +
                        " B of state per connection"));
                }
            }
        }
        return points;
    }

    static Point runOne(final Settings settings, final int planes, final int connections,
        final Cluster.Transport transport)
    {
        final long perConnection = Math.max(4096, settings.totalBytes() / connections / 4096 * 4096);
        try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withSeed(settings.seed()), planes, 2);
            Cluster cluster = new Cluster(fabric, transport, new Cluster.Options(PATHS, 4, settings.seed())))
        {
            for (int c = 0; c < connections; c++)
            {
                cluster.flow(0, 1, perConnection);
            }
            cluster.start();
            final BulkTransfer.Result result = BulkTransfer.run(cluster, (int)Math.min(settings.messageBytes(), perConnection),
                4, 2_000, settings.timeLimitNanos(), new BulkTransfer.Observer()
                {
                });
            final long state = transport == Cluster.Transport.SPRAY ? cluster.connection(0).stateBytes() : -1;
            final double capacity = fabric.config().hostLink().rateBitsPerSecond() / 1e9 * planes;
            return new Point(planes, connections, transport.label, perConnection, result.complete(), result.verified(),
                result.goodputGbps(), capacity, state);
        }
    }

    public static String toJson(final Settings settings, final List<Point> points)
    {
        final StringBuilder json = new StringBuilder(String.format(Locale.ROOT,
            "{\"experiment\":\"planes\",\"totalBytes\":%d,\"sprayPaths\":%d,\"pathStateBytes\":%d," +
            "\"streamStateBytes\":%d,\"points\":[", settings.totalBytes(), PATHS, ConnectionFootprint.pathStateBytes(),
            ConnectionFootprint.streamStateBytes()));
        for (int i = 0; i < points.size(); i++)
        {
            final Point point = points.get(i);
            json.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT,
                "{\"planes\":%d,\"connections\":%d,\"transport\":\"%s\",\"bytesPerConnection\":%d,\"complete\":%b," +
                "\"verified\":%b,\"goodputGbps\":%s,\"capacityGbps\":%s,\"utilisation\":%s,\"stateBytesPerConnection\":%s}",
                point.planes(), point.connections(), point.transport(), point.bytesPerConnection(), point.complete(),
                point.verified(), LossSweep.number(point.goodputGbps()), LossSweep.number(point.capacityGbps()),
                LossSweep.number(point.utilisation()),
                point.stateBytesPerConnection() < 0 ? "null" : String.valueOf(point.stateBytesPerConnection())));
        }
        return json.append("]}").toString();
    }

    public static String toCsv(final List<Point> points)
    {
        final StringBuilder csv = new StringBuilder("planes,connections,transport,bytesPerConnection,complete,verified," +
            "goodputGbps,capacityGbps,utilisation,stateBytesPerConnection\n");
        for (final Point point : points)
        {
            csv.append(String.format(Locale.ROOT, "%d,%d,%s,%d,%b,%b,%.3f,%.0f,%.4f,%s%n", point.planes(),
                point.connections(), point.transport(), point.bytesPerConnection(), point.complete(), point.verified(),
                point.goodputGbps(), point.capacityGbps(), point.utilisation(),
                point.stateBytesPerConnection() < 0 ? "" : String.valueOf(point.stateBytesPerConnection())));
        }
        return csv.toString();
    }

    /** Writes {@code planes.csv}, {@code planes.png} and {@code planes.json}. @return the files. */
    public static List<Path> write(final Path directory, final Settings settings, final List<Point> points)
        throws IOException
    {
        OutputFile.createDirectory(directory);
        final Path csv = OutputFile.writeString(directory.resolve("planes.csv"), toCsv(points));
        final Path json = OutputFile.writeString(directory.resolve("planes.json"), toJson(settings, points) + "\n");
        final Map<String, List<double[]>> series = new LinkedHashMap<>();
        for (final Point point : points)
        {
            series.computeIfAbsent((point.transport().equals("spray") ? "spray, " : "RoCEv2, ") + point.connections() +
                " connections", k -> new ArrayList<>()).add(new double[] {point.planes(), point.goodputGbps()});
        }
        final List<double[]> capacity = new ArrayList<>();
        for (final Point point : points)
        {
            if (capacity.stream().noneMatch(xy -> xy[0] == point.planes()))
            {
                capacity.add(new double[] {point.planes(), point.capacityGbps()});
            }
        }
        series.put("capacity (planes x 100 Gb/s)", capacity);
        final Path png = directory.resolve("planes.png");
        Charts.xy(png, "Throughput against planes, 10 to 4,000 connections", "planes", "goodput (Gb/s)", series);
        return List.of(csv, png, json);
    }
}
