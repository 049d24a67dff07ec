package io.spraynic.cli;

import io.spraynic.apps.exchange.PeerExchange;
import io.spraynic.apps.exchange.RegionRevocation;
import io.spraynic.apps.runtime.NicRuntime;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.telemetry.CountersFileDescriptor;
import io.spraynic.datapath.api.DrainReport;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.nic.PreSharedKeyFile;
import io.spraynic.datapath.nic.ipc.IpcAccess;
import io.spraynic.datapath.nic.ipc.IpcConductor;
import io.spraynic.datapath.nic.ipc.IpcFileDescriptor;
import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.wire.Wire;
import io.spraynic.pmd.NicConfig;
import org.agrona.concurrent.IdleStrategy;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * {@code spraynic nic --config PRESET_OR_FILE}: runs a NIC on any pmd-config preset until stopped
 * (Ctrl-C, SIGTERM or {@code --seconds}), with live counters for {@code spraynic stat}: a spray NIC by default,
 * a RoCEv2 one with {@code --mode rocev2}, or with {@code --mode classify} no NIC but a port probe (one poll thread
 * per RX queue that classifies and counts every frame).
 */
@Command(name = "nic", mixinStandardHelpOptions = true,
    description = "Run a NIC on a PMD preset or TOML file until stopped, publishing live counters (see spraynic stat).")
final class NicCommand implements Callable<Integer>
{
    /** Largest IPC limit accepted: a count of clients, regions or connections, not a buffer size. */
    private static final int IPC_LIMIT_MAX = 65_536;

    @Mixin
    HugepagesOption hugepagesOption = new HugepagesOption();

    @Mixin
    DcqcnOption dcqcnOption = new DcqcnOption();

    @Option(names = "--config", required = true, description = "PMD preset (spraynic config lists them) or TOML file.")
    String config;

    @Option(names = {"-p", "--param"}, paramLabel = "NAME=VALUE", description = "Fill a preset parameter.")
    Map<String, String> params = new LinkedHashMap<>();

    @Option(names = "--param-from-env", paramLabel = "NAME=VAR", description = {
        "Fill a preset parameter from environment variable VAR, e.g. plane0_pci=PCIDEVICE_INTEL_COM_SPRAYNIC_PLANE0:",
        "the PCI address of the VF the SR-IOV device plugin gave the container."})
    Map<String, String> paramsFromEnv = new LinkedHashMap<>();

    @Option(names = "--seconds", description = "Stop after this many seconds (default: run until interrupted).")
    double seconds;

    @Option(names = "--idle", defaultValue = "backoff", description = IdleStrategies.DESCRIPTION)
    String idle;

    @Option(names = "--capture", paramLabel = "FILE", description = "Record every frame received into a pcapng file.")
    Path capture;

    @Option(names = "--metrics", paramLabel = "HOST:PORT", description = {
        "Serve every counter at http://HOST:PORT/metrics for Prometheus (read from the counters file: the workers " +
        "pay nothing), e.g. 127.0.0.1:9464; port 0 picks a free one."})
    String metrics;

    @Option(names = "--verbose", description = "Keep DPDK's informational start-up log.")
    boolean verbose;

    @Option(names = "--mode", defaultValue = "spray", description = {
        "spray: an embedded NIC that accepts spray connections and serves RDMA WRITEs and READs into --expose'd memory " +
        "(default);",
        "rocev2: the same with one RC queue pair, connected to a visitor through --exchange (out of band);",
        "classify: no NIC, a port probe: poll threads parse, classify and count every frame."})
    String mode;

    @Option(names = "--ip", split = ",", paramLabel = "A.B.C.D[/N]", description = {
        "spray and rocev2 modes: this NIC's IPv4 or IPv6 address on each plane (port), comma-separated, with its " +
        "prefix length (10.0.1.10/24 or fd00:1::10/64; without one every peer is on-link); iface:NAME takes the IPv4 " +
        "address of kernel interface NAME (e.g. the one Kubernetes' Multus attached for the plane), iface6:NAME its one " +
        "IPv6 address that is not link-local (::1 for lo), netstatus:NAME the IPv4 address Multus recorded for the pod's " +
        "interface NAME (see --network-status); a udp port's plane must have the port's address. Else the ip key of " +
        "each [[port]] in the config. IPv6 planes resolve neighbours by neighbour discovery and answer ping -6; IPC " +
        "clients connect to IPv4 peers only."})
    java.util.List<String> ips;

    @Option(names = "--network-status", paramLabel = "FILE", description = {
        "For --ip netstatus:NAME: the file a downwardAPI volume writes the pod's k8s.v1.cni.cncf.io/network-status " +
        "annotation to (e.g. of a VF bound to vfio-pci, which has no kernel interface)."})
    Path networkStatus;

    @Option(names = "--network-status-timeout", defaultValue = "120", paramLabel = "SECONDS", description = {
        "How long to wait for --network-status to name the interfaces (the kubelet refreshes it about once a minute)",
        "(default ${DEFAULT-VALUE})."})
    double networkStatusTimeout;

    @Option(names = "--gateway", split = ",", paramLabel = "A.B.C.D",
        description = "The router on each plane for peers off-link, comma-separated (none for a plane without); of the " +
            "plane's family (an IPv6 one may be link-local, fe80::1).")
    java.util.List<String> gateways;

    @Option(names = "--workers", defaultValue = "1", description = "spray mode: poll-mode workers (default ${DEFAULT-VALUE}).")
    int workers;

    @Option(names = "--paths", defaultValue = "8", paramLabel = "N", description = {
        "spray mode: most spray paths (UDP source ports) per connection, 1-64 (default ${DEFAULT-VALUE}). A connection " +
        "has the smaller of its two ends' limits (PROTOCOL.md S9.1), so a visitor's --paths 64 gets no more than this."})
    int paths;

    @Option(names = "--expose", converter = SizeConverter.class, paramLabel = "BYTES",
        description = "spray mode: register this much memory for peers to write and read (k/m/g suffixes).")
    long expose;

    @Option(names = "--exchange", paramLabel = "DIR",
        description = "spray mode: publish this NIC's addresses and exposed region in DIR (nic.addr), for spraynic " +
            "transfer --peer-kind nic; and take requests there to deregister the region (spraynic deregister).")
    Path exchange;

    @Option(names = "--ipc-dir", arity = "0..1", paramLabel = "DIR", fallbackValue = "",
        description = {"spray and rocev2 modes: serve applications in other processes through shared memory in DIR " +
            "(default with no DIR: $SPRAYNIC_IPC_DIR, else /dev/shm/spraynic-$USER); they use it with NicClient or " +
            "spraynic client. Incoming spray connections then go to the clients that accept them. classify mode:",
            "serve spraynic capture only."})
    Path ipcDir;

    @Option(names = "--ipc-group", paramLabel = "GROUP", description = {
        "with --ipc-dir: share the IPC directory with the members of GROUP (directory 0750, nic.sock 0660, of GROUP), " +
        "so that applications of other users in it can use the NIC; the NIC refuses a socket peer that is neither " +
        "its user, root nor of GROUP. Default: its user alone (0700)."})
    String ipcGroup;

    @Option(names = "--psk-file", paramLabel = "PATH", description = {
        "spray mode: authenticate every connection with the pre-shared key in PATH (mode 0600, 32+ random bytes, " +
        "raw or hex): hosts without it cannot connect, and it is mixed into every connection's keys."})
    Path pskFile;

    @Option(names = "--max-connections-per-source", defaultValue = "16", paramLabel = "N",
        description = "spray mode: most connections accepted from one source address per worker (default ${DEFAULT-VALUE}).")
    int maxConnectionsPerSource;

    @Option(names = "--connect-response-rate", defaultValue = "50000", paramLabel = "PER_SECOND", description = {
        "spray mode: CONNECT_RETRYs and CONNECT_REJECTs each worker sends a second at most, on average (S12.9's token " +
        "bucket, shared with NO_RESOURCES NACKs, S10.2; default ${DEFAULT-VALUE})."})
    int connectResponseRate;

    @Option(names = "--connect-response-burst", defaultValue = "256", paramLabel = "N",
        description = "spray mode: most of those each worker sends at once (S12.9; default ${DEFAULT-VALUE}).")
    int connectResponseBurst;

    @Option(names = "--max-accepted-connections", defaultValue = "" + EmbeddedNicConfig.DEFAULT_MAX_ACCEPTED_CONNECTIONS,
        paramLabel = "N", description = {"spray mode: most connections peers opened that the NIC holds at once, over every " +
        "worker; each one over is closed at once, counted and reported (default ${DEFAULT-VALUE}). Each worker's engine " +
        "is sized for this many plus those IPC clients may open (--ipc-max-clients x --ipc-max-connections), about 25 " +
        "bytes a connection; what an idle connection holds is a few KB (--busy-connections bounds the rest)."})
    int maxAcceptedConnections;

    @Option(names = "--busy-connections", defaultValue = "" + EmbeddedNicConfig.DEFAULT_BUSY_CONNECTIONS, paramLabel = "N",
        description = {"spray mode: connections per worker that may have traffic at once (1-1048576): each borrows a set " +
        "of tables (about 0.7 MB at this NIC's queue depths) while it has traffic; one more waits for a set (its " +
        "packets are dropped and resent, counted as 'storage borrows refused at the limit') (default ${DEFAULT-VALUE})."})
    int busyConnections;

    @Option(names = "--queues-idle", defaultValue = "" + EmbeddedNicConfig.DEFAULT_QUEUES_IDLE_NANOS / 1_000_000L,
        paramLabel = "MS", description = {"how long a connection's work request ring and completion queues stay empty " +
        "before they give their slots back (1-86400000 ms): shorter returns memory sooner after a burst, longer spares " +
        "an application whose bursts come further apart making them again (default ${DEFAULT-VALUE})."})
    long queuesIdleMillis;

    @Option(names = "--idle-timeout", defaultValue = "30", paramLabel = "SECONDS",
        description = "spray mode: close a connection after this long without a packet from its peer; 0: never (default ${DEFAULT-VALUE}).")
    double idleTimeout;

    @Option(names = "--ipc-client-timeout", defaultValue = "5", paramLabel = "SECONDS",
        description = "with --ipc-dir: release a client's connections and memory after this long without a keepalive (default ${DEFAULT-VALUE}).")
    double ipcClientTimeout;

    @Option(names = "--port-rotation", defaultValue = "16-32", paramLabel = "MIN-MAX|off",
        converter = PortRotation.Converter.class, description = {
        "spray mode: a path moves to a new UDP source port after MIN to MAX packets, once nothing of it is in flight " +
        "(PROTOCOL.md S7.7), so that ECMP routers spread a connection evenly; off keeps each path on its port " +
        "(default ${DEFAULT-VALUE})."})
    PortRotation portRotation;

    @Option(names = "--reorder-window", defaultValue = "off", paramLabel = "off|US|MIN-MAX",
        converter = ReorderWindowOption.Converter.class, description = {
        "spray mode: how long a packet in a gap of its path waits for reordering before it is lost (PROTOCOL.md " +
        "S6.5-3), in microseconds: off (a gap is loss, right for ECMP routers), US fixed, or MIN-MAX learnt from the " +
        "losses found spurious, for fabrics that reorder within a route: adaptive routing, a LAG balanced per packet " +
        "(default ${DEFAULT-VALUE})."})
    ReorderWindowOption reorderWindow;

    @Option(names = "--rocev2-ack-timeout", defaultValue = "14", paramLabel = "EXP", description = {
        "rocev2 mode: the IB local ACK timeout exponent, 4.096 us x 2^EXP, 1-31 (default ${DEFAULT-VALUE}: 67 ms;",
        "a queue pair fails after 8 of them without an ACK). Raise it on a loaded machine."})
    int rocev2AckTimeout;

    @Option(names = "--ipc-max-clients", defaultValue = "64", paramLabel = "N",
        description = "with --ipc-dir: clients served at once; one more is refused (default ${DEFAULT-VALUE}).")
    int ipcMaxClients;

    @Option(names = "--ipc-max-regions", defaultValue = "256", paramLabel = "N",
        description = "with --ipc-dir: regions one client may hold at once (default ${DEFAULT-VALUE}).")
    int ipcMaxRegions;

    @Option(names = "--ipc-max-connections", defaultValue = "64", paramLabel = "N",
        description = "with --ipc-dir: connections and queue pairs one client may hold at once (default ${DEFAULT-VALUE}).")
    int ipcMaxConnections;

    @Option(names = "--ipc-capture", negatable = true, defaultValue = "true", fallbackValue = "true", description = {
        "with --ipc-dir: let a client (spraynic capture) take a live capture of every frame, one at a time (default);",
        "--no-ipc-capture refuses it, for NICs whose clients must not see each other's traffic."})
    boolean ipcCapture;

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    public Integer call() throws Exception
    {
        switch (mode.toLowerCase(Locale.ROOT))
        {
            case "spray", "rocev2" ->
            {
            }
            // classify serves no connection: a connection's option would be believed to take effect
            case "classify" -> GivenOptions.refuse(spec, "with --mode classify (it serves no connections)", "--ip",
                "--gateway", "--network-status", "--workers", "--paths", "--expose", "--exchange", "--psk-file",
                "--max-connections-per-source", "--connect-response-rate", "--connect-response-burst",
                "--max-accepted-connections", "--busy-connections", "--queues-idle", "--idle-timeout", "--port-rotation",
                "--reorder-window", "--rocev2-ack-timeout", "--ipc-max-regions", "--ipc-max-connections");
            default -> throw new BadOption("--mode", mode, "is not one of classify, spray, rocev2", "try --mode spray");
        }
        BadOption.range("--seconds", seconds, 0, 365 * 86_400, 60); // 0: until interrupted
        BadOption.range("--max-connections-per-source", maxConnectionsPerSource, 1, 1 << 20);
        if (!(idleTimeout >= 0) || idleTimeout > 86_400 || (idleTimeout > 0 && idleTimeout < 0.001))
        {
            // no idle timeout an operator means (and below 1 ns it rounded to 0 ns, which means never)
            throw new BadOption("--idle-timeout", BadOption.number(idleTimeout), "must be 0 (never) or 0.001..86400",
                "try --idle-timeout 30");
        }
        BadOption.range("--workers", workers, 1, 64);
        BadOption.range("--paths", paths, 1, 64);
        BadOption.range("--max-accepted-connections", maxAcceptedConnections, 1, 1 << 20);
        BadOption.range("--busy-connections", busyConnections, 1, 1 << 20);
        BadOption.range("--queues-idle", queuesIdleMillis, 1, 86_400_000L);
        BadOption.range("--connect-response-rate", connectResponseRate, 1, 100_000_000);
        BadOption.range("--connect-response-burst", connectResponseBurst, 1, 1_000_000);
        BadOption.range("--rocev2-ack-timeout", rocev2AckTimeout, 1, 31);
        dcqcnOption.config(java.util.Map.of()); // refuses a bad --rocev2-line-rate or --dcqcn before anything starts
        BadOption.size("--expose", expose, 0, 1L << 40);
        // the conductor looks every 50 ms and clients keep alive every tenth of it: below 0.1 s no client stays
        BadOption.range("--ipc-client-timeout", ipcClientTimeout, 0.1, 86_400, 5);
        BadOption.range("--ipc-max-clients", ipcMaxClients, 1, IPC_LIMIT_MAX);
        BadOption.range("--ipc-max-regions", ipcMaxRegions, 1, IPC_LIMIT_MAX);
        BadOption.range("--ipc-max-connections", ipcMaxConnections, 1, IPC_LIMIT_MAX);
        BadOption.range("--network-status-timeout", networkStatusTimeout, 0, 3600, 120);
        params = EnvParams.resolve(paramsFromEnv, params, System::getenv);
        if (null != metrics)
        {
            MetricsServer.parse("--metrics", metrics);
        }
        if (null != ips)
        {
            final java.util.List<String> resolved = new java.util.ArrayList<>(ips.size());
            for (final String ip : ips)
            {
                // iface:NAME: the kernel interface's address; netstatus:NAME: the one Multus recorded for the pod
                resolved.add(PodNetworkStatus.isReference(ip) ?
                    PodNetworkStatus.address(ip, networkStatus, networkStatusTimeout) : interfaceAddress(ip));
            }
            ips = resolved;
        }
        final io.spraynic.pmd.InterfaceAddress[] given = PlaneAddresses.parse(ips, gateways);
        if (mode.equalsIgnoreCase("spray") || mode.equalsIgnoreCase("rocev2"))
        {
            return serve(mode.equalsIgnoreCase("spray") ? NicConnection.Kind.SPRAY : NicConnection.Kind.ROCEV2, given);
        }
        final Path ipc = null == ipcDir ? null : ipcDir.toString().isEmpty() ? IpcFileDescriptor.defaultDirectory() : ipcDir;
        final IpcConductor.Limits ipcLimits = new IpcConductor.Limits(ipcMaxClients, ipcMaxRegions, ipcMaxConnections,
            ipcCapture);
        final IpcAccess ipcAccess = ipcAccess(ipc);
        final Supplier<IdleStrategy> idleStrategies = IdleStrategies.parse(idle);
        final NicConfig nicConfig = hugepagesOption.apply(PmdConfigLoader.load(config, params, verbose));

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

        final PortCapture portCapture = PortCapture.open(PmdConfigLoader.capture(capture, nicConfig));
        try (CountersFile counters = CountersFile.create(CountersFileDescriptor.defaultDirectory(), "nic", 1024);
            MetricsServer _ = startMetrics(counters))
        {
            final NicRuntime runtime = NicRuntime.start(nicConfig, counters, idleStrategies, portCapture::wrap);
            IpcConductor conductor = null;
            try
            {
                System.out.printf(Locale.ROOT, "spraynic nic: %d port(s), %d poll thread(s) on %s; counters in %s%n",
                    nicConfig.ports().size(), runtime.pollThreads(), config, counters.path());
                if (null != ipc)
                {
                    // classify mode serves no connections: the IPC directory is there for spraynic capture only
                    conductor = IpcConductor.startCaptureOnly(runtime, ipc, counters,
                        Duration.ofMillis((long)(ipcClientTimeout * 1000)), ipcLimits, ipcAccess, IpcConductor.newIdleStrategy());
                    System.out.printf(Locale.ROOT, "spraynic nic: serving live capture in %s (spraynic capture --ipc-dir %s)%n",
                        ipc, ipc);
                }
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
                if (null != conductor)
                {
                    conductor.close(); // ends a running capture while the poll threads still confirm
                }
                runtime.close();
                final long captured = portCapture.finish();
                System.out.printf(Locale.ROOT, "spraynic nic: stopped%s%n",
                    captured == 0 ? "" : String.format(Locale.ROOT, "; captured %,d frames to %s",
                        captured, PmdConfigLoader.capture(capture, nicConfig)));
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

    /** The prefix of an --ip value that names a kernel interface whose IPv4 address the NIC takes. */
    static final String IFACE_PREFIX = "iface:";
    /** The prefix of an --ip value that names a kernel interface whose IPv6 address (not link-local) the NIC takes. */
    static final String IFACE6_PREFIX = "iface6:";

    /**
     * @return {@code ip} itself, or for {@code iface:NAME} the one IPv4 address of kernel interface NAME, for
     * {@code iface6:NAME} its one IPv6 address that is not link-local (a link-local one needs a zone, which a plane
     * does not take), in RFC 5952 text.
     * @throws BadOption when the interface does not exist or has no such address, or several.
     */
    static String interfaceAddress(final String ip) throws java.net.SocketException
    {
        final boolean ipv6 = ip.startsWith(IFACE6_PREFIX);
        if (!ipv6 && !ip.startsWith(IFACE_PREFIX))
        {
            return ip;
        }
        final String name = ip.substring((ipv6 ? IFACE6_PREFIX : IFACE_PREFIX).length());
        final String family = ipv6 ? "IPv6" : "IPv4";
        final java.net.NetworkInterface iface = name.isEmpty() ? null : java.net.NetworkInterface.getByName(name);
        if (null == iface)
        {
            throw new BadOption("--ip", ip, "there is no interface " + name + " here (ip link lists them)",
                "try --ip " + (ipv6 ? IFACE6_PREFIX : IFACE_PREFIX) + "lo");
        }
        final java.util.List<String> addresses = iface.inetAddresses()
            .filter(ipv6 ? java.net.Inet6Address.class::isInstance : java.net.Inet4Address.class::isInstance)
            .filter(address -> !address.isLinkLocalAddress())
            .map(NicCommand::addressText)
            .toList();
        if (addresses.size() != 1)
        {
            throw new BadOption("--ip", ip, "interface " + name + " has " + addresses.size() + " " + family +
                " addresses" + (ipv6 ? " that are not link-local " : " ") + addresses + ", not one",
                "try --ip with the address itself" + (addresses.isEmpty() ? "" : ", e.g. --ip " + addresses.getFirst()));
        }
        return addresses.getFirst();
    }

    // an IPv6 address as every plane prints it (RFC 5952, no zone), where Java writes all eight groups
    private static String addressText(final java.net.InetAddress address)
    {
        final byte[] bytes = address.getAddress();
        if (bytes.length != 16)
        {
            return address.getHostAddress();
        }
        final java.nio.ByteBuffer buffer = java.nio.ByteBuffer.wrap(bytes);
        return io.spraynic.pmd.InterfaceAddress.ipv6Text(buffer.getLong(), buffer.getLong());
    }

    private Integer serve(final NicConnection.Kind kind, final io.spraynic.pmd.InterfaceAddress[] given) throws Exception
    {
        if (kind != NicConnection.Kind.SPRAY && null != pskFile)
        {
            // the key authenticates spray handshakes (PROTOCOL.md S12.2); a RoCEv2 queue pair has none to authenticate,
            // and an operator who gave it would believe only key holders can connect
            throw new IllegalArgumentException("--psk-file authenticates spray connections only: --mode " + mode +
                " has no handshake to authenticate; drop --psk-file, or run --mode spray");
        }
        if (kind != NicConnection.Kind.SPRAY)
        {
            GivenOptions.refuse(spec, "with --mode " + mode + " (spray's paths and reordering only)", "--port-rotation",
                "--reorder-window");
        }
        if (kind == NicConnection.Kind.ROCEV2 && null == exchange && null == ipcDir)
        {
            throw new IllegalArgumentException("--mode rocev2 needs --exchange DIR (RoCEv2 queue pairs are connected out of " +
                "band) or --ipc-dir for applications that connect their own");
        }
        final Path ipc = null == ipcDir ? null : ipcDir.toString().isEmpty() ? IpcFileDescriptor.defaultDirectory() : ipcDir;
        final IpcConductor.Limits ipcLimits = new IpcConductor.Limits(ipcMaxClients, ipcMaxRegions, ipcMaxConnections,
            ipcCapture);
        final IpcAccess ipcAccess = ipcAccess(ipc);
        // a queue per worker where the document takes ${queues} (a preset's default may be more, e.g. RSS on mlx5)
        final NicConfig loaded = PmdConfigLoader.load(config, params, java.util.Map.of("queues", Integer.toString(workers)),
            verbose);
        hugepagesOption.mode(); // a bad option before a missing address, as in every mode
        final io.spraynic.pmd.InterfaceAddress[] addresses = PlaneAddresses.resolve(given, loaded, "--mode " + mode);
        final NicConfig nicConfig = hugepagesOption.apply(loaded);
        final int responseRate = connectResponseRate;
        final int responseBurst = connectResponseBurst;
        final byte[] psk = null == pskFile ? null : PreSharedKeyFile.read(pskFile);
        final long idleTimeoutNanos = (long)(idleTimeout * 1e9);
        final int perSource = maxConnectionsPerSource;
        final PortRotation rotation = portRotation;
        final ReorderWindowOption reordering = reorderWindow;
        final EmbeddedNicConfig embedded = new EmbeddedNicConfig().mode(kind).workers(workers)
            .connections(paths, 4).maxAcceptedConnections(maxAcceptedConnections)
            .maxOpenedConnections(maxOpenedConnections(ipc)).busyConnections(busyConnections)
            .queuesIdle(queuesIdleMillis * 1_000_000L)
            .planes(addresses.length).idleStrategy(IdleStrategies.parse(idle)).sprayConfig(() ->
                reordering.applyTo(EmbeddedNicConfig.sharedCoreSprayConfig()).psk(psk).maxConnectionsPerSource(perSource)
                    .idleTimeoutNanos(idleTimeoutNanos).portRotation(rotation.min(), rotation.max())
                    .connectResponseRate(responseRate, responseBurst))
            .rocevRetry(RcConnectionAttributes.ackTimeoutNanos(rocev2AckTimeout), 7);
        dcqcnOption.apply(embedded, loaded);
        PlaneAddresses.apply(embedded, addresses);
        final CountDownLatch stop = new CountDownLatch(1);
        final CountDownLatch stopped = new CountDownLatch(1);
        final Thread hook = new Thread(() ->
        {
            stop.countDown();
            try
            {
                stopped.await(30, TimeUnit.SECONDS); // let the main thread drain and report before the JVM exits
            }
            catch (final InterruptedException ignored)
            {
                Thread.currentThread().interrupt();
            }
        }, "spraynic-nic-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        final PortCapture portCapture = PortCapture.open(PmdConfigLoader.capture(capture, nicConfig));
        try (CountersFile counters = CountersFile.create(CountersFileDescriptor.defaultDirectory(), "nic", 16384);
            MetricsServer _ = startMetrics(counters);
            java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared())
        {
            final EmbeddedNic nic = EmbeddedNic.startOnDpdk(nicConfig, embedded, counters, portCapture::wrap);
            DrainReport report = null;
            IpcConductor conductor = null;
            try
            {
                if (null != ipc)
                {
                    // the workers read the clients' rings themselves: the conductor serves commands only, so it backs off
                    conductor = IpcConductor.start(nic, ipc, counters, Duration.ofMillis((long)(ipcClientTimeout * 1000)),
                        ipcLimits, ipcAccess, IpcConductor.newIdleStrategy());
                    System.out.printf(Locale.ROOT, "spraynic nic: serving applications in %s, for %s (spraynic client " +
                        "--ipc-dir %s)%n", ipc, ipcAccess.describe(), ipc);
                }
                if (null != exchange)
                {
                    PeerExchange.prepare(exchange); // this user's, nobody else's to write into
                }
                MemoryRegion exposed = null;
                if (expose > 0)
                {
                    final MemoryRegion region = nic.register(arena.allocate(expose, 4096),
                        AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
                    System.out.printf(Locale.ROOT, "spraynic nic: exposing %,d bytes at addr=%d rkey=%s%n", expose,
                        region.address(), Integer.toUnsignedString(region.rkey()));
                    if (null != exchange)
                    {
                        PeerExchange.publishServer(nic, region, exchange);
                        exposed = region;
                    }
                }
                final NicConnection offered = kind == NicConnection.Kind.ROCEV2 && null != exchange ?
                    PeerExchange.offerQueuePair(nic, exchange) : null;
                boolean visitorConnected = false;
                long refusedReported = 0;
                System.out.printf(Locale.ROOT, "spraynic nic: %s on %s, %s at %s, %d worker(s); counters in %s%n",
                    kind.name().toLowerCase(Locale.ROOT), config, PlaneAddresses.describe(addresses), Wire.macToString(nic.localMac(0)),
                    workers, counters.path());
                System.out.println("spraynic nic: running; Ctrl-C stops it, spraynic stat shows its counters");
                System.out.flush();
                final long deadline = seconds > 0 ? System.nanoTime() + (long)(seconds * 1e9) : Long.MAX_VALUE;
                while (stop.getCount() > 0 && System.nanoTime() < deadline)
                {
                    if (null != exposed)
                    {
                        serveDeregistration(nic, exposed);
                    }
                    if (null != offered)
                    {
                        try
                        {
                            if (!visitorConnected && PeerExchange.connectVisitor(offered, exchange, Duration.ofSeconds(10)))
                            {
                                visitorConnected = true;
                                System.out.printf(Locale.ROOT, "spraynic nic: accepted connection 0x%x: queue pair " +
                                    "connected%n", offered.localId());
                                System.out.flush();
                            }
                        }
                        catch (final IOException | IllegalArgumentException refused)
                        {
                            // a visitor.qp that is not one (garbage, a link, a FIFO): told, removed, and served on;
                            // a connect that fails with a good one still ends the NIC, saying why, as before
                            System.err.println("spraynic nic: refused " + exchange.resolve("visitor.qp") + ": " +
                                refused.getMessage());
                            java.nio.file.Files.deleteIfExists(exchange.resolve("visitor.qp"));
                        }
                        Thread.sleep(200);
                        continue;
                    }
                    refusedReported = reportRefused(nic, refusedReported);
                    if (null != conductor)
                    {
                        Thread.sleep(200); // incoming connections are the IPC clients' to accept
                        continue;
                    }
                    final NicConnection accepted = nic.accept(Duration.ofMillis(200));
                    if (null != accepted)
                    {
                        System.out.printf(Locale.ROOT, "spraynic nic: accepted connection 0x%x on worker %d, %d stream(s)%n",
                            accepted.localId(), accepted.worker(), accepted.streams());
                        System.out.flush();
                    }
                }
            }
            finally
            {
                if (null != conductor)
                {
                    conductor.close();
                }
                report = nic.close(Duration.ofSeconds(5));
                final long captured = portCapture.finish();
                System.out.printf(Locale.ROOT, "spraynic nic: stopped; %s%s%n", report.describe(),
                    captured == 0 ? "" : String.format(Locale.ROOT, "; captured %,d frames to %s",
                        captured, PmdConfigLoader.capture(capture, nicConfig)));
                System.out.flush();
            }
            return report.drained() ? 0 : 1;
        }
        finally
        {
            stopped.countDown();
            if (stop.getCount() > 0)
            {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
        }
    }

    private String deregistrationProblem;

    /** Answers a request in --exchange to deregister the exposed region (spraynic deregister), telling the operator. */
    private void serveDeregistration(final EmbeddedNic nic, final MemoryRegion exposed)
    {
        final String answer;
        try
        {
            answer = RegionRevocation.serve(nic, exposed, exchange);
        }
        catch (final java.io.IOException ex)
        {
            // the directory is anyone's who can write it: the NIC keeps serving, and says so once per cause
            final String problem = "spraynic nic: cannot answer " + exchange.resolve(RegionRevocation.REQUEST) + ": " + ex;
            if (!problem.equals(deregistrationProblem))
            {
                deregistrationProblem = problem;
                System.out.println(problem);
                System.out.flush();
            }
            return;
        }
        if (null != answer)
        {
            System.out.println(!RegionRevocation.deregistered(answer) ?
                "spraynic nic: " + exchange.resolve(RegionRevocation.REQUEST) + " " + answer :
                "spraynic nic: deregistered the exposed region (rkey=" + Integer.toUnsignedString(exposed.rkey()) +
                    ") as " + exchange.resolve(RegionRevocation.REQUEST) + " asked: peers' WRITEs and READs of it " +
                    "are refused from now on");
            System.out.flush();
        }
    }

    /**
     * @return the connections this NIC opens that it may hold at once: only IPC clients open any, each up to its limit.
     */
    private int maxOpenedConnections(final Path ipc)
    {
        return null == ipc ? 1 : (int)Math.min(1 << 20, (long)ipcMaxClients * ipcMaxConnections);
    }

    /**
     * Tells the operator of connections closed over --max-accepted-connections since the last report, naming the
     * limit and how to raise it, as every refusal of this command does (the counter alone is easy to miss).
     *
     * @return the count reported so far.
     */
    private long reportRefused(final EmbeddedNic nic, final long reported)
    {
        final long refused = nic.acceptedOverLimit();
        if (refused > reported)
        {
            System.out.println(refusedNotice(refused - reported, refused, maxAcceptedConnections));
            System.out.flush();
        }
        return refused;
    }

    /** @return the line that tells of connections closed over --max-accepted-connections {@code limit}. */
    static String refusedNotice(final long refusedNow, final long refusedInAll, final int limit)
    {
        return String.format(Locale.ROOT, "spraynic nic: refused %,d connection(s) from peers (%,d in all): this NIC " +
            "holds its limit of --max-accepted-connections %d; raise it (e.g. --max-accepted-connections %d) or close " +
            "some", refusedNow, refusedInAll, limit, Math.min(1 << 20, 2L * limit));
    }

    /**
     * @return the metrics endpoint if --metrics asks for one (null otherwise), serving this NIC's counters file.
     */
    private MetricsServer startMetrics(final CountersFile counters)
    {
        if (null == metrics)
        {
            return null;
        }
        final MetricsServer server = MetricsServer.start("--metrics", metrics, () -> java.util.Optional.of(counters.path()));
        System.out.printf(Locale.ROOT, "spraynic nic: metrics at %s%n", server.url());
        System.out.flush();
        return server;
    }

    /** @return who may use the IPC directory: --ipc-group's members too, else the NIC's user alone. */
    private IpcAccess ipcAccess(final Path ipc)
    {
        if (null == ipcGroup)
        {
            return IpcAccess.OWNER_ONLY;
        }
        if (null == ipc)
        {
            throw new BadOption("--ipc-group", ipcGroup, "shares the IPC directory: give --ipc-dir too",
                "try --ipc-group " + ipcGroup + " with --ipc-dir DIR");
        }
        try
        {
            return IpcAccess.group(ipcGroup);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new BadOption("--ipc-group", ipcGroup, "not a group name (a letter or _, then letters, digits, _ . -)",
                "try --ipc-group users");
        }
    }
}
