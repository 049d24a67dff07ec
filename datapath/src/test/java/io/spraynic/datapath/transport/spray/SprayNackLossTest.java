package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * S9.3 reliable refusals: every NACK of a refused message is dropped on B's side (deterministically, by
 * position among B's NACKs), so A sees only ACKs covering the refused packets. Every SACKH carries B's
 * refusal count (S5.1), so A holds the message's completion, asks with {@code SPRAY_QUERY}, and the answer (a
 * NACK again, which is let through) completes it with the error: never SUCCESS, and nothing is written.
 */
class SprayNackLossTest
{
    private static final int SIZE = 5 * 4096 + 17; // 6 packets: 6 NACKs

    /** Drops B's NACKs number 0 .. n-1 (counted over every plane), lets the later ones through. */
    static final class NackDropper
    {
        final long dropFirst;
        long seen;
        long dropped;

        NackDropper(final long dropFirst)
        {
            this.dropFirst = dropFirst;
        }

        SprayTestBed.Wrapper wrapper()
        {
            return (plane, port) -> new FaultInjectingPacketPort(port, 0, 1.0, 0, 0, (memory, offset, length) ->
            {
                if (length <= SprayTestBed.DATA_OFFSET_BTH ||
                    BaseTransportHeader.opcode(memory, offset + SprayTestBed.DATA_OFFSET_BTH) != SprayOpcodes.NACK)
                {
                    return false;
                }
                if (seen++ < dropFirst)
                {
                    dropped++;
                    return true; // eligible at drop rate 1: dropped
                }
                return false;
            });
        }
    }

    @Test
    void shouldCompleteAWriteWithABadRkeyWithTheErrorWhenEveryNackIsLostS93()
    {
        final NackDropper dropper = new NackDropper(6);
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options().wrapB(dropper.wrapper())))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            bed.a.postSend(0, wr.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(dst.address(), dst.rkey() ^ 0x5A5A));
            bed.a.postSend(0, wr.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), 100).remote(dst.address(), dst.rkey()));
            bed.a.postSend(1, wr.reset().wrId(3).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), 100).remote(dst.address() + 8192, dst.rkey()));

            final List<WorkCompletion> done = bed.sendCompletionsA(3);
            assertEquals(6, dropped(dropper), "every NACK the refused packets drew was lost");
            assertEquals(3, done.size());
            for (final WorkCompletion wc : done)
            {
                final WorkCompletionStatus expected = switch ((int)wc.wrId())
                {
                    case 1 -> WorkCompletionStatus.REM_ACCESS_ERR;
                    case 2 -> WorkCompletionStatus.WR_FLUSH_ERR;
                    default -> WorkCompletionStatus.SUCCESS;
                };
                assertEquals(expected, wc.status(), wc::toString);
            }
            assertTrue(bed.a.counters().get(SprayCounters.COMPLETIONS_HELD) >= 1);
            assertTrue(bed.a.counters().get(SprayCounters.QUERIES_SENT) >= 1);
            assertTrue(bed.b.counters().get(SprayCounters.QUERIES_RECEIVED) >= 1);
            // nothing written but stream 1's 100 bytes
            final MemorySegment d = dst.segment();
            assertEquals(-1L, d.asSlice(0, 8192).mismatch(MemorySegment.ofArray(new byte[8192])));
            assertEquals(-1L, d.asSlice(8192, 100).mismatch(src.segment().asSlice(0, 100)));
            assertEquals(-1L, d.asSlice(8292, SIZE - 8292).mismatch(MemorySegment.ofArray(new byte[SIZE - 8292])));
            assertEquals(0, bed.a.sendSlotsInUse());
        }
    }

    private static long dropped(final NackDropper dropper)
    {
        return dropper.dropped;
    }

    @Test
    void shouldCompleteAOnePacketWriteWithTheErrorWhenItsOnlyNackIsLostS93()
    {
        final NackDropper dropper = new NackDropper(1);
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options().wrapB(dropper.wrapper())))
        {
            final MemoryRegion src = bed.region(bed.pdA, 64, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, 64, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ, 0);
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), 64).remote(dst.address(), dst.rkey()));
            final List<WorkCompletion> done = bed.sendCompletionsA(1);
            assertEquals(1, dropped(dropper));
            assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, done.get(0).status());
            assertEquals(-1L, dst.segment().mismatch(MemorySegment.ofArray(new byte[64])));
        }
    }

    @Test
    void shouldFailASendLongerThanItsReceiveWhenTheNacksAreLostS93S45()
    {
        final NackDropper dropper = new NackDropper(6);
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options().wrapB(dropper.wrapper())))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE, 0);
            bed.b.postReceive(0, new ReceiveWorkRequest().wrId(10).buffer(dst, dst.address(), SIZE - 1));
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.SEND).local(src, src.address(), SIZE));
            final List<WorkCompletion> done = bed.sendCompletionsA(1);
            assertEquals(6, dropped(dropper));
            assertEquals(WorkCompletionStatus.REM_INV_REQ_ERR, done.get(0).status());
            assertEquals(-1L, dst.segment().mismatch(MemorySegment.ofArray(new byte[SIZE])));
        }
    }

    @Test
    void shouldRetryASendWhoseRnrNackWasLostAndDeliverItOnceAReceiveIsPostedS93()
    {
        final NackDropper dropper = new NackDropper(6);
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options().wrapB(dropper.wrapper())))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE, 0);
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.SEND).local(src, src.address(), SIZE));
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.RNR_RETRIES) >= 1, 20_000);
            assertEquals(6, dropped(dropper), "the first attempt's RNR NACKs were all lost");
            assertTrue(bed.sendCqA.isEmpty(), "not completed: nothing was placed");
            assertTrue(bed.a.counters().get(SprayCounters.QUERIES_SENT) >= 1);
            bed.b.postReceive(0, new ReceiveWorkRequest().wrId(10).buffer(dst, dst.address(), SIZE));
            final List<WorkCompletion> done = bed.sendCompletionsA(1);
            assertEquals(WorkCompletionStatus.SUCCESS, done.get(0).status());
            final List<WorkCompletion> received = SprayTestBed.drain(bed.receiveCqB);
            assertEquals(1, received.size());
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
        }
    }

    @Test
    void shouldFailAReadOfAnUnreadableRegionWhenItsNackIsLostS93()
    {
        final NackDropper dropper = new NackDropper(1);
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options().wrapB(dropper.wrapper())))
        {
            final MemoryRegion writable = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 9);
            final MemoryRegion local = bed.region(bed.pdA, SIZE, AccessFlags.LOCAL_WRITE, 0);
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_READ)
                .local(local, local.address(), SIZE).remote(writable.address(), writable.rkey()));
            final List<WorkCompletion> done = bed.sendCompletionsA(1);
            assertEquals(1, dropped(dropper));
            assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, done.get(0).status());
            assertEquals(-1L, local.segment().mismatch(MemorySegment.ofArray(new byte[SIZE])));
        }
    }

    @Test
    void shouldGiveUpOnAHeldMessageWhoseReceiverNeverAnswersS931()
    {
        final NackDropper dropper = new NackDropper(Long.MAX_VALUE); // every NACK and every answer lost
        final SprayTestBed.Options options = new SprayTestBed.Options().wrapB(dropper.wrapper());
        options.connectionTimeoutNanos = 500_000;
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion src = bed.region(bed.pdA, 64, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, 64, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), 64).remote(dst.address(), dst.rkey() ^ 1));
            final long start = bed.now;
            final List<WorkCompletion> done = bed.sendCompletionsA(1);
            assertEquals(WorkCompletionStatus.RETRY_EXC_ERR, done.get(0).status(), "unknown fate: never SUCCESS");
            assertTrue(bed.now - start >= 500_000);
            assertTrue(bed.a.counters().get(SprayCounters.QUERIES_SENT) >= 5);
            assertEquals(-1L, dst.segment().mismatch(MemorySegment.ofArray(new byte[64])));
        }
    }

    @Test
    void shouldNotHoldOrQueryAnythingWhenNothingIsRefusedS93()
    {
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options()))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            for (int i = 0; i < 8; i++)
            {
                bed.a.postSend(i % 4, new SendWorkRequest().wrId(i).opcode(WorkRequestOpcode.RDMA_WRITE)
                    .local(src, src.address(), SIZE).remote(dst.address(), dst.rkey()));
            }
            final List<WorkCompletion> done = bed.sendCompletionsA(8);
            assertEquals(8, done.size());
            assertEquals(0, bed.a.counters().get(SprayCounters.COMPLETIONS_HELD));
            assertEquals(0, bed.a.counters().get(SprayCounters.QUERIES_SENT));
        }
    }
}
