package io.spraynic.bench.experiment;

import io.spraynic.datapath.telemetry.OutputFile;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.data.category.DefaultCategoryDataset;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Experiment plots, drawn headless with JFreeChart into PNG files.
 */
final class Charts
{
    static
    {
        System.setProperty("java.awt.headless", "true");
    }

    private Charts()
    {
    }

    /**
     * A line per series over categorical x values (e.g. loss rates, which include 0 and span decades).
     *
     * @param series name to y values, one per category (null: no point).
     */
    static void lines(
        final Path file,
        final String title,
        final String xLabel,
        final String yLabel,
        final List<String> categories,
        final Map<String, List<Double>> series) throws IOException
    {
        final DefaultCategoryDataset dataset = new DefaultCategoryDataset();
        for (final Map.Entry<String, List<Double>> entry : series.entrySet())
        {
            for (int i = 0; i < categories.size(); i++)
            {
                final Double value = entry.getValue().get(i);
                if (null != value && Double.isFinite(value))
                {
                    dataset.addValue(value, entry.getKey(), categories.get(i));
                }
            }
        }
        final JFreeChart chart = ChartFactory.createLineChart(title, xLabel, yLabel, dataset, PlotOrientation.VERTICAL,
            true, false, false);
        try (java.io.OutputStream out = OutputFile.newOutputStream(file))
        {
            ChartUtils.writeChartAsPNG(out, chart, 900, 500);
        }
    }

    /**
     * A line per series over numeric x values (e.g. a throughput timeline).
     *
     * @param series name to points, each {x, y}.
     */
    static void xy(
        final Path file,
        final String title,
        final String xLabel,
        final String yLabel,
        final Map<String, List<double[]>> series) throws IOException
    {
        final XYSeriesCollection dataset = new XYSeriesCollection();
        for (final Map.Entry<String, List<double[]>> entry : series.entrySet())
        {
            final XYSeries line = new XYSeries(entry.getKey(), false, true);
            for (final double[] point : entry.getValue())
            {
                if (Double.isFinite(point[1]))
                {
                    line.add(point[0], point[1]);
                }
            }
            dataset.addSeries(line);
        }
        final JFreeChart chart = ChartFactory.createXYLineChart(title, xLabel, yLabel, dataset, PlotOrientation.VERTICAL,
            true, false, false);
        try (java.io.OutputStream out = OutputFile.newOutputStream(file))
        {
            ChartUtils.writeChartAsPNG(out, chart, 900, 500);
        }
    }
}
