package io.spraynic.cli;

import io.spraynic.apps.exchange.PeerExchange;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.telemetry.CountersFileDescriptor;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.nic.PreSharedKeyFile;
import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;
import io.spraynic.datapath.wire.Wire;
import io.spraynic.pmd.NicConfig;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code spraynic transfer}: runs an embedded NIC on a PMD preset and exchanges a verified transfer with a
 * peer running the same command (for example in another network namespace, across a veth pair): both write
 * their bytes into each other's memory and check every byte they received. The peers meet through a
 * directory both can read.
 */
@Command(name = "transfer", mixinStandardHelpOptions = true,
    description = "Exchange a verified RDMA WRITE transfer, both directions, with a peer running this command.")
final class TransferCommand implements Callable<Integer>
{
    @Mixin
    HugepagesOption hugepagesOption = new HugepagesOption();

    @Mixin
    DcqcnOption dcqcnOption = new DcqcnOption();

    @Option(names = "--config", defaultValue = "net_af_packet",
        description = "PMD preset or TOML file; one port per plane (default ${DEFAULT-VALUE}).")
    String config;

    @Option(names = {"-p", "--param"}, paramLabel = "NAME=VALUE", description = "Fill a preset parameter, e.g. iface=veth0.")
    Map<String, String> params = new LinkedHashMap<>();

    @Option(names = "--mode", defaultValue = "spray", description = "spray or rocev2 (default ${DEFAULT-VALUE}).")
    String mode;

    @Option(names = "--role", defaultValue = "client", description = "client (connects) or server (accepts).")
    String role;

    @Option(names = "--peer-kind", defaultValue = "transfer", description = {
        "transfer: the peer runs spraynic transfer too, both write and verify (default);",
        "nic: the peer is a serving spraynic nic --mode spray|rocev2 --expose: write into its memory, read it back, verify."})
    String peerKind;

    @Option(names = "--ip", split = ",", paramLabel = "A.B.C.D[/N]", description = {
        "This NIC's IPv4 or IPv6 address on each plane, comma-separated, with its prefix length (10.0.1.10/24 or " +
        "fd00:1::10/64; without one every peer is on-link); else the ip key of each [[port]] in the config."})
    List<String> ips;

    @Option(names = "--gateway", split = ",", paramLabel = "A.B.C.D",
        description = "The router on each plane for peers off-link, comma-separated (none for a plane without); of the " +
            "plane's family (an IPv6 one may be link-local, fe80::1).")
    List<String> gateways;

    @Option(names = "--psk-file", paramLabel = "PATH",
        description = "spray mode: the pre-shared key both NICs hold (mode 0600, 32+ random bytes, raw or hex).")
    Path pskFile;

    @Option(names = "--exchange", required = true, paramLabel = "DIR",
        description = "A directory both peers read and write (addresses, queue pairs, regions).")
    Path exchange;

    @Option(names = "--size", defaultValue = "16m", converter = SizeConverter.class,
        description = "Bytes each side writes, k/m/g suffixes (default ${DEFAULT-VALUE}).")
    long size;

    @Option(names = "--warmup", defaultValue = "0", converter = SizeConverter.class, paramLabel = "BYTES", description = {
        "--peer-kind nic: first write and read back this many bytes (at most what the NIC exposes) over the same connection, " +
        "verified, and report only the timed part after it: its time and its spray counters (the warm-up's left out). 0: none " +
        "(default). The warm-up lets the JIT compile the datapath before the measurement."})
    long warmup;

    @Option(names = "--warmup-hold", description = {
        "With --warmup: after the warm-up, write " + TransferPhases.WARM + " into the exchange directory and wait (up to " +
        "--timeout) for " + TransferPhases.GO + " there before the timed part, so that a fabric's counters can be read in between."})
    boolean warmupHold;

    @Option(names = "--warmup-connection", defaultValue = "same", paramLabel = "same|fresh", description = {
        "With --warmup: same times the warm-up's connection (default: JVM and connection both warm); fresh closes it and " +
        "times a new one (spray only): a cold connection in a warm process, its round-trip estimates learnt anew."})
    String warmupConnection;

    @Option(names = "--message", defaultValue = "64k", converter = SizeConverter.class,
        description = "Bytes per RDMA WRITE (default ${DEFAULT-VALUE}).")
    long message;

    @Option(names = "--workers", defaultValue = "1", description = "Poll-mode workers (default ${DEFAULT-VALUE}).")
    int workers;

    @Option(names = "--paths", defaultValue = "8", description = "Spray paths per connection (default ${DEFAULT-VALUE}).")
    int paths;

    @Option(names = "--idle", defaultValue = "backoff", description = IdleStrategies.DESCRIPTION)
    String idle;

    @Option(names = "--timeout", defaultValue = "60", description = "Seconds each step may wait (default ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    @Option(names = "--capture", paramLabel = "FILE", description = "Record every frame received and sent into a pcapng file.")
    Path capture;

    @Option(names = "--rocev2-ack-timeout", defaultValue = "14", paramLabel = "EXP", description = {
        "rocev2 mode: the IB local ACK timeout exponent, 4.096 us x 2^EXP, 1-31 (default ${DEFAULT-VALUE}: 67 ms;",
        "a queue pair fails after 8 of them without an ACK). Raise it on a loaded machine."})
    int rocev2AckTimeout;

    @Option(names = "--json", description = "Print one JSON object.")
    boolean json;

    @Option(names = "--verbose", description = "Keep DPDK's informational start-up log.")
    boolean verbose;

    @Option(names = "--port-rotation", defaultValue = "16-32", paramLabel = "MIN-MAX|off",
        converter = PortRotation.Converter.class, description = "spray: source-port rotation, as spraynic nic --port-rotation (default ${DEFAULT-VALUE}).")
    PortRotation portRotation;

    @Option(names = "--reorder-window", defaultValue = "off", paramLabel = "off|US|MIN-MAX",
        converter = ReorderWindowOption.Converter.class,
        description = "spray: the reordering window, as spraynic nic --reorder-window (default ${DEFAULT-VALUE}).")
    ReorderWindowOption reorderWindow;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    public Integer call() throws Exception
    {
        final NicConnection.Kind kind = switch (mode.toLowerCase(Locale.ROOT))
        {
            case "spray" -> NicConnection.Kind.SPRAY;
            case "rocev2" -> NicConnection.Kind.ROCEV2;
            default -> throw new BadOption("--mode", mode, "is not one of spray, rocev2", "try --mode spray");
        };
        final PeerExchange.Role peerRole = switch (role.toLowerCase(Locale.ROOT))
        {
            case "client" -> PeerExchange.Role.CLIENT;
            case "server" -> PeerExchange.Role.SERVER;
            default -> throw new BadOption("--role", role, "is not one of client, server", "try --role client");
        };
        final boolean visit = switch (peerKind.toLowerCase(Locale.ROOT))
        {
            case "nic" -> true;
            case "transfer" -> false;
            default -> throw new BadOption("--peer-kind", peerKind, "is not one of transfer, nic",
                "try --peer-kind transfer");
        };
        if (visit && peerRole != PeerExchange.Role.CLIENT)
        {
            throw new BadOption("--role", role, "must be client with --peer-kind nic (it visits a serving NIC)",
                "try --role client");
        }
        if (kind != NicConnection.Kind.SPRAY)
        {
            // a key that authenticates nothing would make the operator believe only key holders connect
            GivenOptions.refuse(spec, "with --mode rocev2 (spray's handshake, paths and reordering only)",
                "--psk-file", "--port-rotation", "--reorder-window");
        }
        BadOption.sizeInMemory("--size", size, 1, PeerExchange.COPIES_OF_SIZE);
        BadOption.size("--message", message, 1, 1 << 30);
        BadOption.range("--workers", workers, 1, 64);
        BadOption.range("--paths", paths, 1, 64);
        BadOption.range("--timeout", timeoutSeconds, 1, 86_400);
        BadOption.range("--rocev2-ack-timeout", rocev2AckTimeout, 1, 31);
        dcqcnOption.config(java.util.Map.of()); // refuses a bad --rocev2-line-rate or --dcqcn before anything starts
        if (warmup > 0 && !visit)
        {
            throw new BadOption("--warmup", BadOption.size(warmup), "only a visit warms up (--peer-kind nic)",
                "try --warmup 0");
        }
        final boolean freshConnection = switch (warmupConnection.toLowerCase(Locale.ROOT))
        {
            case "same" -> false;
            case "fresh" -> true;
            default -> throw new BadOption("--warmup-connection", warmupConnection, "is not one of same, fresh",
                "try --warmup-connection fresh");
        };
        if (freshConnection && (warmup == 0 || kind != NicConnection.Kind.SPRAY))
        {
            throw new BadOption("--warmup-connection", warmupConnection, warmup == 0 ? "follows a warm-up (--warmup " +
                "BYTES), and there is none" : "is spray's: a serving NIC connects one RoCEv2 queue pair",
                "try --warmup-connection same");
        }
        if (warmupHold && warmup == 0)
        {
            throw new BadOption("--warmup-hold", "", "holds after a warm-up, and there is none", "try --warmup 1m");
        }
        final io.spraynic.pmd.InterfaceAddress[] given = PlaneAddresses.parse(ips, gateways);
        io.spraynic.apps.exchange.PeerExchange.prepare(exchange); // this user's, nobody else's to write into
        // two peers on one host must not share DPDK's runtime directory; a queue per worker
        final NicConfig loaded = PmdConfigLoader.load(config, params, Map.of("file_prefix",
            "spraynic-transfer-" + ProcessHandle.current().pid(), "queues", Integer.toString(workers)), verbose);
        final io.spraynic.pmd.InterfaceAddress[] addresses = PlaneAddresses.resolve(given, loaded, "spraynic transfer");
        final NicConfig nicConfig = hugepagesOption.apply(loaded);
        final byte[] psk = null == pskFile ? null : PreSharedKeyFile.read(pskFile);
        final PortRotation rotation = portRotation;
        final ReorderWindowOption reordering = reorderWindow;
        final EmbeddedNicConfig nic = new EmbeddedNicConfig().mode(kind).workers(workers).planes(addresses.length)
            .connections(paths, 4).idleStrategy(IdleStrategies.parse(idle))
            .sprayConfig(() -> reordering.applyTo(EmbeddedNicConfig.sharedCoreSprayConfig()).psk(psk)
                .portRotation(rotation.min(), rotation.max()))
            .rocevRetry(RcConnectionAttributes.ackTimeoutNanos(rocev2AckTimeout), 7);
        dcqcnOption.apply(nic, loaded);
        PlaneAddresses.apply(nic, addresses);
        final Duration timeout = Duration.ofSeconds(timeoutSeconds);
        try (CountersFile counters = CountersFile.create(CountersFileDescriptor.defaultDirectory(), "transfer", 8192))
        {
            final PortCapture portCapture = PortCapture.open(PmdConfigLoader.capture(capture, nicConfig));
            final EmbeddedNic running = EmbeddedNic.startOnDpdk(nicConfig, nic, counters, portCapture::wrap);
            final PeerExchange.Result result;
            final TransferPhases phases = new TransferPhases(counters.path(), exchange, warmupHold, timeout);
            try
            {
                if (!json)
                {
                    System.out.printf(Locale.ROOT, "spraynic transfer: %s %s on %s, %d worker(s), %s at %s; counters in %s%n",
                        kind.name().toLowerCase(Locale.ROOT), peerRole.name().toLowerCase(Locale.ROOT), config, workers,
                        PlaneAddresses.describe(addresses), Wire.macToString(running.localMac(0)), counters.path());
                    System.out.flush();
                }
                result = visit ? PeerExchange.visit(running, exchange, size, (int)message, timeout, warmup,
                    freshConnection, phases) : PeerExchange.run(running, peerRole, exchange, size, (int)message, timeout);
            }
            finally
            {
                running.close(timeout);
                portCapture.finish();
            }
            final boolean warmed = warmup > 0;
            if (json)
            {
                final String line = result.toJson();
                System.out.println(!warmed ? line : line.substring(0, line.length() - 1) + ",\"warmupBytes\":" + warmup +
                    ",\"warmupSeconds\":" + phases.warmupNanos() / 1e9 +
                    ",\"warmupConnection\":\"" + (freshConnection ? "fresh" : "same") + "\"" +
                    (kind == NicConnection.Kind.SPRAY ? ",\"timed\":" + phases.timedJson() : "") + "}");
            }
            else
            {
                System.out.printf(Locale.ROOT, "spraynic transfer: %s, %,d bytes each way in %.3f s (%.2f Gb/s each way); %s%n",
                    result.verified() ? "VERIFIED" : "MISMATCH at byte " + result.firstMismatch(), result.bytesEachWay(),
                    result.nanos() / 1e9, result.bytesEachWay() * 8.0 / Math.max(1, result.nanos()),
                    result.drain().describe());
                if (warmed)
                {
                    System.out.println("spraynic transfer: the time above is after a verified warm-up of " +
                        BadOption.size(warmup) + (freshConnection ? " on a connection closed before the timed one " +
                        "opened; " : " over the same connection; ") + (kind == NicConnection.Kind.SPRAY ?
                        phases.describe() : String.format(Locale.ROOT, "warm-up %.3f s", phases.warmupNanos() / 1e9)));
                }
            }
            return result.verified() ? 0 : 1;
        }
    }
}
