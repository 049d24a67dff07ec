package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * S9.2 teardown: graceful close (no new work, drain, CLOSE, CLOSE_ACK, both ends forget the connection), its
 * retransmission and timeouts, the peer's unfinished work flushed, the forceful close, and S9.5 for packets
 * that name a closed connection.
 */
class SprayTeardownTest
{
    private static final int SIZE = 1 << 20;

    /** Drops the first {@code count} packets of one opcode a side sends (over every plane). */
    static SprayTestBed.Wrapper dropFirst(final int opcode, final long count, final long[] dropped)
    {
        return (plane, port) -> new FaultInjectingPacketPort(port, 0, 1.0, 0, 0, (memory, offset, length) ->
            length > SprayTestBed.DATA_OFFSET_BTH &&
            BaseTransportHeader.opcode(memory, offset + SprayTestBed.DATA_OFFSET_BTH) == opcode &&
            dropped[0]++ < count);
    }

    @Test
    void shouldDrainThenCloseBothEndsAndForgetTheConnectionS92S95()
    {
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options()))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            assertEquals(PostResult.OK, bed.a.postSend(0, wr.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(dst.address(), dst.rkey())));
            final MemoryRegion rxA = bed.region(bed.pdA, 64, AccessFlags.LOCAL_WRITE, 0);
            assertEquals(PostResult.OK, bed.a.postReceive(1, new ReceiveWorkRequest().wrId(20).buffer(rxA, rxA.address(), 16)));
            assertEquals(PostResult.OK, bed.b.postReceive(2, new ReceiveWorkRequest().wrId(30).buffer(dst, dst.address(), 16)));
            bed.step();

            assertTrue(bed.engineA.close(bed.a, bed.now));
            assertFalse(bed.engineA.close(bed.a, bed.now), "already closing");
            assertEquals(SprayConnection.State.DRAINING, bed.a.state());
            assertEquals(PostResult.INVALID_STATE, bed.a.postSend(0, wr.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), 8).remote(dst.address(), dst.rkey())), "S9.2: no new work");
            assertEquals(PostResult.INVALID_STATE, bed.a.postReceive(0, new ReceiveWorkRequest().wrId(3)));

            bed.runUntil(() -> bed.a.isClosed() && bed.b.isClosed(), 20_000);
            // the WRITE in flight finished before the CLOSE: completed with SUCCESS, every byte placed
            final List<WorkCompletion> sent = SprayTestBed.drain(bed.sendCqA);
            assertEquals(1, sent.size());
            assertEquals(WorkCompletionStatus.SUCCESS, sent.get(0).status());
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
            // posted receives are flushed at both ends
            final List<WorkCompletion> flushedA = SprayTestBed.drain(bed.receiveCqA);
            assertEquals(List.of(20L), flushedA.stream().map(WorkCompletion::wrId).toList());
            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, flushedA.get(0).status());
            final List<WorkCompletion> flushedB = SprayTestBed.drain(bed.receiveCqB);
            assertEquals(List.of(30L), flushedB.stream().map(WorkCompletion::wrId).toList());
            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, flushedB.get(0).status());
            assertEquals(1, bed.a.counters().get(SprayCounters.CLOSES_SENT));
            assertEquals(1, bed.b.counters().get(SprayCounters.CLOSES_RECEIVED));
            assertEquals(0, bed.a.counters().get(SprayCounters.CLOSE_TIMEOUTS));
            assertNull(bed.engineA.connection(SprayTestBed.CID_A), "forgotten");
            assertNull(bed.engineB.connection(SprayTestBed.CID_B), "forgotten");
            assertTrue(bed.engineA.isIdle() && bed.engineB.isIdle());
            assertEquals(0, bed.engineA.counters().get(SprayCounters.MALFORMED));
            assertEquals(0, bed.engineB.counters().get(SprayCounters.MALFORMED));

            // S9.5: a later packet naming the closed CID is counted and dropped, nothing placed
            final SprayConnection stale = bed.engineA.open(new SprayConnectionConfig().cids(0x000A09, SprayTestBed.CID_B)
                .paths(8).mtu(4096).streams(4).initialPsns(0x1000, 0x2000).completionQueues(bed.sendCqA, bed.receiveCqA)
                .remote(0, SprayTestBed.ip(0, 2), SprayTestBed.mac(0, 2)).remote(1, SprayTestBed.ip(1, 2), SprayTestBed.mac(1, 2)));
            dst.segment().fill((byte)0);
            stale.postSend(0, wr.reset().wrId(4).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), 100).remote(dst.address(), dst.rkey()));
            bed.runToQuiet(20);
            assertTrue(bed.engineB.counters().get(SprayCounters.UNKNOWN_CONNECTION) >= 1);
            assertEquals(-1L, dst.segment().mismatch(MemorySegment.ofArray(new byte[SIZE])));
        }
    }

    @Test
    void shouldNotReuseAClosedCidForTwiceTheConnectionTimeoutS92()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.connectionTimeoutNanos = 1_000_000;
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            bed.engineA.close(bed.a, bed.now);
            bed.runUntil(() -> bed.a.isClosed() && bed.b.isClosed(), 20_000);
            final long closedAt = bed.now;
            assertFalse(bed.engineA.isCidFree(SprayTestBed.CID_A));
            assertFalse(bed.engineB.isCidFree(SprayTestBed.CID_B));
            final SprayConnectionConfig again = new SprayConnectionConfig().cids(SprayTestBed.CID_A, SprayTestBed.CID_B)
                .paths(8).mtu(4096).streams(4).initialPsns(0x1000, 0x2000).completionQueues(bed.sendCqA, bed.receiveCqA)
                .remote(0, SprayTestBed.ip(0, 2), SprayTestBed.mac(0, 2)).remote(1, SprayTestBed.ip(1, 2), SprayTestBed.mac(1, 2));
            final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class, () -> bed.engineA.open(again));
            assertTrue(refused.getMessage().contains("2 x connectionTimeout"), refused.getMessage());
            assertThrows(IllegalArgumentException.class, () -> bed.engineA.connect(again, bed.now), "nor by a handshake");
            assertTrue(bed.engineA.isCidFree(SprayTestBed.CID_A + 1), "other CIDs are free");

            bed.runUntil(() -> bed.now - closedAt >= 2_000_000, 10_000);
            assertTrue(bed.engineA.isCidFree(SprayTestBed.CID_A), "free after 2 x connectionTimeout");
            assertNotNull(bed.engineA.open(again));
        }
    }

    /**
     * A connection opened again on a CID whose connection was closed and forgotten (S9.2) gets that CID's packets:
     * the engine's last-found connection (issue 13: a burst's frames skip the CID map) is the map's answer, so it is
     * dropped when the map forgets the connection (else the closed one would keep them: UNKNOWN_CONNECTION).
     */
    @Test
    void shouldDeliverToAConnectionOpenedAgainOnAClosedCidS92()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.connectionTimeoutNanos = 1_000_000;
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 5);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            assertEquals(PostResult.OK, bed.a.postSend(0, wr.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), 100).remote(dst.address(), dst.rkey())));
            assertEquals(WorkCompletionStatus.SUCCESS, bed.sendCompletionsA(1).get(0).status()); // both CIDs found
            bed.engineA.close(bed.a, bed.now);
            bed.runUntil(() -> bed.a.isClosed() && bed.b.isClosed(), 20_000);
            final long closedAt = bed.now;
            bed.runUntil(() -> bed.now - closedAt >= 2_000_000, 10_000);
            final SprayConnection a = bed.engineA.open(new SprayConnectionConfig()
                .cids(SprayTestBed.CID_A, SprayTestBed.CID_B).paths(8).mtu(4096).streams(4).initialPsns(0x1000, 0x2000)
                .completionQueues(bed.sendCqA, bed.receiveCqA)
                .remote(0, SprayTestBed.ip(0, 2), SprayTestBed.mac(0, 2)).remote(1, SprayTestBed.ip(1, 2), SprayTestBed.mac(1, 2))
                .keysFromCids());
            final SprayConnection b = bed.engineB.open(new SprayConnectionConfig()
                .cids(SprayTestBed.CID_B, SprayTestBed.CID_A).paths(8).mtu(4096).streams(4).initialPsns(0x2000, 0x1000)
                .completionQueues(bed.sendCqB, bed.receiveCqB)
                .remote(0, SprayTestBed.ip(0, 1), SprayTestBed.mac(0, 1)).remote(1, SprayTestBed.ip(1, 1), SprayTestBed.mac(1, 1))
                .keysFromCids());
            final long unknownA = bed.engineA.counters().get(SprayCounters.UNKNOWN_CONNECTION);
            final long unknownB = bed.engineB.counters().get(SprayCounters.UNKNOWN_CONNECTION);
            assertEquals(PostResult.OK, a.postSend(0, wr.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address() + 100, 100).remote(dst.address() + 100, dst.rkey())));
            bed.runUntil(() -> a.counters().get(SprayCounters.MESSAGES_SENT) == 1, 20_000);
            assertEquals(1, b.counters().get(SprayCounters.RX_PACKETS), "the new connection took the packet");
            assertEquals(-1L, src.segment().asSlice(0, 200).mismatch(dst.segment().asSlice(0, 200)));
            assertEquals(unknownB, bed.engineB.counters().get(SprayCounters.UNKNOWN_CONNECTION));
            assertEquals(unknownA, bed.engineA.counters().get(SprayCounters.UNKNOWN_CONNECTION), "its ACK too");
        }
    }

    @Test
    void shouldRetransmitALostCloseS92()
    {
        final long[] dropped = new long[1];
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options().wrapA(dropFirst(SprayOpcodes.CLOSE, 2, dropped))))
        {
            bed.engineA.close(bed.a, bed.now);
            bed.runUntil(() -> bed.a.isClosed() && bed.b.isClosed(), 20_000);
            assertEquals(3, dropped[0], "two CLOSEs lost, the third one passed");
            assertEquals(3, bed.a.counters().get(SprayCounters.CLOSES_SENT));
            assertEquals(1, bed.b.counters().get(SprayCounters.CLOSES_RECEIVED));
        }
    }

    @Test
    void shouldAnswerACloseAgainFromThePacketWhenTheCloseAckWasLostS92()
    {
        final long[] dropped = new long[1];
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options().wrapB(dropFirst(SprayOpcodes.CLOSE_ACK, 1, dropped))))
        {
            bed.engineA.close(bed.a, bed.now);
            bed.runUntil(() -> bed.b.isClosed(), 20_000);
            assertNull(bed.engineB.connection(SprayTestBed.CID_B), "B forgot the connection at the first CLOSE");
            assertFalse(bed.a.isClosed(), "A never heard the answer");
            bed.runUntil(() -> bed.a.isClosed(), 20_000);
            assertEquals(2, bed.a.counters().get(SprayCounters.CLOSES_SENT));
            assertEquals(1, bed.engineB.counters().get(SprayCounters.CLOSES_RECEIVED), "the repeat, answered by B's engine");
            assertEquals(0, bed.a.counters().get(SprayCounters.CLOSE_TIMEOUTS));
        }
    }

    @Test
    void shouldGiveUpOnASilentPeerAfterEightClosesS92()
    {
        final long[] dropped = new long[1];
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options().wrapA(dropFirst(SprayOpcodes.CLOSE, 100, dropped))))
        {
            bed.engineA.close(bed.a, bed.now);
            final long start = bed.now;
            bed.runUntil(() -> bed.a.isClosed(), 100_000);
            assertEquals(SprayConnection.CLOSE_TRIES, bed.a.counters().get(SprayCounters.CLOSES_SENT));
            assertEquals(1, bed.a.counters().get(SprayCounters.CLOSE_TIMEOUTS));
            // backoff from 100 us, doubling: the eighth try waits 12.8 ms
            final long took = bed.now - start;
            assertTrue(took >= 25_500_000 && took < 26_500_000, "closed after " + took + " ns");
            assertFalse(bed.b.isClosed());
            assertNull(bed.engineA.connection(SprayTestBed.CID_A));
        }
    }

    @Test
    void shouldFlushWhatCannotDrainWithinTheConnectionTimeoutS92()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.connectionTimeoutNanos = 300_000;
        options.rnrRetries = 1_000;
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion src = bed.region(bed.pdA, 64, AccessFlags.NONE, 3);
            // a SEND that B never has a receive for: RNR, retried for ever
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.SEND).local(src, src.address(), 64));
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.RNR_RETRIES) >= 1, 10_000);
            bed.engineA.close(bed.a, bed.now);
            final long start = bed.now;
            bed.runUntil(() -> bed.a.isClosed() && bed.b.isClosed(), 10_000);
            assertTrue(bed.now - start >= 300_000, "waited for connectionTimeout");
            final List<WorkCompletion> sent = SprayTestBed.drain(bed.sendCqA);
            assertEquals(1, sent.size());
            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, sent.get(0).status());
            assertEquals(1, bed.a.counters().get(SprayCounters.CLOSE_TIMEOUTS));
        }
    }

    @Test
    void shouldFlushThePeersUnfinishedWorkWhenItIsClosedS92()
    {
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options()))
        {
            final MemoryRegion src = bed.region(bed.pdB, 64, AccessFlags.NONE, 3);
            // B's SEND finds no receive at A: RNR, so it is still unfinished when A closes
            bed.b.postSend(0, new SendWorkRequest().wrId(7).opcode(WorkRequestOpcode.SEND).local(src, src.address(), 64));
            bed.runUntil(() -> bed.b.counters().get(SprayCounters.RNR_RETRIES) >= 1, 10_000);
            bed.engineA.close(bed.a, bed.now);
            bed.runUntil(() -> bed.a.isClosed() && bed.b.isClosed(), 20_000);
            final List<WorkCompletion> sent = SprayTestBed.drain(bed.sendCqB);
            assertEquals(1, sent.size());
            assertEquals(7, sent.get(0).wrId());
            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, sent.get(0).status());
        }
    }

    @Test
    void shouldCloseAConnectionSetUpOnTheWireS91S92()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.handshake = true;
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertSame(SprayConnection.State.ESTABLISHED, bed.b.state());
            bed.engineB.close(bed.b, bed.now); // the responder closes this time
            bed.runUntil(() -> bed.a.isClosed() && bed.b.isClosed(), 20_000);
            assertNull(bed.engineA.connection(bed.a.localCid()));
            assertNull(bed.engineB.connection(bed.b.localCid()));
        }
    }

    @Test
    void shouldCloseForcefullyAtOnceFlushingEverythingUnfinished()
    {
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options()))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(dst.address(), dst.rkey()));
            bed.a.postSend(1, new SendWorkRequest().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(dst.address(), dst.rkey()));
            final MemoryRegion rxA = bed.region(bed.pdA, 64, AccessFlags.LOCAL_WRITE, 0);
            assertEquals(PostResult.OK, bed.a.postReceive(0, new ReceiveWorkRequest().wrId(3).buffer(rxA, rxA.address(), 16)));
            bed.step();
            bed.engineA.close(bed.a);
            assertTrue(bed.a.isClosed());
            assertNull(bed.engineA.connection(SprayTestBed.CID_A));
            final List<WorkCompletion> sent = SprayTestBed.drain(bed.sendCqA);
            assertEquals(List.of(1L, 2L), sent.stream().map(WorkCompletion::wrId).toList());
            sent.forEach(wc -> assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, wc.status()));
            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, SprayTestBed.drain(bed.receiveCqA).get(0).status());
            assertEquals(0, bed.a.sendSlotsInUse());
            assertEquals(0, bed.a.counters().get(SprayCounters.CLOSES_SENT), "nothing on the wire");
            bed.runToQuiet(100);
            assertTrue(bed.engineA.counters().get(SprayCounters.UNKNOWN_CONNECTION) > 0, "B's ACKs: unknown (S9.5)");
        }
    }
}
