package io.spraynic.datapath.nic;

import io.spraynic.datapath.fabric.DataDropTap;
import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricClock;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.FabricPort;
import io.spraynic.datapath.fabric.Link;
import io.spraynic.datapath.fabric.RealTimeFabricAgent;
import io.spraynic.datapath.fabric.Topology;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.transport.PortFrameSink;
import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;
import io.spraynic.datapath.transport.rocev2.RcCounters;
import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.transport.rocev2.RcEngineConfig;
import io.spraynic.datapath.transport.rocev2.RcQueuePair;
import io.spraynic.datapath.transport.rocev2.RoceTransportAgent;
import io.spraynic.datapath.transport.spray.PortsFrameOutput;
import io.spraynic.datapath.transport.spray.SprayConfig;
import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.transport.spray.SprayConnectionConfig;
import io.spraynic.datapath.transport.spray.SprayCounters;
import io.spraynic.datapath.transport.spray.SprayEngine;
import io.spraynic.datapath.transport.spray.SprayTransportAgent;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.SystemNanoClock;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;

/**
 * Two NIC endpoints in one process running the spray transport over DPDK {@code net_ring} ports,
 * joined through the fabric emulator in real time: host h's NIC port on plane p is one side of a
 * crossed ring pair whose other side the {@link RealTimeFabricAgent} drives. Host 0 RDMA-WRITEs a
 * buffer into host 1's registered memory on several streams; every byte is checked at the end.
 * Three poll threads: one per host (transport + workload) and the fabric's.
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
     */
    public record Settings(
        Mode mode, int planes, int paths, double lossPct, long bytes, int messageBytes, int streams, Duration timeout)
    {
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
     * @param paths packets each path carried (host 0's data direction; RoCEv2: each plane's QP).
     */
    public record Result(long bytes, long bytesCompleted, long nanos, boolean verified, long messages, long lost,
        long retransmitted, long ecnMarks, long[] paths, long moved, long droppedAtBridge)
    {
        public double seconds()
        {
            return nanos / 1e9;
        }

        public double goodputGbps()
        {
            return nanos == 0 ? 0 : bytesCompleted * 8.0 / nanos;
        }
    }

    static final int MTU = 1024;
    /** Ring slots per port and direction: deep enough that the fabric's bridge rarely finds a ring full. */
    static final int RING_SLOTS = 1024;
    static final long REAL_TIME_RTO_MIN_NANOS = 5_000_000L;
    static final int BURST = 32;

    private FabricDemo()
    {
    }

    /**
     * The EAL and ports: no hugepages, one crossed ring pair per host and plane.
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

    static String nicPort(final int host, final int plane)
    {
        return "h" + host + "p" + plane;
    }

    static String fabricPort(final int host, final int plane)
    {
        return "f" + host + "p" + plane;
    }

    /**
     * @param wrapNicPort applied to each NIC port (not the fabric's side), e.g. a packet capture.
     */
    public static Result run(
        final DpdkNic nic, final Settings settings, final UnaryOperator<PacketPort> wrapNicPort, final Consumer<Progress> progress)
    {
        final int planes = settings.planes();
        final long bytes = settings.bytes();
        final int messages = (int)((bytes + settings.messageBytes() - 1) / settings.messageBytes());
        try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT, planes, Math.max(1, settings.paths() / planes));
            Arena arena = Arena.ofShared())
        {
            fabric.fabricLinkLoss(settings.lossPct() / 100.0);
            final DataDropTap drops = DataDropTap.onEveryLink(fabric);
            final PacketPort[][] nicPorts = new PacketPort[2][planes];
            final PacketPort[][] fabricPorts = new PacketPort[2][planes];
            for (int h = 0; h < 2; h++)
            {
                for (int p = 0; p < planes; p++)
                {
                    nicPorts[h][p] = wrapNicPort.apply(nic.packetPort(nicPort(h, p), 0));
                    fabricPorts[h][p] = nic.packetPort(fabricPort(h, p), 0);
                }
            }

            final ProtectionDomain[] pds = {new ProtectionDomain(), new ProtectionDomain()};
            final CompletionQueue[] cqs = {new CompletionQueue(4096), new CompletionQueue(4096)};
            final Transport transport = settings.mode() == Mode.SPRAY ?
                spray(fabric, settings, nicPorts, pds, cqs) : rocev2(fabric, settings, nicPorts, pds, cqs);

            final MemorySegment source = arena.allocate(bytes, 64);
            final MemorySegment target = arena.allocate(bytes, 64);
            final SplittableRandom random = new SplittableRandom(7);
            for (long i = 0; i + 8 <= bytes; i += 8)
            {
                source.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
            }
            final MemoryRegion local = pds[0].register(source, AccessFlags.NONE);
            final MemoryRegion remote = pds[1].register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);

            final WriteWorkload workload = new WriteWorkload(transport.poster(), cqs[0], local, remote, bytes,
                settings.messageBytes(), messages, transport.lanes());
            final RealTimeFabricAgent fabricAgent = new RealTimeFabricAgent("fabric", fabric, fabricPorts, BURST,
                FabricClock.SYSTEM);
            final AgentRunner[] runners = {
                new AgentRunner(new BackoffIdleStrategy(), Throwable::printStackTrace, null, fabricAgent),
                new AgentRunner(new BackoffIdleStrategy(), Throwable::printStackTrace, null, transport.host(1)),
                new AgentRunner(new BackoffIdleStrategy(), Throwable::printStackTrace, null,
                    new CompositeAgent(transport.host(0), workload))};
            for (final AgentRunner runner : runners)
            {
                AgentRunner.startOnThread(runner);
            }
            final long start = System.nanoTime();
            final long deadline = start + settings.timeout().toNanos();
            try
            {
                while (!workload.finished() && System.nanoTime() < deadline)
                {
                    progress.accept(new Progress(workload.bytesCompleted(), bytes, System.nanoTime() - start));
                    Thread.sleep(200);
                }
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            final long nanos = (workload.completed() == messages ? workload.finishedAtNanos() : System.nanoTime()) - start;
            for (final AgentRunner runner : runners)
            {
                runner.close();
            }
            progress.accept(new Progress(workload.bytesCompleted(), bytes, nanos));

            final long lost = drops.dataDrops();
            long ecnMarks = 0;
            for (final Link link : fabric.links())
            {
                ecnMarks += link.ecnMarked();
            }
            final boolean verified = workload.failures() == 0 && workload.finished() && source.mismatch(target) == -1;
            return new Result(bytes, workload.bytesCompleted(), nanos, verified, workload.completed(), lost,
                transport.retransmitted(), ecnMarks, transport.packetsPerPath(), transport.moved(),
                fabricAgent.framesDroppedAtPorts());
        }
    }

    /**
     * What the demo needs of a transport: the hosts' poll agents, a way to post, and its counters.
     */
    interface Transport
    {
        Agent host(int host);

        /** Posts on lane {@code lane} (a spray stream, or a RoCEv2 QP); returns a {@link PostResult}. */
        Poster poster();

        int lanes();

        long retransmitted();

        long moved();

        long[] packetsPerPath();
    }

    @FunctionalInterface
    interface Poster
    {
        int post(int lane, SendWorkRequest request);
    }

    private static Transport spray(
        final Fabric fabric, final Settings settings, final PacketPort[][] nicPorts, final ProtectionDomain[] pds,
        final CompletionQueue[] cqs)
    {
        final int planes = settings.planes();
        final long capacityMbps = FabricConfig.DEFAULT.hostLink().rateBitsPerSecond() / 1_000_000 * planes;
        final SprayConnection[] connections = new SprayConnection[2];
        final SprayTransportAgent[] agents = new SprayTransportAgent[2];
        for (int h = 0; h < 2; h++)
        {
            final SprayConfig config = EmbeddedNicConfig.sharedCoreSprayConfig().planes(planes).capacityMbps(capacityMbps);
            final SprayConnectionConfig connection = new SprayConnectionConfig().cids(h + 1, 2 - h)
                .paths(settings.paths()).streams(settings.streams()).mtu(MTU)
                .initialPsns(h == 0 ? 0xFFFF00 : 0x100, h == 0 ? 0x100 : 0xFFFF00).completionQueues(cqs[h], cqs[h]);
            for (int p = 0; p < planes; p++)
            {
                final FabricPort port = fabric.host(h).port(p);
                config.local(p, port.localAddress(), port.localMac());
                connection.remote(p, port.addressOf(1 - h), port.macOf(1 - h));
            }
            final PortsFrameOutput output = new PortsFrameOutput(nicPorts[h], BURST);
            final SprayEngine engine = new SprayEngine(config, pds[h], output);
            connections[h] = engine.open(connection);
            agents[h] = new SprayTransportAgent("spray-host" + h, nicPorts[h], output, engine, new ParseCounters(),
                new SystemNanoClock(), BURST);
        }
        final SprayConnection sender = connections[0];
        return new Transport()
        {
            public Agent host(final int host)
            {
                return agents[host];
            }

            public Poster poster()
            {
                return sender::postSend;
            }

            public int lanes()
            {
                return settings.streams();
            }

            public long retransmitted()
            {
                return sender.counters().get(SprayCounters.RETRANSMITTED);
            }

            public long moved()
            {
                return sender.counters().get(SprayCounters.MOVED);
            }

            public long[] packetsPerPath()
            {
                final long[] packets = new long[settings.paths()];
                for (int p = 0; p < packets.length; p++)
                {
                    packets[p] = sender.pathCounters(p).get(SprayCounters.TX_PACKETS);
                }
                return packets;
            }
        };
    }

    private static Transport rocev2(
        final Fabric fabric, final Settings settings, final PacketPort[][] nicPorts, final ProtectionDomain[] pds,
        final CompletionQueue[] cqs)
    {
        final int planes = settings.planes();
        final RcEngine[][] engines = new RcEngine[2][planes];
        final RcQueuePair[][] qps = new RcQueuePair[2][planes];
        final Agent[][] agents = new Agent[2][planes];
        for (int h = 0; h < 2; h++)
        {
            for (int p = 0; p < planes; p++)
            {
                final FabricPort port = fabric.host(h).port(p);
                final PortFrameSink sink = new PortFrameSink(nicPorts[h][p], BURST, PathMtu.maxFrameLength(MTU) + 64);
                engines[h][p] = new RcEngine(RcEngineConfig.defaults(port.localMac(), port.localAddress()), pds[h], sink);
                qps[h][p] = engines[h][p].createQueuePair(cqs[h], cqs[h], 64, 64);
                qps[h][p].toInit(AccessFlags.REMOTE_WRITE);
                agents[h][p] = new RoceTransportAgent("rocev2-host" + h + "-plane" + p, nicPorts[h][p], sink, engines[h][p],
                    new ParseCounters(), new SystemNanoClock(), BURST);
            }
        }
        for (int h = 0; h < 2; h++)
        {
            for (int p = 0; p < planes; p++)
            {
                final FabricPort peer = fabric.host(1 - h).port(p);
                // One UDP source port per QP: RoCEv2's single path. Timeout as for spray in real time.
                qps[h][p].toRtr(RcConnectionAttributes.of(qps[1 - h][p].qpNumber(), peer.localMac(), peer.localAddress(),
                    49152 + p, MTU, 1000 * (p + 1) * (h + 1), 1000 * (p + 1) * (2 - h))
                    .withRetry(4 * REAL_TIME_RTO_MIN_NANOS, 7));
                qps[h][p].toRts();
            }
        }
        return new Transport()
        {
            public Agent host(final int host)
            {
                return new CompositeAgent(agents[host]);
            }

            public Poster poster()
            {
                return (lane, request) -> qps[0][lane].postSend(request);
            }

            public int lanes()
            {
                return planes;
            }

            public long retransmitted()
            {
                long total = 0;
                for (final RcEngine engine : engines[0])
                {
                    total += engine.counters().get(RcCounters.RETRANSMITTED);
                }
                return total;
            }

            public long moved()
            {
                return 0;
            }

            public long[] packetsPerPath()
            {
                final long[] packets = new long[planes];
                for (int p = 0; p < planes; p++)
                {
                    packets[p] = engines[0][p].counters().get(RcCounters.TX_PACKETS);
                }
                return packets;
            }
        };
    }

    /**
     * Posts the writes and collects their completions, on host 0's poll thread (the engines are not
     * thread-safe: everything that touches them runs on their thread). Lanes are spray streams or
     * RoCEv2 queue pairs.
     */
    static final class WriteWorkload implements Agent
    {
        private static final int OUTSTANDING = 16;
        private final Poster poster;
        private final CompletionQueue cq;
        private final MemoryRegion local;
        private final MemoryRegion remote;
        private final long bytes;
        private final int messageBytes;
        private final int messages;
        private final int streams;
        private final SendWorkRequest request = new SendWorkRequest();
        private final WorkCompletion completion = new WorkCompletion();
        private int posted;
        private int outstanding;
        private volatile int completed;
        private volatile long bytesCompleted;
        private volatile int failures;
        private volatile long finishedAtNanos;

        WriteWorkload(final Poster poster, final CompletionQueue cq, final MemoryRegion local,
            final MemoryRegion remote, final long bytes, final int messageBytes, final int messages, final int streams)
        {
            this.poster = poster;
            this.cq = cq;
            this.local = local;
            this.remote = remote;
            this.bytes = bytes;
            this.messageBytes = messageBytes;
            this.messages = messages;
            this.streams = streams;
        }

        public int doWork()
        {
            int work = 0;
            while (outstanding < OUTSTANDING && posted < messages)
            {
                final long offset = (long)posted * messageBytes;
                request.reset().wrId(posted).opcode(WorkRequestOpcode.RDMA_WRITE)
                    .local(local, local.address() + offset, (int)Math.min(messageBytes, bytes - offset))
                    .remote(remote.address() + offset, remote.rkey()).signaled(true);
                if (poster.post(posted % streams, request) != PostResult.OK)
                {
                    break;
                }
                posted++;
                outstanding++;
                work++;
            }
            while (cq.poll(completion))
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
                    failures++;
                }
            }
            return work;
        }

        public String roleName()
        {
            return "write-workload";
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
    }
}
