package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;
import io.spraynic.datapath.transport.rocev2.RcCounters;
import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.transport.rocev2.RcEngineConfig;
import io.spraynic.datapath.transport.rocev2.RcQueuePair;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A lone {@link NicWorker} from {@link NicWorker#builder()}: refused without what it needs, and, around two RoCEv2
 * engines over an in-memory link, the loop that carries a WRITE, in the time it is given (its timers run only when
 * the injected clock says so).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class NicWorkerBuilderTest
{
    private static final long MAC_A = 0x02_53_50_00_00_0AL;
    private static final long MAC_B = 0x02_53_50_00_00_0BL;
    private static final int IP_A = 0x0A_00_00_01;
    private static final int IP_B = 0x0A_00_00_02;
    private static final long ACK_TIMEOUT_NANOS = 1_000_000;
    private static final int LENGTH = 64 * 1024;

    private final InMemoryLink link = new InMemoryLink("builder", 256,
        InMemoryLink.HEADROOM + PathMtu.maxFrameLength(PathMtu.MTU_4096) + 64);
    private final Arena arena = Arena.ofShared();
    private long now = 1_000_000;

    @AfterEach
    void close()
    {
        link.close();
        arena.close();
    }

    @Test
    void shouldRefuseAWorkerWithoutPortsOrAnEngine()
    {
        final PortFrameSink sink = new PortFrameSink(link.first(), 32, PathMtu.maxFrameLength(PathMtu.MTU_4096));
        final RcEngine engine = new RcEngine(RcEngineConfig.defaults(MAC_A, IP_A), new ProtectionDomain(), sink);
        assertThrows(IllegalArgumentException.class, () -> NicWorker.builder().rocev2(engine, sink).build());
        assertThrows(IllegalArgumentException.class, () -> NicWorker.builder().ports(link.first()).build());
        assertThrows(IllegalArgumentException.class,
            () -> NicWorker.builder().ports(link.first(), link.second()).rocev2(engine, sink).build());
        assertThrows(IllegalArgumentException.class, () -> NicWorker.builder().burst(0));
        assertThrows(IllegalArgumentException.class, () -> NicWorker.builder().rxBurstsPerLoop(0));
    }

    @Test
    void shouldCarryAWriteInTheTimeItIsGiven()
    {
        final ProtectionDomain pdA = new ProtectionDomain();
        final ProtectionDomain pdB = new ProtectionDomain();
        final CompletionQueue cqA = new CompletionQueue(64);
        final CompletionQueue cqB = new CompletionQueue(64);
        final PacketPort portA = link.first();
        final PacketPort portB = link.second();
        final PortFrameSink sinkA = new PortFrameSink(portA, 32, PathMtu.maxFrameLength(PathMtu.MTU_4096));
        final PortFrameSink sinkB = new PortFrameSink(portB, 32, PathMtu.maxFrameLength(PathMtu.MTU_4096));
        final RcEngine engineA = new RcEngine(RcEngineConfig.defaults(MAC_A, IP_A), pdA, sinkA);
        final RcEngine engineB = new RcEngine(RcEngineConfig.defaults(MAC_B, IP_B), pdB, sinkB);
        final RcQueuePair qpA = engineA.createQueuePair(cqA, cqA, 16, 16);
        final RcQueuePair qpB = engineB.createQueuePair(cqB, cqB, 16, 16);
        qpA.toInit(AccessFlags.REMOTE_WRITE);
        qpB.toInit(AccessFlags.REMOTE_WRITE);
        qpA.toRtr(RcConnectionAttributes.of(qpB.qpNumber(), MAC_B, IP_B, 0xC001, PathMtu.MTU_4096, 100, 200)
            .withRetry(ACK_TIMEOUT_NANOS, 7));
        qpB.toRtr(RcConnectionAttributes.of(qpA.qpNumber(), MAC_A, IP_A, 0xC002, PathMtu.MTU_4096, 200, 100)
            .withRetry(ACK_TIMEOUT_NANOS, 7));
        qpA.toRts();
        qpB.toRts();
        final NicWorker workerA = NicWorker.builder().roleName("a").ports(portA).rocev2(engineA, sinkA)
            .protectionDomain(pdA).clock(() -> now).build();
        final NicWorker workerB = NicWorker.builder().roleName("b").ports(portB).rocev2(engineB, sinkB)
            .protectionDomain(pdB).clock(() -> now).build();
        try
        {
            final MemoryRegion source = pdA.register(arena.allocate(LENGTH, 64), AccessFlags.LOCAL_WRITE);
            final MemoryRegion target = pdB.register(arena.allocate(LENGTH, 64),
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            for (int i = 0; i < LENGTH; i++)
            {
                source.segment().set(ValueLayout.JAVA_BYTE, i, (byte)(i * 31 + 7));
            }
            assertEquals(PostResult.OK, qpA.postSend(new SendWorkRequest().wrId(42).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(source, source.address(), LENGTH).remote(target.address(), target.rkey())));

            // only A runs, its clock stands still: it sends once and waits; no timer fires however often it loops
            for (int i = 0; i < 1_000; i++)
            {
                workerA.doWork();
            }
            assertTrue(engineA.counters().get(RcCounters.TX_PACKETS) > 0, "A sent the WRITE");
            assertEquals(0, engineA.counters().get(RcCounters.RETRANSMITTED), "no time passed: no retransmission");
            now += 2 * ACK_TIMEOUT_NANOS;
            workerA.doWork();
            assertTrue(engineA.counters().get(RcCounters.RETRANSMITTED) > 0, "the ACK timeout passed in the given time");

            final WorkCompletion wc = new WorkCompletion();
            for (int step = 0; step < 100_000 && !cqA.poll(wc); step++)
            {
                workerB.doWork();
                workerA.doWork();
                now += 1_000;
            }
            assertEquals(42, wc.wrId());
            assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
            assertEquals(-1, source.segment().mismatch(target.segment()), "the WRITE placed every byte");
            assertTrue(workerB.counters().rxFrames().get() > 0, "B's worker counted what it received");
            assertEquals(0, workerA.faults() + workerB.faults());
        }
        finally
        {
            workerA.onClose();
            workerB.onClose();
        }
    }
}
