package io.spraynic.bench.experiment;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricPort;
import io.spraynic.datapath.fabric.Link;
import io.spraynic.datapath.fabric.RcFabricEndpoint;
import io.spraynic.datapath.fabric.SprayFabricEndpoint;
import io.spraynic.datapath.transport.rocev2.DcqcnConfig;
import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;
import io.spraynic.datapath.transport.rocev2.RcCounters;
import io.spraynic.datapath.transport.rocev2.RcEngineConfig;
import io.spraynic.datapath.transport.rocev2.RcQueuePair;
import io.spraynic.datapath.transport.spray.SprayConfig;
import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.transport.spray.SprayConnectionConfig;
import io.spraynic.datapath.transport.spray.SprayCounters;
import io.spraynic.datapath.transport.spray.SprayEngine;
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
import org.agrona.collections.IntArrayList;
import org.agrona.collections.LongArrayList;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

/**
 * Every host of a fabric running one transport, spray or the RoCEv2 RC baseline, and flows between them:
 * a flow is one spray connection, or one RC queue pair on the plane its UDP source port hashes to (RC is
 * single-path), carrying RDMA WRITEs from the sender's registered memory into the receiver's. Declare
 * the flows, {@link #start}, then post and poll; every flow has its own source and target range, so
 * every byte can be verified at the end.
 */
final class Cluster implements AutoCloseable
{
    /** The transport every host runs. */
    enum Transport
    {
        SPRAY("spray"), ROCEV2("rocev2");

        final String label;

        Transport(final String label)
        {
            this.label = label;
        }
    }

    /** A send completion: which flow, which of its messages, whether it succeeded. */
    @FunctionalInterface
    interface CompletionHandler
    {
        void onCompletion(int flow, int message, boolean success);
    }

    /**
     * @param sprayPaths paths per spray connection (spread over the planes).
     * @param queueDepth work requests a flow may have outstanding (sizes queues and completion queues).
     * @param seed       memory contents, protection keys, engine seeds.
     */
    record Options(int sprayPaths, int queueDepth, long seed)
    {
    }

    private static final long TICK_NANOS = 1_000;
    private static final int SOURCE_PORT_BASE = 49152;
    private static final int SOURCE_PORTS = 16_000;

    private final Fabric fabric;
    private final Transport transport;
    private final Options options;
    private final Arena arena = Arena.ofShared();
    private final IntArrayList flowSource = new IntArrayList();
    private final IntArrayList flowTarget = new IntArrayList();
    private final LongArrayList flowBytes = new LongArrayList();
    private final LongArrayList flowSourceOffset = new LongArrayList();
    private final LongArrayList flowTargetOffset = new LongArrayList();
    private final IntArrayList flowPlane = new IntArrayList();
    private final long[] outBytes;
    private final long[] inBytes;
    private final int[] flowsAt;
    private final SendWorkRequest request = new SendWorkRequest();
    private final WorkCompletion completion = new WorkCompletion();
    private ProtectionDomain[] domains;
    private MemorySegment[] sources;
    private MemorySegment[] targets;
    private MemoryRegion[] sourceRegions;
    private MemoryRegion[] targetRegions;
    private CompletionQueue[] queues;
    private SprayFabricEndpoint[] sprayEndpoints;
    private SprayConnection[] connections;
    private RcFabricEndpoint[][] rcEndpoints;
    private RcQueuePair[] queuePairs;
    private boolean started;

    Cluster(final Fabric fabric, final Transport transport, final Options options)
    {
        this.fabric = fabric;
        this.transport = transport;
        this.options = options;
        this.outBytes = new long[fabric.hostCount()];
        this.inBytes = new long[fabric.hostCount()];
        this.flowsAt = new int[fabric.hostCount()];
    }

    /**
     * Declares a flow (before {@link #start}).
     *
     * @return its index.
     */
    int flow(final int source, final int target, final long bytes)
    {
        return flow(source, target, bytes, -1);
    }

    /**
     * Declares a flow whose RoCEv2 queue pair uses {@code plane} (-1: the plane its source port hashes to),
     * as one QP per plane is how RoCEv2 is deployed on multi-plane fabrics. Spray ignores it.
     *
     * @return its index.
     */
    int flow(final int source, final int target, final long bytes, final int plane)
    {
        if (started || source == target || bytes < 1)
        {
            throw new IllegalStateException("flows are declared before start, between two hosts, non-empty");
        }
        flowSource.addInt(source);
        flowTarget.addInt(target);
        flowBytes.addLong(bytes);
        flowPlane.addInt(plane);
        flowSourceOffset.addLong(outBytes[source]);
        flowTargetOffset.addLong(inBytes[target]);
        outBytes[source] += align(bytes);
        inBytes[target] += align(bytes);
        flowsAt[source]++;
        flowsAt[target]++;
        return flowSource.size() - 1;
    }

    private static long align(final long bytes)
    {
        return (bytes + 63) & ~63L;
    }

    /**
     * Registers memory (random contents at the sources), builds the engines and connects every flow.
     */
    void start()
    {
        started = true;
        final int hosts = fabric.hostCount();
        // A NIC's own transmit queue does not ECN-mark: its scheduler holds frames back (the engines see a full
        // queue as push-back). Marking there would make DCQCN throttle QPs for contending with each other at
        // their own port, which no switch saw; both transports get the same unmarked NIC queues.
        for (int h = 0; h < hosts; h++)
        {
            for (int p = 0; p < fabric.planes(); p++)
            {
                final Link uplink = fabric.host(h).port(p).uplink();
                uplink.ecnThresholdBytes(uplink.queueCapacityBytes());
            }
        }
        domains = new ProtectionDomain[hosts];
        sources = new MemorySegment[hosts];
        targets = new MemorySegment[hosts];
        sourceRegions = new MemoryRegion[hosts];
        targetRegions = new MemoryRegion[hosts];
        queues = new CompletionQueue[hosts];
        for (int h = 0; h < hosts; h++)
        {
            domains[h] = new ProtectionDomain(new SplittableRandom(options.seed() * 1_000 + h));
            sources[h] = arena.allocate(Math.max(64, outBytes[h]), 64);
            targets[h] = arena.allocate(Math.max(64, inBytes[h]), 64);
            WriteBuffers.fillRandom(sources[h], outBytes[h], new SplittableRandom(options.seed() + h));
            sourceRegions[h] = domains[h].register(sources[h], AccessFlags.LOCAL_WRITE);
            targetRegions[h] = domains[h].register(targets[h], AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            queues[h] = new CompletionQueue(Math.max(64, flowsAt[h] * options.queueDepth() * 2));
        }
        if (transport == Transport.SPRAY)
        {
            startSpray();
        }
        else
        {
            startRocev2();
        }
    }

    private long hostLinkMbps()
    {
        return fabric.config().hostLink().rateBitsPerSecond() / 1_000_000;
    }

    private void startSpray()
    {
        final int hosts = fabric.hostCount();
        final SprayEngine[] engines = new SprayEngine[hosts];
        sprayEndpoints = new SprayFabricEndpoint[hosts];
        for (int h = 0; h < hosts; h++)
        {
            sprayEndpoints[h] = new SprayFabricEndpoint(fabric.host(h), TICK_NANOS, new ParseCounters());
            final SprayConfig config = sprayEndpoints[h].configure(new SprayConfig()
                .capacityMbps(hostLinkMbps() * fabric.planes()).maxConnections(Math.max(1, flowsAt[h]))
                .seed(options.seed() + h));
            engines[h] = new SprayEngine(config, domains[h], sprayEndpoints[h].output());
            sprayEndpoints[h].bind(engines[h]);
        }
        connections = new SprayConnection[flowSource.size()];
        final int depth = options.queueDepth();
        for (int f = 0; f < flowSource.size(); f++)
        {
            final int a = flowSource.getInt(f);
            final int b = flowTarget.getInt(f);
            final int port = SOURCE_PORT_BASE + (f * options.sprayPaths()) % SOURCE_PORTS;
            connections[f] = engines[a].open(sprayEndpoints[a].remote(connectionConfig(2 * f + 1, 2 * f + 2, depth)
                .initialPsns(0xFFFF00 + f, 0x100 + f).sourcePortBase(port).completionQueues(queues[a], queues[a]), b));
            engines[b].open(sprayEndpoints[b].remote(connectionConfig(2 * f + 2, 2 * f + 1, depth)
                .initialPsns(0x100 + f, 0xFFFF00 + f).sourcePortBase(port).completionQueues(queues[b], queues[b]), a));
        }
    }

    private SprayConnectionConfig connectionConfig(final int local, final int remote, final int depth)
    {
        // queues sized to what the experiment keeps outstanding: at thousands of connections the default 1024
        // entries each would be most of the state measured
        final int slots = Math.max(8, depth * 2);
        return new SprayConnectionConfig().cids(local, remote).keysFromCids().paths(options.sprayPaths()).streams(1).mtu(4096)
            .depths(slots, slots, slots).placementChunks(Math.max(8, depth * 2));
    }

    private void startRocev2()
    {
        final int hosts = fabric.hostCount();
        final int planes = fabric.planes();
        final DcqcnConfig dcqcn = DcqcnConfig.paperDefaults(fabric.config().hostLink().rateBitsPerSecond());
        rcEndpoints = new RcFabricEndpoint[hosts][planes];
        for (int h = 0; h < hosts; h++)
        {
            final MultiPortEndpoint host = new MultiPortEndpoint(planes);
            for (int p = 0; p < planes; p++)
            {
                rcEndpoints[h][p] = new RcFabricEndpoint(fabric.host(h).port(p), domains[h],
                    (mac, ip) -> RcEngineConfig.defaults(mac, ip).withDcqcn(dcqcn), new ParseCounters(), TICK_NANOS, arena);
                host.set(p, rcEndpoints[h][p]);
            }
            fabric.host(h).attach(host);
        }
        queuePairs = new RcQueuePair[flowSource.size()];
        final int depth = Math.max(8, options.queueDepth() * 2);
        for (int f = 0; f < flowSource.size(); f++)
        {
            final int a = flowSource.getInt(f);
            final int b = flowTarget.getInt(f);
            final int sourcePort = SOURCE_PORT_BASE + f % SOURCE_PORTS;
            final int plane = flowPlane.getInt(f) >= 0 ? flowPlane.getInt(f) : fabric.host(a).planeFor(b, sourcePort);
            final FabricPort portA = fabric.host(a).port(plane);
            final FabricPort portB = fabric.host(b).port(plane);
            final RcQueuePair qpA = rcEndpoints[a][plane].engine().createQueuePair(queues[a], queues[a], depth, depth);
            final RcQueuePair qpB = rcEndpoints[b][plane].engine().createQueuePair(queues[b], queues[b], depth, depth);
            qpA.toInit(AccessFlags.REMOTE_WRITE);
            qpB.toInit(AccessFlags.REMOTE_WRITE);
            qpA.toRtr(RcConnectionAttributes.of(qpB.qpNumber(), portB.localMac(), portB.localAddress(), sourcePort,
                PathMtu.MTU_4096, 1000 + f, 500_000 + f));
            qpB.toRtr(RcConnectionAttributes.of(qpA.qpNumber(), portA.localMac(), portA.localAddress(), sourcePort,
                PathMtu.MTU_4096, 500_000 + f, 1000 + f));
            qpA.toRts();
            qpB.toRts();
            queuePairs[f] = qpA;
        }
        for (final RcFabricEndpoint[] host : rcEndpoints)
        {
            for (final RcFabricEndpoint endpoint : host)
            {
                endpoint.start();
            }
        }
    }

    /**
     * Posts an RDMA WRITE of {@code length} bytes at {@code offset} of a flow's range.
     *
     * @return false when the flow's queue is full.
     */
    boolean post(final int flow, final int message, final long offset, final int length)
    {
        final int a = flowSource.getInt(flow);
        final int b = flowTarget.getInt(flow);
        final long sourceAddress = sourceRegions[a].address() + flowSourceOffset.getLong(flow) + offset;
        final long targetAddress = targetRegions[b].address() + flowTargetOffset.getLong(flow) + offset;
        request.reset().wrId(((long)flow << 32) | (message & 0xFFFF_FFFFL)).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(sourceRegions[a], sourceAddress, length).remote(targetAddress, targetRegions[b].rkey()).signaled(true);
        if (transport == Transport.SPRAY)
        {
            if (connections[flow].postSend(0, request) != PostResult.OK)
            {
                return false;
            }
            sprayEndpoints[a].kick();
            return true;
        }
        return queuePairs[flow].postSend(request) == PostResult.OK;
    }

    /**
     * Hands every send completion waiting to {@code handler}.
     *
     * @return completions handled.
     */
    int poll(final CompletionHandler handler)
    {
        int count = 0;
        for (int h = 0; h < queues.length; h++)
        {
            if (outBytes[h] == 0)
            {
                continue;
            }
            while (queues[h].poll(completion))
            {
                handler.onCompletion((int)(completion.wrId() >>> 32), (int)completion.wrId(),
                    completion.status() == WorkCompletionStatus.SUCCESS);
                count++;
            }
        }
        return count;
    }

    /** @return whether the first {@code bytes} of a flow arrived intact. */
    boolean verify(final int flow, final long bytes)
    {
        final long length = Math.min(bytes, flowBytes.getLong(flow));
        final MemorySegment from = sources[flowSource.getInt(flow)].asSlice(flowSourceOffset.getLong(flow), length);
        final MemorySegment to = targets[flowTarget.getInt(flow)].asSlice(flowTargetOffset.getLong(flow), length);
        return from.mismatch(to) == -1;
    }

    /** @return the rate the flow's sender allows itself now, bits per second (spray: pacing; RoCEv2: DCQCN R_C). */
    double senderRate(final int flow)
    {
        if (transport == Transport.ROCEV2)
        {
            return queuePairs[flow].rateLimiter().currentRate();
        }
        return connections[flow].pacingRate() * 8e9;
    }

    /** @return data packets sent again, over every flow. */
    long retransmitted()
    {
        long total = 0;
        if (transport == Transport.SPRAY)
        {
            for (final SprayConnection c : connections)
            {
                total += c.counters().get(SprayCounters.RETRANSMITTED);
            }
        }
        else
        {
            for (final RcFabricEndpoint[] host : rcEndpoints)
            {
                for (final RcFabricEndpoint endpoint : host)
                {
                    total += endpoint.engine().counters().get(RcCounters.RETRANSMITTED);
                }
            }
        }
        return total;
    }

    /** @return the sender-side spray connection of a flow (spray only). */
    SprayConnection connection(final int flow)
    {
        return connections[flow];
    }

    /** @return the sender-side queue pair of a flow (RoCEv2 only). */
    RcQueuePair queuePair(final int flow)
    {
        return queuePairs[flow];
    }

    int flows()
    {
        return flowSource.size();
    }

    long flowBytes(final int flow)
    {
        return flowBytes.getLong(flow);
    }

    int flowSource(final int flow)
    {
        return flowSource.getInt(flow);
    }

    int flowTarget(final int flow)
    {
        return flowTarget.getInt(flow);
    }

    Fabric fabric()
    {
        return fabric;
    }

    Transport transport()
    {
        return transport;
    }

    public void close()
    {
        if (null != rcEndpoints)
        {
            for (final RcFabricEndpoint[] host : rcEndpoints)
            {
                for (final RcFabricEndpoint endpoint : host)
                {
                    endpoint.stop();
                }
            }
        }
        arena.close();
    }
}
