package io.spraynic.cli;

import io.spraynic.datapath.nic.CountersFile;
import io.spraynic.datapath.nic.CountersFileDescriptor;
import io.spraynic.datapath.nic.NicRuntime;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PmdConfigs;
import org.agrona.concurrent.IdleStrategy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * {@code spraynic nic --config PRESET_OR_FILE}: runs a NIC on any pmd-config preset until stopped
 * (Ctrl-C, SIGTERM or {@code --seconds}), with one poll thread per RX queue and live counters for
 * {@code spraynic stat}.
 */
@Command(name = "nic", mixinStandardHelpOptions = true,
    description = "Run a NIC on a PMD preset or TOML file until stopped, publishing live counters (see spraynic stat).")
final class NicCommand implements Callable<Integer>
{
    @Option(names = "--config", required = true, description = "PMD preset (spraynic config lists them) or TOML file.")
    String config;

    @Option(names = {"-p", "--param"}, paramLabel = "NAME=VALUE", description = "Fill a preset parameter.")
    Map<String, String> params = new LinkedHashMap<>();

    @Option(names = "--seconds", description = "Stop after this many seconds (default: run until interrupted).")
    double seconds;

    @Option(names = "--idle", defaultValue = "backoff", description = IdleStrategies.DESCRIPTION)
    String idle;

    @Option(names = "--capture", paramLabel = "FILE", description = "Record every frame received into a pcapng file.")
    Path capture;

    @Option(names = "--verbose", description = "Keep DPDK's informational start-up log.")
    boolean verbose;

    public Integer call() throws InterruptedException
    {
        final Supplier<IdleStrategy> idleStrategies = IdleStrategies.parse(idle);
        final NicConfig loaded = PmdConfigs.load(config, params);
        final NicConfig nicConfig = verbose || !loaded.eal().logLevels().isEmpty() ?
            loaded : loaded.withEal(loaded.eal().withLogLevels(java.util.List.of("lib.eal:warning")));

        final CountDownLatch stop = new CountDownLatch(1);
        final CountDownLatch stopped = new CountDownLatch(1);
        final Thread hook = new Thread(() ->
        {
            stop.countDown();
            try
            {
                stopped.await(30, TimeUnit.SECONDS);
            }
            catch (final InterruptedException ignored)
            {
                Thread.currentThread().interrupt();
            }
        }, "spraynic-nic-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);

        final PortCapture portCapture = PortCapture.open(capture);
        try (CountersFile counters = CountersFile.create(CountersFileDescriptor.defaultDirectory(), "nic", 1024))
        {
            final NicRuntime runtime = NicRuntime.start(nicConfig, counters, idleStrategies, portCapture::wrap);
            try
            {
                System.out.printf(Locale.ROOT, "spraynic nic: %d port(s), %d poll thread(s) on %s; counters in %s%n",
                    nicConfig.ports().size(), runtime.pollThreads(), config, counters.path());
                System.out.println("spraynic nic: running; Ctrl-C stops it, spraynic stat shows its counters");
                System.out.flush();
                final long deadline = seconds > 0 ? System.nanoTime() + (long)(seconds * 1e9) : Long.MAX_VALUE;
                while (!stop.await(200, TimeUnit.MILLISECONDS) && System.nanoTime() < deadline)
                {
                    runtime.publishPortStats();
                }
            }
            finally
            {
                runtime.close();
                final long captured = portCapture.finish();
                System.out.printf(Locale.ROOT, "spraynic nic: stopped%s%n",
                    null == capture ? "" : String.format(Locale.ROOT, "; captured %,d frames to %s", captured, capture));
                System.out.flush();
            }
        }
        finally
        {
            stopped.countDown();
            if (stop.getCount() > 0)
            {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
        }
        return 0;
    }
}
