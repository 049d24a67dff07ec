package io.spraynic.apps.demo;

import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.fabric.DataDropTap;
import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricClock;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.FabricPort;
import io.spraynic.datapath.fabric.Link;
import io.spraynic.datapath.fabric.RealTimeFabricAgent;
import io.spraynic.datapath.fabric.Topology;
import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.nic.SprayNicConnection;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.telemetry.CountersFileDescriptor;
import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.transport.rocev2.RcCounters;
import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.transport.spray.SprayCounters;
import io.spraynic.datapath.transport.spray.SprayHandshake;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.DynamicCompositeAgent;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * Two embedded NICs in one process running the spray transport (or RoCEv2) over DPDK {@code net_ring}
 * ports, joined through the fabric emulator in real time: host h's NIC port on plane p is one side of a
 * crossed ring pair whose other side the {@link RealTimeFabricAgent} drives. Host 0 RDMA-WRITEs a buffer
 * into host 1's registered memory on several streams; every byte is checked at the end. Threads ({@link Threads}):
 * each NIC's poll-mode worker and the fabric's on a thread each, or all three on one shared poll thread where the
 * host has fewer cores than that; and the calling thread as the application, which posts through the NIC's work
 * request rings and polls completion queues.
 */
public final class FabricDemo
{
    /**
     * @param planes    fabric planes = NIC ports per host.
     * @param mode      the transport.
     * @param paths     spray paths per connection (RoCEv2: one per plane).
     * @param lossPct   random loss on every fabric link, percent.
     * @param bytes     bytes to write.
     * @param streams   streams the messages are spread over.
     * @param blackhole a plane to blackhole during the transfer, or null.
     * @param linkBitsPerSecond the rate of every link of the fabric, host links included: each NIC's line rate per
     *                  plane, for both transports (spray's capacity, RoCEv2's DCQCN line rate).
     * @param threads   how the NICs and the fabric are polled (default {@link Threads#forCores} of this host's).
     */
    public record Settings(
        Mode mode, int planes, int paths, double lossPct, long bytes, int messageBytes, int streams, Duration timeout,
        Blackhole blackhole, long linkBitsPerSecond, Threads threads)
    {
        public Settings
        {
            Objects.requireNonNull(threads, "threads");
        }

        public Settings(
            final Mode mode, final int planes, final int paths, final double lossPct, final long bytes, final int messageBytes,
            final int streams, final Duration timeout)
        {
            this(mode, planes, paths, lossPct, bytes, messageBytes, streams, timeout, null);
        }

        /** Data-centre links (100 Gb/s, {@link FabricConfig#DEFAULT}). */
        public Settings(
            final Mode mode, final int planes, final int paths, final double lossPct, final long bytes, final int messageBytes,
            final int streams, final Duration timeout, final Blackhole blackhole)
        {
            this(mode, planes, paths, lossPct, bytes, messageBytes, streams, timeout, blackhole,
                FabricConfig.DEFAULT.hostLink().rateBitsPerSecond(), Threads.forCores(Runtime.getRuntime().availableProcessors()));
        }

        /** @return these settings with every link at {@code bitsPerSecond}. */
        public Settings withLinkRate(final long bitsPerSecond)
        {
            return new Settings(mode, planes, paths, lossPct, bytes, messageBytes, streams, timeout, blackhole,
                bitsPerSecond, threads);
        }

        /** @return these settings with the NICs and the fabric polled as {@code threads} says. */
        public Settings withThreads(final Threads threads)
        {
            return new Settings(mode, planes, paths, lossPct, bytes, messageBytes, streams, timeout, blackhole,
                linkBitsPerSecond, threads);
        }

        /** @return the fabric: {@link FabricConfig#DEFAULT} with every link at {@link #linkBitsPerSecond}. */
        FabricConfig fabricConfig()
        {
            final FabricConfig base = FabricConfig.DEFAULT;
            return new FabricConfig(base.hostLink().withRate(linkBitsPerSecond),
                base.fabricLink().withRate(linkBitsPerSecond), base.frameSlots(), base.slotBytes(), base.seed());
        }
    }

    /**
     * Every link of {@code plane}, host links included, silently drops everything from {@code afterNanos}
     * after the first post on (no link-down signal): the fabric's thread makes the change, through
     * {@link RealTimeFabricAgent#submit}.
     */
    public record Blackhole(int plane, long afterNanos)
    {
    }

    /**
     * How the two NICs' workers and the fabric emulator are polled; the same for both transports. The application
     * (this thread) posts and polls completions on its own thread either way, parking when it has nothing to do.
     */
    public enum Threads
    {
        /**
         * One poll thread runs both NICs' workers and the fabric as one duty cycle (each one's {@code doWork} in turn,
         * one idle strategy that backs off only when none of them did work): on a host with fewer cores than busy
         * threads, a NIC whose thread waits for a core looks to its peer like a lossy or dead path.
         */
        SHARED,
        /** A poll thread each for the two NICs' workers and the fabric. */
        DEDICATED;

        /** Busy threads of {@link #DEDICATED}: two NIC workers, the fabric and the application. */
        public static final int DEDICATED_BUSY_THREADS = 4;

        /** @return {@link #SHARED} when {@code cores} are fewer than {@link #DEDICATED}'s busy threads. */
        public static Threads forCores(final int cores)
        {
            return cores < DEDICATED_BUSY_THREADS ? SHARED : DEDICATED;
        }

        /** @return the name on the command line and in summaries. */
        public String label()
        {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Which transport carries the transfer. */
    public enum Mode
    {
        /** One spray connection, {@code paths} paths over the planes, {@code streams} streams. */
        SPRAY,
        /** RoCEv2 RC, one queue pair per plane (one path each), messages striped over them. */
        ROCEV2
    }

    public record Progress(long bytesDone, long bytesTotal, long elapsedNanos)
    {
    }

    /**
     * @param lost  data packets the fabric dropped.
     * @param droppedAtBridge frames (any kind) the real-time bridge dropped because a NIC's receive ring was full.
     * @param firstFailure the first write that completed with an error, or null.
     * @param paths packets each path carried (host 0's data direction; RoCEv2: each plane's QP).
     * @param completedPerBin bytes of the WRITEs that completed in each {@link #TIMELINE_BIN_NANOS} after the first
     *                        post, to the end of the run.
     * @param blackholedAtNanos when the blackhole was asked for, from the first post; -1 when none was.
     * @param cpuNanos  CPU time of the whole process over {@code nanos} (poll threads, application, JIT, GC; -1 where
     *                  the JVM does not tell): with {@code nanos}, how many cores the transfer kept busy.
     */
    public record Result(long bytes, long bytesCompleted, long nanos, boolean verified, long messages, long lost,
        long retransmitted, long ecnMarks, long[] paths, long moved, long droppedAtBridge, String firstFailure,
        long[] completedPerBin, long blackholedAtNanos, long cpuNanos)
    {
        /** @return cores busy on average over the transfer (CPU time ÷ wall time), -1 when unknown. */
        public double coresBusy()
        {
            return cpuNanos < 0 || nanos == 0 ? -1 : (double)cpuNanos / nanos;
        }

        public double seconds()
        {
            return nanos / 1e9;
        }

        public double goodputGbps()
        {
            return nanos == 0 ? 0 : bytesCompleted * 8.0 / nanos;
        }
    }

    /** The width of {@link Result#completedPerBin}'s bins. */
    public static final long TIMELINE_BIN_NANOS = 10_000_000L;

    /** The copies of the transfer's size a run holds at once (source and target), off the heap. */
    public static final int COPIES_OF_SIZE = 2;
    /** The path MTU of both transports: PROTOCOL.md S11's 4096, whose frames fit the default mbufs and fabric slots. */
    static final int MTU = 4096;
    /** Ring slots per port and direction: deep enough that the fabric's bridge rarely finds a ring full. */
    static final int RING_SLOTS = 1024;
    /**
     * RoCEv2's ACK timeout here. IB's timeout does not back off, so on shared cores, where a poll thread can
     * wait tens of milliseconds for a core, a data-centre value exhausts the 7 retries while nothing is lost;
     * tail losses cost RoCEv2 this much each (spray's RTO backs off from 5 ms).
     */
    static final long ROCEV2_ACK_TIMEOUT_NANOS = 50_000_000L;
    static final int BURST = 32;
    private static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

    private FabricDemo()
    {
    }

    /**
     * The EAL and ports: no hugepages (the demo's {@code --hugepages} may switch them on), one crossed ring pair
     * per host and plane.
     */
    public static NicConfig config(final int planes, final String filePrefix)
    {
        final List<PortConfig> ports = new ArrayList<>();
        for (int h = 0; h < 2; h++)
        {
            for (int p = 0; p < planes; p++)
            {
                ports.add(PortConfig.ringPair(nicPort(h, p), fabricPort(h, p)).withDescriptors(RING_SLOTS, RING_SLOTS));
                ports.add(PortConfig.ringPair(fabricPort(h, p), nicPort(h, p)).withDescriptors(RING_SLOTS, RING_SLOTS));
            }
        }
        return NicConfig.of(EalConfig.DEFAULT.withFilePrefix(filePrefix).withLogLevels(List.of("lib.eal:warning")),
            MempoolConfig.DEFAULT.withMbufs(65535), ports);
    }

    // on the fabric's thread
    private static void blackholePlane(final Fabric fabric, final int plane)
    {
        for (final Link link : fabric.links())
        {
            if (link.plane() == plane)
            {
                link.blackhole(true);
            }
        }
    }

    static String nicPort(final int host, final int plane)
    {
        return "h" + host + "p" + plane;
    }

    static String fabricPort(final int host, final int plane)
    {
        return "f" + host + "p" + plane;
    }

    /**
     * Runs one transfer: two {@link EmbeddedNic}s (one worker each, one DPDK port per plane) joined by the
     * fabric emulator in real time; this thread is the application, posting RDMA WRITEs through the NIC's
     * work request rings and polling completions, as any application of the embedded NIC does.
     *
     * @param wrapNicPort applied to each NIC port (not the fabric's side), e.g. a packet capture.
     */
    public static Result run(
        final DpdkNic nic, final Settings settings, final UnaryOperator<PacketPort> wrapNicPort, final Consumer<Progress> progress)
    {
        final int planes = settings.planes();
        final long bytes = settings.bytes();
        if (null != settings.blackhole() && (settings.blackhole().plane() < 0 || settings.blackhole().plane() >= planes))
        {
            throw new IllegalArgumentException("cannot blackhole plane " + settings.blackhole().plane() + " of " + planes);
        }
        final int messages = (int)((bytes + settings.messageBytes() - 1) / settings.messageBytes());
        final NicConnection.Kind kind = settings.mode() == Mode.SPRAY ? NicConnection.Kind.SPRAY : NicConnection.Kind.ROCEV2;
        final String mode = kind.name().toLowerCase(java.util.Locale.ROOT);
        try (Fabric fabric = Topology.backToBack(settings.fabricConfig(), planes, Math.max(1, settings.paths() / planes));
            Arena arena = Arena.ofShared();
            CountersFile counters0 = CountersFile.create(CountersFileDescriptor.defaultDirectory(), "demo-" + mode + "-host0", 4096);
            CountersFile counters1 = CountersFile.create(CountersFileDescriptor.defaultDirectory(), "demo-" + mode + "-host1", 4096))
        {
            fabric.fabricLinkLoss(settings.lossPct() / 100.0);
            final DataDropTap drops = DataDropTap.onEveryLink(fabric);
            final PacketPort[][][] nicPorts = new PacketPort[2][1][planes];
            final PacketPort[][] fabricPorts = new PacketPort[2][planes];
            for (int h = 0; h < 2; h++)
            {
                for (int p = 0; p < planes; p++)
                {
                    nicPorts[h][0][p] = wrapNicPort.apply(nic.packetPort(nicPort(h, p), 0));
                    fabricPorts[h][p] = nic.packetPort(fabricPort(h, p), 0);
                }
            }
            final RealTimeFabricAgent fabricAgent = new RealTimeFabricAgent("fabric", fabric, fabricPorts, BURST,
                FabricClock.SYSTEM);
            // shared: the fabric first, then each NIC's worker as the NIC starts (EmbeddedNicConfig.pollThread)
            final DynamicCompositeAgent pollThread = settings.threads() == Threads.SHARED ?
                new DynamicCompositeAgent("spraynic-demo-poll", fabricAgent) : null;
            final AgentRunner fabricRunner = new AgentRunner(new BackoffIdleStrategy(), Throwable::printStackTrace, null,
                null == pollThread ? fabricAgent : pollThread);
            AgentRunner.startOnThread(fabricRunner);
            final EmbeddedNic[] nics = new EmbeddedNic[2];
            final CountersFile[] counters = {counters0, counters1};
            try
            {
                for (int h = 0; h < 2; h++)
                {
                    nics[h] = EmbeddedNic.start(nicConfig(fabric, settings, kind, h).pollThread(pollThread), nicPorts[h],
                        counters[h]);
                }
                final Lanes lanes = kind == NicConnection.Kind.SPRAY ? sprayLanes(fabric, nics, planes) : rocevLanes(nics, planes);

                final MemorySegment source = arena.allocate(bytes, 64);
                final MemorySegment target = arena.allocate(bytes, 64);
                final SplittableRandom random = new SplittableRandom(7);
                for (long i = 0; i + 8 <= bytes; i += 8)
                {
                    source.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
                }
                final MemoryRegion local = nics[0].register(source, AccessFlags.NONE);
                final MemoryRegion remote = nics[1].register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
                final WriteWorkload workload = new WriteWorkload(lanes, local, remote, bytes, settings.messageBytes(), messages);

                final long cpuAtStart = processCpuNanos();
                final long start = System.nanoTime();
                final long deadline = start + settings.timeout().toNanos();
                long nextProgress = start;
                final Blackhole blackhole = settings.blackhole();
                long blackholedAt = -1;
                long[] completedByBin = new long[64]; // bytes completed by the end of each bin
                int lastBin = 0;
                // the application shares the cores with the poll threads: when it has nothing to do it parks
                // (50 us to 1 ms) rather than spin, leaving the cores to the NICs and the fabric
                final IdleStrategy idle = new BackoffIdleStrategy(1, 1, 50_000, 1_000_000);
                while (!workload.finished() && System.nanoTime() < deadline)
                {
                    idle.idle(workload.step());
                    final long now = System.nanoTime();
                    final int bin = (int)((now - start) / TIMELINE_BIN_NANOS);
                    if (bin >= completedByBin.length)
                    {
                        completedByBin = Arrays.copyOf(completedByBin, Math.max(bin + 1, completedByBin.length * 2));
                    }
                    for (int b = lastBin; b <= bin; b++)
                    {
                        completedByBin[b] = workload.bytesCompleted();
                    }
                    lastBin = bin;
                    if (null != blackhole && blackholedAt < 0 && now - start >= blackhole.afterNanos())
                    {
                        blackholedAt = now - start;
                        while (!fabricAgent.submit(() -> blackholePlane(fabric, blackhole.plane())))
                        {
                            Thread.onSpinWait(); // the fabric's command queue is full: it drains it within a duty cycle
                        }
                    }
                    if (now >= nextProgress)
                    {
                        progress.accept(new Progress(workload.bytesCompleted(), bytes, now - start));
                        nextProgress = now + 200_000_000L;
                    }
                }
                final long nanos = (workload.completed() == messages ? workload.finishedAtNanos() : System.nanoTime()) - start;
                final long cpuAtEnd = processCpuNanos();
                completedByBin[lastBin] = workload.bytesCompleted();
                final long[] completedPerBin = new long[lastBin + 1];
                for (int b = 0; b <= lastBin; b++)
                {
                    completedPerBin[b] = completedByBin[b] - (b == 0 ? 0 : completedByBin[b - 1]);
                }
                progress.accept(new Progress(workload.bytesCompleted(), bytes, nanos));
                for (final EmbeddedNic n : nics)
                {
                    n.close(Duration.ofSeconds(2)); // the workers stop: their engines' counters are ours to read
                }

                final long lost = drops.dataDrops();
                long ecnMarks = 0;
                for (final Link link : fabric.links())
                {
                    ecnMarks += link.ecnMarked();
                }
                final boolean verified = workload.failures() == 0 && workload.finished() && source.mismatch(target) == -1;
                return new Result(bytes, workload.bytesCompleted(), nanos, verified, workload.completed(), lost,
                    lanes.retransmitted(nics[0]), ecnMarks, lanes.packetsPerPath(nics[0], settings.paths()),
                    lanes.moved(), fabricAgent.framesDroppedAtPorts(), workload.firstFailure(), completedPerBin, blackholedAt,
                    cpuAtStart < 0 || cpuAtEnd < 0 ? -1 : cpuAtEnd - cpuAtStart);
            }
            finally
            {
                for (final EmbeddedNic n : nics)
                {
                    if (null != n)
                    {
                        n.close(Duration.ZERO); // shared: takes its worker off the poll thread, which runs on
                    }
                }
                fabricRunner.close();
            }
        }
    }

    /**
     * @return the process's CPU time so far, -1 where the platform does not say; from java.base alone (the container
     * image's runtime has no jdk.management, where com.sun.management's bean lives).
     */
    private static long processCpuNanos()
    {
        return ProcessHandle.current().info().totalCpuDuration().map(java.time.Duration::toNanos).orElse(-1L);
    }

    private static EmbeddedNicConfig nicConfig(final Fabric fabric, final Settings settings, final NicConnection.Kind kind,
        final int host)
    {
        final int planes = settings.planes();
        // both transports are told their link's rate, as a NIC's line rate matches its link
        final long capacityMbps = settings.linkBitsPerSecond() / 1_000_000 * planes;
        final EmbeddedNicConfig config = new EmbeddedNicConfig().mode(kind).workers(1).planes(planes)
            .connections(kind == NicConnection.Kind.SPRAY ? settings.paths() : 1, settings.streams(), MTU)
            .sprayConfig(() -> EmbeddedNicConfig.sharedCoreSprayConfig().capacityMbps(capacityMbps))
            .bursts(BURST, PathMtu.maxFrameLength(MTU) + 64)
            .rocevRetry(ROCEV2_ACK_TIMEOUT_NANOS, 7)
            .rocevLineRate(settings.linkBitsPerSecond())
            .peerResolver(new SprayHandshake.PeerResolver()
            {
                public int ipv4(final int plane, final int plane0Ipv4)
                {
                    return fabric.host(hostOf(plane0Ipv4)).port(plane).localAddress();
                }

                public long mac(final int plane, final int plane0Ipv4, final long plane0Mac)
                {
                    return fabric.host(hostOf(plane0Ipv4)).port(plane).localMac();
                }

                private int hostOf(final int plane0Ipv4)
                {
                    return fabric.host(0).port(0).localAddress() == plane0Ipv4 ? 0 : 1;
                }
            });
        for (int p = 0; p < planes; p++)
        {
            final FabricPort port = fabric.host(host).port(p);
            config.local(p, port.localAddress(), port.localMac());
            // the emulated switches route by address and carry no ARP: the other host's MAC is configured, never asked
            final FabricPort peer = fabric.host(1 - host).port(p);
            config.staticNeighbour(p, peer.localAddress(), peer.localMac());
        }
        return config;
    }

    /**
     * Where the workload posts: lane i is a spray stream of one connection, or a RoCEv2 queue pair per plane;
     * and where the transfer's counters come from once the NICs stopped.
     */
    record Lanes(NicConnection[] connections, int[] streams, NicConnection[] completionSources)
    {
        /** @return the spray lanes' connection (read once the NICs stopped). */
        private SprayConnection spray()
        {
            return ((SprayNicConnection)connections[0]).spray();
        }

        long retransmitted(final EmbeddedNic sender)
        {
            if (connections[0].kind() == NicConnection.Kind.SPRAY)
            {
                return spray().counters().get(SprayCounters.RETRANSMITTED);
            }
            long total = 0;
            for (int p = 0; p < sender.planes(); p++)
            {
                total += sender.rocevEngine(0, p).counters().get(RcCounters.RETRANSMITTED);
            }
            return total;
        }

        long moved()
        {
            return connections[0].kind() == NicConnection.Kind.SPRAY ?
                spray().counters().get(SprayCounters.MOVED) : 0;
        }

        long[] packetsPerPath(final EmbeddedNic sender, final int paths)
        {
            if (connections[0].kind() == NicConnection.Kind.SPRAY)
            {
                final long[] packets = new long[spray().paths()];
                final SprayNicConnection connection = (SprayNicConnection)connections[0];
                for (int p = 0; p < packets.length; p++)
                {
                    // over the whole transfer: the connection's own per-path counters are its current traffic period
                    packets[p] = connection.pathTotal(p, SprayCounters.TX_PACKETS);
                }
                return packets;
            }
            final long[] packets = new long[sender.planes()];
            for (int p = 0; p < packets.length; p++)
            {
                packets[p] = sender.rocevEngine(0, p).counters().get(RcCounters.TX_PACKETS);
            }
            return packets;
        }
    }

    private static Lanes sprayLanes(final Fabric fabric, final EmbeddedNic[] nics, final int planes)
    {
        final int[] ips = new int[planes];
        for (int p = 0; p < planes; p++)
        {
            ips[p] = fabric.host(1).port(p).localAddress();
        }
        final NicConnection sender = nics[0].connect(ips, CONNECT_TIMEOUT);
        if (null == nics[1].accept(CONNECT_TIMEOUT))
        {
            throw new IllegalStateException("the receiving NIC did not accept the connection");
        }
        final NicConnection[] connections = new NicConnection[sender.streams()];
        final int[] streams = new int[sender.streams()];
        for (int s = 0; s < streams.length; s++)
        {
            connections[s] = sender;
            streams[s] = s;
        }
        return new Lanes(connections, streams, new NicConnection[]{sender});
    }

    private static Lanes rocevLanes(final EmbeddedNic[] nics, final int planes)
    {
        final NicConnection[] senders = new NicConnection[planes];
        for (int p = 0; p < planes; p++)
        {
            senders[p] = nics[0].createQueuePair(p);
            final NicConnection receiver = nics[1].createQueuePair(p);
            senders[p].connect(receiver.rocevEndpoint(), CONNECT_TIMEOUT);
            receiver.connect(senders[p].rocevEndpoint(), CONNECT_TIMEOUT);
        }
        return new Lanes(senders, new int[planes], senders);
    }

    /**
     * The application: posts the writes, a few in flight, and collects their completions.
     */
    static final class WriteWorkload
    {
        private static final int OUTSTANDING = 16;
        private final Lanes lanes;
        private final MemoryRegion local;
        private final MemoryRegion remote;
        private final long bytes;
        private final int messageBytes;
        private final int messages;
        private final SendRequest request = new SendRequest();
        private final WorkCompletion completion = new WorkCompletion();
        private int posted;
        private int outstanding;
        private int completed;
        private long bytesCompleted;
        private int failures;
        private long finishedAtNanos;
        private String firstFailure;

        WriteWorkload(final Lanes lanes, final MemoryRegion local, final MemoryRegion remote, final long bytes,
            final int messageBytes, final int messages)
        {
            this.lanes = lanes;
            this.local = local;
            this.remote = remote;
            this.bytes = bytes;
            this.messageBytes = messageBytes;
            this.messages = messages;
        }

        int step()
        {
            int work = 0;
            final int laneCount = lanes.connections().length;
            while (outstanding < OUTSTANDING && posted < messages)
            {
                final long offset = (long)posted * messageBytes;
                request.reset().wrId(posted).opcode(WorkRequestOpcode.RDMA_WRITE)
                    .local(local, local.address() + offset, (int)Math.min(messageBytes, bytes - offset))
                    .remote(remote.address() + offset, remote.rkey()).signaled(true);
                final int lane = posted % laneCount;
                if (lanes.connections()[lane].postSend(lanes.streams()[lane], request) != PostResult.OK)
                {
                    break;
                }
                posted++;
                outstanding++;
                work++;
            }
            for (final NicConnection c : lanes.completionSources())
            {
                while (c.sendCompletionQueue().poll(completion))
                {
                    outstanding--;
                    work++;
                    if (completion.status() == WorkCompletionStatus.SUCCESS)
                    {
                        bytesCompleted += Math.min(messageBytes, bytes - completion.wrId() * messageBytes);
                        completed++;
                        if (completed == messages)
                        {
                            finishedAtNanos = System.nanoTime();
                        }
                    }
                    else
                    {
                        if (failures++ == 0)
                        {
                            firstFailure = completion.toString();
                        }
                    }
                }
            }
            return work;
        }

        boolean finished()
        {
            return completed == messages || failures > 0;
        }

        long finishedAtNanos()
        {
            return finishedAtNanos;
        }

        int completed()
        {
            return completed;
        }

        long bytesCompleted()
        {
            return bytesCompleted;
        }

        int failures()
        {
            return failures;
        }

        String firstFailure()
        {
            return firstFailure;
        }
    }
}
