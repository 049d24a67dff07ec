package io.spraynic.bench.experiment;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.Link;
import io.spraynic.datapath.fabric.Switch;
import io.spraynic.datapath.fabric.Topology;
import io.spraynic.datapath.transport.spray.SprayConfig;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * {@code reorder-within}: reordering within a route (PROTOCOL.md S6.5-3). The fabric's switches balance each packet on
 * its own over a plane's two parallel links ({@link Switch.Balancing#ROUND_ROBIN}, a LAG balanced per packet, or
 * {@link Switch.Balancing#LEAST_QUEUED}, adaptive routing), one link of each pair {@code skew} longer, so a path's
 * packets overtake each other. Spray runs with no reordering window (S6.5: every gap a loss), a fixed one, and one that
 * learns from 0, beside the same transfer over ECMP (flow hashing, no reordering within a path), at each loss rate on
 * every fabric link. Virtual time, every byte verified.
 */
public final class ReorderWithinExperiment
{
    public static final long DEFAULT_SKEW_NS = 4_000;
    public static final long DEFAULT_FIXED_WINDOW_NS = 15_000;
    /** The learning window's ceiling: far above any reordering here, so what it learns is its own. */
    public static final long LEARNT_MAX_NS = 1_000_000;
    public static final double[] DEFAULT_LOSS_PERCENT = {0, 1};

    /** One transfer: how the switches balanced, which window, at which loss. */
    public record Point(String balancing, String window, double lossPercent, TransferOutcome spray)
    {
        /** @return copies beyond the data packets the fabric dropped: reordering taken for loss (or copies of copies). */
        public long spuriousRetransmissions()
        {
            return Math.max(0, spray.retransmitted() - spray.lost());
        }
    }

    private record Setting(String name, Switch.Balancing balancing, String window, long floorNs, long maxNs)
    {
    }

    private ReorderWithinExperiment()
    {
    }

    /**
     * @param balancing how the switches balance the reordering runs (the reference runs hash flows).
     * @param skewNs    how much longer one link of each pair is.
     * @param fixedNs   the fixed window's width.
     */
    public static List<Point> run(final LossSweep.Settings settings, final Switch.Balancing balancing, final long skewNs,
        final long fixedNs, final double[] lossPercent, final Consumer<String> log)
    {
        final String balanced = balancing.name().toLowerCase(Locale.ROOT).replace('_', '-');
        final List<Setting> runs = List.of(
            new Setting("ecmp", Switch.Balancing.FLOW_HASH, "off", 0, 0),
            new Setting(balanced, balancing, "off", 0, 0),
            new Setting(balanced, balancing, "fixed " + fixedNs / 1_000 + " us", fixedNs, fixedNs),
            new Setting(balanced, balancing, "learnt 0-" + LEARNT_MAX_NS / 1_000 + " us", 0, LEARNT_MAX_NS));
        final List<Point> points = new ArrayList<>();
        for (final double loss : lossPercent)
        {
            for (final Setting run : runs)
            {
                try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withSeed(settings.seed()), settings.planes(), 2))
                {
                    for (final Switch sw : fabric.switches())
                    {
                        sw.balancing(run.balancing());
                    }
                    for (final Link link : fabric.fabricLinks())
                    {
                        if (link.name().endsWith("#1"))
                        {
                            link.propagationDelayNs(link.propagationDelayNs() + skewNs);
                        }
                    }
                    fabric.fabricLinkLoss(loss / 100);
                    final UnaryOperator<SprayConfig> window =
                        config -> config.reorderWindowNanos(run.floorNs()).reorderWindowMaxNanos(run.maxNs());
                    final TransferOutcome spray = SprayWriteWorkload.run(fabric, settings.bytes(), settings.messageBytes(),
                        settings.timeLimitNanos(), settings.seed(), settings.paths(), settings.streams(), window);
                    final Point point = new Point(run.name(), run.window(), loss, spray);
                    points.add(point);
                    log.accept(String.format(Locale.ROOT,
                        "%4.1f %% loss, %-12s window %-16s spray %7.2f Gb/s%s, data dropped %d, retransmitted %d, " +
                        "spurious %d, timer-driven sends %d", loss, run.name(), run.window(), spray.goodputGbps(),
                        spray.verified() && spray.complete() ? "" : " NOT VERIFIED", spray.lost(), spray.retransmitted(),
                        point.spuriousRetransmissions(), spray.timeouts()));
                }
            }
        }
        return points;
    }

    public static String toJson(final LossSweep.Settings settings, final long skewNs, final List<Point> points)
    {
        final StringBuilder json = new StringBuilder(String.format(Locale.ROOT,
            "{\"experiment\":\"reorder-within\",\"planes\":%d,\"paths\":%d,\"bytes\":%d,\"skewNs\":%d,\"points\":[",
            settings.planes(), settings.paths(), settings.bytes(), skewNs));
        for (int i = 0; i < points.size(); i++)
        {
            final Point point = points.get(i);
            json.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT,
                "{\"balancing\":\"%s\",\"window\":\"%s\",\"lossPercent\":%s,\"sprayGoodputGbps\":%s,\"verified\":%b," +
                "\"dataDropped\":%d,\"retransmitted\":%d,\"spuriousRetransmissions\":%d,\"timerDrivenSends\":%d}",
                point.balancing(), point.window(), LossSweep.number(point.lossPercent()),
                LossSweep.number(point.spray().goodputGbps()), point.spray().verified() && point.spray().complete(),
                point.spray().lost(), point.spray().retransmitted(), point.spuriousRetransmissions(),
                point.spray().timeouts()));
        }
        return json.append("]}").toString();
    }

    public static String toCsv(final List<Point> points)
    {
        final StringBuilder csv = new StringBuilder("balancing,window,lossPercent,sprayGoodputGbps,verified,dataDropped," +
            "retransmitted,spuriousRetransmissions,timerDrivenSends\n");
        for (final Point point : points)
        {
            csv.append(String.format(Locale.ROOT, "%s,%s,%s,%.3f,%b,%d,%d,%d,%d%n", point.balancing(), point.window(),
                LossSweep.number(point.lossPercent()), point.spray().goodputGbps(),
                point.spray().verified() && point.spray().complete(), point.spray().lost(), point.spray().retransmitted(),
                point.spuriousRetransmissions(), point.spray().timeouts()));
        }
        return csv.toString();
    }
}
