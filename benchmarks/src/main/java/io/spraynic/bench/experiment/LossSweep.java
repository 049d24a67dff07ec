package io.spraynic.bench.experiment;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.Topology;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.LongConsumer;
import java.util.function.UnaryOperator;

/**
 * {@code loss-sweep}: goodput under random loss, as a fraction of the same transport's lossless
 * goodput on the same fabric, for RoCEv2 RC (the baseline) and, once it is attached, the spray
 * transport. Two hosts, {@code planes} planes of two parallel fabric links each (so 2 x planes ECMP
 * paths), loss on every fabric link, a bulk RDMA WRITE verified byte for byte, in virtual time.
 */
public final class LossSweep
{
    /** The published sweep (percent). */
    public static final double[] DEFAULT_LOSS_PERCENT = {0, 0.01, 0.1, 1, 2, 5, 10, 20};

    /**
     * One loss rate's measurements of both transports on identical fabrics (same seed).
     */
    public record Point(double lossPct, TransferOutcome rocev2, double rocev2GoodputRatio, TransferOutcome spray,
        double sprayGoodputRatio)
    {
    }

    /**
     * @param paths   spray paths per connection (spread over the planes).
     * @param streams spray streams the messages are posted on, round-robin.
     */
    public record Settings(int planes, long bytes, int messageBytes, long timeLimitNanos, long seed, int paths, int streams)
    {
        public static final Settings DEFAULT = new Settings(4, 64L << 20, 1 << 20, 2_000_000_000L, 42, 8, 4);

        /** @return these settings with another plane count and size per point. */
        public Settings withPlanesAndBytes(final int newPlanes, final long newBytes)
        {
            return new Settings(newPlanes, newBytes, messageBytes, timeLimitNanos, seed, paths, streams);
        }
    }

    private LossSweep()
    {
    }

    public static List<Point> run(final Settings settings, final double[] lossPercent, final java.util.function.Consumer<String> log)
    {
        return sweep(lossPercent, (spray, loss) -> spray ? runSpray(settings, loss) : runRocev2(settings, loss), log);
    }

    /** One transfer at a loss probability (0..1): spray's when {@code spray}, else RoCEv2's. */
    @FunctionalInterface
    public interface Transfer
    {
        TransferOutcome run(boolean spray, double loss);
    }

    /**
     * The sweep itself, whichever clock the transfers run on: each transport's lossless transfer first, then
     * both at every loss rate, each goodput as a fraction of its own transport's lossless goodput.
     */
    public static List<Point> sweep(final double[] lossPercent, final Transfer transfer, final java.util.function.Consumer<String> log)
    {
        final List<Point> points = new ArrayList<>();
        final TransferOutcome rocev2Lossless = transfer.run(false, 0);
        final TransferOutcome sprayLossless = transfer.run(true, 0);
        for (final double pct : lossPercent)
        {
            final TransferOutcome rocev2 = pct == 0 ? rocev2Lossless : transfer.run(false, pct / 100.0);
            final TransferOutcome spray = pct == 0 ? sprayLossless : transfer.run(true, pct / 100.0);
            final double rocev2Ratio = rocev2.goodputGbps() / rocev2Lossless.goodputGbps();
            final double sprayRatio = spray.goodputGbps() / sprayLossless.goodputGbps();
            points.add(new Point(pct, rocev2, rocev2Ratio, spray, sprayRatio));
            log.accept(String.format(Locale.ROOT,
                "loss %6.2f %%: spray %7.2f Gb/s (%.3f of lossless)%s, retransmitted/lost %s | " +
                "rocev2 %7.2f Gb/s (%.3f of lossless)%s, retransmitted/lost %s",
                pct, spray.goodputGbps(), sprayRatio, status(spray), number(spray.retransmitPerLoss()),
                rocev2.goodputGbps(), rocev2Ratio, status(rocev2), number(rocev2.retransmitPerLoss())));
        }
        return points;
    }

    private static String status(final TransferOutcome outcome)
    {
        return (outcome.verified() ? "" : " NOT VERIFIED") + (outcome.complete() ? "" : " INCOMPLETE (time limit)");
    }

    static TransferOutcome runSpray(final Settings settings, final double loss)
    {
        try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withSeed(settings.seed()), settings.planes(), 2))
        {
            fabric.fabricLinkLoss(loss);
            return SprayWriteWorkload.run(fabric, settings.bytes(), settings.messageBytes(), settings.timeLimitNanos(),
                settings.seed(), settings.paths(), settings.streams(), UnaryOperator.identity());
        }
    }

    static TransferOutcome runRocev2(final Settings settings, final double loss)
    {
        try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withSeed(settings.seed()), settings.planes(), 2))
        {
            fabric.fabricLinkLoss(loss);
            return RocevWriteWorkload.run(fabric, settings.bytes(), settings.messageBytes(), settings.timeLimitNanos(),
                settings.seed());
        }
    }

    public static String toJson(final Settings settings, final List<Point> points)
    {
        return toJson(settings, points, false);
    }

    /**
     * @param realTime whether the transfers ran in real time on DPDK ({@link RealTimeLossSweep}) rather than in
     *                 virtual time.
     */
    public static String toJson(final Settings settings, final List<Point> points, final boolean realTime)
    {
        final StringBuilder json = new StringBuilder(String.format(Locale.ROOT,
            "{\"experiment\":\"loss-sweep\",\"planes\":%d,\"paths\":%d,\"bytes\":%d,\"messageBytes\":%d,\"clock\":\"%s\"," +
            "\"points\":[",
            settings.planes(), settings.paths(), settings.bytes(), settings.messageBytes(), realTime ? "real" : "virtual"));
        for (int i = 0; i < points.size(); i++)
        {
            final Point point = points.get(i);
            json.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT,
                "{\"lossPct\":%s,\"sprayGoodputRatio\":%s,\"rocev2GoodputRatio\":%s,\"retransmitPerLoss\":%s," +
                "\"sprayGoodputGbps\":%s,\"sprayVerified\":%b,\"sprayLost\":%d,\"sprayRetransmitted\":%d," +
                "\"rocev2GoodputGbps\":%s,\"rocev2Verified\":%b,\"rocev2Lost\":%d,\"rocev2Retransmitted\":%d," +
                "\"rocev2RetransmitPerLoss\":%s}",
                number(point.lossPct()), number(point.sprayGoodputRatio()), number(point.rocev2GoodputRatio()),
                number(point.spray().retransmitPerLoss()),
                number(point.spray().goodputGbps()), point.spray().verified() && point.spray().complete(),
                point.spray().lost(), point.spray().retransmitted(),
                number(point.rocev2().goodputGbps()), point.rocev2().verified() && point.rocev2().complete(),
                point.rocev2().lost(), point.rocev2().retransmitted(), number(point.rocev2().retransmitPerLoss())));
        }
        return json.append("]}").toString();
    }

    public static String toCsv(final List<Point> points)
    {
        final StringBuilder csv = new StringBuilder("lossPct,sprayGoodputGbps,sprayGoodputRatio,sprayVerified,sprayLost," +
            "sprayRetransmitted,rocev2GoodputGbps,rocev2GoodputRatio,rocev2Verified,rocev2Lost,rocev2Retransmitted\n");
        for (final Point point : points)
        {
            final TransferOutcome spray = point.spray();
            final TransferOutcome rocev2 = point.rocev2();
            csv.append(String.format(Locale.ROOT, "%s,%.3f,%.4f,%b,%d,%d,%.3f,%.4f,%b,%d,%d%n", number(point.lossPct()),
                spray.goodputGbps(), point.sprayGoodputRatio(), spray.verified() && spray.complete(), spray.lost(),
                spray.retransmitted(), rocev2.goodputGbps(), point.rocev2GoodputRatio(), rocev2.verified() && rocev2.complete(),
                rocev2.lost(), rocev2.retransmitted()));
        }
        return csv.toString();
    }

    /** Four significant digits, no trailing zeros, plain notation; null when undefined. */
    static String number(final double value)
    {
        if (!Double.isFinite(value))
        {
            return "null";
        }
        final String text = new java.math.BigDecimal(value).round(new java.math.MathContext(4)).stripTrailingZeros().toPlainString();
        return text.equals("-0") ? "0" : text;
    }
}
