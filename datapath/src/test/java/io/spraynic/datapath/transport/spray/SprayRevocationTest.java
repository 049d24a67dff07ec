package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The spray connection's hooks for revocation and completion queue overrun: a receive whose memory was
 * deregistered is refused before a byte is placed, and a completion queue the application lets overrun moves
 * the connection to the error state instead of dropping completions silently.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SprayRevocationTest
{
    private static final int SIZE = 3 * 4096 + 5;

    @Test
    void shouldRefuseASendIntoAReceiveWhoseMemoryWasDeregistered()
    {
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options()))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE, 0);
            assertEquals(PostResult.OK, bed.b.postReceive(0, new ReceiveWorkRequest().wrId(10)
                .buffer(dst, dst.address(), SIZE)));
            bed.pdB.deregister(dst);
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.SEND).local(src, src.address(), SIZE));
            final List<WorkCompletion> sent = bed.sendCompletionsA(1);
            assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, sent.get(0).status(), sent.get(0)::toString);
            final List<WorkCompletion> received = SprayTestBed.drain(bed.receiveCqB);
            assertEquals(1, received.size());
            assertEquals(10, received.get(0).wrId());
            assertEquals(WorkCompletionStatus.LOC_PROT_ERR, received.get(0).status());
            assertEquals(-1L, dst.segment().mismatch(MemorySegment.ofArray(new byte[SIZE])), "nothing placed");
        }
    }

    @Test
    void shouldNeverReadASendBufferFreedAfterItsDeregistration()
    {
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options()))
        {
            final Arena clientArena = Arena.ofShared();
            final int length = 8 << 20;
            final MemoryRegion src = bed.pdA.register(clientArena.allocate(length, 64), AccessFlags.NONE);
            final MemoryRegion dst = bed.region(bed.pdB, length, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), length).remote(dst.address(), dst.rkey()).signaled(true));
            bed.runUntil(() -> bed.b.counters().get(SprayCounters.RX_BYTES) > 0, 100_000);
            bed.pdA.deregister(src);
            clientArena.close(); // a later read of the buffer would throw out of the connection, here into the test
            bed.runUntil(() -> bed.a.isClosed(), 100_000);
            final List<WorkCompletion> done = SprayTestBed.drain(bed.sendCqA);
            assertEquals(1, done.size());
            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, done.get(0).status(), done.get(0)::toString);
            assertNull(bed.engineA.connection(bed.a.localCid()), "in error, forgotten by its engine: CID and slot free");
            assertEquals(0, bed.engineA.storagePool().lent(), "its tables given back");
        }
    }

    @Test
    void shouldFailTheConnectionWhenItsCompletionQueueOverruns()
    {
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options()))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            // an application that never polls: its send queue's completion queue is full
            while (bed.sendCqA.remaining() > 0)
            {
                bed.sendCqA.offer(-1, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.SEND, 0, false, 0, 0);
            }
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(dst.address(), dst.rkey()).signaled(true));
            bed.a.postSend(1, new SendWorkRequest().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(dst.address(), dst.rkey()).signaled(true));
            bed.runUntil(() -> bed.a.isClosed(), 100_000);
            assertEquals(SprayConnection.State.CLOSED, bed.a.state());
            assertTrue(bed.sendCqA.hasOverrun());
            assertTrue(bed.a.counters().get(SprayCounters.CQ_OVERRUNS) >= 1);
            assertEquals(bed.sendCqA.overruns(), bed.a.counters().get(SprayCounters.CQ_OVERRUNS));
            assertNull(bed.engineA.connection(bed.a.localCid()), "in error, forgotten by its engine: CID and slot free");
            assertEquals(PostResult.INVALID_STATE, bed.a.postSend(0, new SendWorkRequest().wrId(3)
                .opcode(WorkRequestOpcode.RDMA_WRITE).local(src, src.address(), 1).remote(dst.address(), dst.rkey())));
        }
    }
}
