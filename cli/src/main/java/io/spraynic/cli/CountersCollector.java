package io.spraynic.cli;

import io.prometheus.metrics.model.registry.MultiCollector;
import io.prometheus.metrics.model.snapshots.CounterSnapshot;
import io.prometheus.metrics.model.snapshots.GaugeSnapshot;
import io.prometheus.metrics.model.snapshots.Labels;
import io.prometheus.metrics.model.snapshots.MetricSnapshot;
import io.prometheus.metrics.model.snapshots.MetricSnapshots;
import io.spraynic.datapath.telemetry.CountersFileReader;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Every counter of a NIC's counters file as Prometheus metrics ({@link CounterMetricNames}), read on each
 * scrape from the file as {@code spraynic stat} reads it: the NIC's workers pay nothing for being watched.
 * The file is found anew when its process changes (the standalone {@code spraynic metrics} outlives NICs);
 * {@code spraynic_nic_up} says whether one was found.
 */
final class CountersCollector implements MultiCollector, AutoCloseable
{
    private final Supplier<Optional<Path>> files;
    private CountersFileReader reader;

    /**
     * @param files where the counters file is now, if anywhere (asked on each scrape).
     */
    CountersCollector(final Supplier<Optional<Path>> files)
    {
        this.files = files;
    }

    public synchronized MetricSnapshots collect()
    {
        final MetricSnapshots.Builder snapshots = MetricSnapshots.builder();
        final CountersFileReader current = reader();
        List<CountersFileReader.Counter> counters = null;
        if (null != current)
        {
            try
            {
                counters = current.read();
            }
            catch (final RuntimeException unreadable)
            {
                // a file no NIC wrote this way: this scrape says so, and the next one opens whatever is there anew
                reader.close();
                reader = null;
            }
        }
        snapshots.metricSnapshot(gauge("spraynic_nic_up", "1 when a live NIC's counters file was read, else 0",
            null == counters ? 0 : 1));
        if (null == counters)
        {
            return snapshots.build();
        }
        snapshots.metricSnapshot(gauge("spraynic_nic_start_time_seconds", "When the NIC started, seconds since the epoch",
            current.startTimeMillis() / 1000.0));
        for (final MetricSnapshot family : families(counters))
        {
            snapshots.metricSnapshot(family);
        }
        return snapshots.build();
    }

    /**
     * @return one family per metric name, with a data point per counter; a counter that would repeat
     * another's name and labels (a hostile or buggy label) keeps its own point with an {@code id} label.
     */
    static List<MetricSnapshot> families(final List<CountersFileReader.Counter> counters)
    {
        final Map<String, Family> families = new LinkedHashMap<>();
        for (final CountersFileReader.Counter counter : counters)
        {
            final CounterMetricNames.Metric metric = CounterMetricNames.of(counter.label());
            final Family family = families.computeIfAbsent(metric.name(), name -> new Family(metric.gauge(), counter.label()));
            Labels labels = Labels.of(new ArrayList<>(metric.labels().keySet()), new ArrayList<>(metric.labels().values()));
            if (!family.seen.add(labels))
            {
                labels = labels.add("id", Integer.toString(counter.id()));
            }
            final double value = counter.value() * metric.scale();
            if (family.gauge)
            {
                family.gauges.dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().labels(labels).value(value).build());
            }
            else
            {
                // a counter never goes backwards on Prometheus's side: a negative value is a bug, shown as 0
                family.counters.dataPoint(CounterSnapshot.CounterDataPointSnapshot.builder().labels(labels)
                    .value(Math.max(0, value)).build());
            }
        }
        final List<MetricSnapshot> snapshots = new ArrayList<>(families.size());
        families.forEach((name, family) -> snapshots.add(family.gauge ?
            family.gauges.name(name).help(family.help).build() : family.counters.name(name).help(family.help).build()));
        return snapshots;
    }

    private CountersFileReader reader()
    {
        final Optional<Path> file = files.get();
        if (null != reader && (file.isEmpty() || !file.get().equals(reader.path())))
        {
            reader.close();
            reader = null;
        }
        if (null == reader && file.isPresent())
        {
            try
            {
                reader = CountersFileReader.open(file.get());
            }
            catch (final RuntimeException gone) // removed or not ready between finding and opening: next scrape
            {
                return null;
            }
        }
        return reader;
    }

    private static GaugeSnapshot gauge(final String name, final String help, final double value)
    {
        return GaugeSnapshot.builder().name(name).help(help)
            .dataPoint(GaugeSnapshot.GaugeDataPointSnapshot.builder().value(value).build()).build();
    }

    public synchronized void close()
    {
        if (null != reader)
        {
            reader.close();
            reader = null;
        }
    }

    private static final class Family
    {
        final boolean gauge;
        final String help;
        final Set<Labels> seen = new HashSet<>();
        final CounterSnapshot.Builder counters = CounterSnapshot.builder();
        final GaugeSnapshot.Builder gauges = GaugeSnapshot.builder();

        Family(final boolean gauge, final String firstLabel)
        {
            this.gauge = gauge;
            this.help = (gauge ? "Gauge" : "Counter") + " from the counters file: " +
                firstLabel.replaceAll("^(worker \\d+|conn 0x[0-9a-fA-F]+|port [^:]+): ", "");
        }
    }
}
