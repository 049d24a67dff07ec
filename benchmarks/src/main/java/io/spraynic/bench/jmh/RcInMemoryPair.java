package io.spraynic.bench.jmh;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.InMemoryPacketPort;
import io.spraynic.datapath.transport.PortFrameSink;
import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;
import io.spraynic.datapath.transport.rocev2.RcCounters;
import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.transport.rocev2.RcEngineConfig;
import io.spraynic.datapath.transport.rocev2.RcQueuePair;
import io.spraynic.datapath.transport.rocev2.RoceTransportAgent;
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
import java.lang.foreign.ValueLayout;

/**
 * The RoCEv2 twin of {@link SprayInMemoryPair}: two real RC engines, sender A and receiver B, one queue pair
 * each, over one {@link InMemoryLink} in virtual time; A posts one-packet RDMA WRITEs of {@code payload}
 * bytes, B's ACKs flow back. The same-run baseline for the spray receive burst.
 */
final class RcInMemoryPair implements AutoCloseable
{
    static final int REGION_BYTES = SprayInMemoryPair.REGION_BYTES;
    private static final int OUTSTANDING = 512;
    private static final long STEP_NANOS = 1_000;
    private static final long MAC_A = 0x02_00_00_00_00_01L;
    private static final long MAC_B = 0x02_00_00_00_00_02L;
    private static final int IP_A = 0x0A000001;
    private static final int IP_B = 0x0A000002;

    final Arena arena = Arena.ofShared();
    final InMemoryLink link = new InMemoryLink("rc", 4096, PathMtu.MTU_4096 + 512);
    final InMemoryPacketPort portA = link.first();
    final InMemoryPacketPort portB = link.second();
    final ProtectionDomain pdA = new ProtectionDomain();
    final ProtectionDomain pdB = new ProtectionDomain();
    final CompletionQueue cqA = new CompletionQueue(1 << 14);
    final CompletionQueue cqB = new CompletionQueue(1 << 14);
    final RcEngine engineA;
    final RcEngine engineB;
    final RcQueuePair qpA;
    final RcQueuePair qpB;
    final RoceTransportAgent agentA;
    final RoceTransportAgent agentB;
    final MemoryRegion source;
    final MemoryRegion target;
    final int payload;
    private final SendWorkRequest request = new SendWorkRequest();
    private final WorkCompletion completion = new WorkCompletion();
    private long now = 1_000_000;
    private long posted;
    private long completed;

    RcInMemoryPair(final int payload)
    {
        this.payload = payload;
        final PortFrameSink sinkA = new PortFrameSink(portA, 64, PathMtu.maxFrameLength(PathMtu.MTU_4096));
        final PortFrameSink sinkB = new PortFrameSink(portB, 64, PathMtu.maxFrameLength(PathMtu.MTU_4096));
        engineA = new RcEngine(RcEngineConfig.defaults(MAC_A, IP_A), pdA, sinkA);
        engineB = new RcEngine(RcEngineConfig.defaults(MAC_B, IP_B), pdB, sinkB);
        qpA = engineA.createQueuePair(cqA, cqA, 1024, 1024);
        qpB = engineB.createQueuePair(cqB, cqB, 1024, 1024);
        qpA.toInit(AccessFlags.REMOTE_WRITE);
        qpB.toInit(AccessFlags.REMOTE_WRITE);
        qpA.toRtr(RcConnectionAttributes.of(qpB.qpNumber(), MAC_B, IP_B, 0xC001, PathMtu.MTU_4096, 0x1000, 0x2000));
        qpB.toRtr(RcConnectionAttributes.of(qpA.qpNumber(), MAC_A, IP_A, 0xC002, PathMtu.MTU_4096, 0x2000, 0x1000));
        qpA.toRts();
        qpB.toRts();
        agentA = new RoceTransportAgent("a", portA, sinkA, engineA, new ParseCounters(), () -> now, 256);
        agentB = new RoceTransportAgent("b", portB, sinkB, engineB, new ParseCounters(), () -> now, 32);
        agentA.onStart();
        agentB.onStart();
        final MemorySegment src = arena.allocate(REGION_BYTES, 64);
        for (long i = 0; i < REGION_BYTES; i += 8)
        {
            src.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
        }
        source = pdA.register(src, AccessFlags.NONE);
        target = pdB.register(arena.allocate(REGION_BYTES, 64), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
    }

    /** Steps A until B's port holds at least {@code frames} frames (see {@link SprayInMemoryPair#fillReceiveRing}). */
    void fillReceiveRing(final int frames)
    {
        for (int step = 0; portB.pendingReceive() < frames; step++)
        {
            if (step > 100_000)
            {
                throw new IllegalStateException("sender stalled: " + qpA + " " + engineA.counters());
            }
            while (posted - completed < OUTSTANDING)
            {
                final long offset = (posted * payload) % (REGION_BYTES - payload + 1);
                request.reset().wrId(posted).opcode(WorkRequestOpcode.RDMA_WRITE)
                    .local(source, source.address() + offset, payload)
                    .remote(target.address() + offset, target.rkey()).signaled(true);
                if (qpA.postSend(request) != PostResult.OK)
                {
                    break;
                }
                posted++;
            }
            now += STEP_NANOS;
            agentA.doWork();
            while (cqA.poll(completion))
            {
                completed++;
            }
        }
        now += STEP_NANOS;
    }

    long receivedPackets()
    {
        return engineB.counters().get(RcCounters.RX_PACKETS);
    }

    long receiveAnomalies()
    {
        final var c = engineB.counters();
        return c.get(RcCounters.RX_DUPLICATES) + c.get(RcCounters.RX_OUT_OF_SEQUENCE) + c.get(RcCounters.RX_UNKNOWN_QP) +
            c.get(RcCounters.RX_INVALID_STATE) + c.get(RcCounters.TX_NAK_SEQUENCE) + c.get(RcCounters.TX_NAK_ACCESS);
    }

    public void close()
    {
        agentA.onClose();
        agentB.onClose();
        link.close();
        arena.close();
    }
}
