package io.spraynic.bench.experiment;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.Link;
import io.spraynic.datapath.fabric.Topology;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * {@code reorder}: reordering without loss. The fabric's parallel links get different propagation
 * delays (the i-th fabric link of each direction {@code i * step} longer), so packets sprayed over
 * different paths overtake each other by up to {@code (links - 1) * step}; nothing is dropped. A
 * transport that mistakes reordering for loss retransmits; spray's per-path sequence spaces
 * (PROTOCOL.md S6.2) should retransmit nothing. Virtual time, every byte verified.
 */
public final class ReorderExperiment
{
    /** Extra delay per parallel link, nanoseconds: from none to ten times the base hop. */
    public static final long[] DEFAULT_STEPS_NS = {0, 1_000, 5_000, 10_000};

    public record Point(long stepNs, long maxSkewNs, TransferOutcome spray)
    {
        /** Retransmissions with nothing lost are all spurious. */
        public long spuriousRetransmissions()
        {
            return spray.retransmitted() - spray.lost();
        }
    }

    private ReorderExperiment()
    {
    }

    public static List<Point> run(final LossSweep.Settings settings, final long[] stepsNs, final Consumer<String> log)
    {
        final List<Point> points = new ArrayList<>();
        for (final long step : stepsNs)
        {
            try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withSeed(settings.seed()), settings.planes(), 2))
            {
                long maxSkew = 0;
                final List<Link> links = fabric.fabricLinks();
                for (int i = 0; i < links.size(); i++)
                {
                    final Link link = links.get(i);
                    final long extra = (i % 2) * step + (i / 2 % settings.planes()) * step / 2;
                    link.propagationDelayNs(link.propagationDelayNs() + extra);
                    maxSkew = Math.max(maxSkew, extra);
                }
                final TransferOutcome spray = SprayWriteWorkload.run(fabric, settings.bytes(), settings.messageBytes(),
                    settings.timeLimitNanos(), settings.seed(), settings.paths(), settings.streams(),
                    UnaryOperator.identity());
                final Point point = new Point(step, maxSkew, spray);
                points.add(point);
                log.accept(String.format(Locale.ROOT,
                    "skew up to %6.1f us: spray %7.2f Gb/s%s, lost %d, retransmitted %d, spurious %d, timer-driven sends %d",
                    maxSkew / 1e3, spray.goodputGbps(), spray.verified() && spray.complete() ? "" : " NOT VERIFIED",
                    spray.lost(), spray.retransmitted(), point.spuriousRetransmissions(), spray.timeouts()));
            }
        }
        return points;
    }

    public static String toJson(final LossSweep.Settings settings, final List<Point> points)
    {
        final StringBuilder json = new StringBuilder(String.format(Locale.ROOT,
            "{\"experiment\":\"reorder\",\"planes\":%d,\"paths\":%d,\"bytes\":%d,\"points\":[",
            settings.planes(), settings.paths(), settings.bytes()));
        for (int i = 0; i < points.size(); i++)
        {
            final Point point = points.get(i);
            json.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT,
                "{\"skewNs\":%d,\"sprayGoodputGbps\":%s,\"verified\":%b,\"lost\":%d,\"retransmitted\":%d," +
                "\"spuriousRetransmissions\":%d,\"timerDrivenSends\":%d}",
                point.maxSkewNs(), LossSweep.number(point.spray().goodputGbps()),
                point.spray().verified() && point.spray().complete(), point.spray().lost(), point.spray().retransmitted(),
                point.spuriousRetransmissions(), point.spray().timeouts()));
        }
        return json.append("]}").toString();
    }

    public static String toCsv(final List<Point> points)
    {
        final StringBuilder csv = new StringBuilder(
            "skewNs,sprayGoodputGbps,verified,lost,retransmitted,spuriousRetransmissions,timerDrivenSends\n");
        for (final Point point : points)
        {
            csv.append(String.format(Locale.ROOT, "%d,%.3f,%b,%d,%d,%d,%d%n", point.maxSkewNs(), point.spray().goodputGbps(),
                point.spray().verified() && point.spray().complete(), point.spray().lost(), point.spray().retransmitted(),
                point.spuriousRetransmissions(), point.spray().timeouts()));
        }
        return csv.toString();
    }
}
