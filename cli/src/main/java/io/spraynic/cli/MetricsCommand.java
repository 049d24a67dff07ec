package io.spraynic.cli;

import io.spraynic.datapath.telemetry.CountersFileDescriptor;
import io.spraynic.datapath.telemetry.CountersFileReader;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;

/**
 * {@code spraynic metrics --listen HOST:PORT}: serves a NIC's counters to Prometheus from another process,
 * as {@code spraynic stat} prints them: each scrape reads the newest live counters file in the run directory
 * (or the one given), so it outlives NIC restarts; {@code spraynic_nic_up} is 0 while no NIC runs.
 */
@Command(name = "metrics", mixinStandardHelpOptions = true,
    description = "Serve a running NIC's counters at http://HOST:PORT/metrics for Prometheus, from its counters file.")
final class MetricsCommand implements Callable<Integer>
{
    @Option(names = "--listen", required = true, paramLabel = "HOST:PORT",
        description = "Where to serve, e.g. 127.0.0.1:9464 (port 0 picks a free one).")
    String listen;

    @Option(names = "--counters-dir", paramLabel = "DIR",
        description = "Where NICs write counters files (default: $SPRAYNIC_RUN_DIR or /dev/shm/spraynic).")
    Path directory;

    @Option(names = "--file", description = "This counters file only (default: the newest live one in --counters-dir).")
    Path file;

    @Option(names = "--seconds", description = "Stop after this many seconds (default: serve until interrupted).")
    double seconds;

    public Integer call() throws InterruptedException
    {
        BadOption.range("--seconds", seconds, 0, 365 * 86_400, 60); // 0: until interrupted
        final Path dir = null == directory ? CountersFileDescriptor.defaultDirectory() : directory;
        final Supplier<Optional<Path>> files = null != file ? () -> Optional.of(file) : () -> CountersFileReader.findLive(dir);
        final CountDownLatch stop = new CountDownLatch(1);
        try (MetricsServer server = MetricsServer.start("--listen", listen, files))
        {
            System.out.printf(Locale.ROOT, "spraynic metrics: counters of %s at %s%n",
                null != file ? file : "the live NIC in " + dir, server.url());
            System.out.flush();
            final Thread hook = new Thread(stop::countDown, "spraynic-metrics-shutdown");
            Runtime.getRuntime().addShutdownHook(hook);
            if (seconds > 0)
            {
                stop.await((long)(seconds * 1000), java.util.concurrent.TimeUnit.MILLISECONDS);
            }
            else
            {
                stop.await();
            }
            if (stop.getCount() > 0)
            {
                Runtime.getRuntime().removeShutdownHook(hook); // --seconds ran out: the JVM is not shutting down
            }
        }
        return 0;
    }
}
