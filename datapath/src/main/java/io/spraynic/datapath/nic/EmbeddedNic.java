package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.DrainReport;
import io.spraynic.datapath.api.Nic;
import io.spraynic.datapath.api.Region;
import io.spraynic.datapath.api.RocevEndpoint;
import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.wire.Wire;
import io.spraynic.pmd.InterfaceAddress;
import io.spraynic.pmd.NicConfig;
import org.agrona.concurrent.AgentRunner;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;

/**
 * A NIC for applications in the same JVM, with the verbs-style API of both transports: register memory,
 * open connections (spray: {@link #connect} and {@link #accept}, handshake on the wire; RoCEv2:
 * {@link #createQueuePair} then {@link NicConnection#connect} with the peer's attributes, exchanged out of
 * band), post work requests and poll completions on {@link NicConnection}s.
 * <p>
 * Underneath run {@code workers} run-to-completion poll-mode {@link NicWorker}s, each on its own queue of
 * every port (plane) and its own thread ({@link AgentRunner}, configurable idle strategy, optional CPU
 * pinning) or on a poll thread the caller shares with other agents ({@link EmbeddedNicConfig#pollThread}), each
 * with its own engine and connections. This class is the control path: every action it takes
 * reaches a worker as a command through the worker's queue and is waited for ({@link WorkerCalls}); it shares no
 * mutable state with the workers. A packet that arrives on another worker's queue (whatever the NIC's RSS did) is
 * steered to the owner by its DestQP.
 * <p>
 * It is a facade over the parts that do the work: {@link WorkerFactory} builds the workers, {@link DpdkBringUp}
 * brings the ports up, {@link RegionControl} registers memory, {@link ConnectionControl} opens connections,
 * {@link CaptureControl} runs live captures and {@link NicDrain} closes connections and the NIC.
 */
public final class EmbeddedNic implements Nic, CaptureSource
{
    /** Default time a control action waits for its worker. */
    public static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(10);

    private final EmbeddedNicConfig config;
    private final CountersFile counters;
    private final AutoCloseable owner;
    private final Arena arena = Arena.ofShared();
    private final long[] localMac;
    private final WorkerFactory factory;
    private final NicWorker[] workers;
    private final ConnectionRegistry registry;
    private final RegionControl regions;
    private final ConnectionControl connectionControl;
    private final CaptureControl capture;
    private final NicDrain drain;
    private AgentRunner[] runners = new AgentRunner[0];
    private volatile boolean closing;
    private PortStatsPublisher portStatsPublisher;
    private DrainReport closeReport;

    private EmbeddedNic(final EmbeddedNicConfig config, final PacketPort[][] ports, final CountersFile counters,
        final AutoCloseable owner)
    {
        this.config = config;
        this.counters = counters;
        this.owner = owner;
        MtuFit.fit(config);
        this.localMac = config.localMac.clone();
        final NicNeighbours neighbours = new NicNeighbours(config, localMac, counters);
        this.factory = new WorkerFactory(config, counters, arena, neighbours);
        this.workers = factory.build(ports);
        this.registry = new ConnectionRegistry(config.maxAcceptedConnections,
            factory.counter("connections: accepted over the limit, closed"),
            factory.counter("connections: forgotten after their transport closed them"), config.maxOpenedConnections,
            factory.counter("connections: opened over the limit, refused"));
        registry.onReleased(neighbours::unfollow);
        for (final NicWorker worker : workers)
        {
            worker.closedConnections(registry);
        }
        final WorkerCalls calls = new WorkerCalls(workers);
        this.regions = new RegionControl(calls);
        this.connectionControl = new ConnectionControl(this, config, counters, calls, neighbours, registry);
        this.capture = new CaptureControl(this, calls, factory.taps(), config.planes());
        this.drain = new NicDrain(calls, registry);
        if (config.mode == NicConnection.Kind.SPRAY && config.listen)
        {
            for (final NicWorker worker : workers)
            {
                connectionControl.listen(worker);
            }
        }
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

    /** {@link #start(EmbeddedNicConfig, PacketPort[][], CountersFile)}, closing {@code owner} (the ports) on close. */
    static EmbeddedNic start(
        final EmbeddedNicConfig config, final PacketPort[][] ports, final CountersFile counters, final AutoCloseable owner)
    {
        final EmbeddedNic nic = new EmbeddedNic(config, ports, counters, owner);
        nic.runners = nic.factory.startRunners(nic.workers);
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
        return DpdkBringUp.start(nicConfig, config, counters, wrap);
    }

    void publishPortStats(final PortStatsPublisher publisher)
    {
        portStatsPublisher = publisher;
    }

    /** @return the name of the port of {@code plane} (worker 0's queue, e.g. {@code net_ring0/q0}). */
    public String portName(final int plane)
    {
        return factory.portNames()[plane];
    }

    /**
     * Starts a live capture: every worker copies the frames {@code filter} takes of its queue into its ring in
     * {@code memory} (laid out by {@code layout}, header written), dropping what does not fit, until
     * {@link #stopCapture}. One capture at a time.
     *
     * @throws IllegalStateException when a capture runs already; IllegalArgumentException when the layout or filter
     *                               does not fit this NIC.
     */
    public void startCapture(final MemorySegment memory, final CaptureRingLayout layout, final CaptureFilter filter)
    {
        requireOpen();
        capture.start(memory, layout, filter);
    }

    /**
     * Stops the live capture, if one runs: returns once every worker stopped writing into its memory (which the caller
     * may then free) and marked it ended.
     *
     * @throws MemoryStillNamedException when a worker did not confirm: the capture is over (another may start), and
     *                                   its memory may be freed once {@link MemoryStillNamedException#unnamed()}
     *                                   completes.
     */
    public void stopCapture()
    {
        capture.stop();
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

    /** @return whether {@code plane} has an IPv6 address: its peers are then named by theirs (a connection's family is its plane's). */
    public boolean speaksIpv6(final int plane)
    {
        final InterfaceAddress address = config.addresses[plane];
        return null != address && address.isIpv6();
    }

    /** @return the first (high) 8 bytes of this NIC's IPv6 address on {@code plane}, 0 on an IPv4 plane. */
    public long localIpv6High(final int plane)
    {
        return speaksIpv6(plane) ? config.addresses[plane].ipv6High() : 0;
    }

    /** @return the last (low) 8 bytes of this NIC's IPv6 address on {@code plane}, 0 on an IPv4 plane. */
    public long localIpv6Low(final int plane)
    {
        return speaksIpv6(plane) ? config.addresses[plane].ipv6Low() : 0;
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

    /** @return the workers' capture taps, by worker (tests). */
    CaptureTap[] captureTaps()
    {
        return factory.taps();
    }

    /** @return worker {@code index} (tests). */
    NicWorker worker(final int index)
    {
        return workers[index];
    }

    /**
     * @return the unexpected exceptions the workers caught and survived, by "where class" (tests and reports;
     * the counters file has their totals).
     */
    Map<String, Long> faultCounts()
    {
        final Map<String, Long> counts = new TreeMap<>();
        for (final NicWorker worker : workers)
        {
            worker.faultLog().counts().forEach((reason, n) -> counts.merge(reason, n, Long::sum));
        }
        return counts;
    }

    /** @return the open connections. */
    public List<NicConnection> connections()
    {
        return registry.open();
    }

    /**
     * @return connections peers opened that this NIC closed at once for being over
     *         {@link EmbeddedNicConfig#maxAcceptedConnections}, since start (also the counter "connections: accepted
     *         over the limit, closed").
     */
    public long acceptedOverLimit()
    {
        return registry.acceptedOverLimit();
    }

    /** @return the RoCEv2 engine of a worker's plane; read its counters only once the NIC is closed. */
    public RcEngine rocevEngine(final int worker, final int plane)
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
        return regions.register(segment, access, 0);
    }

    /**
     * Registers memory in a tenant's protection domain on every worker: only connections bound to the same domain
     * ({@link #bindProtectionDomain}) may name it, by lkey in their work requests or by rkey from their peer.
     *
     * @param segment native memory that outlives the registration.
     * @param access  {@link AccessFlags}.
     * @param domain  the tenant (0: the in-process application's default domain).
     * @return the region (its lkey for local work requests, rkey for peers).
     * @throws MemoryStillNamedException when a worker neither confirmed the registration nor its undoing: free the
     *                                   memory only once {@link MemoryStillNamedException#unnamed()} completes.
     */
    public MemoryRegion register(final MemorySegment segment, final int access, final int domain)
    {
        return regions.register(segment, access, domain);
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
        return regions.register(bytes, access);
    }

    /**
     * Deregisters a region on every worker: its keys then fail every check, locally and from peers, and every
     * operation under way that uses it is cut short first (a peer's WRITE into it refused with a NAK remote
     * access error at its next packet, READ responses from it not sent, local work requests naming it completed
     * with LOC_PROT_ERR). Returns once every worker did so: nothing is placed into the memory or read from it
     * afterwards, so the caller may free it.
     *
     * @throws MemoryStillNamedException when a worker did not confirm in time: free the memory only once
     *                                   {@link MemoryStillNamedException#unnamed()} completes.
     */
    public void deregister(final Region registered)
    {
        regions.deregister(registered);
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
        regions.bind(connection, domain);
    }

    /**
     * Makes the connection's worker take its work requests from {@code requests} (a client process's request ring,
     * read in place) instead of its in-process ring, from the next loop on; nothing may be posted in process on it.
     *
     * @param connection a connection of this NIC, before anything is posted on it.
     */
    public void takeRequestsFrom(final NicConnection connection, final WorkRequestSource requests)
    {
        WorkerCalls.call(workers[connection.worker()], (w, now) ->
        {
            connection.requests = requests;
            return connection;
        }, CONTROL_TIMEOUT, "attach a connection's request ring");
    }

    /**
     * @return the tenants' protection domains held now, summed over the workers (each holds its own copy of a domain it
     * was asked to use): 0 once every tenant (IPC client) went. Control path: asks each worker.
     */
    public int tenantDomains()
    {
        int held = 0;
        for (final NicWorker worker : workers)
        {
            held += WorkerCalls.call(worker, (w, now) -> w.tenantDomainCount(), CONTROL_TIMEOUT, "count domains");
        }
        return held;
    }

    /** Forgets a tenant's protection domain on every worker, once its regions are deregistered. */
    public void releaseProtectionDomain(final int domain)
    {
        regions.release(domain);
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
        final long[][] peer = ConnectionControl.addresses(peerIpv4);
        return connect(peer[0], peer[1], timeout);
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
        final long[][] peer = ConnectionControl.addresses(peers);
        return connect(peer[0], peer[1], timeout);
    }

    /** {@link #connect(InetAddress[], Duration)} with each address as 128 bits (IPv4-mapped for IPv4). */
    NicConnection connect(final long[] peerHigh, final long[] peerLow, final Duration timeout)
    {
        requireMode(NicConnection.Kind.SPRAY);
        requireOpen();
        return connectionControl.connect(peerHigh, peerLow, timeout);
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
        return connectionControl.accept(timeout);
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
        return connectionControl.createQueuePair(plane);
    }

    RocevEndpoint rocevEndpoint(final RocevNicConnection c)
    {
        return connectionControl.rocevEndpoint(c);
    }

    void connectQueuePair(final RocevNicConnection c, final RocevEndpoint remote, final Duration timeout)
    {
        requireOpen();
        connectionControl.connectQueuePair(c, remote, timeout);
    }

    DrainReport.ConnectionDrain closeConnection(final NicConnection c, final Duration timeout)
    {
        return drain.closeConnection(c, timeout);
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
        final boolean drained = drain.awaitIdle(start + drainTimeout.toNanos());
        final long nanos = System.nanoTime() - start;
        if (null != portStatsPublisher)
        {
            portStatsPublisher.join(); // it sees closing, publishes no more and frees its counters
        }
        for (final AgentRunner runner : runners)
        {
            if (null != runner)
            {
                runner.close();
            }
        }
        if (null != config.pollThread)
        {
            SharedPollThread.leave(config.pollThread, factory.pollThreadMembers(), CONTROL_TIMEOUT);
        }
        capture.endAfterWorkersStopped();
        final List<DrainReport.ConnectionDrain> drains = drain.releaseAll();
        factory.closeCounters();
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
        regions.freeOwnedMemory(); // the workers stopped: nothing touches it any more
        closeReport = new DrainReport(drained, nanos, drains);
        return closeReport;
    }

    /** Closes with a 5 s drain. */
    public void close()
    {
        close(Duration.ofSeconds(5));
    }

    private void requireMode(final NicConnection.Kind mode)
    {
        if (config.mode != mode)
        {
            throw new IllegalStateException("this NIC runs " + config.mode + ", not " + mode +
                ": start it with mode " + mode + " for this call");
        }
    }

    void requireOpen()
    {
        if (closing)
        {
            throw new IllegalStateException("the NIC is closing");
        }
    }
}
