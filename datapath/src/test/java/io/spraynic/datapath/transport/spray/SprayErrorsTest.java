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

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Message-level refusals (S9.3 NACK syndromes, S9.4 error isolation), unknown connections (S9.5), RNR
 * (S9.3) and ordered completions (S4.8).
 */
class SprayErrorsTest
{
    private static final int SIZE = 5 * 4096 + 17;

    @Test
    void shouldRefuseAWrongRkeyOrOutOfBoundsWriteWithoutWritingAndFlushTheStreamS93S94()
    {
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options()))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final MemoryRegion readOnly = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            // stream 0: wrong rkey, then a good WRITE that must be flushed (S9.4)
            bed.a.postSend(0, wr.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(dst.address(), dst.rkey() ^ 0x5A5A));
            bed.a.postSend(0, wr.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(dst.address(), dst.rkey()));
            // stream 1: one byte beyond the region's end
            bed.a.postSend(1, wr.reset().wrId(3).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(dst.address() + 1, dst.rkey()));
            // stream 2: a region without REMOTE_WRITE
            bed.a.postSend(2, wr.reset().wrId(4).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(readOnly.address(), readOnly.rkey()));
            // stream 3 is not affected (S9.4: other streams carry on)
            bed.a.postSend(3, wr.reset().wrId(5).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), 100).remote(dst.address() + 200, dst.rkey()));

            final List<WorkCompletion> done = bed.sendCompletionsA(5);
            assertEquals(5, done.size());
            final WorkCompletionStatus[] expected = {null, WorkCompletionStatus.REM_ACCESS_ERR,
                WorkCompletionStatus.WR_FLUSH_ERR, WorkCompletionStatus.REM_ACCESS_ERR,
                WorkCompletionStatus.REM_ACCESS_ERR, WorkCompletionStatus.SUCCESS};
            for (final WorkCompletion wc : done)
            {
                assertEquals(expected[(int)wc.wrId()], wc.status(), wc::toString);
            }
            // nothing written but stream 3's 100 bytes
            final MemorySegment d = dst.segment();
            assertEquals(-1L, d.asSlice(0, 200).mismatch(MemorySegment.ofArray(new byte[200])));
            assertEquals(-1L, d.asSlice(200, 100).mismatch(src.segment().asSlice(0, 100)));
            assertEquals(-1L, d.asSlice(300, SIZE - 300).mismatch(MemorySegment.ofArray(new byte[SIZE - 300])));
            assertEquals(-1L, readOnly.segment().mismatch(MemorySegment.ofArray(new byte[SIZE])));
            assertTrue(bed.b.counters().get(SprayCounters.NACKS_SENT) >= 3);

            // a later post on the errored stream is flushed at once; the others still work
            bed.a.postSend(0, wr.reset().wrId(6).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), 10).remote(dst.address(), dst.rkey()));
            bed.a.postSend(3, wr.reset().wrId(7).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), 10).remote(dst.address() + 400, dst.rkey()));
            final List<WorkCompletion> more = bed.sendCompletionsA(2);
            assertEquals(2, more.size());
            assertEquals(6, more.get(0).wrId());
            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, more.get(0).status());
            assertEquals(7, more.get(1).wrId());
            assertEquals(WorkCompletionStatus.SUCCESS, more.get(1).status());
            assertEquals(0, bed.a.sendSlotsInUse());
        }
    }

    @Test
    void shouldRefuseAReadOfAnUnreadableRegionS93()
    {
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options()))
        {
            final MemoryRegion writable = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 9);
            final MemoryRegion local = bed.region(bed.pdA, SIZE, AccessFlags.LOCAL_WRITE, 0);
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_READ)
                .local(local, local.address(), SIZE).remote(writable.address(), writable.rkey()));
            final List<WorkCompletion> done = bed.sendCompletionsA(1);
            assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, done.get(0).status());
            assertEquals(WorkCompletionOpcode.RDMA_READ, done.get(0).opcode());
            assertEquals(-1L, local.segment().mismatch(MemorySegment.ofArray(new byte[SIZE])));
        }
    }

    @Test
    void shouldRefuseASendLongerThanItsReceiveS45()
    {
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options()))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE, 0);
            bed.b.postReceive(0, new ReceiveWorkRequest().wrId(10).buffer(dst, dst.address(), SIZE - 1));
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.SEND).local(src, src.address(), SIZE));
            final List<WorkCompletion> done = bed.sendCompletionsA(1);
            assertEquals(WorkCompletionStatus.REM_INV_REQ_ERR, done.get(0).status());
            final List<WorkCompletion> received = SprayTestBed.drain(bed.receiveCqB);
            assertEquals(1, received.size());
            assertEquals(WorkCompletionStatus.LOC_LEN_ERR, received.get(0).status());
            assertEquals(-1L, dst.segment().mismatch(MemorySegment.ofArray(new byte[SIZE])));
        }
    }

    @Test
    void shouldRetryASendAfterRnrUntilAReceiveIsPostedS93()
    {
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options()))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE, 0);
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.SEND).local(src, src.address(), SIZE));
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.RNR_RETRIES) >= 2, 10_000);
            assertTrue(bed.sendCqA.isEmpty());
            assertEquals(-1L, dst.segment().mismatch(MemorySegment.ofArray(new byte[SIZE])), "nothing placed");
            bed.b.postReceive(0, new ReceiveWorkRequest().wrId(10).buffer(dst, dst.address(), SIZE));
            final List<WorkCompletion> done = bed.sendCompletionsA(1);
            assertEquals(WorkCompletionStatus.SUCCESS, done.get(0).status());
            final List<WorkCompletion> received = SprayTestBed.drain(bed.receiveCqB);
            assertEquals(1, received.size());
            assertEquals(SIZE, received.get(0).byteLength());
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
            assertEquals(0, bed.a.counters().get(SprayCounters.RETRANSMITTED));
        }
    }

    @Test
    void shouldCompleteWithRnrRetryExceededWhenNoReceiveComesS93()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.rnrRetries = 2;
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion src = bed.region(bed.pdA, 64, AccessFlags.NONE, 3);
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.SEND).local(src, src.address(), 64));
            final List<WorkCompletion> done = bed.sendCompletionsA(1);
            assertEquals(WorkCompletionStatus.RNR_RETRY_EXC_ERR, done.get(0).status());
            assertEquals(2, bed.a.counters().get(SprayCounters.RNR_RETRIES));
            assertEquals(3, bed.b.counters().get(SprayCounters.NACKS_SENT));
        }
    }

    @Test
    void shouldCountAndDropPacketsForAnUnknownConnectionS95()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.cidBSeenByA = 0x777777;
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion src = bed.region(bed.pdA, 3 * 4096, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, 3 * 4096, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), 3 * 4096).remote(dst.address(), dst.rkey()));
            bed.runToQuiet(30);
            // the data packets of the start budget (8 KiB: two, S8.3.1; the third waits for an ACK that never
            // comes), the start probe and every probe A sent when no ACK came back (S6.7)
            assertEquals(2, bed.a.counters().get(SprayCounters.TX_PACKETS));
            assertEquals(1, bed.a.counters().get(SprayCounters.START_PROBES_SENT));
            assertTrue(bed.a.counters().get(SprayCounters.PROBES_SENT) > 1);
            assertEquals(2 + bed.a.counters().get(SprayCounters.PROBES_SENT) + bed.a.counters().get(SprayCounters.RETRANSMITTED),
                bed.engineB.counters().get(SprayCounters.UNKNOWN_CONNECTION));
            assertEquals(0, bed.b.counters().get(SprayCounters.RX_PACKETS));
            assertEquals(-1L, dst.segment().mismatch(MemorySegment.ofArray(new byte[3 * 4096])));
        }
    }

    @Test
    void shouldCompleteInMsnOrderPerStreamEvenWhenALaterMessageFinishesFirstS48()
    {
        final SprayTestBed.SwitchablePort[] switches = new SprayTestBed.SwitchablePort[2];
        final SprayTestBed.Options options = new SprayTestBed.Options()
            .wrapA((plane, port) -> switches[plane] = new SprayTestBed.SwitchablePort(port));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final int big = 1 << 20;
            final MemoryRegion src = bed.region(bed.pdA, big, AccessFlags.NONE, 3);
            final MemoryRegion dst = bed.region(bed.pdB, 2L * big, AccessFlags.LOCAL_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            final ReceiveWorkRequest rr = new ReceiveWorkRequest();
            // stream 0: a 1 MiB SEND whose first packet keeps being lost, then a 1-byte SEND; stream 1: 1 byte
            for (final SprayTestBed.SwitchablePort s : switches)
            {
                s.corrupt = (memory, offset, length) -> SprayTestBed.isData(memory, offset, length) &&
                    io.spraynic.datapath.wire.SprayExtendedTransportHeader.msn(memory, offset + SprayTestBed.DATA_OFFSET_BTH +
                    io.spraynic.datapath.wire.BaseTransportHeader.LENGTH) == 0 &&
                    io.spraynic.datapath.wire.SprayExtendedTransportHeader.messageOffset(memory, offset +
                    SprayTestBed.DATA_OFFSET_BTH + io.spraynic.datapath.wire.BaseTransportHeader.LENGTH) == 0 &&
                    io.spraynic.datapath.wire.SprayExtendedTransportHeader.stream(memory, offset +
                    SprayTestBed.DATA_OFFSET_BTH + io.spraynic.datapath.wire.BaseTransportHeader.LENGTH) == 0;
            }
            bed.b.postReceive(0, rr.reset().wrId(10).buffer(dst, dst.address(), big));
            bed.b.postReceive(0, rr.reset().wrId(11).buffer(dst, dst.address() + big, 1));
            bed.b.postReceive(1, rr.reset().wrId(12).buffer(dst, dst.address() + big + 64, 1));
            assertEquals(PostResult.OK, bed.a.postSend(0, wr.reset().wrId(1).opcode(WorkRequestOpcode.SEND)
                .local(src, src.address(), big)));
            assertEquals(PostResult.OK, bed.a.postSend(0, wr.reset().wrId(2).opcode(WorkRequestOpcode.SEND)
                .local(src, src.address() + 5, 1)));
            assertEquals(PostResult.OK, bed.a.postSend(1, wr.reset().wrId(3).opcode(WorkRequestOpcode.SEND)
                .local(src, src.address() + 9, 1)));

            final List<WorkCompletion> received = new ArrayList<>();
            final MemorySegment d = dst.segment();
            final byte expected = src.segment().get(java.lang.foreign.ValueLayout.JAVA_BYTE, 5);
            bed.runUntil(() ->
            {
                received.addAll(SprayTestBed.drain(bed.receiveCqB));
                return !received.isEmpty() && d.get(java.lang.foreign.ValueLayout.JAVA_BYTE, big) == expected &&
                    bed.a.counters().get(SprayCounters.MESSAGES_SENT) >= 1;
            }, 20_000);
            // message 2 of stream 0 is placed and acknowledged, yet held back behind message 1 at both ends;
            // stream 1 did not wait (S4.8)
            assertEquals(List.of(12L), received.stream().map(WorkCompletion::wrId).toList());
            final List<WorkCompletion> sent = SprayTestBed.drain(bed.sendCqA);
            assertEquals(List.of(3L), sent.stream().map(WorkCompletion::wrId).toList());

            for (final SprayTestBed.SwitchablePort s : switches)
            {
                s.corrupt = null;
            }
            sent.clear();
            sent.addAll(bed.sendCompletionsA(2));
            assertEquals(List.of(1L, 2L), sent.stream().map(WorkCompletion::wrId).toList());
            received.clear();
            received.addAll(SprayTestBed.drain(bed.receiveCqB));
            assertEquals(List.of(10L, 11L), received.stream().map(WorkCompletion::wrId).toList());
            assertEquals(-1L, src.segment().mismatch(d.asSlice(0, big)));
            assertTrue(switches[0].corrupted + switches[1].corrupted >= 1);
        }
    }
}
