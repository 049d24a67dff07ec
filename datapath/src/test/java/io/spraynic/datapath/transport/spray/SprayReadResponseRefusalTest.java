package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S9.3.2: a READ responder whose exposed region is deregistered while READ response packets are
 * still unacknowledged refuses the rest of that response (a NACK of syndrome REMOTE_ACCESS_ERROR naming the READ,
 * placeholder probes at the PSNs of its unacknowledged packets) instead of failing the connection: a requester that already
 * has every byte ignores the NACK as stale, one still waiting completes the READ with REM_ACCESS_ERR, even when
 * every NACK of the refusal is lost (its count reaches the requester by an ACK, the requester asks about its waiting
 * READ); the connection stays up. B is the responder, A the requester, in virtual time.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SprayReadResponseRefusalTest
{
    private static final int SIZE = 5 * 4096 + 17; // 6 response packets

    /** Drops the frames of one opcode a side sends while {@link #when} says so. */
    static final class OpcodeDropper
    {
        final int opcode;
        BooleanSupplier when = () -> false;
        long dropped;

        OpcodeDropper(final int opcode)
        {
            this.opcode = opcode;
        }

        SprayTestBed.Wrapper wrapper()
        {
            return (plane, port) -> new FaultInjectingPacketPort(port, 0, 1.0, 0, 0, (memory, offset, length) ->
            {
                if (!when.getAsBoolean() || length <= SprayTestBed.DATA_OFFSET_BTH ||
                    BaseTransportHeader.opcode(memory, offset + SprayTestBed.DATA_OFFSET_BTH) != opcode)
                {
                    return false;
                }
                dropped++;
                return true;
            });
        }
    }

    @Test
    void shouldKeepTheConnectionWhenAResponseIsResentAfterTheRequesterHadItAndTheRegionWasDeregistered()
    {
        final OpcodeDropper acksOfA = new OpcodeDropper(SprayOpcodes.ACK);
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options().wrapA(acksOfA.wrapper())))
        {
            final MemoryRegion exposed = bed.region(bed.pdB, SIZE, AccessFlags.REMOTE_READ, 7);
            final MemoryRegion sink = bed.region(bed.pdA, SIZE, AccessFlags.LOCAL_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();

            // every ACK A sends once it has the whole response is lost: B keeps (part of) the response, A
            // completes the READ
            acksOfA.when = () -> bed.a.counters().get(SprayCounters.RX_BYTES) >= SIZE;
            assertEquals(PostResult.OK, bed.a.postSend(0, wr.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_READ)
                .local(sink, sink.address(), SIZE).remote(exposed.address(), exposed.rkey())));
            final List<WorkCompletion> read = bed.sendCompletionsA(1);
            assertEquals(1, read.size());
            assertEquals(WorkCompletionStatus.SUCCESS, read.get(0).status(), read.get(0)::toString);
            assertEquals(-1L, sink.segment().mismatch(exposed.segment()));

            // the application on B, done with the region, deregisters it; B resends the response on its timers
            final long resentBefore = bed.b.counters().get(SprayCounters.RETRANSMITTED);
            bed.pdB.deregister(exposed);
            bed.runToQuiet(3_000);
            assertTrue(bed.b.counters().get(SprayCounters.RETRANSMITTED) > resentBefore ||
                bed.b.counters().get(SprayCounters.PROBES_SENT) > 0, "B tried to resend the response");
            acksOfA.when = () -> false;
            bed.runToQuiet(3_000);

            assertFalse(bed.a.isClosed(), "A stays up");
            assertFalse(bed.b.isClosed(), "B stays up");
            assertEquals(0, SprayTestBed.drain(bed.sendCqA).size(), "the stale NACK completes nothing");

            // the same stream carries on: a WRITE and a READ of another region succeed
            final MemoryRegion target = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE |
                AccessFlags.REMOTE_READ, 0);
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 9);
            assertEquals(PostResult.OK, bed.a.postSend(0, wr.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(target.address(), target.rkey()).signaled(true)));
            assertEquals(PostResult.OK, bed.a.postSend(0, wr.reset().wrId(3).opcode(WorkRequestOpcode.RDMA_READ)
                .local(sink, sink.address(), SIZE).remote(target.address(), target.rkey())));
            final List<WorkCompletion> later = bed.sendCompletionsA(2);
            assertEquals(2, later.size());
            for (final WorkCompletion wc : later)
            {
                assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
            }
            assertEquals(-1L, sink.segment().mismatch(src.segment()), "the second READ brought the WRITE's bytes");
        }
    }

    @Test
    void shouldFailAReadWhoseRegionIsDeregisteredMidResponseWithRemoteAccessError()
    {
        shouldFailAReadWhoseRegionIsDeregisteredMidResponse(false);
    }

    @Test
    void shouldFailAReadWhoseRegionIsDeregisteredMidResponseEvenWhenEveryNackIsLost()
    {
        shouldFailAReadWhoseRegionIsDeregisteredMidResponse(true);
    }

    private static void shouldFailAReadWhoseRegionIsDeregisteredMidResponse(final boolean loseNacks)
    {
        final OpcodeDropper nacksOfB = new OpcodeDropper(SprayOpcodes.NACK);
        final int length = 1 << 20; // 256 response packets: B is still sending when the region goes
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options().wrapB(nacksOfB.wrapper())))
        {
            final MemoryRegion exposed = bed.region(bed.pdB, length, AccessFlags.REMOTE_READ, 7);
            final MemoryRegion sink = bed.region(bed.pdA, length, AccessFlags.LOCAL_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            // every NACK of the refusal itself is lost; the answers to A's queries are let through
            nacksOfB.when = () -> loseNacks && bed.b.counters().get(SprayCounters.QUERIES_RECEIVED) == 0;

            assertEquals(PostResult.OK, bed.a.postSend(1, wr.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_READ)
                .local(sink, sink.address(), length).remote(exposed.address(), exposed.rkey())));
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.RX_BYTES) > 0, 10_000);
            assertTrue(bed.a.counters().get(SprayCounters.RX_BYTES) < length, "mid-response");
            bed.pdB.deregister(exposed);

            final List<WorkCompletion> read = bed.sendCompletionsA(1);
            assertEquals(1, read.size());
            assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, read.get(0).status(), read.get(0)::toString);
            if (loseNacks)
            {
                assertTrue(nacksOfB.dropped > 0, "B's NACKs were lost");
                assertTrue(bed.a.counters().get(SprayCounters.QUERIES_SENT) > 0, "A asked");
            }
            assertFalse(bed.a.isClosed(), "A stays up");
            assertFalse(bed.b.isClosed(), "B stays up");

            // S9.4: the READ's stream is in error at A; the other streams carry on
            nacksOfB.when = () -> false;
            final MemoryRegion target = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 9);
            bed.a.postSend(1, wr.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(target.address(), target.rkey()).signaled(true));
            bed.a.postSend(0, wr.reset().wrId(3).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(target.address(), target.rkey()).signaled(true));
            final List<WorkCompletion> later = bed.sendCompletionsA(2);
            assertEquals(2, later.size());
            for (final WorkCompletion wc : later)
            {
                assertEquals(wc.wrId() == 2 ? WorkCompletionStatus.WR_FLUSH_ERR : WorkCompletionStatus.SUCCESS,
                    wc.status(), wc::toString);
            }
            assertEquals(-1L, target.segment().mismatch(src.segment()));
            assertFalse(bed.b.isClosed(), "B stays up");
        }
    }
}
