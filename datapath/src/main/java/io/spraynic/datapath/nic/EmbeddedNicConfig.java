package io.spraynic.datapath.nic;

import io.spraynic.datapath.neighbour.NeighbourConfig;
import io.spraynic.datapath.transport.rocev2.DcqcnConfig;
import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;
import io.spraynic.datapath.transport.spray.SprayConfig;
import io.spraynic.datapath.transport.spray.SprayHandshake;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.pmd.InterfaceAddress;
import io.spraynic.pmd.MempoolConfig;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.DynamicCompositeAgent;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Supplier;

/**
 * How an {@link EmbeddedNic} runs: its transport, workers, addresses per plane, connection defaults and
 * queue sizes. A mutable builder read once by {@link EmbeddedNic#start} (control path); every setter checks
 * its value and names the setting in its error.
 */
public final class EmbeddedNicConfig
{
    NicConnection.Kind mode = NicConnection.Kind.SPRAY;
    int workers = 1;
    int[] localIpv4 = new int[1];
    long[] localMac = new long[1];
    InterfaceAddress[] addresses = new InterfaceAddress[1];
    /**
     * Whether the ports carry Ethernet to neighbours (DPDK ports) or not (kernel UDP sockets, whose kernel routes
     * and resolves): without a link layer the NIC neither answers nor sends ARP, and a next hop's MAC is a
     * placeholder the port ignores.
     */
    boolean linkLayer = true;
    NeighbourConfig neighbourConfig = NeighbourConfig.defaults();
    final List<long[]> staticNeighbours = new ArrayList<>();
    Supplier<SprayConfig> sprayConfig = SprayConfig::new;
    boolean listen = true;
    int maxAcceptedConnections = DEFAULT_MAX_ACCEPTED_CONNECTIONS;
    int maxOpenedConnections = DEFAULT_MAX_OPENED_CONNECTIONS;
    int busyConnections = DEFAULT_BUSY_CONNECTIONS;
    int paths = 8;
    int streams = 4;
    int mtu = DEFAULT_MTU;
    boolean mtuChosen;
    SprayHandshake.PeerResolver peerResolver = SAME_ADDRESS_ON_EVERY_PLANE;
    int ringCapacity = 1024;
    int completionQueueCapacity = 4096;
    int sendQueueDepth = 1024;
    int receiveQueueDepth = 1024;
    int burst = 32;
    int maxFrameLength = MempoolConfig.DEFAULT_MAX_FRAME_LENGTH; // a default mbuf less its headroom
    int inboxBytes = 1 << 20;
    Supplier<IdleStrategy> idleStrategy = BackoffIdleStrategy::new;
    int[] cpus = new int[0];
    DynamicCompositeAgent pollThread; // null: a thread of its own per worker
    NanoClock clock = new SystemNanoClock();
    long rocevAckTimeoutNanos = DEFAULT_ROCEV2_ACK_TIMEOUT_NANOS;
    int rocevRetries = 7;
    long rocevLineRateBitsPerSecond = DcqcnConfig.DEFAULT_LINE_RATE;
    DcqcnConfig rocevDcqcn; // null: derived from the line rate at start
    long queuesIdleNanos = DEFAULT_QUEUES_IDLE_NANOS;

    /**
     * Connections peers opened that the NIC holds at once (accepted, not yet closed), over every worker, unless
     * {@link #maxAcceptedConnections} sets it: beyond it a new one is closed at once and counted.
     */
    public static final int DEFAULT_MAX_ACCEPTED_CONNECTIONS = 1024;

    /**
     * Connections this NIC opened ({@link EmbeddedNic#connect}) that it holds at once, over every worker, unless
     * {@link #maxOpenedConnections} sets it: beyond it {@code connect} is refused, naming the limit, and counted.
     */
    public static final int DEFAULT_MAX_OPENED_CONNECTIONS = 1024;

    /**
     * Connections of one worker that may have traffic at once unless {@link #busyConnections} sets it: each borrows a
     * set of tables from its engine's pool (hundreds of KB at the default queue depths), so this, not the connection
     * count, bounds that memory; 64 as many as one engine held before it was sized from the limits above.
     */
    public static final int DEFAULT_BUSY_CONNECTIONS = 64;

    /**
     * The path MTU of connections unless {@link #connections} chooses one: 4096 (PROTOCOL.md S11), lowered at
     * start to the largest that the ports carry (their MTU, buffers, af_packet ring frames), with a notice.
     */
    public static final int DEFAULT_MTU = 4096;

    /**
     * The IB local ACK timeout exponent a RoCEv2 QP gets unless told otherwise: 14, 4.096 us x 2^14 = 67 ms, what
     * rdma_cm applications commonly set. With 7 retries a QP fails after about 0.5 s without an ACK. 20 ms (160 ms
     * in all) ended fresh JVMs' first WRITEs with RETRY_EXC_ERR on a loaded 2-core machine: while the peer's poll
     * thread still waits for a core (JIT, class loading, GC), a lossless link looks dead.
     */
    public static final int DEFAULT_ROCEV2_ACK_TIMEOUT_EXPONENT = 14;
    /** {@link #DEFAULT_ROCEV2_ACK_TIMEOUT_EXPONENT} in nanoseconds. */
    public static final long DEFAULT_ROCEV2_ACK_TIMEOUT_NANOS =
        RcConnectionAttributes.ackTimeoutNanos(DEFAULT_ROCEV2_ACK_TIMEOUT_EXPONENT);

    /**
     * How long a connection's request ring and completion queues stay empty, with nothing posted or completed, before
     * they give their slots back unless {@link #queuesIdle} sets it: 100 ms, also the hysteresis, as one that fills
     * again grows again by doubling, so it allocates at most log2(capacity / 8) + 1 times per such period.
     */
    public static final long DEFAULT_QUEUES_IDLE_NANOS = 100_000_000L;

    /** For one plane, or peers that use one address on every plane. */
    public static final SprayHandshake.PeerResolver SAME_ADDRESS_ON_EVERY_PLANE = new SprayHandshake.PeerResolver()
    {
        public int ipv4(final int plane, final int plane0Ipv4)
        {
            return plane0Ipv4;
        }

        public long mac(final int plane, final int plane0Ipv4, final long plane0Mac)
        {
            return plane0Mac;
        }
    };

    /**
     * Spray timers for threads that share cores (laptops, CI, the demo): a poll thread may wait milliseconds
     * for a core, so RTOs, the first RTT guess, probes and CONNECT retries start from milliseconds instead of
     * the data-centre defaults of PROTOCOL.md S11, which would fire spuriously; and a connection whose paths
     * all stopped answering (its peer's threads starved) is given 10 s, not 1 s, before it fails. The timer
     * granularity (S6.8's slack) is a few scheduling quanta, 5 ms: an RTO stays that far above the smoothed RTT,
     * and a timed-out path only moves packets overdue by that much (S7.4.1), so a descheduled thread's late
     * ACKs are not taken for losses; a timeout found spurious widens that path's RTO by a learnt late margin, up
     * to 2 s (S6.8.1: descheduling here lasts up to hundreds of milliseconds), which is left out while a sibling
     * path shows the path silent alone, so a dead link is still found after three plain RTOs. The pacer's bucket holds up to 1 ms of the rate (S8.4; 64 KiB at most),
     * so a thread that waited for its core may send what it owes in one burst; and a sender counts as active
     * (S8.3), and starts afresh with a probe and its start budget (S8.3.1), on a 10 ms scale, not 20 us, so that
     * a descheduled application thread does not make every message a new start that waits a round trip. An idle
     * connection without tables is ticked once a millisecond, not on every loop, so that thousands of them leave the
     * worker to those with traffic (issue 13).
     *
     * @return a fresh configuration with those timers.
     */
    public static SprayConfig sharedCoreSprayConfig()
    {
        return new SprayConfig().rto(5_000_000L, 200_000_000L).initialRttNanos(1_000_000L).probeMinNanos(2_000_000L)
            .connectBackoffNanos(10_000_000L).connectionTimeoutNanos(10_000_000_000L).rtoSlackNanos(5_000_000L)
            .lateMarginMaxNanos(2_000_000_000L).burstNanos(1_000_000L).activityWindowNanos(10_000_000L)
            .idleTickNanos(1_000_000L);
    }

    /** @param mode the transport: SPRAY or ROCEV2. @return this. */
    public EmbeddedNicConfig mode(final NicConnection.Kind mode)
    {
        this.mode = mode;
        return this;
    }

    /** @param workers poll-mode workers, each on its own queue of every port (1..64). @return this. */
    public EmbeddedNicConfig workers(final int workers)
    {
        require(workers >= 1 && workers <= 64, "workers", workers, "1..64");
        this.workers = workers;
        return this;
    }

    /** @param planes ports, one per plane (1..64); addresses default to 0. @return this. */
    public EmbeddedNicConfig planes(final int planes)
    {
        require(planes >= 1 && planes <= 64, "planes", planes, "1..64");
        localIpv4 = Arrays.copyOf(localIpv4, planes);
        localMac = Arrays.copyOf(localMac, planes);
        addresses = Arrays.copyOf(addresses, planes);
        return this;
    }

    /** @param plane a plane. @param ipv4 this NIC's address on it. @param mac its MAC (0: the port's own). @return this. */
    public EmbeddedNicConfig local(final int plane, final int ipv4, final long mac)
    {
        require(plane >= 0 && plane < localIpv4.length, "plane", plane, "0.." + (localIpv4.length - 1) + " (set planes first)");
        localIpv4[plane] = ipv4;
        localMac[plane] = mac;
        addresses[plane] = 0 == ipv4 ? null : new InterfaceAddress(ipv4, 0, 0);
        return this;
    }

    /**
     * @param plane   a plane.
     * @param address this NIC's address on it with its prefix and gateway ({@code --ip 10.0.1.10/24 --gateway 10.0.1.1}
     *                or {@code --ip fd00:1::10/64 --gateway fd00:1::1}).
     * @param mac     its MAC (0: the port's own).
     * @return this.
     */
    public EmbeddedNicConfig local(final int plane, final InterfaceAddress address, final long mac)
    {
        local(plane, address.ipv4(), mac);
        addresses[plane] = address;
        return this;
    }

    /** @param config the neighbour cache's size, timers and reply rate. @return this. */
    public EmbeddedNicConfig neighbours(final NeighbourConfig config)
    {
        this.neighbourConfig = java.util.Objects.requireNonNull(config, "neighbour config");
        return this;
    }

    /**
     * A neighbour that is never asked for (as {@code ip neigh add ... permanent}): for an emulated fabric that
     * carries no ARP. Peers are still named by address only; this is the NIC's own table.
     *
     * @return this.
     */
    public EmbeddedNicConfig staticNeighbour(final int plane, final int ipv4, final long mac)
    {
        require(plane >= 0 && plane < localIpv4.length, "plane", plane, "0.." + (localIpv4.length - 1) + " (set planes first)");
        staticNeighbours.add(new long[]{plane, 0, io.spraynic.pmd.InterfaceAddress.mappedLow(ipv4), mac});
        return this;
    }

    /** {@link #staticNeighbour(int, int, long)} for an IPv6 neighbour, {@code high:low}. @return this. */
    public EmbeddedNicConfig staticNeighbour(final int plane, final long high, final long low, final long mac)
    {
        require(plane >= 0 && plane < localIpv4.length, "plane", plane, "0.." + (localIpv4.length - 1) + " (set planes first)");
        staticNeighbours.add(new long[]{plane, high, low, mac});
        return this;
    }

    /**
     * @param supplier a fresh spray protocol configuration per worker (timers, windows, capacity); its connection table
     *                 and table pool are sized by this NIC ({@link #engineConnections}, {@link #busyConnections}).
     * @return this.
     */
    public EmbeddedNicConfig sprayConfig(final Supplier<SprayConfig> supplier)
    {
        this.sprayConfig = supplier;
        return this;
    }

    /** @param listen whether spray CONNECTs from peers are accepted. @return this. */
    public EmbeddedNicConfig listen(final boolean listen)
    {
        this.listen = listen;
        return this;
    }

    /**
     * @param max connections peers opened that the NIC holds at once, accepted and not yet closed (1..2^20): a hostile
     *            or merely large peer population cannot grow the NIC's state beyond it; each one over is closed at once
     *            and counted ("connections: accepted over the limit, closed").
     * @return this.
     */
    public EmbeddedNicConfig maxAcceptedConnections(final int max)
    {
        require(max >= 1 && max <= 1 << 20, "max accepted connections", max, "1..2^20");
        this.maxAcceptedConnections = max;
        return this;
    }

    /**
     * @param max connections this NIC opens ({@link EmbeddedNic#connect}) that it holds at once, opened and not yet
     *            closed, over every worker (1..2^20); one more is refused with an exception that names this limit, and
     *            counted ("connections: opened over the limit, refused").
     * @return this.
     */
    public EmbeddedNicConfig maxOpenedConnections(final int max)
    {
        require(max >= 1 && max <= 1 << 20, "max opened connections", max, "1..2^20");
        this.maxOpenedConnections = max;
        return this;
    }

    /**
     * @param max connections of one worker that may have traffic at once (1..2^20): each borrows a set of tables from
     *            its engine's pool while it has traffic (benchmarks/RESULTS.md section 19); one more waits (its posts
     *            are answered QUEUE_FULL, its packets dropped and recovered by the sender as losses) and is counted
     *            ("worker N: spray storage borrows refused at the limit"). It bounds the pool's memory, which the connection count does not.
     * @return this.
     */
    public EmbeddedNicConfig busyConnections(final int max)
    {
        require(max >= 1 && max <= 1 << 20, "busy connections", max, "1..2^20");
        this.busyConnections = max;
        return this;
    }

    /**
     * @return how many connections each spray engine holds: every connection peers open may land on one worker (their
     *         CONNECT's queue decides), and so may every one the NIC opens, so each engine is sized for both limits;
     *         the NIC's limits, not an engine's table, refuse the one over.
     */
    public int engineConnections()
    {
        return (int)Math.min(SprayConfig.MAX_CONNECTIONS_LIMIT, (long)maxAcceptedConnections + maxOpenedConnections);
    }

    /** @return one worker's spray configuration: the supplier's, its connection table and table pool sized from the limits. */
    SprayConfig workerSprayConfig()
    {
        return sprayConfig.get().maxConnections(engineConnections()).connectionStorageLimit(busyConnections);
    }

    /**
     * @param paths   spray paths per connection (1..64).
     * @param streams spray streams per connection (1..65536).
     * @param mtu     256, 512, 1024, 2048 or 4096; a NIC whose ports cannot carry it refuses to start.
     * @return this.
     */
    public EmbeddedNicConfig connections(final int paths, final int streams, final int mtu)
    {
        require(paths >= 1 && paths <= 64, "paths", paths, "1..64");
        require(streams >= 1 && streams <= 65536, "streams", streams, "1..65536");
        require(PathMtu.isValid(mtu), "mtu", mtu,
            "256, 512, 1024, 2048 or 4096");
        this.paths = paths;
        this.streams = streams;
        this.mtu = mtu;
        this.mtuChosen = true;
        return this;
    }

    /**
     * @param paths   spray paths per connection (1..64).
     * @param streams spray streams per connection (1..65536).
     * @return this, the path MTU left at {@link #DEFAULT_MTU}, lowered at start to what the ports carry.
     */
    public EmbeddedNicConfig connections(final int paths, final int streams)
    {
        final int mtu = this.mtu;
        final boolean chosen = mtuChosen;
        connections(paths, streams, DEFAULT_MTU);
        this.mtu = mtu;
        this.mtuChosen = chosen;
        return this;
    }

    /** @param resolver an accepted peer's addresses on planes other than the CONNECT's. @return this. */
    public EmbeddedNicConfig peerResolver(final SprayHandshake.PeerResolver resolver)
    {
        this.peerResolver = resolver;
        return this;
    }

    /**
     * The most a connection may have waiting; its ring and completion queues are made as they fill, up to these
     * (none while it is idle: {@link WorkRequestRing#growing}, {@link CompletionQueue#growing}).
     *
     * @param ring    work requests waiting per connection between the application and its worker (default 1,024).
     * @param cq      completions per completion queue (default 4,096).
     * @param send    the transport's send queue depth per connection (default 1,024).
     * @param receive the transport's receive queue depth per connection (default 1,024).
     * @return this.
     */
    public EmbeddedNicConfig queues(final int ring, final int cq, final int send, final int receive)
    {
        require(ring >= 1 && ring <= WorkRequestRing.MAX_CAPACITY, "ring", ring, "1..2^20");
        require(cq >= 1 && cq <= CompletionQueue.MAX_CAPACITY, "cq", cq, "1..2^24");
        require(send >= 1 && send <= 1 << 16, "send queue depth", send, "1..65536");
        require(receive >= 1 && receive <= 1 << 16, "receive queue depth", receive, "1..65536");
        this.ringCapacity = ring;
        this.completionQueueCapacity = cq;
        this.sendQueueDepth = send;
        this.receiveQueueDepth = receive;
        return this;
    }

    /**
     * How long a connection's ring and completion queues stay empty before they give their slots back (default
     * {@link #DEFAULT_QUEUES_IDLE_NANOS}): shorter gives memory back sooner after a burst; longer, or
     * {@link Long#MAX_VALUE} (never), spares an application whose bursts come further apart the slots' making again
     * (a few allocations per queue on the worker and the posting thread, each time).
     *
     * @param nanos 1 ms or more.
     * @return this.
     */
    public EmbeddedNicConfig queuesIdle(final long nanos)
    {
        require(nanos >= 1_000_000L, "queues idle ns", nanos, "1 ms or more");
        this.queuesIdleNanos = nanos;
        return this;
    }

    /** @param burst frames per RX/TX burst (1..512). @param maxFrameLength bytes a TX buffer holds. @return this. */
    public EmbeddedNicConfig bursts(final int burst, final int maxFrameLength)
    {
        require(burst >= 1 && burst <= 512, "burst", burst, "1..512");
        require(maxFrameLength >= 128, "max frame length", maxFrameLength, ">= 128");
        this.burst = burst;
        this.maxFrameLength = maxFrameLength;
        return this;
    }

    /** @param supplier one idle strategy per worker (busy-spin for latency, backoff to share cores). @return this. */
    public EmbeddedNicConfig idleStrategy(final Supplier<IdleStrategy> supplier)
    {
        this.idleStrategy = supplier;
        return this;
    }

    /** @param cpus CPU per worker, in worker order (empty: not pinned). @return this. */
    public EmbeddedNicConfig cpus(final int... cpus)
    {
        for (final int cpu : cpus)
        {
            require(cpu >= 0 && cpu < 1024, "cpu", cpu, "0..1023");
        }
        this.cpus = cpus.clone();
        return this;
    }

    /**
     * Runs the workers as agents of {@code pollThread}, a duty cycle the caller runs on one thread with other agents
     * (another NIC's workers, a fabric emulator), instead of on a thread each: for a host with fewer cores than busy
     * threads, where a poll thread waiting for a core looks to its peer like loss. Its runner's idle strategy and CPU
     * apply, not {@link #idleStrategy} and {@link #cpus}. {@link EmbeddedNic#start} adds the workers (the poll thread
     * must be running), {@link EmbeddedNic#close} takes them out: close the NIC before the poll thread's runner.
     *
     * @param pollThread the shared duty cycle, or null for a thread per worker (the default).
     * @return this.
     */
    public EmbeddedNicConfig pollThread(final DynamicCompositeAgent pollThread)
    {
        this.pollThread = pollThread;
        return this;
    }

    /** @param clock the time the engines see. @return this. */
    public EmbeddedNicConfig clock(final NanoClock clock)
    {
        this.clock = clock;
        return this;
    }

    /**
     * @param ackTimeoutNanos a RoCEv2 queue pair's retransmission timeout (real time on shared cores needs tens of
     *                        ms; default {@link #DEFAULT_ROCEV2_ACK_TIMEOUT_NANOS}).
     * @param retries         retries without progress before the QP fails (0..7; default 7).
     * @return this.
     */
    public EmbeddedNicConfig rocevRetry(final long ackTimeoutNanos, final int retries)
    {
        require(ackTimeoutNanos > 0, "ack timeout", ackTimeoutNanos, "> 0 ns");
        require(retries >= 0 && retries <= 7, "retries", retries, "0..7");
        this.rocevAckTimeoutNanos = ackTimeoutNanos;
        this.rocevRetries = retries;
        return this;
    }

    /**
     * @param bitsPerSecond the line rate of each plane's port, at which a RoCEv2 queue pair starts and which DCQCN
     *                      recovers to (default {@link DcqcnConfig#DEFAULT_LINE_RATE}); a fabric whose links are
     *                      slower gives its NICs their link's rate, as spray's {@code capacityMbps}. DCQCN's rates
     *                      are derived from it ({@link DcqcnConfig#forLineRate}) unless {@link #rocevDcqcn} sets them.
     * @return this.
     */
    public EmbeddedNicConfig rocevLineRate(final long bitsPerSecond)
    {
        require(bitsPerSecond >= 1_000_000L, "RoCEv2 line rate", bitsPerSecond, ">= 1 Mb/s");
        this.rocevLineRateBitsPerSecond = bitsPerSecond;
        this.rocevDcqcn = null;
        return this;
    }

    /**
     * @param dcqcn a RoCEv2 queue pair's congestion control, as the operator sets it (its line rate included); null
     *              (the default): {@link DcqcnConfig#forLineRate} of {@link #rocevLineRate}.
     * @return this.
     */
    public EmbeddedNicConfig rocevDcqcn(final DcqcnConfig dcqcn)
    {
        this.rocevDcqcn = dcqcn;
        if (null != dcqcn)
        {
            this.rocevLineRateBitsPerSecond = dcqcn.lineRateBitsPerSecond();
        }
        return this;
    }

    /** @return the DCQCN parameters a RoCEv2 queue pair of this NIC runs with. */
    public DcqcnConfig rocevDcqcn()
    {
        return null != rocevDcqcn ? rocevDcqcn : DcqcnConfig.forLineRate(rocevLineRateBitsPerSecond);
    }

    /** @return planes. */
    public int planes()
    {
        return localIpv4.length;
    }

    /** @return workers. */
    public int workers()
    {
        return workers;
    }

    /** @return the transport. */
    public NicConnection.Kind mode()
    {
        return mode;
    }

    private static void require(final boolean ok, final String key, final long value, final String allowed)
    {
        if (!ok)
        {
            throw new IllegalArgumentException("embedded NIC setting '" + key + "' = " + value + " is out of range: use " + allowed);
        }
    }
}
