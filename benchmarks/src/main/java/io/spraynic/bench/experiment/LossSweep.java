package io.spraynic.bench.experiment;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.Topology;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.LongConsumer;

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
     * One loss rate's measurements; the spray fields are null until the spray transport runs here.
     */
    public record Point(double lossPct, TransferOutcome rocev2, double rocev2GoodputRatio, TransferOutcome spray,
        Double sprayGoodputRatio)
    {
    }

    public record Settings(int planes, long bytes, int messageBytes, long timeLimitNanos, long seed)
    {
        public static final Settings DEFAULT = new Settings(4, 64L << 20, 1 << 20, 2_000_000_000L, 42);
    }

    private LossSweep()
    {
    }

    public static List<Point> run(final Settings settings, final double[] lossPercent, final java.util.function.Consumer<String> log)
    {
        final List<Point> points = new ArrayList<>();
        TransferOutcome lossless = null;
        for (final double pct : lossPercent)
        {
            final TransferOutcome rocev2 = runRocev2(settings, pct / 100.0);
            if (null == lossless)
            {
                lossless = pct == 0 ? rocev2 : runRocev2(settings, 0);
            }
            final double ratio = rocev2.goodputGbps() / lossless.goodputGbps();
            points.add(new Point(pct, rocev2, ratio, null, null));
            log.accept(String.format(Locale.ROOT, "loss %6.2f %%: rocev2 %7.2f Gb/s (%.3f of lossless)%s, %d lost, %d retransmitted",
                pct, rocev2.goodputGbps(), ratio, rocev2.complete() ? "" : " INCOMPLETE", rocev2.lost(), rocev2.retransmitted()));
        }
        return points;
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
        final StringBuilder json = new StringBuilder(String.format(Locale.ROOT,
            "{\"experiment\":\"loss-sweep\",\"planes\":%d,\"bytes\":%d,\"messageBytes\":%d,\"points\":[",
            settings.planes(), settings.bytes(), settings.messageBytes()));
        for (int i = 0; i < points.size(); i++)
        {
            final Point point = points.get(i);
            json.append(i == 0 ? "" : ",").append(String.format(Locale.ROOT,
                "{\"lossPct\":%s,\"sprayGoodputRatio\":%s,\"rocev2GoodputRatio\":%.4f,\"retransmitPerLoss\":%s," +
                "\"rocev2GoodputGbps\":%.3f,\"rocev2Complete\":%b,\"rocev2Verified\":%b,\"rocev2RetransmitPerLoss\":%s}",
                number(point.lossPct()), null == point.sprayGoodputRatio() ? "null" : number(point.sprayGoodputRatio()),
                point.rocev2GoodputRatio(), null == point.spray() ? "null" : number(point.spray().retransmitPerLoss()),
                point.rocev2().goodputGbps(), point.rocev2().complete(), point.rocev2().verified(),
                number(point.rocev2().retransmitPerLoss())));
        }
        return json.append("]}").toString();
    }

    public static String toCsv(final List<Point> points)
    {
        final StringBuilder csv = new StringBuilder(
            "lossPct,rocev2GoodputGbps,rocev2GoodputRatio,rocev2Complete,rocev2Lost,rocev2Retransmitted,sprayGoodputRatio\n");
        for (final Point point : points)
        {
            csv.append(String.format(Locale.ROOT, "%s,%.3f,%.4f,%b,%d,%d,%s%n", number(point.lossPct()),
                point.rocev2().goodputGbps(), point.rocev2GoodputRatio(), point.rocev2().complete(), point.rocev2().lost(),
                point.rocev2().retransmitted(), null == point.sprayGoodputRatio() ? "" : number(point.sprayGoodputRatio())));
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
