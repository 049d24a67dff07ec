package io.spraynic.bench.experiment;

import io.spraynic.datapath.telemetry.OutputFile;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes an experiment's CSV, plot and JSON into its output directory.
 */
public final class ExperimentOutput
{
    private ExperimentOutput()
    {
    }

    /**
     * Writes {@code loss-sweep.csv}, {@code loss-sweep.png} and {@code loss-sweep.json} into {@code directory}.
     *
     * @return the files written.
     */
    public static List<Path> writeLossSweep(final Path directory, final LossSweep.Settings settings, final List<LossSweep.Point> points)
        throws IOException
    {
        return writeLossSweep(directory, settings, points, false);
    }

    /**
     * @param realTime whether the sweep ran on DPDK in real time: the files are then {@code loss-sweep-realtime.*}, so
     *                 that both sweeps can share a directory.
     */
    public static List<Path> writeLossSweep(
        final Path directory, final LossSweep.Settings settings, final List<LossSweep.Point> points, final boolean realTime)
        throws IOException
    {
        OutputFile.createDirectory(directory);
        final String name = realTime ? "loss-sweep-realtime" : "loss-sweep";
        final Path csv = OutputFile.writeString(directory.resolve(name + ".csv"), LossSweep.toCsv(points));
        final Path json = OutputFile.writeString(directory.resolve(name + ".json"), LossSweep.toJson(settings, points, realTime) + "\n");
        final List<String> categories = new ArrayList<>();
        final List<Double> rocev2 = new ArrayList<>();
        final List<Double> spray = new ArrayList<>();
        for (final LossSweep.Point point : points)
        {
            categories.add(String.format(Locale.ROOT, "%s %%", trim(point.lossPct())));
            rocev2.add(point.rocev2GoodputRatio());
            spray.add(point.sprayGoodputRatio());
        }
        final Map<String, List<Double>> series = new LinkedHashMap<>();
        series.put("RoCEv2 RC (" + settings.planes() + " QPs, one per plane)", rocev2);
        series.put("spray (" + settings.paths() + " paths over " + settings.planes() + " planes)", spray);
        final Path png = directory.resolve(name + ".png");
        Charts.lines(png, realTime ? "Goodput under random loss, DPDK net_ring in real time (fraction of lossless)" :
            "Goodput under random loss (fraction of lossless)", "random loss on every fabric link",
            "goodput / lossless goodput", categories, series);
        return List.of(csv, png, json);
    }

    /**
     * Writes {@code reorder.csv}, {@code reorder.png} and {@code reorder.json} into {@code directory}.
     *
     * @return the files written.
     */
    public static List<Path> writeReorder(
        final Path directory, final LossSweep.Settings settings, final List<ReorderExperiment.Point> points) throws IOException
    {
        OutputFile.createDirectory(directory);
        final Path csv = OutputFile.writeString(directory.resolve("reorder.csv"), ReorderExperiment.toCsv(points));
        final Path json = OutputFile.writeString(directory.resolve("reorder.json"), ReorderExperiment.toJson(settings, points) + "\n");
        final List<String> categories = new ArrayList<>();
        final List<Double> spurious = new ArrayList<>();
        final List<Double> goodput = new ArrayList<>();
        for (final ReorderExperiment.Point point : points)
        {
            categories.add(String.format(Locale.ROOT, "%s us", trim(point.maxSkewNs() / 1e3)));
            spurious.add((double)point.spuriousRetransmissions());
            goodput.add(point.spray().goodputGbps() / 100.0);
        }
        final Map<String, List<Double>> series = new LinkedHashMap<>();
        series.put("spray spurious retransmissions", spurious);
        series.put("spray goodput (x 100 Gb/s)", goodput);
        final Path png = directory.resolve("reorder.png");
        Charts.lines(png, "Reordering across paths without loss", "largest delay difference between paths",
            "count / goodput", categories, series);
        return List.of(csv, png, json);
    }

    /**
     * Writes {@code reorder-within.csv}, {@code reorder-within.png} (goodput and spurious copies per setting, a line per
     * loss rate) and {@code reorder-within.json} into {@code directory}.
     *
     * @return the files written.
     */
    public static List<Path> writeReorderWithin(final Path directory, final LossSweep.Settings settings,
        final long skewNs, final List<ReorderWithinExperiment.Point> points) throws IOException
    {
        OutputFile.createDirectory(directory);
        final Path csv = OutputFile.writeString(directory.resolve("reorder-within.csv"), ReorderWithinExperiment.toCsv(points));
        final Path json = OutputFile.writeString(directory.resolve("reorder-within.json"),
            ReorderWithinExperiment.toJson(settings, skewNs, points) + "\n");
        final List<String> categories = new ArrayList<>();
        final Map<String, List<Double>> series = new LinkedHashMap<>();
        for (final ReorderWithinExperiment.Point point : points)
        {
            final String category = point.balancing().equals("ecmp") ? "ECMP, no window" : point.window();
            if (!categories.contains(category))
            {
                categories.add(category);
            }
            final String loss = trim(point.lossPercent()) + " % loss";
            series.computeIfAbsent("goodput (x 100 Gb/s), " + loss, k -> new ArrayList<>())
                .add(point.spray().goodputGbps() / 100.0);
            series.computeIfAbsent("spurious copies (x 1000), " + loss, k -> new ArrayList<>())
                .add(point.spuriousRetransmissions() / 1000.0);
        }
        final Path png = directory.resolve("reorder-within.png");
        Charts.lines(png, "Reordering within a route (switches balancing per packet, one link of each pair " +
            trim(skewNs / 1e3) + " us longer)", "ECMP, then " + points.get(points.size() - 1).balancing() +
            " balancing with spray's reordering window", "goodput / copies",
            categories, series);
        return List.of(csv, png, json);
    }

    private static String trim(final double value)
    {
        final String text = String.format(Locale.ROOT, "%.2f", value);
        return text.replaceAll("\\.?0+$", "");
    }
}
