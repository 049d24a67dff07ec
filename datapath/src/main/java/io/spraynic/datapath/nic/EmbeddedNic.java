package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.Nic;
import io.spraynic.datapath.api.Region;
import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.transport.PortFrameSink;
import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;
import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.transport.rocev2.RcEngineConfig;
import io.spraynic.datapath.transport.rocev2.RcQueuePair;
import io.spraynic.datapath.transport.spray.PortsFrameOutput;
import io.spraynic.datapath.transport.spray.RejectReason;
import io.spraynic.datapath.transport.spray.SprayConfig;
import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.transport.spray.SprayConnectionConfig;
import io.spraynic.datapath.transport.spray.SprayCounters;
import io.spraynic.datapath.transport.spray.SprayEngine;
import io.spraynic.datapath.transport.spray.SprayHandshake;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.Icmpv6Header;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.Wire;
import io.spraynic.pmd.InterfaceAddress;

import java.net.InetAddress;
import io.spraynic.dpdk.CpuAffinity;
import io.spraynic.dpdk.EthPort;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.agrona.collections.Int2IntHashMap;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;
import java.util.function.UnaryOperator;

/**
 * A NIC for applications in the same JVM, with the verbs-style API of both transports: register memory,
 * open connections (spray: {@link #connect} and {@link #accept}, handshake on the wire; RoCEv2:
 * {@link #createQueuePair} then {@link NicConnection#connect} with the peer's attributes, exchanged out of
 * band), post work requests and poll completions on {@link NicConnection}s.
 * <p>
 * Underneath run {@code workers} run-to-completion poll-mode {@link NicWorker}s, each on its own queue of
 * every port (plane) and its own thread ({@link AgentRunner}, configurable idle strategy, optional CPU
 * pinning), each with its own engine and connections. This class is the control path: every action it takes
 * reaches a worker as a command through the worker's queue and is waited for; it shares no mutable state with
 * the workers. A packet that arrives on another worker's queue (whatever the NIC's RSS did) is steered to the
 * owner by its DestQP.
 */
public final class EmbeddedNic implements Nic, CaptureSource
{
    /** Default time a control action waits for its worker. */
    public static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(10);
    /** Bytes of headers a data frame may carry beyond its payload: VLAN, IPv6, UDP, BTH, SETH, RETH, ImmDt, ICRC. */
    static final int MAX_HEADER_BYTES = 18 + 40 + 8 + 12 + 20 + 16 + 4 + 4;
    private static final int[] PATH_SLOTS = {SprayCounters.TX_PACKETS, SprayCounters.TX_BYTES,
        SprayCounters.RX_PACKETS, SprayCounters.RETRANSMITTED, SprayCounters.LOST, SprayCounters.ECN_MARKS_RECEIVED,
        SprayCounters.SACK_GAPS, SprayCounters.TIMEOUTS, SprayCounters.MOVED};

    private static final java.security.SecureRandom SEEDS = new java.security.SecureRandom();

    private final EmbeddedNicConfig config;
    private final CountersFile counters;
    private final AutoCloseable owner;
    private final Arena arena = Arena.ofShared();
    private final ProtectionDomain controlDomain = new ProtectionDomain();
    // the tenant of each region outside the default domain (0, the map's missing value)
    private final Int2IntHashMap domainsByLkey = new Int2IntHashMap(0);
    // the memory of regions registered by size (register(long, int)), freed when they are deregistered
    private final Int2ObjectHashMap<Arena> ownedMemory = new Int2ObjectHashMap<>();
    private final NicWorker[] workers;
    private final CaptureTap[] taps;
    private final String[] portNames;
    private final AgentRunner[] runners;
    private final long[] localMac;
    private final NicNeighbours neighbours;
    private final ManyToOneConcurrentArrayQueue<NicConnection> accepted = new ManyToOneConcurrentArrayQueue<>(4096);
    private final List<NicConnection> connections = new CopyOnWriteArrayList<>();
    private final SplittableRandom random = new SplittableRandom();
    private final List<AtomicCounter> ownCounters = new ArrayList<>();
    private final List<CounterMirror> ownMirrors = new ArrayList<>();
    private int nextWorker;
    private volatile boolean closing;
    private Thread portStatsPublisher;
    private DrainReport closeReport;
    private MemorySegment captureMemory;

    private EmbeddedNic(final EmbeddedNicConfig config, final PacketPort[][] ports, final CountersFile counters,
        final AutoCloseable owner)
    {
        this.config = config;
        this.counters = counters;
        this.owner = owner;
        final int w = config.workers;
        final int planes = config.planes();
        if (ports.length != w)
        {
            throw new IllegalArgumentException("an embedded NIC with " + w + " worker(s) needs one row of ports per worker, not " +
                ports.length);
        }
        fitMtu(config);
        this.localMac = config.localMac.clone();
        this.neighbours = new NicNeighbours(config, localMac, counters);
        this.workers = new NicWorker[w];
        this.taps = new CaptureTap[w];
        this.runners = new AgentRunner[w];
        this.portNames = new String[planes];
        for (int i = 0; i < w; i++)
        {
            if (ports[i].length != planes)
            {
                throw new IllegalArgumentException("worker " + i + " has " + ports[i].length + " port(s) for " + planes +
                    " plane(s): give one queue of every plane's port to every worker");
            }
            workers[i] = newWorker(i, tapped(i, ports[i]));
        }
        for (final NicWorker worker : workers)
        {
            worker.peers(workers);
        }
        neighbours.workers(workers);
    }

    /**
     * Makes the path MTU fit the ports: a frame of a full MTU with every header must fit {@code maxFrameLength}
     * (buffers, the ports' own MTU, af_packet ring frames). The default MTU is lowered to the largest that fits,
     * with a one-line notice; an MTU the application chose is refused.
     */
    static void fitMtu(final EmbeddedNicConfig config)
    {
        if (config.mtu + MAX_HEADER_BYTES <= config.maxFrameLength)
        {
            return;
        }
        if (config.mtuChosen)
        {
            throw new IllegalArgumentException("an MTU of " + config.mtu + " needs frames of up to " +
                (config.mtu + MAX_HEADER_BYTES) + " B with headers, but the ports carry at most " + config.maxFrameLength +
                " B (their MTU, or the mempool's data_room less headroom): lower the MTU to " + fittingMtu(config.maxFrameLength) +
                ", or raise the ports' MTU and the mempool's data_room");
        }
        final int fitting = fittingMtu(config.maxFrameLength);
        if (fitting == 0)
        {
            throw new IllegalArgumentException("the ports carry frames of at most " + config.maxFrameLength +
                " B, too few for even a 256 B path MTU with headers (" + (256 + MAX_HEADER_BYTES) + " B)");
        }
        System.err.println("spraynic: path MTU " + fitting + ", not " + config.mtu + ": the ports carry frames of at most " +
            config.maxFrameLength + " B (raise the port MTU, e.g. the veth's, for " + config.mtu + ")");
        config.mtu = fitting;
    }

    /** @return the largest IB path MTU whose frames fit {@code maxFrameLength}, or 0 for none. */
    static int fittingMtu(final int maxFrameLength)
    {
        for (int mtu = 4096; mtu >= 256; mtu >>= 1)
        {
            if (mtu + MAX_HEADER_BYTES <= maxFrameLength)
            {
                return mtu;
            }
        }
        return 0;
    }

    /**
     * Starts a NIC over ports the caller owns (in-JVM links, or DPDK queues of a {@link DpdkNic} shared with
     * another NIC in the same process).
     *
     * @param config   how it runs.
     * @param ports    {@code ports[worker][plane]}: each worker's queue of each plane's port.
     * @param counters where its counters go.
     * @return the NIC, workers running.
     */
    public static EmbeddedNic start(final EmbeddedNicConfig config, final PacketPort[][] ports, final CountersFile counters)
    {
        return start(config, ports, counters, null);
    }

    private static EmbeddedNic start(
        final EmbeddedNicConfig config, final PacketPort[][] ports, final CountersFile counters, final AutoCloseable owner)
    {
        final EmbeddedNic nic = new EmbeddedNic(config, ports, counters, owner);
        nic.startRunners();
        return nic;
    }

    /**
     * Brings DPDK up from a pmd-config and starts a NIC on it: every port of the config is a plane, and every
     * worker gets queue {@code w} of every port (so ports need as many RX and TX queues as workers). A MAC
     * left 0 in {@code config} is the port's own. The NIC owns DPDK and brings it down on close. A config of
     * only {@code udp} ports starts no DPDK at all: the planes run on kernel UDP sockets ({@link UdpSocketPorts}).
     *
     * @param wrap applied to every queue's packet port (e.g. a capture).
     */
    public static EmbeddedNic startOnDpdk(
        final NicConfig nicConfig, final EmbeddedNicConfig config, final CountersFile counters,
        final UnaryOperator<PacketPort> wrap)
    {
        final List<PortConfig> portConfigs = nicConfig.ports();
        if (portConfigs.size() != config.planes())
        {
            throw new IllegalArgumentException("the embedded NIC has " + config.planes() + " plane(s) but the pmd config has " +
                portConfigs.size() + " port(s): give one port per plane (or set planes to " + portConfigs.size() + ")");
        }
        for (final PortConfig port : portConfigs)
        {
            if (port.rxQueues() < config.workers || port.txQueues() < config.workers)
            {
                throw new IllegalArgumentException("port " + port.name() + " has " + port.rxQueues() + " RX and " +
                    port.txQueues() + " TX queue(s) for " + config.workers + " worker(s): set rx_queues and tx_queues to at least " +
                    config.workers);
            }
        }
        if (nicConfig.onlyUdpPorts())
        {
            // kernel UDP sockets: no EAL, no mempool, no hugepages
            final UdpSocketPorts sockets = UdpSocketPorts.open(nicConfig, config, counters, wrap);
            try
            {
                return start(config, sockets.ports(), counters, sockets);
            }
            catch (final RuntimeException ex)
            {
                sockets.close();
                throw ex;
            }
        }
        final DpdkNic dpdk = DpdkNic.start(nicConfig);
        try
        {
            for (final PortConfig port : portConfigs)
            {
                config.maxFrameLength = Math.min(config.maxFrameLength, dpdk.maxFrameLength(port.name()));
            }
            final PacketPort[][] ports = new PacketPort[config.workers][config.planes()];
            for (int p = 0; p < config.planes(); p++)
            {
                final String name = portConfigs.get(p).name();
                final EthPort ethPort = dpdk.port(name);
                if (config.localMac[p] == 0)
                {
                    config.localMac[p] = macOf(ethPort);
                }
                final InterfaceAddress address = config.addresses[p];
                if (null != address && address.isIpv6())
                {
                    // neighbour solicitations come to the address's solicited-node group, announcements to all nodes
                    ethPort.acceptMulticast(Icmpv6Header.multicastMac(Icmpv6Header.solicitedNodeLow(address.ipv6Low())),
                        Icmpv6Header.multicastMac(Icmpv6Header.ALL_NODES_LOW));
                }
                for (int w = 0; w < config.workers; w++)
                {
                    ports[w][p] = wrap.apply(dpdk.packetPort(name, w));
                }
            }
            final EmbeddedNic nic = start(config, ports, counters, dpdk);
            nic.publishPortStats(dpdk, portConfigs);
            return nic;
        }
        catch (final RuntimeException ex)
        {
            dpdk.close();
            throw ex;
        }
    }

    /** A daemon thread copies the ports' DPDK statistics into the counters file every 100 ms. */
    private void publishPortStats(final DpdkNic dpdk, final List<PortConfig> portConfigs)
    {
        final List<PortStatsCounters> ports = new ArrayList<>();
        for (final PortConfig port : portConfigs)
        {
            ports.add(new PortStatsCounters(counters, dpdk.port(port.name()), port.name()));
        }
        final Thread publisher = new Thread(() ->
        {
            try
            {
                while (!closing)
                {
                    for (final PortStatsCounters port : ports)
                    {
                        port.publish();
                    }
                    Thread.sleep(100);
                }
            }
            catch (final InterruptedException ignored)
            {
                Thread.currentThread().interrupt();
            }
            finally
            {
                ports.forEach(PortStatsCounters::close);
            }
        }, "spraynic-port-stats");
        publisher.setDaemon(true);
        publisher.start();
        portStatsPublisher = publisher;
    }

    private static long macOf(final EthPort port)
    {
        long mac = 0;
        for (final byte b : port.macAddress())
        {
            mac = mac << 8 | (b & 0xFF);
        }
        return mac;
    }

    /** Every port of worker {@code index} through the worker's capture tap ({@link #startCapture}). */
    private PacketPort[] tapped(final int index, final PacketPort[] ports)
    {
        final String prefix = "worker " + index + ": capture ";
        taps[index] = new CaptureTap(index, counter(prefix + "frames"), counter(prefix + "drops (ring full)"),
            counter(prefix + "filtered out"), counter(prefix + "faults (tap stopped)"));
        final PacketPort[] tapped = new PacketPort[ports.length];
        for (int p = 0; p < ports.length; p++)
        {
            tapped[p] = taps[index].tap(ports[p], p);
            portNames[p] = null == portNames[p] ? ports[p].name() : portNames[p];
        }
        return tapped;
    }

    /** @return the name of the port of {@code plane} (worker 0's queue, e.g. {@code net_ring0/q0}). */
    public String portName(final int plane)
    {
        return portNames[plane];
    }

    /**
     * Starts a live capture: every worker copies the frames {@code filter} takes of its queue into its ring in
     * {@code memory} (laid out by {@code layout}, header written), dropping what does not fit, until
     * {@link #stopCapture}. One capture at a time.
     *
     * @throws IllegalStateException when a capture runs already; IllegalArgumentException when the layout or filter
     *                               does not fit this NIC.
     */
    public synchronized void startCapture(final MemorySegment memory, final CaptureRingLayout layout,
        final CaptureFilter filter)
    {
        requireOpen();
        if (null != captureMemory)
        {
            throw new IllegalStateException("a capture is running: stop it first (one at a time)");
        }
        final String problem = layout.workers() != workers.length ? "the capture has " + layout.workers() +
            " ring(s) for " + workers.length + " worker(s)" : memory.byteSize() < layout.fileLength() ?
            "the capture memory is shorter than its layout" : filter.problem(planes(), workers.length);
        if (null != problem)
        {
            throw new IllegalArgumentException(problem);
        }
        captureMemory = memory;
        final List<CompletableFuture<Object>> done = new ArrayList<>();
        for (final NicWorker worker : workers)
        {
            done.add(submit(worker, (w, now) ->
            {
                taps[w.index()].start(memory, layout, filter, planes());
                return null;
            }));
        }
        try
        {
            for (final CompletableFuture<Object> f : done)
            {
                await(f, CONTROL_TIMEOUT, "start a capture");
            }
        }
        catch (final RuntimeException ex)
        {
            stopCapture();
            throw ex;
        }
    }

    /**
     * Stops the live capture, if one runs: returns once every worker stopped writing into its memory (which the caller
     * may then free) and marked it ended.
     *
     * @throws IllegalStateException when a worker did not confirm (its memory must then stay mapped).
     */
    public synchronized void stopCapture()
    {
        final MemorySegment memory = captureMemory;
        if (null == memory)
        {
            return;
        }
        final List<CompletableFuture<Object>> done = new ArrayList<>();
        for (final NicWorker worker : workers)
        {
            done.add(submit(worker, (w, now) ->
            {
                taps[w.index()].stop();
                return null;
            }));
        }
        for (final CompletableFuture<Object> f : done)
        {
            await(f, CONTROL_TIMEOUT, "stop a capture");
        }
        captureMemory = null;
        CaptureRingLayout.end(memory);
    }

    private NicWorker newWorker(final int index, final PacketPort[] ports)
    {
        final ProtectionDomain domain = new ProtectionDomain();
        final ParseCounters parseCounters = new ParseCounters();
        final String prefix = "worker " + index + ": ";
        final WorkerTransport transport;
        final List<CounterMirror> engineMirrors = new ArrayList<>();
        if (config.mode == NicConnection.Kind.SPRAY)
        {
            // each worker draws its own seed: source ports must differ between workers and between NICs, which a
            // configured (deterministic) seed would repeat; secrets (tokens, CIDs, initial PSNs, keys) come from
            // SecureRandom in the engine (S12.2)
            final SprayConfig spray = config.sprayConfig.get().planes(config.planes()).cidPartition(index, config.workers)
                .seed(SEEDS.nextLong());
            for (int p = 0; p < config.planes(); p++)
            {
                spray.local(p, config.localIpv4[p], config.localMac[p]);
                final InterfaceAddress address = config.addresses[p];
                if (null != address && address.isIpv6())
                {
                    spray.localIpv6(p, address.ipv6High(), address.ipv6Low()); // towards peers named by IPv6
                }
            }
            final PortsFrameOutput output = new PortsFrameOutput(ports, config.burst);
            final SprayEngine engine = new SprayEngine(spray, domain, output);
            transport = new SprayWorkerTransport(engine, output, parseCounters);
            engineMirrors.add(new CounterMirror(counters, prefix + "spray ", engine.counters(),
                new int[]{SprayCounters.UNKNOWN_CONNECTION, SprayCounters.MALFORMED, SprayCounters.CONNECT_RETRIES_SENT,
                    SprayCounters.CONNECT_REJECTS_SENT, SprayCounters.CONNECT_RESPONSES_RATE_LIMITED,
                    SprayCounters.COOKIE_FAILURES, SprayCounters.HANDSHAKE_AUTH_FAILURES, SprayCounters.SOURCE_LIMITED,
                    SprayCounters.IDLE_CLOSED, SprayCounters.REFUSED_NO_LISTENER, SprayCounters.REFUSED_VERSION,
                    SprayCounters.REFUSED_BAD_PARAMETERS, SprayCounters.REFUSED_NO_RESOURCES,
                    SprayCounters.CONNECT_REJECTS_RECEIVED, SprayCounters.AUTH_FAILURES,
                    SprayCounters.ADDRESS_MISMATCHES, SprayCounters.RESYNCS_REFUSED, SprayCounters.MSN_OUT_OF_WINDOW,
                    SprayCounters.NACKS_UNMATCHED, SprayCounters.NO_RESOURCES,
                    SprayCounters.NOT_SPRAY}));
        }
        else
        {
            final RcEngine[] engines = new RcEngine[config.planes()];
            final PortFrameSink[] sinks = new PortFrameSink[config.planes()];
            for (int p = 0; p < engines.length; p++)
            {
                sinks[p] = new PortFrameSink(ports[p], config.burst, config.maxFrameLength);
                engines[p] = new RcEngine(RcEngineConfig.defaults(config.localMac[p], config.localIpv4[p]), domain, sinks[p]);
                engines[p].qpNumberPartition(index, config.workers);
                engineMirrors.add(new CounterMirror(counters, prefix + "plane " + p + " rocev2 ", engines[p].counters(), null));
            }
            transport = new RocevWorkerTransport(engines, sinks, parseCounters);
        }
        if (index == 0)
        {
            neighbours.addAgents(ports, prefix, engineMirrors); // one table per plane, on worker 0
        }
        final NicWorker.WorkerCounters workerCounters = new NicWorker.WorkerCounters(
            counter(prefix + "rx frames"), counter(prefix + "steered to other workers"),
            counter(prefix + "steered from other workers"), counter(prefix + "steering drops (inbox full)"),
            counter(prefix + "work requests with unknown lkey"), counter(prefix + "control commands"),
            counter(prefix + "frame faults (exception handling a frame, dropped)"),
            counter(prefix + "loop faults (exception in a command, poller, post or tick)"),
            new CounterMirror(counters, prefix + "parse ", parseCounters), engineMirrors.toArray(new CounterMirror[0]));
        ownMirrors.addAll(engineMirrors);
        ownMirrors.add(workerCounters.parse());
        final NicWorker worker = new NicWorker(index, config.workers, ports, transport, parseCounters, domain, config.clock,
            config.burst, config.inboxBytes, arena, workerCounters);
        if (index == 0)
        {
            neighbours.attach(worker);
        }
        if (config.mode == NicConnection.Kind.SPRAY && config.listen)
        {
            listen(worker, (SprayWorkerTransport)transport);
        }
        return worker;
    }

    private AtomicCounter counter(final String label)
    {
        final AtomicCounter c = CounterMirror.tryNewCounter(counters, label);
        if (null == c)
        {
            throw new IllegalStateException("the counters file " + counters.path() + " is full: create it with room for more counters");
        }
        ownCounters.add(c);
        return c;
    }

    private void listen(final NicWorker worker, final SprayWorkerTransport transport)
    {
        final SprayConnectionConfig template = new SprayConnectionConfig().paths(config.paths).streams(config.streams)
            .mtu(config.mtu).depths(config.sendQueueDepth, config.receiveQueueDepth, config.receiveQueueDepth);
        transport.engine().listen(template, config.peerResolver, new SprayHandshake.AcceptListener()
        {
            private SprayNicConnection accepting;
            private long[] peerHigh;
            private long[] peerLow;

            public void onAccepting(final SprayConnectionConfig c)
            {
                accepting = new SprayNicConnection(EmbeddedNic.this, worker.index(), config.ringCapacity,
                    config.completionQueueCapacity);
                c.completionQueues(accepting.sendCompletionQueue(), accepting.receiveCompletionQueue())
                    .sourcePortBase(sourcePortBase(config.paths));
                peerHigh = new long[config.planes()]; // the handshake learnt the peer's addresses before this
                peerLow = new long[config.planes()];
                for (int p = 0; p < peerHigh.length; p++)
                {
                    peerHigh[p] = c.remoteHigh(p);
                    peerLow[p] = c.remoteLow(p);
                }
            }

            public void onAccepted(final SprayConnection connection)
            {
                final SprayNicConnection handle = accepting;
                accepting = null;
                attachSpray(worker, handle, connection);
                neighbours.follow(worker, handle, connection, peerHigh, peerLow);
                if (!accepted.offer(handle))
                {
                    transport.engine().close(connection); // nobody is accepting: refuse rather than grow without bound
                    worker.detach(handle);
                    connections.remove(handle);
                }
            }
        });
    }

    private int sourcePortBase(final int paths)
    {
        synchronized (random)
        {
            return 49152 + random.nextInt(16384 - paths);
        }
    }

    private void attachSpray(final NicWorker worker, final SprayNicConnection handle, final SprayConnection connection)
    {
        handle.established(connection);
        final String prefix = "conn 0x" + Integer.toHexString(connection.localCid()) + ": ";
        final CounterMirror[] mirrors = new CounterMirror[1 + connection.paths()];
        mirrors[0] = new CounterMirror(counters, prefix, connection.counters(), SprayCounters.connectionSlots());
        for (int p = 0; p < connection.paths(); p++)
        {
            mirrors[1 + p] = new CounterMirror(counters, prefix + "path " + p + " ", connection.pathCounters(p), PATH_SLOTS);
        }
        handle.mirrors = mirrors;
        handle.gauges = new SprayGauges(counters, prefix, connection);
        worker.attach(handle);
        connections.add(handle);
    }

    private void startRunners()
    {
        for (int i = 0; i < workers.length; i++)
        {
            final NicWorker worker = workers[i];
            final int cpu = i < config.cpus.length ? config.cpus[i] : -1;
            runners[i] = new AgentRunner(config.idleStrategy.get(), Throwable::printStackTrace,
                counter("worker " + i + ": errors"), worker);
            AgentRunner.startOnThread(runners[i], runnable -> new Thread(() ->
            {
                if (cpu >= 0)
                {
                    CpuAffinity.pinCurrentThread(cpu);
                }
                runnable.run();
            }, worker.roleName()));
        }
    }

    /** @return workers. */
    public int workers()
    {
        return workers.length;
    }

    /** @return planes (ports). */
    public int planes()
    {
        return config.planes();
    }

    /** @return the transport. */
    public NicConnection.Kind mode()
    {
        return config.mode;
    }

    /** @return this NIC's address on {@code plane} as text: IPv6 on an IPv6 plane, else IPv4. */
    public String localAddressText(final int plane)
    {
        final InterfaceAddress address = config.addresses[plane];
        return null != address && address.isIpv6() ? InterfaceAddress.ipv6Text(address.ipv6High(), address.ipv6Low()) :
            Wire.ipv4ToString(config.localIpv4[plane]);
    }

    /** @return this NIC's IPv4 address on {@code plane} (0 on an IPv6 plane). */
    public int localIpv4(final int plane)
    {
        return config.localIpv4[plane];
    }

    /** @return this NIC's MAC on {@code plane}. */
    public long localMac(final int plane)
    {
        return localMac[plane];
    }

    /** @return the counters file. */
    public CountersFile counters()
    {
        return counters;
    }

    /**
     * @return the unexpected exceptions the workers caught and survived, by "where class" (tests and reports;
     * the counters file has their totals).
     */
    /** @return worker {@code index} (tests). */
    NicWorker worker(final int index)
    {
        return workers[index];
    }

    java.util.Map<String, Long> faultCounts()
    {
        final java.util.Map<String, Long> counts = new java.util.TreeMap<>();
        for (final NicWorker worker : workers)
        {
            worker.faultLog().counts().forEach((reason, n) -> counts.merge(reason, n, Long::sum));
        }
        return counts;
    }

    /** @return the open connections. */
    public List<NicConnection> connections()
    {
        return List.copyOf(connections);
    }

    /** @return the RoCEv2 engine of a worker's plane; read its counters only once the NIC is closed. */
    RcEngine rocevEngine(final int worker, final int plane)
    {
        return ((RocevWorkerTransport)workers[worker].transport()).engine(plane);
    }

    boolean isClosing()
    {
        return closing;
    }

    /**
     * Registers memory with every worker under the same keys, so a work request or a peer's rkey means the
     * same whichever worker a connection lives on.
     *
     * @param segment native memory that outlives the registration.
     * @param access  {@link AccessFlags}.
     * @return the region (its lkey for local work requests, rkey for peers).
     */
    public MemoryRegion register(final MemorySegment segment, final int access)
    {
        return register(segment, access, 0);
    }

    /**
     * Registers memory in a tenant's protection domain on every worker: only connections bound to the same domain
     * ({@link #bindProtectionDomain}) may name it, by lkey in their work requests or by rkey from their peer.
     *
     * @param segment native memory that outlives the registration.
     * @param access  {@link AccessFlags}.
     * @param domain  the tenant (0: the in-process application's default domain).
     * @return the region (its lkey for local work requests, rkey for peers).
     */
    public MemoryRegion register(final MemorySegment segment, final int access, final int domain)
    {
        final MemoryRegion region;
        synchronized (controlDomain)
        {
            region = controlDomain.register(segment, access); // keys unique over every domain
            if (0 != domain)
            {
                domainsByLkey.put(region.lkey(), domain); // absent: the default domain
            }
        }
        final List<CompletableFuture<Object>> done = new ArrayList<>();
        for (final NicWorker worker : workers)
        {
            done.add(submit(worker, (w, now) ->
                w.protectionDomain(domain).registerWithKeys(segment, access, region.lkey(), region.rkey())));
        }
        for (final CompletableFuture<Object> f : done)
        {
            await(f, CONTROL_TIMEOUT, "register memory");
        }
        return region;
    }

    /**
     * Registers {@code bytes} of new, zeroed, page-aligned memory that the NIC frees when the region is deregistered
     * or the NIC closes (the {@link Nic} view of registration; {@link #register(MemorySegment, int)} registers memory
     * the application owns).
     *
     * @param bytes  size.
     * @param access {@link AccessFlags}.
     * @return the region (its lkey for local work requests, rkey for peers).
     */
    public MemoryRegion register(final long bytes, final int access)
    {
        if (bytes < 1)
        {
            throw new IllegalArgumentException("a region holds at least 1 byte, not " + bytes);
        }
        final Arena memory = Arena.ofShared();
        try
        {
            final MemoryRegion region = register(memory.allocate(bytes, 4096), access);
            synchronized (controlDomain)
            {
                ownedMemory.put(region.lkey(), memory);
            }
            return region;
        }
        catch (final RuntimeException ex)
        {
            memory.close();
            throw ex;
        }
    }

    /**
     * Deregisters a region on every worker: its keys then fail every check, locally and from peers, and every
     * operation under way that uses it is cut short first (a peer's WRITE into it refused with a NAK remote
     * access error at its next packet, READ responses from it not sent, local work requests naming it completed
     * with LOC_PROT_ERR). Returns once every worker did so: nothing is placed into the memory or read from it
     * afterwards, so the caller may free it.
     */
    public void deregister(final Region registered)
    {
        if (!(registered instanceof MemoryRegion region) || region.protectionDomain() != controlDomain)
        {
            throw new IllegalArgumentException("not a region of this NIC: " + registered);
        }
        if (!region.isRegistered())
        {
            throw new IllegalStateException("already deregistered: " + region);
        }
        final int domain;
        synchronized (controlDomain)
        {
            domain = domainsByLkey.get(region.lkey());
        }
        final List<CompletableFuture<Object>> done = new ArrayList<>();
        for (final NicWorker worker : workers)
        {
            done.add(submit(worker, (w, now) ->
            {
                final MemoryRegion copy = w.protectionDomain(domain).regionByLkey(region.lkey());
                if (null != copy)
                {
                    w.protectionDomain(domain).deregister(copy);
                    w.transport().revoke(copy);
                }
                return copy;
            }));
        }
        for (final CompletableFuture<Object> f : done)
        {
            await(f, CONTROL_TIMEOUT, "deregister memory");
        }
        final Arena owned;
        synchronized (controlDomain)
        {
            controlDomain.deregister(region);
            domainsByLkey.remove(region.lkey());
            owned = ownedMemory.remove(region.lkey());
        }
        if (null != owned)
        {
            owned.close(); // no worker touches it any more
        }
    }

    /**
     * Binds a connection or queue pair to a tenant's protection domain before the application posts on it: its work
     * requests and its peer's rkeys then reach only regions registered in that domain. Until then it uses the
     * default domain (0), which holds the in-process application's regions only.
     *
     * @param connection a connection of this NIC, before anything is posted on it.
     * @param domain     the tenant.
     */
    public void bindProtectionDomain(final NicConnection connection, final int domain)
    {
        await(submit(workers[connection.worker()], (w, now) ->
        {
            final ProtectionDomain pd = w.protectionDomain(domain);
            connection.protectionDomain = pd;
            connection.bindProtectionDomain(pd);
            return connection;
        }), CONTROL_TIMEOUT, "bind a connection to a protection domain");
    }

    /**
     * Makes the connection's worker take its work requests from {@code requests} (a client process's request ring,
     * read in place) instead of its in-process ring, from the next loop on; nothing may be posted in process on it.
     *
     * @param connection a connection of this NIC, before anything is posted on it.
     */
    public void takeRequestsFrom(final NicConnection connection, final WorkRequestSource requests)
    {
        await(submit(workers[connection.worker()], (w, now) ->
        {
            connection.requests = requests;
            return connection;
        }), CONTROL_TIMEOUT, "attach a connection's request ring");
    }

    /** Forgets a tenant's protection domain on every worker, once its regions are deregistered. */
    public void releaseProtectionDomain(final int domain)
    {
        if (0 == domain)
        {
            return;
        }
        final List<CompletableFuture<Object>> done = new ArrayList<>();
        for (final NicWorker worker : workers)
        {
            done.add(submit(worker, (w, now) ->
            {
                w.releaseProtectionDomain(domain);
                return null;
            }));
        }
        for (final CompletableFuture<Object> f : done)
        {
            await(f, CONTROL_TIMEOUT, "release a protection domain");
        }
    }

    /**
     * Opens a spray connection to a peer NIC (handshake on the wire, S9.1), on the next worker in turn. The peer is
     * named by its addresses only: each plane's next hop (the peer on-link, the plane's gateway off-link) is
     * resolved by ARP first, and the connection follows its MAC when it changes.
     *
     * @param peerIpv4 the peer's address on each plane.
     * @param timeout  how long to wait for ARP and the handshake.
     * @return the connection, ESTABLISHED.
     * @throws IllegalStateException when the peer or a next hop did not answer.
     */
    public NicConnection connect(final int[] peerIpv4, final Duration timeout)
    {
        final long[] high = new long[peerIpv4.length];
        final long[] low = new long[peerIpv4.length];
        for (int p = 0; p < low.length; p++)
        {
            low[p] = InterfaceAddress.mappedLow(peerIpv4[p]);
        }
        return connect(high, low, timeout);
    }

    /**
     * {@link #connect(int[], Duration)} with the peer's addresses of either family, each of its plane's: IPv6 on a
     * plane with an IPv6 address (neighbour discovery resolves the next hop), IPv4 on the others.
     *
     * @param peers   the peer's address on each plane.
     * @param timeout how long to wait for neighbour resolution and the handshake.
     * @return the connection, ESTABLISHED.
     */
    public NicConnection connect(final InetAddress[] peers, final Duration timeout)
    {
        final long[] high = new long[peers.length];
        final long[] low = new long[peers.length];
        for (int p = 0; p < peers.length; p++)
        {
            final byte[] b = peers[p].getAddress();
            final byte[] a = b.length == 16 ? b : new byte[]{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, b[0], b[1], b[2], b[3]};
            for (int i = 0; i < 8; i++)
            {
                high[p] = high[p] << 8 | (a[i] & 0xFF);
                low[p] = low[p] << 8 | (a[i + 8] & 0xFF);
            }
        }
        return connect(high, low, timeout);
    }

    /** {@link #connect(InetAddress[], Duration)} with each address as 128 bits (IPv4-mapped for IPv4). */
    NicConnection connect(final long[] peerHigh, final long[] peerLow, final Duration timeout)
    {
        requireMode(NicConnection.Kind.SPRAY);
        requireOpen();
        if (peerHigh.length != planes())
        {
            throw new IllegalArgumentException("give the peer's address on each of the " + planes() + " plane(s)");
        }
        final String peerText = InterfaceAddress.text(peerHigh[0], peerLow[0]);
        final NextHops hops = neighbours.nextHops(peerHigh, peerLow);
        final long[] peerMac = neighbours.resolve(hops, timeout);
        final NicWorker worker = nextWorker();
        final SprayNicConnection handle = new SprayNicConnection(this, worker.index(), config.ringCapacity,
            config.completionQueueCapacity);
        handle.nextHop = hops;
        final int sourcePortBase = sourcePortBase(config.paths);
        final CompletableFuture<NicConnection> established = new CompletableFuture<>();
        final boolean offered = worker.offer((w, now) ->
        {
            final SprayEngine engine = ((SprayWorkerTransport)w.transport()).engine();
            // CID 0: the engine draws a random one in its partition, and the initial PSN (S12.2)
            final SprayConnectionConfig c = new SprayConnectionConfig().cids(0, 0).paths(config.paths)
                .streams(config.streams).mtu(config.mtu).sourcePortBase(sourcePortBase)
                .depths(config.sendQueueDepth, config.receiveQueueDepth, config.receiveQueueDepth)
                .completionQueues(handle.sendCompletionQueue(), handle.receiveCompletionQueue());
            for (int p = 0; p < peerHigh.length; p++)
            {
                if (InterfaceAddress.isMapped(peerHigh[p], peerLow[p]))
                {
                    c.remote(p, (int)peerLow[p], peerMac[p]);
                }
                else
                {
                    c.remoteIpv6(p, peerHigh[p], peerLow[p], peerMac[p]);
                }
            }
            final SprayHandshake.Pending pending;
            try
            {
                // CONNECTs until shortly before the caller stops waiting, so that it learns "no answer" rather than a timeout
                pending = engine.connect(c, now, now + timeout.toNanos() - timeout.toNanos() / 8);
            }
            catch (final IllegalStateException e)
            {
                established.completeExceptionally(new IllegalStateException("cannot connect to " +
                    peerText + " from worker " + w.index() + ": " + e.getMessage()));
                return;
            }
            final Runnable[] poller = new Runnable[1];
            poller[0] = () ->
            {
                if (pending.state() == SprayHandshake.Pending.State.ESTABLISHED)
                {
                    w.removePoller(poller[0]);
                    attachSpray(w, handle, pending.connection());
                    established.complete(handle);
                }
                else if (pending.state() == SprayHandshake.Pending.State.FAILED)
                {
                    w.removePoller(poller[0]);
                    established.completeExceptionally(new IllegalStateException(
                        pending.reason() == RejectReason.NO_ANSWER ? "no answer from " + peerText +
                        " after " + pending.tries() + " CONNECTs: is a spray NIC listening there, are the addresses " +
                        "right, and do both NICs hold the same pre-shared key (if any)?" :
                        "connect to " + peerText + " failed: " + pending.failure()));
                }
            };
            w.addPoller(poller[0]);
        });
        if (!offered)
        {
            throw new IllegalStateException("worker " + worker.index() + " has too many control commands queued: retry");
        }
        return await(established, timeout, "connect to " + peerText);
    }

    /**
     * Waits for the next spray connection a peer opened to this NIC.
     *
     * @param timeout how long to wait.
     * @return the connection, or null when none came in time.
     */
    public NicConnection accept(final Duration timeout)
    {
        requireMode(NicConnection.Kind.SPRAY);
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (true)
        {
            final NicConnection c = accepted.poll();
            if (null != c || System.nanoTime() >= deadline)
            {
                return c;
            }
            sleepBriefly();
        }
    }

    /**
     * Creates a RoCEv2 RC queue pair on a plane, in INIT, allowing remote writes and reads; connect it with
     * {@link NicConnection#connect} once the peer's {@link RocevEndpoint} is known.
     *
     * @param plane the port it sends on.
     * @return the queue pair's connection.
     */
    public NicConnection createQueuePair(final int plane)
    {
        requireMode(NicConnection.Kind.ROCEV2);
        requireOpen();
        if (plane < 0 || plane >= planes())
        {
            throw new IllegalArgumentException("plane " + plane + " is not one of this NIC's 0.." + (planes() - 1));
        }
        final NicWorker worker = nextWorker();
        final int psn;
        synchronized (random)
        {
            psn = random.nextInt(1 << 24);
        }
        final RocevNicConnection handle = new RocevNicConnection(this, worker.index(), plane, psn, config.ringCapacity,
            config.completionQueueCapacity);
        return await(submit(worker, (w, now) ->
        {
            final RcEngine engine = ((RocevWorkerTransport)w.transport()).engine(plane);
            final RcQueuePair qp = engine.createQueuePair(handle.sendCompletionQueue(), handle.receiveCompletionQueue(),
                config.sendQueueDepth, config.receiveQueueDepth);
            qp.toInit(AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
            handle.created(qp);
            w.attach(handle);
            connections.add(handle);
            return handle;
        }), CONTROL_TIMEOUT, "create a queue pair");
    }

    RocevEndpoint rocevEndpoint(final RocevNicConnection c)
    {
        final InterfaceAddress address = config.addresses[c.plane()];
        return null != address && address.isIpv6() ?
            new RocevEndpoint(c.localId, c.localPsn(), 0, config.mtu, address.ipv6High(), address.ipv6Low()) :
            new RocevEndpoint(c.localId, c.localPsn(), config.localIpv4[c.plane()], config.mtu);
    }

    void connectQueuePair(final RocevNicConnection c, final RocevEndpoint remote, final Duration timeout)
    {
        requireOpen();
        final int plane = c.plane();
        final NextHops hops = NextHops.none(planes());
        final long remoteHigh = remote.isIpv6() ? remote.ipv6High() : InterfaceAddress.MAPPED_HIGH;
        final long remoteLow = remote.isIpv6() ? remote.ipv6Low() : InterfaceAddress.mappedLow(remote.ipv4());
        neighbours.nextHop(plane, remoteHigh, remoteLow, hops);
        final long mac = neighbours.resolve(hops, timeout)[plane];
        c.nextHop = hops;
        RcConnectionAttributes rc = RcConnectionAttributes.of(remote.qpNumber(), mac, remote.ipv4(),
            49152 + (c.localId & 0x3FFF), Math.min(config.mtu, remote.mtu()), c.localPsn(), remote.psn())
            .withRetry(config.rocevAckTimeoutNanos, config.rocevRetries);
        if (remote.isIpv6())
        {
            final InterfaceAddress local = config.addresses[plane]; // the next hop above checked it is IPv6
            rc = rc.withIpv6(local.ipv6High(), local.ipv6Low(), remote.ipv6High(), remote.ipv6Low());
        }
        final RcConnectionAttributes attributes = rc;
        await(submit(workers[c.worker()], (w, now) ->
        {
            c.queuePair().toRtr(attributes);
            c.queuePair().toRts();
            return c;
        }), timeout, "connect queue pair 0x" + Integer.toHexString(c.localId));
    }

    DrainReport.ConnectionDrain closeConnection(final NicConnection c, final Duration timeout)
    {
        final NicWorker worker = workers[c.worker()];
        final long deadline = System.nanoTime() + timeout.toNanos();
        DrainReport.ConnectionDrain drain = connectionDrain(worker, c);
        while ((drain.waiting() > 0 || !drain.idle()) && System.nanoTime() < deadline)
        {
            sleepBriefly();
            drain = connectionDrain(worker, c);
        }
        if (c instanceof SprayNicConnection s && null != s.spray())
        {
            // S9.2: CLOSE on the wire once this end's messages are done; the peer answers and forgets it too
            boolean closed = !await(submit(worker, (w, now) ->
                ((SprayWorkerTransport)w.transport()).engine().close(s.spray(), now)), CONTROL_TIMEOUT, "close a connection");
            while (!closed && System.nanoTime() < deadline)
            {
                sleepBriefly();
                closed = await(submit(worker, (w, now) -> s.spray().isClosed()), CONTROL_TIMEOUT, "close a connection");
            }
        }
        await(submit(worker, (w, now) ->
        {
            w.detach(c);
            c.destroy(w.transport());
            return c;
        }), CONTROL_TIMEOUT, "close a connection");
        closeCounters(c);
        connections.remove(c);
        return drain;
    }

    private static void closeCounters(final NicConnection c)
    {
        for (final CounterMirror mirror : c.mirrors)
        {
            mirror.close();
        }
        if (null != c.gauges)
        {
            c.gauges.close();
        }
    }

    private DrainReport.ConnectionDrain connectionDrain(final NicWorker worker, final NicConnection c)
    {
        return await(submit(worker, (w, now) -> describe(c)), CONTROL_TIMEOUT, "check a connection");
    }

    private static DrainReport.ConnectionDrain describe(final NicConnection c)
    {
        return new DrainReport.ConnectionDrain(c.kind().name().toLowerCase() + " 0x" + Integer.toHexString(c.localId) +
            " on worker " + c.worker(), c.postedSends(), c.postedReceives(), c.requests.size(), NicWorker.isIdle(c));
    }

    /**
     * Stops the NIC gracefully: refuses new posts, lets the workers finish what was posted (up to
     * {@code drainTimeout}), stops them, and brings the ports (and DPDK, when the NIC started it) down.
     *
     * @return what was drained and what was still in flight.
     */
    public synchronized DrainReport close(final Duration drainTimeout)
    {
        if (null != closeReport)
        {
            return closeReport;
        }
        closing = true;
        final long start = System.nanoTime();
        final long deadline = start + drainTimeout.toNanos();
        boolean drained = false;
        while (!drained)
        {
            drained = true;
            for (final NicWorker worker : workers)
            {
                final Boolean idle = tryAwait(submit(worker, (w, now) -> w.computeIdle()));
                drained &= Boolean.TRUE.equals(idle);
            }
            if (drained || System.nanoTime() >= deadline)
            {
                break;
            }
            sleepBriefly();
        }
        final long nanos = System.nanoTime() - start;
        if (null != portStatsPublisher)
        {
            try
            {
                portStatsPublisher.join(1000); // it sees closing, publishes no more and frees its counters
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }
        final List<DrainReport.ConnectionDrain> drains = new ArrayList<>();
        for (final AgentRunner runner : runners)
        {
            if (null != runner)
            {
                runner.close();
            }
        }
        if (null != captureMemory)
        {
            CaptureRingLayout.end(captureMemory); // the workers stopped: nothing writes into it any more
            captureMemory = null;
        }
        for (final NicConnection c : connections)
        {
            drains.add(describe(c)); // workers stopped: their state is ours to read
            closeCounters(c);
        }
        for (final CounterMirror mirror : ownMirrors)
        {
            mirror.close();
        }
        for (final AtomicCounter c : ownCounters)
        {
            c.close();
        }
        if (null != owner)
        {
            try
            {
                owner.close();
            }
            catch (final Exception ex)
            {
                throw new IllegalStateException("closing the NIC's ports failed: " + ex.getMessage(), ex);
            }
        }
        arena.close();
        synchronized (controlDomain)
        {
            ownedMemory.values().forEach(Arena::close); // the workers stopped: nothing touches it any more
            ownedMemory.clear();
        }
        closeReport = new DrainReport(drained, nanos, drains);
        return closeReport;
    }

    /** Closes with a 5 s drain. */
    public void close()
    {
        close(Duration.ofSeconds(5));
    }

    private synchronized NicWorker nextWorker()
    {
        final NicWorker worker = workers[nextWorker];
        nextWorker = (nextWorker + 1) % workers.length;
        return worker;
    }

    @SuppressWarnings("unchecked")
    private <T> CompletableFuture<T> submit(final NicWorker worker, final BiFunction<NicWorker, Long, T> action)
    {
        final CompletableFuture<T> result = new CompletableFuture<>();
        final NicWorker.Command command = (w, now) ->
        {
            try
            {
                result.complete(action.apply(w, now));
            }
            catch (final RuntimeException ex)
            {
                result.completeExceptionally(ex);
            }
        };
        final long deadline = System.nanoTime() + CONTROL_TIMEOUT.toNanos();
        while (!worker.offer(command))
        {
            if (System.nanoTime() >= deadline)
            {
                result.completeExceptionally(new IllegalStateException("worker " + worker.index() + " takes no commands"));
                break;
            }
            sleepBriefly();
        }
        return result;
    }

    static <T> T await(final CompletableFuture<T> future, final Duration timeout, final String what)
    {
        try
        {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (final TimeoutException ex)
        {
            throw new IllegalStateException("could not " + what + " within " + timeout.toMillis() +
                " ms: the worker did not answer (is it running?)", ex);
        }
        catch (final ExecutionException ex)
        {
            final Throwable cause = ex.getCause();
            if (cause instanceof RuntimeException runtime)
            {
                throw runtime;
            }
            throw new IllegalStateException("could not " + what + ": " + cause, cause);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while trying to " + what, ex);
        }
    }

    private static <T> T tryAwait(final CompletableFuture<T> future)
    {
        try
        {
            return future.get(CONTROL_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (final Exception ex)
        {
            return null;
        }
    }

    private static void sleepBriefly()
    {
        try
        {
            Thread.sleep(1);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    private void requireMode(final NicConnection.Kind mode)
    {
        if (config.mode != mode)
        {
            throw new IllegalStateException("this NIC runs " + config.mode + ", not " + mode +
                ": start it with mode " + mode + " for this call");
        }
    }

    private void requireOpen()
    {
        if (closing)
        {
            throw new IllegalStateException("the NIC is closing");
        }
    }
}
