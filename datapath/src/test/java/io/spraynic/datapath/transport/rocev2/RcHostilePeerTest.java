package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.QueuePairState;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrameWriter;
import org.agrona.collections.IntHashSet;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The RC engine against a peer that lies: forged duplicate requests, guessed queue pair numbers, more queue pairs
 * than allowed, and an application that never polls its completion queue. Each attack runs beside a legitimate
 * transfer whose every byte is checked.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RcHostilePeerTest
{
    private static final int SLOT_SIZE = InMemoryLink.HEADROOM + PathMtu.maxFrameLength(PathMtu.MTU_4096) + 64;
    private static final int MTU = 1024;

    private final InMemoryLink link = new InMemoryLink("hostile", 1024, SLOT_SIZE);
    private final SendWorkRequest send = new SendWorkRequest();
    private final ReceiveWorkRequest receive = new ReceiveWorkRequest();
    private RcTestbed bed = new RcTestbed(link.first(), link.second(), UnaryOperator.identity());

    @AfterEach
    void close()
    {
        bed.close();
        link.close();
    }

    /** The attacker's frames go in on A's side of the link, as from any host on the same L2. */
    private void inject(final RoceFrameWriter writer, final int count)
    {
        RcScenarios.inject(link.first(), writer, count);
    }

    private RoceFrameWriter forgedRead(final int psn, final long address, final int rkey, final int length)
    {
        return RcScenarios.forgedRead(bed.qpB.qpNumber(), psn, address, rkey, length);
    }

    @Test
    void shouldDropForgedDuplicateReadsWithABadRkeyWhileAVerifiedTransferRuns()
    {
        bed.connect(MTU);
        RcScenarios.forgedDuplicateReadsDuringTransfer(bed, link.first(), 2 << 20);
    }

    @Test
    void shouldServeAgainADuplicateReadThatRepeatsOneServedAndStillNakABadRkeyAtTheExpectedPsn()
    {
        bed.connect(MTU);
        final int length = 8 * MTU;
        final MemoryRegion readable = bed.register(bed.pdB, length, AccessFlags.REMOTE_READ);
        final MemoryRegion readBack = bed.register(bed.pdA, length, AccessFlags.LOCAL_WRITE);
        RcTestbed.fill(readable.segment(), 4);
        final int firstPsn = bed.qpB.expectedPsn();
        bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_READ)
            .local(readBack, readBack.address(), length).remote(readable.address(), readable.rkey()));
        assertEquals(WorkCompletionStatus.SUCCESS, bed.await(bed.cqA, 10_000).status());
        final long served = bed.engineB.counters().get(RcCounters.TX_READ_RESPONSES);
        assertEquals(8, served);

        // the whole READ again (its responses lost, say), then its tail from the 6th packet, as go-back-N asks
        inject(forgedRead(firstPsn, readable.address(), readable.rkey(), length), 1);
        bed.steps(100);
        inject(forgedRead(Psn.add(firstPsn, 5), readable.address() + 5L * MTU, readable.rkey(), 3 * MTU), 1);
        bed.steps(100);
        // the same PSN with a shifted address or another length is no repeat: dropped
        inject(forgedRead(firstPsn, readable.address() + 8, readable.rkey(), length), 1);
        inject(forgedRead(Psn.add(firstPsn, 5), readable.address() + 5L * MTU, readable.rkey(), length), 1);
        bed.steps(200);
        assertEquals(served + 8 + 3, bed.engineB.counters().get(RcCounters.TX_READ_RESPONSES));
        assertEquals(2, bed.engineB.counters().get(RcCounters.RX_DUPLICATES));
        assertEquals(2, bed.engineB.counters().get(RcCounters.RX_DUPLICATES_DROPPED));
        assertEquals(QueuePairState.RTS, bed.qpB.state());
        assertEquals(QueuePairState.RTS, bed.qpA.state(), "A dropped the unasked responses");

        // at the expected PSN a bad rkey is a real request: it draws the NAK and fails the QP, as IB requires
        inject(forgedRead(bed.qpB.expectedPsn(), readable.address(), readable.rkey() ^ 1, 64), 1);
        bed.steps(10);
        assertEquals(1, bed.engineB.counters().get(RcCounters.TX_NAK_ACCESS));
        assertEquals(QueuePairState.ERROR, bed.qpB.state());
    }

    /**
     * A QP takes packets only from its peer's address: the DestQP is in clear text and the ICRC a checksum anyone
     * computes, so before, a request at the expected PSN from any host failed the QP (a MIDDLE with no FIRST), a CNP
     * throttled it, and an ACK completed requests the peer never received.
     */
    @Test
    void shouldDropEveryPacketForAQueuePairThatDoesNotComeFromItsPeer()
    {
        bed.connect(MTU);
        final int stranger = 0x0A_00_00_42;
        final long cnps = bed.qpB.rateLimiter().cnpCount();
        inject(new RoceFrameWriter().ethernet(RcTestbed.MAC_A, RcTestbed.MAC_B).ipv4(stranger, RcTestbed.IP_B)
            .opcode(Opcode.RC_SEND_MIDDLE).destQp(bed.qpB.qpNumber()).psn(bed.qpB.expectedPsn()), 1);
        inject(new RoceFrameWriter().ethernet(RcTestbed.MAC_A, RcTestbed.MAC_B).ipv4(stranger, RcTestbed.IP_B)
            .opcode(Opcode.CNP).destQp(bed.qpB.qpNumber()).psn(0), 3);
        bed.steps(20);
        assertEquals(QueuePairState.RTS, bed.qpB.state(), "not failed by a stranger's request");
        assertEquals(cnps, bed.qpB.rateLimiter().cnpCount(), "not throttled by a stranger's CNPs");
        assertEquals(4, bed.engineB.counters().get(RcCounters.RX_WRONG_SOURCE));
        assertEquals(0, bed.engineB.counters().get(RcCounters.TX_NAK_INVALID));
        // the peer's own traffic still flows
        final MemoryRegion target = bed.register(bed.pdB, 256, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        final MemoryRegion source = bed.register(bed.pdA, 256, AccessFlags.NONE);
        bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), 256).remote(target.address(), target.rkey()));
        assertEquals(WorkCompletionStatus.SUCCESS, bed.await(bed.cqA, 1000).status());
    }

    /**
     * The engine's tick walk starts from a counter bumped every tick, which wraps to negative after 2^31 ticks
     * (minutes of busy polling): before, {@code counter % n} then indexed before the array on most ticks.
     */
    @Test
    void shouldTickEveryQueuePairWhenTheTickCounterHasWrapped() throws ReflectiveOperationException
    {
        bed.connect(MTU);
        bed.engineA.createQueuePair(bed.cqA, bed.cqA, 32, 32); // a second QP: the walk has somewhere to start
        bed.engineA.createQueuePair(bed.cqA, bed.cqA, 32, 32);
        final java.lang.reflect.Field counter = RcEngine.class.getDeclaredField("roundRobin");
        counter.setAccessible(true);
        counter.setInt(bed.engineA, Integer.MAX_VALUE);
        for (int tick = 0; tick < 4; tick++)
        {
            bed.engineA.onTick(tick);
        }
        assertTrue(counter.getInt(bed.engineA) < 0, "the counter did wrap");
    }

    @Test
    void shouldReAckDuplicateWritesWithoutPlacingThem()
    {
        bed.connect(MTU);
        final MemoryRegion target = bed.register(bed.pdB, 256, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        final MemoryRegion source = bed.register(bed.pdA, 256, AccessFlags.NONE);
        RcTestbed.fill(source.segment(), 5);
        final int psn = bed.qpB.expectedPsn();
        bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), 256).remote(target.address(), target.rkey()));
        assertEquals(WorkCompletionStatus.SUCCESS, bed.await(bed.cqA, 1000).status());
        final long placed = bed.engineB.counters().get(RcCounters.BYTES_PLACED);
        final long acks = bed.engineB.counters().get(RcCounters.TX_ACKS);
        // a replayed WRITE with other bytes and a bad rkey: a duplicate is acknowledged, never placed or NAKed
        final RoceFrameWriter replay = new RoceFrameWriter().ethernet(RcTestbed.MAC_A, RcTestbed.MAC_B)
            .ipv4(RcTestbed.IP_A, RcTestbed.IP_B).opcode(Opcode.RC_RDMA_WRITE_ONLY).destQp(bed.qpB.qpNumber()).psn(psn)
            .ackReq(true).reth(target.address(), target.rkey() ^ 0x55, 0);
        inject(replay, 3);
        bed.steps(20);
        assertEquals(placed, bed.engineB.counters().get(RcCounters.BYTES_PLACED));
        assertEquals(-1, source.segment().mismatch(target.segment()));
        assertEquals(3, bed.engineB.counters().get(RcCounters.RX_DUPLICATES));
        assertTrue(bed.engineB.counters().get(RcCounters.TX_ACKS) > acks, "re-acknowledged");
        assertEquals(QueuePairState.RTS, bed.qpB.state());
    }

    @Test
    void shouldDrawQueuePairNumbersAtRandomUniqueAndInTheEnginesShare()
    {
        final RcEngine engine = new RcEngine(RcEngineConfig.defaults(RcTestbed.MAC_A, RcTestbed.IP_A), bed.pdA, bed.sinkA);
        engine.qpNumberPartition(3, 4);
        final CompletionQueue cq = new CompletionQueue(4);
        final IntHashSet seen = new IntHashSet();
        int consecutive = 0;
        int previous = -1;
        for (int i = 0; i < 2000; i++)
        {
            final int qpn = engine.createQueuePair(cq, cq, 1, 1).qpNumber();
            assertTrue(qpn > 1 && qpn <= 0xFF_FFFF, "24 bits, not 0 or 1: " + qpn);
            assertEquals(3, qpn % 4, "in the engine's share");
            assertTrue(seen.add(qpn), "unique");
            consecutive += Math.abs(qpn - previous) <= 4 ? 1 : 0;
            previous = qpn;
        }
        assertTrue(consecutive < 5, "numbers follow one another: " + consecutive);
        assertEquals(2000, engine.queuePairCount());
    }

    @Test
    void shouldRefuseQueuePairsBeyondTheCapWithAClearError()
    {
        final RcEngine engine = new RcEngine(RcEngineConfig.defaults(RcTestbed.MAC_A, RcTestbed.IP_A).withMaxQueuePairs(8),
            bed.pdA, bed.sinkA);
        final CompletionQueue cq = new CompletionQueue(4);
        final RcQueuePair[] qps = new RcQueuePair[8];
        for (int i = 0; i < 8; i++)
        {
            qps[i] = engine.createQueuePair(cq, cq, 1, 1);
        }
        final IllegalStateException refused = assertThrows(IllegalStateException.class,
            () -> engine.createQueuePair(cq, cq, 1, 1));
        assertTrue(refused.getMessage().contains("maxQueuePairs 8"), refused.getMessage());
        engine.destroyQueuePair(qps[3]);
        assertEquals(7, engine.queuePairCount());
        engine.createQueuePair(cq, cq, 1, 1);
        assertEquals(8, engine.queuePairCount());
        assertThrows(IllegalArgumentException.class,
            () -> RcEngineConfig.defaults(RcTestbed.MAC_A, RcTestbed.IP_A).withMaxQueuePairs(0));
    }

    @Test
    void shouldFailTheQueuePairWhenTheApplicationLetsItsCompletionQueueOverrun()
    {
        final CompletionQueue tiny = new CompletionQueue(4);
        final RcQueuePair qpA = bed.engineA.createQueuePair(tiny, tiny, 32, 32);
        // another QP sharing the queue, idle: an overrun is an error of every QP on the queue
        final RcQueuePair bystander = bed.engineA.createQueuePair(tiny, tiny, 4, 4);
        final RcQueuePair qpB = bed.engineB.createQueuePair(bed.cqB, bed.cqB, 32, 32);
        qpA.toInit(0);
        qpB.toInit(0);
        bystander.toInit(0);
        qpA.toRtr(RcConnectionAttributes.of(qpB.qpNumber(), RcTestbed.MAC_B, RcTestbed.IP_B, 1, MTU, 1, 2));
        qpB.toRtr(RcConnectionAttributes.of(qpA.qpNumber(), RcTestbed.MAC_A, RcTestbed.IP_A, 1, MTU, 2, 1));
        bystander.toRtr(RcConnectionAttributes.of(0x123, RcTestbed.MAC_B, RcTestbed.IP_B, 1, MTU, 1, 2));
        qpA.toRts();
        qpB.toRts();
        bystander.toRts();
        for (int i = 0; i < 10; i++)
        {
            assertEquals(PostResult.OK, qpB.postReceive(receive.reset().wrId(100 + i)));
            assertEquals(PostResult.OK, qpA.postSend(send.reset().wrId(i).opcode(WorkRequestOpcode.SEND)));
        }
        bed.steps(100); // the application never polls
        assertEquals(QueuePairState.ERROR, qpA.state());
        assertEquals(QueuePairState.ERROR, bystander.state());
        assertTrue(tiny.hasOverrun());
        assertTrue(tiny.overruns() >= 6, "each refused completion counted: " + tiny.overruns());
        assertEquals(tiny.overruns(), bed.engineA.counters().get(RcCounters.CQ_OVERRUNS));
        assertEquals(2, bed.engineA.counters().get(RcCounters.QP_ERRORS));
        assertEquals(PostResult.COMPLETION_QUEUE_OVERRUN, qpA.postSend(send.reset().wrId(50)
            .opcode(WorkRequestOpcode.SEND)));
        assertEquals(PostResult.COMPLETION_QUEUE_OVERRUN, qpA.postReceive(receive.reset().wrId(51)));
        assertEquals(PostResult.COMPLETION_QUEUE_OVERRUN, bystander.postSend(send.reset().wrId(52)
            .opcode(WorkRequestOpcode.SEND)));
        // what the queue held is still there, in order, and nothing after the overrun slipped in
        final WorkCompletion wc = new WorkCompletion();
        for (int i = 0; i < 4; i++)
        {
            assertTrue(tiny.poll(wc));
            assertEquals(i, wc.wrId());
            assertEquals(WorkCompletionStatus.SUCCESS, wc.status());
        }
        assertFalse(tiny.poll(wc));
        // the peer's QP is untouched by the local error
        assertEquals(QueuePairState.RTS, qpB.state());
    }
}
