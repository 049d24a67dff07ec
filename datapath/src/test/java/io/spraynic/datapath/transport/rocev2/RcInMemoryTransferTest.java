package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.Psn;

import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.QueuePairState;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.MalformedReason;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.UdpHeader;
import io.spraynic.datapath.wire.Wire;
import io.spraynic.datapath.port.PacketBurst;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two RC engines over an in-JVM link, stepped in one thread in virtual time: every operation, size,
 * fault and error of the standard RoCEv2 RC transport, data checked byte for byte.
 */
class RcInMemoryTransferTest
{
    private static final int MIB = 1024 * 1024;
    /** Room for a 4096 MTU frame and its headroom. */
    private static final int SLOT_SIZE = InMemoryLink.HEADROOM + PathMtu.maxFrameLength(PathMtu.MTU_4096) + 64;

    private final InMemoryLink link = new InMemoryLink("rc", 1024, SLOT_SIZE);
    private final SendWorkRequest send = new SendWorkRequest();
    private final ReceiveWorkRequest receive = new ReceiveWorkRequest();
    private RcTestbed bed;

    @AfterEach
    void close()
    {
        if (null != bed)
        {
            bed.close();
        }
        link.close();
    }

    private RcTestbed bed(final PacketPort a, final PacketPort b)
    {
        bed = new RcTestbed(a, b, UnaryOperator.identity());
        return bed;
    }

    private RcTestbed bed()
    {
        return bed(link.first(), link.second());
    }

    /** Data packets: requests and READ responses, anything RC with a payload-carrying opcode. */
    static boolean isData(final MemorySegment memory, final long offset, final int length)
    {
        final int opcode = Wire.u8(memory, offset + EthernetHeader.LENGTH + Ipv4Header.LENGTH + UdpHeader.LENGTH);
        return opcode != Opcode.RC_ACKNOWLEDGE && opcode != Opcode.CNP;
    }

    private WorkCompletion write(final int length, final int mtu, final long maxSteps)
    {
        final MemoryRegion source = bed.register(bed.pdA, length, AccessFlags.NONE);
        final MemoryRegion target = bed.register(bed.pdB, length, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        RcTestbed.fill(source.segment(), length);
        assertEquals(PostResult.OK, bed.qpA.postSend(send.reset().wrId(41).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), length).remote(target.address(), target.rkey())));
        final WorkCompletion wc = bed.await(bed.cqA, maxSteps);
        assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(41, wc.wrId());
        assertEquals(WorkCompletionOpcode.RDMA_WRITE, wc.opcode());
        assertEquals(-1, source.segment().asSlice(0, length).mismatch(target.segment().asSlice(0, length)),
            "target differs from source");
        return wc;
    }

    private void read(final int length, final long maxSteps)
    {
        final MemoryRegion source = bed.register(bed.pdB, length, AccessFlags.REMOTE_READ);
        final MemoryRegion target = bed.register(bed.pdA, length, AccessFlags.LOCAL_WRITE);
        RcTestbed.fill(source.segment(), length + 7);
        assertEquals(PostResult.OK, bed.qpA.postSend(send.reset().wrId(42).opcode(WorkRequestOpcode.RDMA_READ)
            .local(target, target.address(), length).remote(source.address(), source.rkey())));
        final WorkCompletion wc = bed.await(bed.cqA, maxSteps);
        assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
        assertEquals(42, wc.wrId());
        assertEquals(WorkCompletionOpcode.RDMA_READ, wc.opcode());
        assertEquals(length, wc.byteLength());
        assertEquals(-1, source.segment().asSlice(0, length).mismatch(target.segment().asSlice(0, length)),
            "read data differs");
    }

    private void sendMessage(final int length, final long maxSteps)
    {
        final MemoryRegion source = bed.register(bed.pdA, length, AccessFlags.NONE);
        final MemoryRegion target = bed.register(bed.pdB, length, AccessFlags.LOCAL_WRITE);
        RcTestbed.fill(source.segment(), length + 13);
        assertEquals(PostResult.OK, bed.qpB.postReceive(receive.reset().wrId(77).buffer(target, target.address(), length)));
        assertEquals(PostResult.OK, bed.qpA.postSend(send.reset().wrId(43).opcode(WorkRequestOpcode.SEND)
            .local(source, source.address(), length)));
        final WorkCompletion sent = bed.await(bed.cqA, maxSteps);
        assertEquals(WorkCompletionStatus.SUCCESS, sent.status(), sent::toString);
        assertEquals(WorkCompletionOpcode.SEND, sent.opcode());
        final WorkCompletion received = bed.await(bed.cqB, 10);
        assertEquals(WorkCompletionStatus.SUCCESS, received.status());
        assertEquals(77, received.wrId());
        assertEquals(WorkCompletionOpcode.RECV, received.opcode());
        assertEquals(length, received.byteLength());
        assertFalse(received.hasImmediate());
        assertEquals(-1, source.segment().asSlice(0, length).mismatch(target.segment().asSlice(0, length)));
    }

    @ParameterizedTest
    @CsvSource({"0,1024", "1,1024", "1023,1024", "1024,1024", "1025,1024", "1048576,1024", "16777216,4096",
        "256,256", "257,256", "4096,4096", "4097,4096", "2049,2048", "511,512"})
    void shouldWriteEverySizeByteForByte(final int length, final int mtu)
    {
        bed().connect(mtu);
        write(length, mtu, 200_000);
        assertEquals(0, bed.engineA.counters().get(RcCounters.RETRANSMITTED));
        assertEquals(PathMtu.packetCount(length, mtu), bed.engineA.counters().get(RcCounters.TX_REQUESTS));
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 1023, 1024, 1025, MIB, 16 * MIB})
    void shouldReadEverySizeByteForByte(final int length)
    {
        bed().connect(length >= 16 * MIB ? 4096 : 1024);
        read(length, 200_000);
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 1023, 1024, 1025, MIB, 16 * MIB})
    void shouldSendEverySizeByteForByte(final int length)
    {
        bed().connect(length >= 16 * MIB ? 4096 : 1024);
        sendMessage(length, 200_000);
    }

    @Test
    void shouldTransferOverIpv6()
    {
        bed();
        final long prefix = 0xFD00_0000_0000_0001L;
        bed.qpA = bed.engineA.createQueuePair(bed.cqA, bed.cqA, 16, 16);
        bed.qpB = bed.engineB.createQueuePair(bed.cqB, bed.cqB, 16, 16);
        bed.qpA.toInit(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
        bed.qpB.toInit(AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
        bed.qpA.toRtr(RcConnectionAttributes.of(bed.qpB.qpNumber(), RcTestbed.MAC_B, 0, 0xC001, 4096, 7, 8)
            .withIpv6(prefix, 0xA, prefix, 0xB));
        bed.qpB.toRtr(RcConnectionAttributes.of(bed.qpA.qpNumber(), RcTestbed.MAC_A, 0, 0xC002, 4096, 8, 7)
            .withIpv6(prefix, 0xB, prefix, 0xA));
        bed.qpA.toRts();
        bed.qpB.toRts();
        write(100_000, 4096, 10_000);
        read(100_000, 10_000);
        sendMessage(100_000, 10_000);
        assertEquals(0, bed.parseA.malformed() + bed.parseB.malformed());
        assertTrue(bed.parseB.get(io.spraynic.datapath.wire.ParseCounters.ROCE) > 50);
    }

    @Test
    void shouldDeliverImmediateDataOfWriteAndSend()
    {
        bed().connect(1024);
        final MemoryRegion source = bed.register(bed.pdA, 3000, AccessFlags.NONE);
        final MemoryRegion target = bed.register(bed.pdB, 3000, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        RcTestbed.fill(source.segment(), 5);
        bed.qpB.postReceive(receive.reset().wrId(1));
        bed.qpB.postReceive(receive.reset().wrId(2).buffer(target, target.address(), 100));
        bed.qpA.postSend(send.reset().wrId(10).opcode(WorkRequestOpcode.RDMA_WRITE_WITH_IMM)
            .local(source, source.address(), 3000).remote(target.address(), target.rkey()).immediate(0xCAFEBABE));
        bed.qpA.postSend(send.reset().wrId(11).opcode(WorkRequestOpcode.SEND_WITH_IMM)
            .local(source, source.address(), 0).immediate(0x12345678));

        WorkCompletion wc = bed.await(bed.cqB, 1000);
        assertEquals(WorkCompletionOpcode.RECV_RDMA_WITH_IMM, wc.opcode());
        assertEquals(1, wc.wrId());
        assertEquals(3000, wc.byteLength());
        assertTrue(wc.hasImmediate());
        assertEquals(0xCAFEBABE, wc.immediateData());
        assertEquals(-1, source.segment().mismatch(target.segment()));
        wc = bed.await(bed.cqB, 1000);
        assertEquals(WorkCompletionOpcode.RECV, wc.opcode());
        assertEquals(2, wc.wrId());
        assertEquals(0, wc.byteLength());
        assertEquals(0x12345678, wc.immediateData());
        assertEquals(10, bed.await(bed.cqA, 1000).wrId());
        assertEquals(11, bed.await(bed.cqA, 1000).wrId());
    }

    @Test
    void shouldCompleteRequestsInOrderAndSkipUnsignaledSuccesses()
    {
        bed().connect(1024);
        final MemoryRegion source = bed.register(bed.pdA, 8192, AccessFlags.LOCAL_WRITE);
        final MemoryRegion target = bed.register(bed.pdB, 8192, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE |
            AccessFlags.REMOTE_READ);
        for (int i = 0; i < 8; i++)
        {
            final WorkRequestOpcode opcode = i % 2 == 0 ? WorkRequestOpcode.RDMA_WRITE : WorkRequestOpcode.RDMA_READ;
            bed.qpA.postSend(send.reset().wrId(i).opcode(opcode).local(source, source.address() + i * 1024L, 1024)
                .remote(target.address() + i * 1024L, target.rkey()).signaled(i != 3));
        }
        for (final int expected : new int[] {0, 1, 2, 4, 5, 6, 7})
        {
            assertEquals(expected, bed.await(bed.cqA, 1000).wrId());
        }
    }

    @ParameterizedTest
    @CsvSource({"16777200,16777210,1024", "16777215,16777000,256", "0,16777215,4096"})
    void shouldWrapThePsnSpace(final int psnA, final int psnB, final int mtu)
    {
        bed().connect(mtu, psnA, psnB, a -> a);
        write(64 * 1024, mtu, 10_000);
        read(64 * 1024, 10_000);
        sendMessage(64 * 1024, 10_000);
        assertEquals(Psn.add(psnA, 3 * 64 * 1024 / mtu), bed.qpA.sendPsn());
        assertEquals(Psn.add(psnA, 3 * 64 * 1024 / mtu), bed.qpB.expectedPsn());
    }

    @Test
    void shouldRecoverExactLossPatternByGoBackN()
    {
        final FaultInjectingPacketPort lossy = FaultInjectingPacketPort.exact(link.first(), RcInMemoryTransferTest::isData)
            .dropAt(4, 5);
        bed(lossy, link.second()).connect(1024);
        write(64 * 1024, 1024, 10_000);
        assertEquals(2, lossy.dropped());
        assertEquals(1, bed.engineB.counters().get(RcCounters.TX_NAK_SEQUENCE), "one NAK per gap");
        assertEquals(1, bed.engineA.counters().get(RcCounters.RX_NAKS));
        assertEquals(0, bed.engineA.counters().get(RcCounters.TIMEOUTS));
        assertEquals(64, bed.engineA.counters().get(RcCounters.TX_REQUESTS));
        assertTrue(bed.engineA.counters().get(RcCounters.RETRANSMITTED) >= 2);
    }

    @Test
    void shouldRecoverLossOfTheLastPacketByTimeout()
    {
        final FaultInjectingPacketPort lossy = FaultInjectingPacketPort.exact(link.first(), RcInMemoryTransferTest::isData)
            .dropAt(15);
        bed(lossy, link.second()).connect(1024);
        write(16 * 1024, 1024, 10_000);
        assertEquals(1, bed.engineA.counters().get(RcCounters.TIMEOUTS));
        // fewer than 16 packets arrived, so none was acknowledged: go-back-N sends all 16 again
        assertEquals(16, bed.engineA.counters().get(RcCounters.RETRANSMITTED));
        assertEquals(15, bed.engineB.counters().get(RcCounters.RX_DUPLICATES));
    }

    @Test
    void shouldRecoverLostReadResponsesByReissuingTheRead()
    {
        final FaultInjectingPacketPort lossy = FaultInjectingPacketPort.exact(link.second(), RcInMemoryTransferTest::isData)
            .dropAt(3, 10, 11, 63);
        bed(link.first(), lossy).connect(1024);
        read(64 * 1024, 20_000);
        assertEquals(4, lossy.dropped());
        // each loss is answered by re-issuing the READ from the first missing response
        assertTrue(bed.engineB.counters().get(RcCounters.RX_DUPLICATES) >= 2, () -> bed.engineB.counters().toString());
        assertEquals(bed.engineB.counters().get(RcCounters.RX_DUPLICATES),
            bed.engineA.counters().get(RcCounters.RETRANSMITTED));
    }

    @ParameterizedTest
    @CsvSource({"0.01,0.0,11", "0.10,0.0,12", "0.0,0.05,13", "0.05,0.05,14"})
    void shouldRecoverRandomLossAndDuplicationInBothDirections(final double drop, final double duplicate, final long seed)
    {
        final FaultInjectingPacketPort a = new FaultInjectingPacketPort(link.first(), seed, drop, duplicate, 0,
            FaultInjectingPacketPort.Selector.ALL);
        final FaultInjectingPacketPort b = new FaultInjectingPacketPort(link.second(), seed + 100, drop, duplicate, 0,
            FaultInjectingPacketPort.Selector.ALL);
        bed(a, b).connect(1024);
        write(MIB, 1024, 2_000_000);
        read(256 * 1024, 2_000_000);
        sendMessage(256 * 1024, 2_000_000);
        if (drop > 0)
        {
            assertTrue(a.dropped() > 0 && bed.engineA.counters().get(RcCounters.RETRANSMITTED) > 0);
        }
        if (duplicate > 0)
        {
            assertTrue(a.duplicated() > 0 && bed.engineB.counters().get(RcCounters.RX_DUPLICATES) > 0);
        }
        assertEquals(QueuePairState.RTS, bed.qpA.state());
        assertEquals(QueuePairState.RTS, bed.qpB.state());
    }

    @Test
    void shouldFailWithRetryExceededWhenThePeerIsGone()
    {
        final FaultInjectingPacketPort dead = new FaultInjectingPacketPort(link.first(), 1, 1.0, 0, 0,
            FaultInjectingPacketPort.Selector.ALL);
        bed(dead, link.second()).connect(1024, 100, 200, a -> a.withRetry(100_000, 3));
        final MemoryRegion source = bed.register(bed.pdA, 4096, AccessFlags.NONE);
        bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE).local(source, source.address(), 4096)
            .remote(0x1000, 1));
        bed.qpA.postSend(send.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE).local(source, source.address(), 4096)
            .remote(0x1000, 1));
        final WorkCompletion first = bed.await(bed.cqA, 10_000);
        assertEquals(1, first.wrId());
        assertEquals(WorkCompletionStatus.RETRY_EXC_ERR, first.status());
        assertEquals(12, first.status().code());
        final WorkCompletion second = bed.await(bed.cqA, 10);
        assertEquals(2, second.wrId());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, second.status());
        assertEquals(QueuePairState.ERROR, bed.qpA.state());
        assertEquals(4, bed.engineA.counters().get(RcCounters.TIMEOUTS), "the first try and three retries");
        // posting in ERROR completes at once with a flush error, as ibverbs does
        assertEquals(PostResult.OK, bed.qpA.postSend(send.reset().wrId(3).opcode(WorkRequestOpcode.SEND)));
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, bed.await(bed.cqA, 1).status());
    }

    @Test
    void shouldRnrNakUntilAReceiveIsPosted()
    {
        bed().connect(1024, 100, 200, a -> a.withRnr(RcConnectionAttributes.RNR_RETRY_INFINITE, 1));
        final MemoryRegion source = bed.register(bed.pdA, 2048, AccessFlags.NONE);
        final MemoryRegion target = bed.register(bed.pdB, 2048, AccessFlags.LOCAL_WRITE);
        RcTestbed.fill(source.segment(), 3);
        bed.qpA.postSend(send.reset().wrId(5).opcode(WorkRequestOpcode.SEND).local(source, source.address(), 2048));
        bed.steps(200);
        assertTrue(bed.engineB.counters().get(RcCounters.TX_RNR_NAK) >= 5, () -> bed.engineB.counters().toString());
        assertEquals(0, bed.engineB.counters().get(RcCounters.TX_NAK_SEQUENCE));
        assertTrue(bed.cqA.isEmpty());
        bed.qpB.postReceive(receive.reset().wrId(6).buffer(target, target.address(), 2048));
        assertEquals(WorkCompletionStatus.SUCCESS, bed.await(bed.cqA, 1000).status());
        assertEquals(6, bed.await(bed.cqB, 10).wrId());
        assertEquals(-1, source.segment().mismatch(target.segment()));
    }

    @Test
    void shouldFailWithRnrRetryExceeded()
    {
        bed().connect(1024, 100, 200, a -> a.withRnr(2, 1));
        bed.qpA.postSend(send.reset().wrId(5).opcode(WorkRequestOpcode.SEND));
        final WorkCompletion wc = bed.await(bed.cqA, 1000);
        assertEquals(WorkCompletionStatus.RNR_RETRY_EXC_ERR, wc.status());
        assertEquals(13, wc.status().code());
        assertEquals(3, bed.engineB.counters().get(RcCounters.TX_RNR_NAK));
        assertEquals(QueuePairState.ERROR, bed.qpA.state());
    }

    @ParameterizedTest
    @CsvSource({"WRONG_KEY,RDMA_WRITE", "OUT_OF_BOUNDS,RDMA_WRITE", "BELOW_START,RDMA_WRITE", "NO_RIGHT,RDMA_WRITE",
        "WRONG_KEY,RDMA_READ", "OUT_OF_BOUNDS,RDMA_READ", "NO_RIGHT,RDMA_READ", "DEREGISTERED,RDMA_WRITE"})
    void shouldRefuseRemoteAccessWithNakAndWriteNothing(final String fault, final WorkRequestOpcode opcode)
    {
        bed().connect(1024);
        final int length = 5000;
        final boolean write = opcode == WorkRequestOpcode.RDMA_WRITE;
        final int rights = "NO_RIGHT".equals(fault) ? AccessFlags.LOCAL_WRITE :
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
        final MemoryRegion remote = bed.register(bed.pdB, length, rights);
        final MemoryRegion local = bed.register(bed.pdA, length, AccessFlags.LOCAL_WRITE);
        RcTestbed.fill(remote.segment(), 99);
        RcTestbed.fill(local.segment(), 98);
        final MemorySegment remoteBefore = bed.arena.allocate(length).copyFrom(remote.segment());
        final MemorySegment localBefore = bed.arena.allocate(length).copyFrom(local.segment());
        int rkey = remote.rkey();
        long address = remote.address();
        switch (fault)
        {
            case "WRONG_KEY" -> rkey = remote.rkey() ^ 0x5A5A;
            case "OUT_OF_BOUNDS" -> address = remote.address() + 1;
            case "BELOW_START" -> address = remote.address() - 1;
            case "DEREGISTERED" -> bed.pdB.deregister(remote);
            default -> { }
        }
        bed.qpA.postSend(send.reset().wrId(9).opcode(opcode).local(local, local.address(), length).remote(address, rkey));
        bed.qpA.postSend(send.reset().wrId(10).opcode(opcode).local(local, local.address(), length)
            .remote(remote.address(), remote.rkey()));
        final WorkCompletion wc = bed.await(bed.cqA, 1000);
        assertEquals(9, wc.wrId());
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, wc.status());
        assertEquals(10, wc.status().code());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, bed.await(bed.cqA, 10).status());
        assertEquals(1, bed.engineB.counters().get(RcCounters.TX_NAK_ACCESS));
        assertEquals(0, bed.engineB.counters().get(RcCounters.BYTES_PLACED));
        assertEquals(-1, remoteBefore.mismatch(remote.segment()), "remote memory touched");
        assertEquals(-1, localBefore.mismatch(local.segment()), "local memory touched");
        assertEquals(QueuePairState.ERROR, bed.qpA.state());
        assertEquals(QueuePairState.ERROR, bed.qpB.state());
        assertTrue(write || bed.engineB.counters().get(RcCounters.TX_READ_RESPONSES) == 0);
    }

    @Test
    void shouldCompleteWithLocalProtectionErrorForABadLocalBuffer()
    {
        bed().connect(1024);
        final MemoryRegion local = bed.register(bed.pdA, 100, AccessFlags.NONE);
        final MemoryRegion remote = bed.register(bed.pdB, 100, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE).local(local, local.address(), 100)
            .remote(remote.address(), remote.rkey()));
        bed.qpA.postSend(send.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE).local(local, local.address(), 101)
            .remote(remote.address(), remote.rkey()));
        assertEquals(WorkCompletionStatus.SUCCESS, bed.await(bed.cqA, 100).status());
        final WorkCompletion wc = bed.await(bed.cqA, 100);
        assertEquals(2, wc.wrId());
        assertEquals(WorkCompletionStatus.LOC_PROT_ERR, wc.status());
        assertEquals(QueuePairState.ERROR, bed.qpA.state());
    }

    @Test
    void shouldFailASendLongerThanTheReceiveBuffer()
    {
        bed().connect(1024);
        final MemoryRegion local = bed.register(bed.pdA, 3000, AccessFlags.NONE);
        final MemoryRegion remote = bed.register(bed.pdB, 3000, AccessFlags.LOCAL_WRITE);
        bed.qpB.postReceive(receive.reset().wrId(8).buffer(remote, remote.address(), 2000));
        bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.SEND).local(local, local.address(), 3000));
        assertEquals(WorkCompletionStatus.REM_INV_REQ_ERR, bed.await(bed.cqA, 100).status());
        final WorkCompletion wc = bed.await(bed.cqB, 10);
        assertEquals(8, wc.wrId());
        assertEquals(WorkCompletionStatus.LOC_LEN_ERR, wc.status());
    }

    @Test
    void shouldDropMalformedPacketsAndCountThem()
    {
        bed().connect(1024);
        final MemoryRegion target = bed.register(bed.pdB, 256, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        final MemorySegment before = bed.arena.allocate(256).copyFrom(target.segment());
        final RoceFrameWriter writer = new RoceFrameWriter()
            .ethernet(RcTestbed.MAC_A, RcTestbed.MAC_B).ipv4(RcTestbed.IP_A, RcTestbed.IP_B)
            .opcode(Opcode.RC_RDMA_WRITE_ONLY).destQp(bed.qpB.qpNumber()).psn(100).ackReq(true)
            .reth(target.address(), target.rkey(), 256);
        final MemorySegment payload = bed.arena.allocate(256).fill((byte)0x77);
        final PacketBurst burst = link.first().newBurst(4);
        assertTrue(link.first().allocate(burst, 3));
        // 0: bad ICRC (a payload byte flipped after the ICRC was computed)
        int length = writer.writeFrame(burst.memory(), burst.offset(0), payload, 0, 256);
        burst.memory().set(java.lang.foreign.ValueLayout.JAVA_BYTE, burst.offset(0) + writer.payloadOffset() + 10, (byte)0);
        burst.length(0, length);
        // 1: truncated inside the BTH
        length = writer.writeFrame(burst.memory(), burst.offset(1), payload, 0, 256);
        burst.length(1, EthernetHeader.LENGTH + Ipv4Header.LENGTH + UdpHeader.LENGTH + 6);
        // 2: truncated frame, the IP length now beyond it
        length = writer.writeFrame(burst.memory(), burst.offset(2), payload, 0, 256);
        burst.length(2, length - 100);
        assertEquals(3, link.first().transmit(burst));
        bed.steps(10);
        assertEquals(1, bed.parseB.get(MalformedReason.BAD_ICRC));
        // both cut frames end before the length their IP header claims
        assertEquals(2, bed.parseB.get(MalformedReason.TRUNCATED_IP), () -> bed.parseB.toString());
        assertEquals(3, bed.parseB.malformed());
        assertEquals(0, bed.engineB.counters().get(RcCounters.RX_PACKETS), "malformed packets reach the engine");
        assertEquals(-1, before.mismatch(target.segment()));

        // the same packet intact is delivered
        assertTrue(link.first().allocate(burst, 1));
        burst.length(0, writer.writeFrame(burst.memory(), burst.offset(0), payload, 0, 256));
        assertEquals(1, link.first().transmit(burst));
        bed.steps(10);
        assertEquals(1, bed.engineB.counters().get(RcCounters.RX_PACKETS));
        assertEquals(-1, payload.mismatch(target.segment()));
        assertEquals(101, bed.qpB.expectedPsn());
        assertEquals(1, bed.engineB.counters().get(RcCounters.TX_ACKS));
        burst.close();
    }

    @Test
    void shouldDropPacketsForUnknownQueuePairs()
    {
        bed().connect(1024);
        final RoceFrameWriter writer = new RoceFrameWriter()
            .ethernet(RcTestbed.MAC_A, RcTestbed.MAC_B).ipv4(RcTestbed.IP_A, RcTestbed.IP_B)
            .opcode(Opcode.RC_SEND_ONLY).destQp(0x777).psn(1);
        final PacketBurst burst = link.first().newBurst(1);
        assertTrue(link.first().allocate(burst, 1));
        burst.length(0, writer.writeFrame(burst.memory(), burst.offset(0), 0));
        link.first().transmit(burst);
        bed.steps(2);
        assertEquals(1, bed.engineB.counters().get(RcCounters.RX_UNKNOWN_QP));
        burst.close();
    }

    @Test
    void shouldSendCnpsOnCeMarksAndSlowTheSender()
    {
        // 2 % of data packets marked: enough for CNPs, not enough to push the rate to its floor
        final FaultInjectingPacketPort marking = new FaultInjectingPacketPort(link.first(), 5, 0, 0, 0.02,
            RcInMemoryTransferTest::isData);
        bed(marking, link.second()).connect(1024);
        write(MIB, 1024, 200_000);
        final long cnps = bed.engineB.counters().get(RcCounters.TX_CNP);
        assertTrue(cnps >= 1, "CNPs sent");
        assertEquals(cnps, bed.engineA.counters().get(RcCounters.RX_CNP));
        assertEquals(cnps, bed.qpA.rateLimiter().cnpCount());
        assertTrue(marking.ceMarked() >= cnps, "at most one CNP per mark: " + marking.ceMarked() + " marks");
        assertTrue(bed.qpA.rateLimiter().targetRate() < DcqcnConfig.DEFAULT_LINE_RATE ||
            !bed.qpA.rateLimiter().isLimited());
    }

    @Test
    void shouldSendAtMostOneCnpPerIntervalPerQueuePair()
    {
        final FaultInjectingPacketPort marking = new FaultInjectingPacketPort(link.first(), 5, 0, 0, 1.0,
            RcInMemoryTransferTest::isData);
        bed(marking, link.second()).connect(1024);
        final long start = bed.now;
        write(256 * 1024, 1024, 200_000);
        final long elapsed = bed.now - start;
        final long cnps = bed.engineB.counters().get(RcCounters.TX_CNP);
        final long interval = DcqcnConfig.paperDefaults().cnpIntervalNanos();
        assertTrue(cnps >= 1);
        assertTrue(cnps <= elapsed / interval + 1, cnps + " CNPs in " + elapsed + " ns");
        assertTrue(marking.ceMarked() > 2 * cnps, "marks are coalesced into CNPs");
        assertEquals(cnps, bed.qpA.rateLimiter().cnpCount());
    }

    @Test
    void shouldNotAllocateOnThePacketPath()
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)java.lang.management.ManagementFactory.getThreadMXBean();
        bed().connect(1024);
        final int length = 256 * 1024;
        final MemoryRegion source = bed.register(bed.pdA, length, AccessFlags.LOCAL_WRITE);
        final MemoryRegion target = bed.register(bed.pdB, length, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE |
            AccessFlags.REMOTE_READ);
        final long thread = Thread.currentThread().threadId();
        final long[] allocated = new long[20];
        int failures = 0;
        for (int round = 0; round < allocated.length; round++)
        {
            final long before = threads.getThreadAllocatedBytes(thread);
            bed.qpB.postReceive(receive.reset().wrId(round).buffer(target, target.address(), length));
            bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(source, source.address(), length).remote(target.address(), target.rkey()));
            bed.qpA.postSend(send.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_READ)
                .local(source, source.address(), length).remote(target.address(), target.rkey()));
            bed.qpA.postSend(send.reset().wrId(3).opcode(WorkRequestOpcode.SEND)
                .local(source, source.address(), length));
            // a 0-byte SEND makes a frame below the Ethernet minimum, padded by the writer
            bed.qpB.postReceive(receive.reset().wrId(round + 100));
            bed.qpA.postSend(send.reset().wrId(4).opcode(WorkRequestOpcode.SEND));
            int completions = 0;
            while (completions < 6)
            {
                bed.step();
                while (bed.cqA.poll(bed.wc) || bed.cqB.poll(bed.wc))
                {
                    failures += bed.wc.status() == WorkCompletionStatus.SUCCESS ? 0 : 1;
                    completions++;
                }
            }
            allocated[round] = threads.getThreadAllocatedBytes(thread) - before;
        }
        assertEquals(0, failures);
        // A round moves 768 KiB in about 800 packets: an allocation per packet or per work request would
        // cost far more than 1 KiB in every round; the JIT or GC bookkeeping may cost a few bytes in one
        // round now and then. So: each of the last five rounds under 1 KiB, and at least one at 0.
        long least = Long.MAX_VALUE;
        for (int round = allocated.length - 5; round < allocated.length; round++)
        {
            assertTrue(allocated[round] < 1024, "round " + round + ": " + java.util.Arrays.toString(allocated));
            least = Math.min(least, allocated[round]);
        }
        assertEquals(0, least, "no steady-state round without allocation: " + java.util.Arrays.toString(allocated));
    }

    @ParameterizedTest
    @CsvSource({"1,1", "15,1", "16,1", "17,2", "64,4", "100,7"})
    void shouldCoalesceAcks(final int packets, final int acks)
    {
        // one packet per QP per tick, so every ACK the responder schedules goes out on its own
        bed = new RcTestbed(link.first(), link.second(), c -> new RcEngineConfig(c.localMac(), c.localIpv4(), 16,
            c.maxInflightPackets(), c.maxReadsInFlight(), 1, c.dataEcn(), c.dcqcn()));
        bed.connect(1024);
        final MemoryRegion source = bed.register(bed.pdA, packets * 1024L, AccessFlags.NONE);
        final MemoryRegion target = bed.register(bed.pdB, packets * 1024L, AccessFlags.LOCAL_WRITE |
            AccessFlags.REMOTE_WRITE);
        bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), packets * 1024).remote(target.address(), target.rkey()));
        assertEquals(WorkCompletionStatus.SUCCESS, bed.await(bed.cqA, 1000).status());
        // every 16th packet, and the last (it asks for one)
        assertEquals(acks, bed.engineB.counters().get(RcCounters.TX_ACKS));
    }

    @Test
    void shouldNakAnOpcodeOutOfSequenceAsAnInvalidRequest()
    {
        bed().connect(1024);
        final MemoryRegion target = bed.register(bed.pdB, 4096, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        final MemorySegment before = bed.arena.allocate(4096).copyFrom(target.segment());
        final RoceFrameWriter writer = new RoceFrameWriter()
            .ethernet(RcTestbed.MAC_A, RcTestbed.MAC_B).ipv4(RcTestbed.IP_A, RcTestbed.IP_B)
            .opcode(Opcode.RC_RDMA_WRITE_MIDDLE).destQp(bed.qpB.qpNumber()).psn(100);
        final PacketBurst burst = link.first().newBurst(1);
        assertTrue(link.first().allocate(burst, 1));
        burst.length(0, writer.writeFrame(burst.memory(), burst.offset(0), bed.arena.allocate(1024), 0, 1024));
        link.first().transmit(burst);
        burst.close();
        bed.steps(3);
        assertEquals(1, bed.engineB.counters().get(RcCounters.TX_NAK_INVALID));
        assertEquals(QueuePairState.ERROR, bed.qpB.state());
        assertEquals(-1, before.mismatch(target.segment()));
    }

    @Test
    void shouldEnforceTheQueuePairStateMachine()
    {
        bed();
        final RcQueuePair qp = bed.engineA.createQueuePair(bed.cqA, bed.cqA, 4, 4);
        final RcConnectionAttributes attributes =
            RcConnectionAttributes.of(0x20, RcTestbed.MAC_B, RcTestbed.IP_B, 1, 1024, 0, 0);
        assertEquals(QueuePairState.RESET, qp.state());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, qp::toRts);
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> qp.toRtr(attributes));
        qp.toInit(AccessFlags.REMOTE_WRITE);
        qp.toInit(AccessFlags.REMOTE_READ);
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, qp::toRts);
        qp.toRtr(attributes);
        assertEquals(QueuePairState.RTR, qp.state());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> qp.toInit(0));
        qp.toRts();
        qp.toSqd();
        qp.toRts();
        qp.toError();
        assertEquals(QueuePairState.ERROR, qp.state());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, qp::toRts);
        qp.toReset();
        qp.toInit(0);
        assertEquals(QueuePairState.INIT, qp.state());
        assertEquals(1, bed.engineA.counters().get(RcCounters.QP_ERRORS));
    }

    @Test
    void shouldMoveToErrorOnCompletionQueueOverrun()
    {
        bed = new RcTestbed(link.first(), link.second(), UnaryOperator.identity());
        final io.spraynic.datapath.verbs.CompletionQueue tiny = new io.spraynic.datapath.verbs.CompletionQueue(2);
        final RcQueuePair qpA = bed.engineA.createQueuePair(tiny, tiny, 8, 8);
        final RcQueuePair qpB = bed.engineB.createQueuePair(bed.cqB, bed.cqB, 8, 8);
        qpA.toInit(0);
        qpB.toInit(0);
        qpA.toRtr(RcConnectionAttributes.of(qpB.qpNumber(), RcTestbed.MAC_B, RcTestbed.IP_B, 1, 1024, 1, 2));
        qpB.toRtr(RcConnectionAttributes.of(qpA.qpNumber(), RcTestbed.MAC_A, RcTestbed.IP_A, 1, 1024, 2, 1));
        qpA.toRts();
        qpB.toRts();
        for (int i = 0; i < 4; i++)
        {
            qpB.postReceive(receive.reset().wrId(i));
            qpA.postSend(send.reset().wrId(i).opcode(WorkRequestOpcode.SEND));
        }
        bed.steps(20);
        assertEquals(QueuePairState.ERROR, qpA.state());
        assertTrue(tiny.overruns() > 0);
        assertTrue(bed.engineA.counters().get(RcCounters.CQ_OVERRUNS) > 0);
        assertEquals(2, tiny.size());
    }

    @Test
    void shouldRejectPostsInTheWrongStateOrWhenFull()
    {
        bed();
        final RcQueuePair qp = bed.engineA.createQueuePair(bed.cqA, bed.cqA, 2, 2);
        assertEquals(PostResult.INVALID_STATE, qp.postSend(send.reset()));
        assertEquals(PostResult.INVALID_STATE, qp.postReceive(receive.reset()));
        qp.toInit(0);
        assertEquals(PostResult.OK, qp.postReceive(receive.reset()));
        assertEquals(PostResult.OK, qp.postReceive(receive.reset()));
        assertEquals(PostResult.QUEUE_FULL, qp.postReceive(receive.reset()));
        assertEquals(PostResult.INVALID_STATE, qp.postSend(send.reset()));
        qp.toRtr(RcConnectionAttributes.of(0x20, RcTestbed.MAC_B, RcTestbed.IP_B, 1, 1024, 0, 0));
        qp.toRts();
        assertEquals(PostResult.OK, qp.postSend(send.reset()));
        assertEquals(PostResult.OK, qp.postSend(send.reset()));
        assertEquals(PostResult.QUEUE_FULL, qp.postSend(send.reset()));
    }
}
