package io.spraynic.bench.jmh;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.InMemoryPacketPort;
import io.spraynic.datapath.port.PacketPort;
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
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.ParseCounters;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Two real spray engines, a sender A and a receiver B, over one {@link InMemoryLink} (one plane), in
 * virtual time: the source of valid spray data frames for the receive-path benchmarks. A posts one-packet
 * RDMA WRITEs of {@code payload} bytes into B's registered region (each packet a whole message, so every
 * packet goes through the message layer as well); B's ACKs flow back to A, so A's windows keep opening and
 * the PSNs, MSNs and addresses of every burst are fresh (a replayed frame would be a duplicate).
 * <p>
 * {@link #fillReceiveRing(int)} drives A (untimed, in a benchmark's set-up) until B's port holds a burst;
 * the benchmark then times B's side only. Single-threaded.
 */
final class SprayInMemoryPair implements AutoCloseable
{
    static final int MTU = 4096;
    static final int PATHS = 4;
    static final int REGION_BYTES = 1 << 20;
    static final int CID_A = 0xA1;
    static final int CID_B = 0xB2;
    private static final int OUTSTANDING = 512;
    private static final long STEP_NANOS = 1_000;

    final Arena arena = Arena.ofShared();
    final InMemoryLink link = new InMemoryLink("plane0", 4096, MTU + 512);
    final InMemoryPacketPort portA = link.first();
    final InMemoryPacketPort portB = link.second();
    final ProtectionDomain pdA = new ProtectionDomain();
    final ProtectionDomain pdB = new ProtectionDomain();
    final CompletionQueue cqA = new CompletionQueue(1 << 14);
    final CompletionQueue cqB = new CompletionQueue(1 << 14);
    final PortsFrameOutput outputA;
    final PortsFrameOutput outputB;
    final SprayEngine engineA;
    final SprayEngine engineB;
    final SprayTransportAgent agentA;
    final SprayTransportAgent agentB;
    final SprayConnection a;
    final SprayConnection b;
    final MemoryRegion source;
    final MemoryRegion target;
    final int payload;
    private final SendWorkRequest request = new SendWorkRequest();
    private final WorkCompletion completion = new WorkCompletion();
    private long now = 1_000_000;
    private long posted;
    private long completed;

    SprayInMemoryPair(final int payload)
    {
        if (payload < 1 || payload > MTU)
        {
            throw new IllegalArgumentException("payload must be 1.." + MTU + ": " + payload);
        }
        this.payload = payload;
        outputA = new PortsFrameOutput(new PacketPort[] {portA}, 64);
        outputB = new PortsFrameOutput(new PacketPort[] {portB}, 64);
        engineA = new SprayEngine(config(1), pdA, outputA);
        engineB = new SprayEngine(config(2), pdB, outputB);
        a = engineA.open(connection(CID_A, CID_B, 0x1000, 0x2000, 2, cqA));
        b = engineB.open(connection(CID_B, CID_A, 0x2000, 0x1000, 1, cqB));
        agentA = new SprayTransportAgent("a", new PacketPort[] {portA}, outputA, engineA, new ParseCounters(), () -> now, 256);
        agentB = new SprayTransportAgent("b", new PacketPort[] {portB}, outputB, engineB, new ParseCounters(), () -> now, 32);
        agentA.onStart();
        agentB.onStart();
        final MemorySegment src = arena.allocate(REGION_BYTES, 64);
        for (long i = 0; i < REGION_BYTES; i += 8)
        {
            src.set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
        }
        source = pdA.register(src, AccessFlags.NONE);
        target = pdB.register(arena.allocate(REGION_BYTES, 64), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
    }

    private static SprayConfig config(final int host)
    {
        // a capacity far above what one core moves, so that pacing never holds the sender back; no start probe or
        // budget (S8.3.1): every burst B receives is data
        return new SprayConfig().planes(1).local(0, 0x0A000000 | host, 0x020000000000L | host)
            .capacityMbps(10_000_000).window(64, 256).startBudgetBytes(-1).seed(host);
    }

    private static SprayConnectionConfig connection(
        final int localCid, final int remoteCid, final int sendPsn, final int receivePsn, final int remoteHost,
        final CompletionQueue cq)
    {
        return new SprayConnectionConfig().cids(localCid, remoteCid).paths(PATHS).mtu(MTU).streams(1)
            .initialPsns(sendPsn, receivePsn).depths(1024, 1024, 1024)
            .completionQueues(cq, cq)
            .remote(0, 0x0A000000 | remoteHost, 0x020000000000L | remoteHost);
    }

    /** @return B's virtual time: the benchmark passes it to B's engine. */
    long now()
    {
        return now;
    }

    /**
     * Steps A (posting writes, taking B's ACKs, sending data) until B's port holds at least {@code frames}
     * frames. B is not stepped here: its ACKs come from the timed part.
     */
    void fillReceiveRing(final int frames)
    {
        for (int step = 0; portB.pendingReceive() < frames; step++)
        {
            if (step > 100_000)
            {
                throw new IllegalStateException("sender stalled: A " + a + ", B " + b + ", B's ring " + portB.pendingReceive());
            }
            postWrites();
            now += STEP_NANOS;
            agentA.doWork();
            drainCompletions();
        }
        now += STEP_NANOS;
    }

    private void postWrites()
    {
        while (posted - completed < OUTSTANDING)
        {
            final long offset = (posted * payload) % (REGION_BYTES - payload + 1);
            request.reset().wrId(posted).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(source, source.address() + offset, payload)
                .remote(target.address() + offset, target.rkey()).signaled(true);
            if (a.postSend(0, request) != PostResult.OK)
            {
                return;
            }
            posted++;
        }
    }

    private void drainCompletions()
    {
        while (cqA.poll(completion))
        {
            completed++;
        }
    }

    /** @return data packets B accepted so far. */
    long receivedPackets()
    {
        return b.counters().get(SprayCounters.RX_PACKETS);
    }

    /** @return packets B saw as duplicates, out of window, or could not take: must stay 0. */
    long receiveAnomalies()
    {
        return b.counters().get(SprayCounters.DUPLICATES) + b.counters().get(SprayCounters.OUT_OF_WINDOW) +
            b.counters().get(SprayCounters.NO_RESOURCES) + engineB.counters().get(SprayCounters.MALFORMED);
    }

    public void close()
    {
        agentA.onClose();
        agentB.onClose();
        link.close();
        arena.close();
    }
}
