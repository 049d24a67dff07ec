package io.spraynic.cli;

import io.spraynic.datapath.telemetry.CountersFileDescriptor;
import io.spraynic.datapath.telemetry.CountersFileReader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * {@code spraynic stat}: the live counters of a running SprayNIC process, read from its counters
 * file by this (other) process, one {@code id: value - label} line each, like {@code ethtool -S}.
 */
@Command(name = "stat", mixinStandardHelpOptions = true,
    description = "Print the live counters of a running SprayNIC process (from its memory-mapped counters file).")
final class StatCommand implements Callable<Integer>
{
    @Option(names = "--file", description = "The counters file; default: the newest live one in the run directory.")
    Path file;

    @Option(names = "--dir", description = "Where to look for counters files (default: $SPRAYNIC_RUN_DIR or /dev/shm/spraynic).")
    Path directory;

    @Option(names = "--json", description = "One JSON object: pid, file and counters.")
    boolean json;

    @Option(names = "--watch", paramLabel = "SECONDS", description = "Print again every SECONDS until interrupted.")
    double watchSeconds;

    public Integer call() throws InterruptedException
    {
        final Path dir = null == directory ? CountersFileDescriptor.defaultDirectory() : directory;
        if (!(watchSeconds == 0 || watchSeconds >= 0.1 && watchSeconds <= 86_400))
        {
            // 0 prints once; below 0.1 s the reprints would be a loop at full CPU
            throw new BadOption("--watch", BadOption.number(watchSeconds), "must be 0 or 0.1..86400", "try --watch 1");
        }
        final Path source = null != file ? file : CountersFileReader.findLive(dir).orElseThrow(() ->
            new IllegalStateException("no running SprayNIC process has a counters file in " + dir +
                " (start one, e.g. ./spraynic demo, or pass --file)"));
        try (CountersFileReader reader = CountersFileReader.open(source))
        {
            do
            {
                print(reader, reader.read());
                if (watchSeconds > 0)
                {
                    Thread.sleep((long)(watchSeconds * 1000));
                }
            }
            while (watchSeconds > 0 && ProcessHandle.of(reader.pid()).map(ProcessHandle::isAlive).orElse(false));
        }
        return 0;
    }

    private void print(final CountersFileReader reader, final List<CountersFileReader.Counter> counters)
    {
        if (json)
        {
            final StringBuilder array = new StringBuilder("[");
            for (final CountersFileReader.Counter counter : counters)
            {
                if (array.length() > 1)
                {
                    array.append(',');
                }
                array.append(new Json().field("id", counter.id()).field("value", counter.value())
                    .field("label", counter.label()).build());
            }
            System.out.println(new Json().field("pid", reader.pid()).field("file", reader.path().toString())
                .raw("counters", array.append(']').toString()).build());
        }
        else
        {
            System.out.printf(Locale.ROOT, "pid %d, %s%n", reader.pid(), reader.path());
            for (final CountersFileReader.Counter counter : counters)
            {
                System.out.printf(Locale.ROOT, "%3d: %,20d - %s%n", counter.id(), counter.value(), counter.label());
            }
        }
        System.out.flush();
    }
}
