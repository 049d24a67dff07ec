package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.port.DpdkTestSupport;
import io.spraynic.datapath.transport.Psn;

import io.spraynic.datapath.port.DpdkPacketPort;
import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.MalformedReason;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.dpdk.Eal;
import io.spraynic.dpdk.Mempool;
import io.spraynic.dpdk.RingPortPair;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The RC transport between two endpoints over a crossed pair of DPDK {@code net_ring} ports, both agents
 * stepped on the test thread (an lcore). DPDK's mbufs hold 2048 B, so the path MTU is 1024. EAL starts once
 * in this class's JVM (surefire forks one per test class).
 */
class RcDpdkRingTest
{
    private static final int MIB = 1024 * 1024;
    private static final int MTU = PathMtu.MTU_1024;
    /** A default mbuf: 2048 B of data room after the headroom. */
    private static final int MBUF_FRAME_ROOM = 2048;

    private static Eal eal;
    private static Mempool pool;
    private static RingPortPair pair;
    private static DpdkPacketPort a;
    private static DpdkPacketPort b;

    private final SendWorkRequest send = new SendWorkRequest();
    private final ReceiveWorkRequest receive = new ReceiveWorkRequest();
    private RcTestbed bed;

    @BeforeAll
    static void start()
    {
        eal = DpdkTestSupport.initEal("rc");
        eal.registerCurrentThread();
        pool = Mempool.createPacketPool("rc", 8191, 256, 2048 + 128, -1);
        pair = RingPortPair.create("rc", 1, 1024);
        a = DpdkTestSupport.startSingleQueue(pair.first(), pool);
        b = DpdkTestSupport.startSingleQueue(pair.second(), pool);
    }

    @AfterAll
    static void stop()
    {
        pair.close();
        pool.close();
        eal.close();
    }

    @AfterEach
    void closeBed()
    {
        if (null != bed)
        {
            bed.steps(20); // let the last ACKs land
            bed.close();
            bed = null;
        }
        eal.registerCurrentThread(); // the agents' close gave the lcore back
        drain(a);
        drain(b);
        // every mbuf is back in the pool (rte_mempool_avail_count counts the lcore caches): nothing leaked
        assertEquals(pool.size(), pool.availableCount(), "mbufs leaked");
    }

    private static void drain(final PacketPort port)
    {
        final PacketBurst burst = port.newBurst(32);
        while (port.receive(burst) > 0)
        {
            port.release(burst);
        }
        burst.close();
    }

    private RcTestbed connect(final PacketPort portA, final PacketPort portB, final int psnA, final int psnB)
    {
        bed = new RcTestbed(portA, portB, MBUF_FRAME_ROOM, UnaryOperator.identity());
        bed.connect(MTU, psnA, psnB, x -> x);
        return bed;
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, MTU - 1, MTU, MTU + 1, MIB, 16 * MIB})
    void shouldWriteReadAndSendByteForByte(final int length)
    {
        connect(a, b, 100, 7000);
        final MemoryRegion source = bed.register(bed.pdA, length, AccessFlags.LOCAL_WRITE);
        final MemoryRegion target = bed.register(bed.pdB, length,
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
        RcTestbed.fill(source.segment(), length);
        final MemorySegment expected = source.segment().asSlice(0, length);

        assertEquals(PostResult.OK, bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), length).remote(target.address(), target.rkey())));
        assertSuccess(bed.await(bed.cqA, 100_000), 1);
        assertEquals(-1, expected.mismatch(target.segment().asSlice(0, length)), "write");

        // read it back into a cleared source
        source.segment().fill((byte)0);
        assertEquals(PostResult.OK, bed.qpA.postSend(send.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_READ)
            .local(source, source.address(), length).remote(target.address(), target.rkey())));
        assertSuccess(bed.await(bed.cqA, 100_000), 2);
        assertEquals(-1, target.segment().asSlice(0, length).mismatch(source.segment().asSlice(0, length)), "read");

        // and send it the other way, B to A
        RcTestbed.fill(target.segment(), length + 1);
        source.segment().fill((byte)0);
        assertEquals(PostResult.OK, bed.qpA.postReceive(receive.reset().wrId(3).buffer(source, source.address(), length)));
        assertEquals(PostResult.OK, bed.qpB.postSend(send.reset().wrId(4).opcode(WorkRequestOpcode.SEND)
            .local(target, target.address(), length)));
        assertSuccess(bed.await(bed.cqB, 100_000), 4);
        final WorkCompletion received = bed.await(bed.cqA, 10);
        assertSuccess(received, 3);
        assertEquals(length, received.byteLength());
        assertEquals(-1, target.segment().asSlice(0, length).mismatch(source.segment().asSlice(0, length)), "send");
        assertEquals(0, bed.engineA.counters().get(RcCounters.RETRANSMITTED));
    }

    @Test
    void shouldDropForgedDuplicateReadsWhileAVerifiedTransferRuns()
    {
        connect(a, b, 100, 7000);
        RcScenarios.forgedDuplicateReadsDuringTransfer(bed, a, 2 * MIB);
    }

    @ParameterizedTest(name = "revoke hook called: {0}")
    @ValueSource(booleans = {true, false})
    void shouldRefuseTheRestOfAWriteOnceItsTargetIsDeregistered(final boolean revokeHook)
    {
        connect(a, b, 100, 7000);
        RcScenarios.deregisterMidWrite(bed, 4 * MIB, MTU, revokeHook);
    }

    @Test
    void shouldRefuseAPathMtuWhoseFramesDoNotFitAnMbuf()
    {
        connect(a, b, 1, 2);
        final RcQueuePair qp = bed.engineA.createQueuePair(bed.cqA, bed.cqA, 4, 4);
        qp.toInit(0);
        final IllegalArgumentException ex = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> qp.toRtr(RcConnectionAttributes.of(1, RcTestbed.MAC_B, RcTestbed.IP_B, 1, PathMtu.MTU_2048, 0, 0)));
        assertEquals("path MTU 2048 needs frames of up to 2150 B; the port's buffers hold 2048", ex.getMessage());
    }

    @Test
    void shouldWrapThePsnSpace()
    {
        connect(a, b, 0xFFFFF0, 0xFFFF00);
        final int length = 256 * 1024;
        final MemoryRegion source = bed.register(bed.pdA, length, AccessFlags.NONE);
        final MemoryRegion target = bed.register(bed.pdB, length, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        RcTestbed.fill(source.segment(), 17);
        bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), length).remote(target.address(), target.rkey()));
        assertSuccess(bed.await(bed.cqA, 100_000), 1);
        assertEquals(-1, source.segment().mismatch(target.segment()));
        assertEquals(Psn.add(0xFFFFF0, length / MTU), bed.qpB.expectedPsn());
        assertTrue(bed.qpB.expectedPsn() < 0xFFFFF0, "wrapped");
    }

    @Test
    void shouldRecoverInjectedLossAndDuplicationByGoBackN()
    {
        final FaultInjectingPacketPort lossyA = new FaultInjectingPacketPort(a, 7, 0.01, 0.01, 0,
            FaultInjectingPacketPort.Selector.ALL).dropAt(5, 6);
        final FaultInjectingPacketPort lossyB = new FaultInjectingPacketPort(b, 8, 0.01, 0.01, 0,
            FaultInjectingPacketPort.Selector.ALL);
        connect(lossyA, lossyB, 300, 400);
        final int length = 4 * MIB;
        final MemoryRegion source = bed.register(bed.pdA, length, AccessFlags.LOCAL_WRITE);
        final MemoryRegion target = bed.register(bed.pdB, length,
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
        RcTestbed.fill(source.segment(), 23);
        bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), length).remote(target.address(), target.rkey()));
        assertSuccess(bed.await(bed.cqA, 2_000_000), 1);
        assertEquals(-1, source.segment().mismatch(target.segment()));
        final MemoryRegion back = bed.register(bed.pdA, length, AccessFlags.LOCAL_WRITE);
        bed.qpA.postSend(send.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_READ)
            .local(back, back.address(), length).remote(target.address(), target.rkey()));
        assertSuccess(bed.await(bed.cqA, 2_000_000), 2);
        assertEquals(-1, source.segment().mismatch(back.segment()));
        assertTrue(lossyA.dropped() >= 2 && lossyB.dropped() > 0);
        assertTrue(bed.engineA.counters().get(RcCounters.RETRANSMITTED) > 0);
        assertTrue(bed.engineB.counters().get(RcCounters.RX_DUPLICATES) > 0);
        bed.steps(20);
        bed.close();
        bed = null;
        lossyA.close();
        lossyB.close();
    }

    @Test
    void shouldRefuseAWrongRkeyAndWriteNothing()
    {
        connect(a, b, 1, 2);
        final MemoryRegion source = bed.register(bed.pdA, 4096, AccessFlags.NONE);
        final MemoryRegion target = bed.register(bed.pdB, 4096, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        RcTestbed.fill(source.segment(), 1);
        bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), 4096).remote(target.address(), ~target.rkey()));
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, bed.await(bed.cqA, 1000).status());
        assertEquals(4096, target.segment().asSlice(0, 4096).mismatch(MemorySegment.ofArray(new byte[4097])),
            "target untouched (still zero)");
        assertEquals(1, bed.engineB.counters().get(RcCounters.TX_NAK_ACCESS));
    }

    @Test
    void shouldDropAFrameWithABadIcrc()
    {
        connect(a, b, 10, 20);
        final MemoryRegion target = bed.register(bed.pdB, 512, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        final RoceFrameWriter writer = new RoceFrameWriter().ethernet(RcTestbed.MAC_A, RcTestbed.MAC_B)
            .ipv4(RcTestbed.IP_A, RcTestbed.IP_B).opcode(Opcode.RC_RDMA_WRITE_ONLY).destQp(bed.qpB.qpNumber()).psn(10)
            .reth(target.address(), target.rkey(), 512);
        final PacketBurst burst = a.newBurst(1);
        assertTrue(a.allocate(burst, 1));
        final MemorySegment payload = bed.arena.allocate(512).fill((byte)0x55);
        final int length = writer.writeFrame(burst.memory(), burst.offset(0), payload, 0, 512);
        burst.memory().set(java.lang.foreign.ValueLayout.JAVA_BYTE, burst.offset(0) + length - 1, (byte)0x99);
        burst.length(0, length);
        assertEquals(1, a.transmit(burst));
        burst.close();
        bed.steps(10);
        assertEquals(1, bed.parseB.get(MalformedReason.BAD_ICRC));
        assertEquals(0, bed.engineB.counters().get(RcCounters.RX_PACKETS));
        assertEquals(512, target.segment().mismatch(MemorySegment.ofArray(new byte[513])), "untouched");
    }

    private static void assertSuccess(final WorkCompletion wc, final long wrId)
    {
        assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(wrId, wc.wrId());
    }
}
