package io.spraynic.cli;

import io.spraynic.apps.demo.FabricDemo;
import io.spraynic.apps.demo.RawExchange;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.telemetry.CountersFileDescriptor;
import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.dpdk.EthPort;
import io.spraynic.dpdk.PortStats;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.agrona.concurrent.BackoffIdleStrategy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code spraynic demo}: the main job on the embedded default, no NIC and no root: two embedded NICs joined by the
 * fabric emulator ({@link FabricDemo}), spray then the RoCEv2 baseline, their poll threads shared or dedicated as
 * {@code --threads} says for this host's cores; or ({@code --mode raw}) a raw, verified transfer between two DPDK
 * {@code net_ring} ports crossed inside this process; or ({@code --fabric linux}) the Linux ECMP lab.
 */
@Command(name = "demo", mixinStandardHelpOptions = true,
    description = {
        "The main job, no NIC and no root: two NIC endpoints in this process, each with one DPDK net_ring port " +
        "per plane, joined through the fabric emulator in real time (default 4 planes, 8 paths, 1 %% loss), an " +
        "RDMA WRITE transfer on several streams with the spray transport, every byte verified.",
        "--mode raw instead sends raw verified frames over a crossed pair of net_ring ports."})
final class DemoCommand implements Callable<Integer>
{
    @Mixin
    HugepagesOption hugepagesOption = new HugepagesOption();

    @Option(names = "--mode", defaultValue = "spray",
        description = "spray (with the RoCEv2 baseline after it), rocev2, or raw (default ${DEFAULT-VALUE}).")
    String mode;

    @Option(names = "--no-baseline", description = "In spray mode, skip the RoCEv2 baseline run.")
    boolean noBaseline;

    @Option(names = "--fabric", defaultValue = "emulator", description = {
        "emulator: the fabric emulator in this process (default); linux: the Linux ECMP lab (deploy/lab/lab, needs " +
        "root): kernel routers in network namespaces, two NIC processes on net_af_packet that know each other's IP " +
        "addresses only, spray then RoCEv2 (default size there 16m), packets per link from the routers' counters."})
    String fabric;

    @Option(names = "--port-kind", defaultValue = "af_packet", paramLabel = "KIND", description = {
        "--fabric linux: the NICs' port in each plane: af_packet (net_af_packet on the host's interface, default), " +
        "af_xdp (net_af_xdp, native XDP on the veth) or udp (kernel UDP sockets, port 4791, on the addresses of the " +
        "host's kernel: no DPDK)."})
    String portKind;

    /** In the Linux lab the RoCEv2 baseline moves at most this much: kernel forwarding in namespaces is slow. */
    static final long LAB_BASELINE_MAX_BYTES = 4L << 20;
    static final long LAB_DEFAULT_BYTES = 16L << 20;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    /** The RoCEv2 baseline moves at most this much: go-back-N under loss is slow, and the demo should stay short. */
    static final long BASELINE_MAX_BYTES = 256L << 20;

    @Option(names = "--planes", defaultValue = "4", description = "Fabric planes = NIC ports per host (default ${DEFAULT-VALUE}).")
    int planes;

    @Option(names = "--paths", defaultValue = "8", description = "Spray paths per connection (default ${DEFAULT-VALUE}).")
    int paths;

    @Option(names = "--loss", defaultValue = "1", description = "Random loss on every fabric link, percent (default ${DEFAULT-VALUE}).")
    double lossPct;

    @Option(names = "--size", defaultValue = "2g", converter = SizeConverter.class,
        description = "Bytes to write in spray mode, k/m/g suffixes (default ${DEFAULT-VALUE}).")
    long size;

    @Option(names = "--link-gbps", defaultValue = "100", description = {
        "Emulator: the rate of every fabric link, host links included, in Gb/s per plane; each NIC's line rate, for " +
        "both transports (default ${DEFAULT-VALUE})."})
    double linkGbps;

    @Option(names = "--threads", defaultValue = "auto", description = {
        "Emulator: how the two NICs' workers and the fabric are polled, the same for spray and RoCEv2. shared: one " +
        "poll thread runs all three in turn and backs off only when none had work; dedicated: a thread each; auto " +
        "(default): shared when the host has fewer than 4 cores (three poll threads and the application), where a " +
        "NIC waiting for a core looks to its peer like loss. The summary names the mode and the cores."})
    String threads;

    @Option(names = "--streams", defaultValue = "4", description = "Streams the writes are spread over (default ${DEFAULT-VALUE}).")
    int streams;

    @Option(names = "--frames", defaultValue = "2m", converter = SizeConverter.class,
        description = "Raw mode: frames to send, with an optional k/m suffix (default ${DEFAULT-VALUE}).")
    long frames;

    @Option(names = "--frame-size", defaultValue = "1500", description = "Raw mode: frame length, 60..2048 (default ${DEFAULT-VALUE}).")
    int frameSize;

    @Option(names = "--burst", defaultValue = "32", description = "Burst size (default ${DEFAULT-VALUE}).")
    int burst;

    @Option(names = "--config", defaultValue = "net_ring",
        description = "Raw mode: PMD preset or TOML file whose first two ports are used (default ${DEFAULT-VALUE}).")
    String config;

    @Option(names = {"-p", "--param"}, paramLabel = "NAME=VALUE", description = "Fill a preset parameter.")
    Map<String, String> params = new LinkedHashMap<>();

    @Option(names = "--rocev2-ack-timeout", defaultValue = "12", paramLabel = "EXP", description = {
        "--fabric linux: the RoCEv2 run's IB local ACK timeout exponent, 4.096 us x 2^EXP, 1-31 (a queue pair fails " +
        "after 8 of them without an ACK). Default: derived from round trips measured to host B's NIC before it " +
        "connects, at least 4 times the slowest and at least 12 (16.8 ms), as an operator would set it."})
    int rocev2AckTimeout;

    @Option(names = "--warmup", defaultValue = "0", converter = SizeConverter.class, paramLabel = "BYTES", description = {
        "--fabric linux: each transfer first writes and reads back this many bytes over the same connection, verified, " +
        "and only the part after it is measured, the routers' counters included (default: as much as it then " +
        "measures; 0: cold, a fresh process's JIT compiling during the measurement)."})
    long warmup;

    @Option(names = "--timeout", defaultValue = "60", description = "Give up after this many seconds (default ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    @Option(names = "--json", description = "Print one JSON summary object instead of text.")
    boolean json;

    @Option(names = "--verbose", description = "Keep DPDK's informational start-up log.")
    boolean verbose;

    @Option(names = "--capture", paramLabel = "FILE",
        description = "Record every frame the NIC ports send and receive into a pcapng file (Wireshark, spraynic decode).")
    Path capture;

    public Integer call() throws Exception
    {
        BadOption.range("--timeout", timeoutSeconds, 1, 86_400);
        if (fabric.equals("linux"))
        {
            return linux();
        }
        if (!fabric.equals("emulator"))
        {
            throw new BadOption("--fabric", fabric, "must be emulator or linux", "try --fabric linux");
        }
        if (given("--port-kind"))
        {
            // the emulator's NICs are joined in this process, on no port of the host's: nothing to choose
            throw new BadOption("--port-kind", portKind, "applies to --fabric linux only (the emulator joins its " +
                "NICs in this process, on no host port)", "try --port-kind " + portKind + " --fabric linux, or drop it");
        }
        return switch (mode)
        {
            case "spray" -> fabric(FabricDemo.Mode.SPRAY);
            case "rocev2" -> fabric(FabricDemo.Mode.ROCEV2);
            case "raw" -> raw();
            default -> throw new IllegalArgumentException("--mode " + mode + " is not one of spray, rocev2, raw");
        };
    }

    private Integer linux() throws Exception
    {
        // two NIC processes of the lab write no capture of this process's ports
        GivenOptions.refuse(spec, "with --fabric linux (its NICs are processes of their own)", "--capture");
        if (!mode.equals("spray"))
        {
            throw new BadOption("--mode", mode, "must be spray with --fabric linux (RoCEv2 runs after it)",
                "drop --mode");
        }
        // the lab's defaults where the emulator's do not fit: 2 planes (the lab has at most 2), 64 paths, 16 MiB
        final int labPlanes = given("--planes") ? planes : 2;
        final int labPaths = given("--paths") ? paths : 64;
        final long bytes = given("--size") ? size : LAB_DEFAULT_BYTES;
        BadOption.range("--planes", labPlanes, 1, 2);
        BadOption.range("--paths", labPaths, labPlanes, 64);
        BadOption.range("--rocev2-ack-timeout", rocev2AckTimeout, 1, 31);
        BadOption.below("--loss", lossPct, 0, 100, 1);
        BadOption.size("--size", bytes, 1 << 20, 1L << 30);
        // the serving NIC exposes what each run then measures: a larger warm-up would not fit
        BadOption.size("--warmup", warmup, 0, bytes);
        final LabPortKind port = LabPortKind.parse("--port-kind", portKind);
        return LinuxFabricDemo.run(new LinuxFabricDemo.Settings(labPlanes, labPaths, lossPct, bytes,
            Math.min(bytes, LAB_BASELINE_MAX_BYTES), timeoutSeconds, given("--rocev2-ack-timeout") ? rocev2AckTimeout :
            LinuxFabricDemo.ACK_TIMEOUT_FROM_RTT, json, noBaseline, given("--warmup") ? warmup :
            LinuxFabricDemo.WARMUP_AS_TIMED, port), System.out);
    }

    private boolean given(final String option)
    {
        return GivenOptions.given(spec, option);
    }

    private Integer fabric(final FabricDemo.Mode first)
    {
        BadOption.range("--planes", planes, 1, 8);
        if (paths < planes || paths > 64)
        {
            throw new BadOption("--paths", Integer.toString(paths), "must be " + planes + "..64 (at least one path per plane, " +
                "--planes " + planes + ")", "try --paths " + Math.clamp(paths, planes, 64));
        }
        BadOption.below("--loss", lossPct, 0, 100, 1); // 100 % would deliver nothing
        BadOption.sizeInMemory("--size", size, 1 << 20, FabricDemo.COPIES_OF_SIZE);
        BadOption.range("--streams", streams, 1, 256);
        BadOption.range("--link-gbps", linkGbps, 0.001, 100_000, 100);
        final FabricDemo.Threads pollThreads = pollThreads();
        final PrintStream out = System.out;
        final ProgressBar bar = new ProgressBar(System.err, !json && null != System.console());
        final NicConfig loaded = FabricDemo.config(planes, "spraynic-demo-" + ProcessHandle.current().pid());
        final NicConfig nicConfig = hugepagesOption.apply(verbose ? loaded.withEal(loaded.eal().withLogLevels(List.of())) : loaded);
        try (DpdkNic nic = DpdkNic.start(nicConfig))
        {
            final FabricDemo.Result result = runOne(nic, first, size, pollThreads, json ? null : bar);
            FabricDemo.Result baseline = null;
            if (first == FabricDemo.Mode.SPRAY && !noBaseline)
            {
                baseline = runOne(nic, FabricDemo.Mode.ROCEV2, Math.min(size, BASELINE_MAX_BYTES), pollThreads,
                    json ? null : bar);
            }
            if (json)
            {
                final Json summary = summary(first, result, pollThreads);
                if (null != baseline)
                {
                    summary.raw("rocev2", summary(FabricDemo.Mode.ROCEV2, baseline, pollThreads).build());
                }
                out.println(summary.build());
            }
            else if (null != baseline)
            {
                out.printf(Locale.ROOT, "spray ÷ RoCEv2 goodput on the same fabric and loss: %.1fx%n",
                    result.goodputGbps() / Math.max(1e-9, baseline.goodputGbps()));
            }
            return result.verified() && (null == baseline || baseline.verified()) ? 0 : 1;
        }
    }

    /** @return {@code --threads}, auto resolved by this host's cores. */
    private FabricDemo.Threads pollThreads()
    {
        return switch (threads)
        {
            case "auto" -> FabricDemo.Threads.forCores(Runtime.getRuntime().availableProcessors());
            case "shared" -> FabricDemo.Threads.SHARED;
            case "dedicated" -> FabricDemo.Threads.DEDICATED;
            default -> throw new BadOption("--threads", threads, "must be auto, shared or dedicated", "try --threads shared");
        };
    }

    private FabricDemo.Result runOne(final DpdkNic nic, final FabricDemo.Mode which, final long bytes,
        final FabricDemo.Threads pollThreads, final ProgressBar bar)
    {
        final PrintStream out = System.out;
        final int pathCount = which == FabricDemo.Mode.SPRAY ? paths : planes;
        if (null != bar)
        {
            out.printf(Locale.ROOT, "%s: %s over %d planes and %d path%s, %.2f %% random loss on every fabric link, " +
                "DPDK net_ring ports through the fabric emulator in real time; links %s Gb/s per plane (each NIC's " +
                "line rate); %d cores, %s%n",
                which == FabricDemo.Mode.SPRAY ? "spray" : "RoCEv2 RC (one QP per plane)", bytesText(bytes), planes,
                pathCount, pathCount == 1 ? "" : "s", lossPct, BadOption.number(linkGbps),
                Runtime.getRuntime().availableProcessors(), pollThreads == FabricDemo.Threads.SHARED ?
                    "threads shared: one poll thread for both NICs and the fabric" :
                    "threads dedicated: a poll thread each for both NICs and the fabric");
        }
        final PortCapture portCapture = PortCapture.open(which == FabricDemo.Mode.SPRAY || mode.equals("rocev2") ? capture : null);
        final FabricDemo.Result result = FabricDemo.run(nic, new FabricDemo.Settings(which, planes, pathCount, lossPct, bytes,
            1 << 20, streams, Duration.ofSeconds(timeoutSeconds)).withLinkRate(linkBitsPerSecond()).withThreads(pollThreads),
            portCapture::wrap,
            progress -> { if (null != bar) bar.show(progress.bytesDone(), progress.bytesTotal()); });
        if (null != bar)
        {
            bar.finish();
        }
        final long captured = portCapture.finish();
        if (null == bar)
        {
            return result;
        }
        out.printf(Locale.ROOT, "  %s: %s of %s written in %,d messages, every byte checked%n",
            result.verified() ? "VERIFIED" : "NOT VERIFIED", bytesText(result.bytesCompleted()), bytesText(bytes),
            result.messages());
        if (null != result.firstFailure())
        {
            out.printf(Locale.ROOT, "  first failed write: %s%n", result.firstFailure());
        }
        out.printf(Locale.ROOT, "  %.3f s: %.2f Gb/s of goodput, %.2f cores busy (the process's CPU time ÷ the transfer's)%n",
            result.seconds(), result.goodputGbps(), result.coresBusy());
        out.printf(Locale.ROOT, "  data packets lost in the fabric %,d, retransmitted %,d (%s per loss)%s%n",
            result.lost(), result.retransmitted(),
            result.lost() == 0 ? "n/a" : String.format(Locale.ROOT, "%.2f", (double)result.retransmitted() / result.lost()),
            result.moved() == 0 ? "" : String.format(Locale.ROOT, ", moved off failed paths %,d", result.moved()));
        out.printf(Locale.ROOT, "  packets per path: %s; ECN marks: %,d; frames dropped at the emulator's bridge: %,d%n",
            Arrays.toString(result.paths()), result.ecnMarks(), result.droppedAtBridge());
        if (captured > 0)
        {
            out.printf(Locale.ROOT, "  captured %,d frames to %s%n", captured, capture);
        }
        return result;
    }

    private long linkBitsPerSecond()
    {
        return Math.round(linkGbps * 1e9);
    }

    private Json summary(final FabricDemo.Mode which, final FabricDemo.Result result, final FabricDemo.Threads pollThreads)
    {
        final StringBuilder pathsJson = new StringBuilder("[");
        for (int p = 0; p < result.paths().length; p++)
        {
            pathsJson.append(p == 0 ? "" : ",").append(result.paths()[p]);
        }
        return new Json()
            .field("mode", which == FabricDemo.Mode.SPRAY ? "spray" : "rocev2")
            .field("bytes", result.bytesCompleted())
            .field("seconds", result.seconds())
            .field("goodputGbps", result.goodputGbps())
            .field("verified", result.verified())
            .field("messages", result.messages())
            .field("lost", result.lost())
            .field("retransmitted", result.retransmitted())
            .field("moved", result.moved())
            .field("droppedAtBridge", result.droppedAtBridge())
            .field("ecnMarks", result.ecnMarks())
            .field("planes", planes)
            .field("lossPct", lossPct)
            .field("linkGbps", linkGbps)
            .field("cores", Runtime.getRuntime().availableProcessors())
            .field("threads", pollThreads.label())
            .field("coresBusy", result.coresBusy())
            .field("firstFailure", result.firstFailure())
            .raw("paths", pathsJson.append(']').toString());
    }

    private static String bytesText(final long bytes)
    {
        return bytes >= 1L << 30 && bytes % (1L << 30) == 0 ? (bytes >> 30) + " GiB" :
            bytes >= 1L << 20 ? String.format(Locale.ROOT, "%.0f MiB", bytes / (double)(1L << 20)) : bytes + " B";
    }

    private Integer raw()
    {
        BadOption.range("--frame-size", frameSize, 60, 2048);
        BadOption.range("--burst", burst, 1, 512);
        BadOption.atLeast("--frames", frames, 1);
        // a runtime directory of its own, so that demos can run side by side
        final NicConfig nicConfig = hugepagesOption.apply(PmdConfigLoader.load(config, params,
            Map.of("file_prefix", "spraynic-demo-" + ProcessHandle.current().pid()), verbose));
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
            final Path captureFile = PmdConfigLoader.capture(capture, nicConfig);
            final PortCapture portCapture = PortCapture.open(captureFile);
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
            if (null != captureFile && !json)
            {
                out.printf(Locale.ROOT, "  captured %,d frames to %s%n", captured, captureFile);
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
