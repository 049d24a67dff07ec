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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Messages of every size and kind between two engines, 8 paths over 2 or 4 planes, no loss: every byte
 * lands where it belongs (S4.2 self-describing placement, S4.3 segmentation), every path carries data
 * (S7.1, S7.2 spraying), packets of different paths interleave on arrival and still nothing is
 * retransmitted (S6.2: reordering is only between paths, never a loss), completions come once per message
 * in MSN order per stream (S4.7, S4.8).
 */
class SprayTransferTest
{
    static final int MTU = 4096;
    static final int[] SIZES = {0, 1, MTU - 1, MTU, MTU + 1, 1 << 20, 16 << 20};
    static final int GAP = 256;

    static Stream<Arguments> cases()
    {
        final List<Arguments> list = new ArrayList<>();
        for (final WorkRequestOpcode op : WorkRequestOpcode.values())
        {
            for (final int planes : new int[] {2, 4})
            {
                list.add(Arguments.of(op, planes));
            }
        }
        return list.stream();
    }

    @ParameterizedTest(name = "S4.2/S4.3/S6.2/S7.2: {0} of 0 B..16 MiB over 8 paths, {1} planes")
    @MethodSource("cases")
    void shouldMoveEveryByteOfEverySizeWithoutRetransmission(final WorkRequestOpcode op, final int planes)
    {
        try (SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options().planes(planes)))
        {
            final long[] offsets = new long[SIZES.length];
            long total = 0;
            for (int i = 0; i < SIZES.length; i++)
            {
                offsets[i] = total;
                total += SIZES[i] + GAP;
            }
            final boolean read = op == WorkRequestOpcode.RDMA_READ;
            // the source is on the side that sends the data: A for WRITE/SEND, B for READ
            final MemoryRegion source = read ?
                bed.region(bed.pdB, total, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ, 77) :
                bed.region(bed.pdA, total, AccessFlags.NONE, 77);
            final MemoryRegion target = read ?
                bed.region(bed.pdA, total, AccessFlags.LOCAL_WRITE, 0) :
                bed.region(bed.pdB, total, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);

            final boolean consumesReceive = op == WorkRequestOpcode.SEND || op == WorkRequestOpcode.SEND_WITH_IMM ||
                op == WorkRequestOpcode.RDMA_WRITE_WITH_IMM;
            final SendWorkRequest wr = new SendWorkRequest();
            final ReceiveWorkRequest rr = new ReceiveWorkRequest();
            for (int i = 0; i < SIZES.length; i++)
            {
                final int streamId = i % 4;
                if (consumesReceive)
                {
                    rr.reset().wrId(100 + i);
                    if (op != WorkRequestOpcode.RDMA_WRITE_WITH_IMM)
                    {
                        rr.buffer(target, target.address() + offsets[i], SIZES[i]);
                    }
                    assertEquals(PostResult.OK, bed.b.postReceive(streamId, rr));
                }
                wr.reset().wrId(i).opcode(op).immediate(0x5EED0000 | i);
                if (read)
                {
                    wr.local(target, target.address() + offsets[i], SIZES[i])
                        .remote(source.address() + offsets[i], source.rkey());
                }
                else
                {
                    wr.local(source, source.address() + offsets[i], SIZES[i])
                        .remote(target.address() + offsets[i], target.rkey());
                }
                assertEquals(PostResult.OK, bed.a.postSend(streamId, wr));
            }

            final List<WorkCompletion> sent = new ArrayList<>();
            bed.runUntil(() ->
            {
                sent.addAll(SprayTestBed.drain(bed.sendCqA));
                return sent.size() == SIZES.length;
            }, 200_000);
            bed.runToQuiet(200);

            for (final WorkCompletion wc : sent)
            {
                assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
                assertEquals(SIZES[(int)wc.wrId()], wc.byteLength());
                assertEquals(op.completionOpcode(), wc.opcode());
            }
            assertInStreamOrder(sent);

            final MemorySegment src = source.segment();
            final MemorySegment dst = target.segment();
            for (int i = 0; i < SIZES.length; i++)
            {
                final long o = offsets[i];
                assertEquals(-1L, src.asSlice(o, SIZES[i]).mismatch(dst.asSlice(o, SIZES[i])), "message " + i);
                assertEquals(-1L, dst.asSlice(o + SIZES[i], GAP).mismatch(MemorySegment.ofArray(new byte[GAP])),
                    "guard bytes after message " + i);
            }

            if (consumesReceive)
            {
                final List<WorkCompletion> received = SprayTestBed.drain(bed.receiveCqB);
                assertEquals(SIZES.length, received.size());
                assertInStreamOrder(received);
                for (final WorkCompletion wc : received)
                {
                    final int i = (int)wc.wrId() - 100;
                    assertEquals(WorkCompletionStatus.SUCCESS, wc.status());
                    assertEquals(SIZES[i], wc.byteLength());
                    assertEquals(op == WorkRequestOpcode.RDMA_WRITE_WITH_IMM ? WorkCompletionOpcode.RECV_RDMA_WITH_IMM :
                        WorkCompletionOpcode.RECV, wc.opcode());
                    assertEquals(op != WorkRequestOpcode.SEND, wc.hasImmediate());
                    if (wc.hasImmediate())
                    {
                        assertEquals(0x5EED0000 | i, wc.immediateData());
                    }
                }
            }
            else
            {
                assertTrue(bed.receiveCqB.isEmpty());
            }

            final SprayConnection sender = read ? bed.b : bed.a;
            assertEquals(0, bed.a.counters().get(SprayCounters.RETRANSMITTED) + bed.b.counters().get(SprayCounters.RETRANSMITTED));
            assertEquals(0, bed.a.counters().get(SprayCounters.LOST) + bed.b.counters().get(SprayCounters.LOST));
            assertEquals(0, bed.a.counters().get(SprayCounters.TIMEOUTS) + bed.b.counters().get(SprayCounters.TIMEOUTS));
            for (int p = 0; p < 8; p++)
            {
                assertTrue(sender.pathCounters(p).get(SprayCounters.TX_PACKETS) > 0, "path " + p + " carried data");
            }
            assertEquals(0, bed.a.sendSlotsInUse());
            assertEquals(0, bed.b.sendSlotsInUse());
            assertEquals(0, bed.a.inboundMessagesInUse());
            assertEquals(0, bed.b.inboundMessagesInUse());
        }
    }

    @org.junit.jupiter.api.Test
    void shouldPaceTheSenderToTheReceiversFairShareS83S84()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.capacityMbps = 10_000; // B's ingress: 10 Gb/s, one sender: hint 10 Gb/s
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final int size = 4 << 20;
            final MemoryRegion src = bed.region(bed.pdA, size, AccessFlags.NONE, 8);
            final MemoryRegion dst = bed.region(bed.pdB, size, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final long start = bed.now;
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), size).remote(dst.address(), dst.rkey()));
            bed.runUntil(() -> !bed.sendCqA.isEmpty(), 100_000);
            final long nanos = bed.now - start;
            final double gbps = size * 8.0 / nanos;
            assertEquals(10_000, bed.a.peerRateHintMbps());
            // within 10 %: the hint arrives with the first ACK, so the pacer's first burst (64 KiB) and the first
            // round trip go at the windows' rate
            assertTrue(gbps > 9.0 && gbps < 11.0, "paced at " + gbps + " Gb/s");
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
        }
    }

    /** Holds back plane 0's frames every other flush (they wait in the sender's TX burst), and records arrivals. */
    static final class ReorderingPort extends io.spraynic.datapath.port.ForwardingPort
    {
        final boolean delay;
        final List<Integer> arrivals; // message offsets of data packets, in arrival order, shared by the planes
        int calls;

        ReorderingPort(final io.spraynic.datapath.port.PacketPort inner, final boolean delay, final List<Integer> arrivals)
        {
            super(inner, "");
            this.delay = delay;
            this.arrivals = arrivals;
        }

        public int receive(final io.spraynic.datapath.port.PacketBurst burst)
        {
            final int before = burst.size();
            final int n = inner.receive(burst);
            for (int i = before; i < before + n; i++)
            {
                if (SprayTestBed.isData(burst.memory(), burst.offset(i), burst.length(i)))
                {
                    arrivals.add(io.spraynic.datapath.wire.SprayExtendedTransportHeader.messageOffset(burst.memory(),
                        burst.offset(i) + SprayTestBed.DATA_OFFSET_BTH + io.spraynic.datapath.wire.BaseTransportHeader.LENGTH));
                }
            }
            return n;
        }

        public int transmit(final io.spraynic.datapath.port.PacketBurst burst)
        {
            return delay && (calls++ & 1) == 0 ? 0 : inner.transmit(burst);
        }
    }

    @org.junit.jupiter.api.Test
    void shouldNotRetransmitAnythingWhenPacketsOfDifferentPathsArriveOutOfOrderS62()
    {
        final List<Integer> arrivals = new ArrayList<>();
        final SprayTestBed.Options options = new SprayTestBed.Options()
            .wrapA((plane, port) -> new ReorderingPort(port, plane == 0, new ArrayList<>()))
            .wrapB((plane, port) -> new ReorderingPort(port, false, arrivals));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final int size = 4 << 20;
            final MemoryRegion src = bed.region(bed.pdA, size, AccessFlags.NONE, 8);
            final MemoryRegion dst = bed.region(bed.pdB, size, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), size).remote(dst.address(), dst.rkey()));
            bed.runUntil(() -> !bed.sendCqA.isEmpty(), 100_000);
            assertEquals(-1L, src.segment().mismatch(dst.segment()));

            // the order the receiver took data packets in (plane 0's burst, then plane 1's, every step): count
            // those that arrived after a packet the sender sent later
            int inversions = 0;
            int highest = -1;
            for (final int offset : arrivals)
            {
                if (offset < highest)
                {
                    inversions++;
                }
                highest = Math.max(highest, offset);
            }
            assertEquals(1024, arrivals.size());
            assertTrue(inversions > 100, "packets arrived out of order: " + inversions);
            assertEquals(0, bed.a.counters().get(SprayCounters.RETRANSMITTED));
            assertEquals(0, bed.a.counters().get(SprayCounters.LOST));
            assertEquals(0, bed.b.counters().get(SprayCounters.DUPLICATES));
            assertEquals(0, bed.b.counters().get(SprayCounters.SACK_GAPS), "S6.2: no path ever saw a gap");
        }
    }

    static void assertInStreamOrder(final List<WorkCompletion> completions)
    {
        final int[] last = {-1, -1, -1, -1};
        for (final WorkCompletion wc : completions)
        {
            final int i = (int)(wc.wrId() % 100);
            final int s = i % 4;
            assertTrue(i > last[s], () -> "stream " + s + " completed " + i + " after " + last[s]);
            last[s] = i;
        }
    }
}
