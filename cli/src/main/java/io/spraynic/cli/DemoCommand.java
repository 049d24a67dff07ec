package io.spraynic.cli;

import io.spraynic.datapath.nic.CountersFile;
import io.spraynic.datapath.nic.CountersFileDescriptor;
import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.nic.RawExchange;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.dpdk.EthPort;
import io.spraynic.dpdk.PortStats;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PmdConfigs;
import io.spraynic.pmd.PortConfig;
import org.agrona.concurrent.BackoffIdleStrategy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code spraynic demo}: the main job on the embedded default, no NIC and no root. For now it is
 * the port layer end to end: a raw, verified transfer between two DPDK {@code net_ring} ports
 * crossed inside this process, with a sender and a receiver poll thread.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = {
        "The main job: a verified raw transfer between two DPDK ports in this process.",
        "By default a crossed pair of net_ring ports (no NIC, no hugepages, no root)."})
final class DemoCommand implements Callable<Integer>
{
    @Option(names = "--frames", defaultValue = "2m", converter = SizeConverter.class,
        description = "Frames to send, with an optional k/m suffix (default ${DEFAULT-VALUE}).")
    long frames;

    @Option(names = "--frame-size", defaultValue = "1500", description = "Frame length in bytes, 60..2048 (default ${DEFAULT-VALUE}).")
    int frameSize;

    @Option(names = "--burst", defaultValue = "32", description = "Burst size (default ${DEFAULT-VALUE}).")
    int burst;

    @Option(names = "--config", defaultValue = "net_ring",
        description = "PMD preset or TOML file whose first two ports are used (default ${DEFAULT-VALUE}).")
    String config;

    @Option(names = {"-p", "--param"}, paramLabel = "NAME=VALUE", description = "Fill a preset parameter.")
    Map<String, String> params = new LinkedHashMap<>();

    @Option(names = "--timeout", defaultValue = "60", description = "Give up after this many seconds (default ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    @Option(names = "--json", description = "Print one JSON summary object instead of text.")
    boolean json;

    @Option(names = "--verbose", description = "Keep DPDK's informational start-up log.")
    boolean verbose;

    @Option(names = "--capture", paramLabel = "FILE",
        description = "Record every frame sent and received into a pcapng file (for Wireshark or spraynic decode).")
    Path capture;

    public Integer call()
    {
        if (frameSize < 60 || frameSize > 2048 || burst < 1 || burst > 512 || frames < 1)
        {
            throw new IllegalArgumentException("--frame-size must be 60..2048, --burst 1..512 and --frames at least 1 (got " +
                frameSize + ", " + burst + ", " + frames + ")");
        }
        final Map<String, String> effective = new LinkedHashMap<>(params);
        if (PmdConfigs.isPresetName(config))
        {
            // A runtime directory of its own, so that demos can run side by side.
            effective.putIfAbsent("file_prefix", "spraynic-demo-" + ProcessHandle.current().pid());
        }
        final NicConfig loaded = PmdConfigs.load(config, effective);
        final NicConfig nicConfig = verbose || !loaded.eal().logLevels().isEmpty() ?
            loaded : loaded.withEal(loaded.eal().withLogLevels(List.of("lib.eal:warning")));
        final List<PortConfig> ports = nicConfig.ports();
        if (ports.size() < 2)
        {
            throw new IllegalArgumentException("the demo needs two ports; " + config + " has " + ports.size() +
                " (use --config net_ring)");
        }
        final PrintStream out = System.out;
        final ProgressBar bar = new ProgressBar(System.err, !json && null != System.console());
        final String from = ports.get(0).name();
        final String to = ports.get(1).name();

        try (DpdkNic nic = DpdkNic.start(nicConfig))
        {
            final PortCapture portCapture = PortCapture.open(capture);
            final PacketPort sender = portCapture.wrap(nic.packetPort(from, 0));
            final PacketPort receiver = portCapture.wrap(nic.packetPort(to, 0));
            if (!json)
            {
                out.printf(Locale.ROOT, "SprayNIC demo: %,d raw frames of %d B, %s -> %s over DPDK (%s), every byte verified%n",
                    frames, frameSize, from, to, nic.port(from).info().driverName());
            }
            final RawExchange.Result result;
            try (CountersFile counters = CountersFile.create(CountersFileDescriptor.defaultDirectory(), "demo", 64))
            {
                // Live counters for `spraynic stat` while the demo runs.
                result = RawExchange.run(sender, receiver, frames, frameSize, burst,
                    new BackoffIdleStrategy(), counters.counters(), Duration.ofSeconds(timeoutSeconds),
                    progress -> bar.show(progress.framesVerified(), progress.framesRequested()));
            }
            bar.finish();
            final long captured = portCapture.finish();
            if (null != capture && !json)
            {
                out.printf(Locale.ROOT, "  captured %,d frames to %s%n", captured, capture);
            }

            final PortStats tx = nic.port(from).stats();
            final PortStats rx = nic.port(to).stats();
            if (json)
            {
                out.println(new Json()
                    .field("mode", "raw")
                    .field("pmd", nic.port(from).info().driverName())
                    .field("frames", result.framesRequested())
                    .field("frameSize", frameSize)
                    .field("bytes", result.bytes())
                    .field("seconds", result.seconds())
                    .field("mpps", result.mpps())
                    .field("goodputGbps", result.gbps())
                    .field("verified", result.verified())
                    .field("framesSent", result.framesSent())
                    .field("framesReceived", result.framesReceived())
                    .field("corrupt", result.corrupt())
                    .field("outOfOrder", result.outOfOrder())
                    .field("portTxPackets", tx.txPackets())
                    .field("portRxPackets", rx.rxPackets())
                    .build());
            }
            else
            {
                printSummary(out, result, nic.port(from), tx, nic.port(to), rx);
            }
            return result.verified() ? 0 : 1;
        }
    }

    private static void printSummary(
        final PrintStream out,
        final RawExchange.Result result,
        final EthPort fromPort,
        final PortStats tx,
        final EthPort toPort,
        final PortStats rx)
    {
        out.printf(Locale.ROOT, "  %s: %,d of %,d frames arrived intact and in order (%,d corrupt, %,d out of order)%n",
            result.verified() ? "VERIFIED" : "NOT VERIFIED", result.framesVerified(), result.framesRequested(),
            result.corrupt(), result.outOfOrder());
        out.printf(Locale.ROOT, "  %,d bytes in %.3f s: %.2f Mpps, %.2f Gbps of verified frames%n",
            result.bytes(), result.seconds(), result.mpps(), result.gbps());
        out.printf(Locale.ROOT, "  port %s: tx %,d packets; port %s: rx %,d packets, %,d missed, %,d no-mbuf%n",
            fromPort.name(), tx.txPackets(), toPort.name(), rx.rxPackets(), rx.rxMissed(), rx.rxNoMbuf());
    }

    /**
     * A one-line progress bar on a terminal; nothing when output is piped.
     */
    static final class ProgressBar
    {
        private static final int WIDTH = 40;
        private final PrintStream out;
        private final boolean enabled;

        ProgressBar(final PrintStream out, final boolean enabled)
        {
            this.out = out;
            this.enabled = enabled;
        }

        void show(final long done, final long total)
        {
            if (!enabled)
            {
                return;
            }
            final int filled = (int)(WIDTH * Math.min(done, total) / Math.max(1, total));
            out.print("\r  [" + "#".repeat(filled) + ".".repeat(WIDTH - filled) + "] " +
                String.format(Locale.ROOT, "%5.1f%%", 100.0 * done / Math.max(1, total)));
            out.flush();
        }

        void finish()
        {
            if (enabled)
            {
                out.println();
            }
        }
    }
}
