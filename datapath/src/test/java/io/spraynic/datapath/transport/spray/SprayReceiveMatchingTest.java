package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.FaultInjectingPacketPort;
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
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * S4.5 receive matching by RSN: one stream mixes WRITEs, a READ and receive-consuming messages (SEND, SEND
 * with immediate, WRITE with immediate); the receiver posts one receive per receive-consuming message only,
 * in order, and each lands in its own receive; completions come in MSN order at the sender and in posting
 * order at the receiver (S4.8), with data packets lost at random (seeded) so that packets of different
 * messages arrive out of order.
 */
class SprayReceiveMatchingTest
{
    private static final int SIZE = 3 * 4096 + 100;
    private static final WorkRequestOpcode[] PATTERN = {
        WorkRequestOpcode.RDMA_WRITE, WorkRequestOpcode.SEND, WorkRequestOpcode.RDMA_WRITE,
        WorkRequestOpcode.SEND_WITH_IMM, WorkRequestOpcode.RDMA_READ, WorkRequestOpcode.RDMA_WRITE_WITH_IMM,
        WorkRequestOpcode.RDMA_WRITE, WorkRequestOpcode.RDMA_WRITE, WorkRequestOpcode.SEND,
    };

    @ParameterizedTest(name = "S4.5/S4.8: WRITEs, a READ and SENDs mixed on one stream, {0} loss")
    @ValueSource(doubles = {0, 0.05})
    void shouldMatchEachReceiveToItsReceiveConsumingMessage(final double loss)
    {
        final SprayTestBed.Options options = new SprayTestBed.Options()
            .wrapA((plane, port) -> new FaultInjectingPacketPort(port, 5 + plane, loss, 0, 0, SprayTestBed::isData))
            .wrapB((plane, port) -> new FaultInjectingPacketPort(port, 9 + plane, loss, 0, 0, SprayTestBed::isData));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final int rounds = 4;
            final int messages = rounds * PATTERN.length;
            final MemoryRegion src = bed.region(bed.pdA, (long)messages * SIZE, AccessFlags.NONE, 3);
            final MemoryRegion readInto = bed.region(bed.pdA, (long)messages * SIZE, AccessFlags.LOCAL_WRITE, 0);
            final MemoryRegion written = bed.region(bed.pdB, (long)messages * SIZE,
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ, 4);
            final MemoryRegion received = bed.region(bed.pdB, (long)messages * SIZE, AccessFlags.LOCAL_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            final ReceiveWorkRequest rr = new ReceiveWorkRequest();
            final List<Long> expectedReceives = new ArrayList<>();
            for (int i = 0; i < messages; i++)
            {
                final WorkRequestOpcode op = PATTERN[i % PATTERN.length];
                final long at = (long)i * SIZE;
                wr.reset().wrId(i).opcode(op).local(op == WorkRequestOpcode.RDMA_READ ? readInto : src,
                    (op == WorkRequestOpcode.RDMA_READ ? readInto : src).address() + at, SIZE)
                    .remote(written.address() + at, written.rkey()).immediate(1000 + i);
                assertEquals(PostResult.OK, bed.a.postSend(0, wr));
                if (op == WorkRequestOpcode.SEND || op == WorkRequestOpcode.SEND_WITH_IMM ||
                    op == WorkRequestOpcode.RDMA_WRITE_WITH_IMM)
                {
                    // one receive per receive-consuming message, nothing for the WRITEs and the READ
                    assertEquals(PostResult.OK, bed.b.postReceive(0, rr.reset().wrId(i)
                        .buffer(received, received.address() + at, SIZE)));
                    expectedReceives.add((long)i);
                }
            }
            final List<WorkCompletion> sent = new ArrayList<>();
            final List<WorkCompletion> got = new ArrayList<>();
            bed.runUntil(() ->
            {
                sent.addAll(SprayTestBed.drain(bed.sendCqA));
                got.addAll(SprayTestBed.drain(bed.receiveCqB));
                return sent.size() == messages && got.size() == expectedReceives.size();
            }, 200_000);

            for (int i = 0; i < messages; i++)
            {
                assertEquals(i, sent.get(i).wrId(), "S4.8: sender completions in MSN order");
                assertEquals(WorkCompletionStatus.SUCCESS, sent.get(i).status(), sent.get(i)::toString);
            }
            assertEquals(expectedReceives, got.stream().map(WorkCompletion::wrId).toList(), "in posting order");
            for (final WorkCompletion wc : got)
            {
                final int i = (int)wc.wrId();
                final WorkRequestOpcode op = PATTERN[i % PATTERN.length];
                assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
                assertEquals(SIZE, wc.byteLength());
                assertEquals(op == WorkRequestOpcode.RDMA_WRITE_WITH_IMM ? WorkCompletionOpcode.RECV_RDMA_WITH_IMM :
                    WorkCompletionOpcode.RECV, wc.opcode());
                if (op != WorkRequestOpcode.SEND)
                {
                    assertEquals(1000 + i, wc.immediateData(), "the message's own immediate");
                }
            }
            for (int i = 0; i < messages; i++)
            {
                final WorkRequestOpcode op = PATTERN[i % PATTERN.length];
                final long at = (long)i * SIZE;
                if (op == WorkRequestOpcode.SEND || op == WorkRequestOpcode.SEND_WITH_IMM)
                {
                    assertEquals(-1L, src.segment().asSlice(at, SIZE).mismatch(received.segment().asSlice(at, SIZE)),
                        "SEND " + i + " in its own receive");
                }
                else if (op == WorkRequestOpcode.RDMA_READ)
                {
                    assertEquals(-1L, written.segment().asSlice(at, SIZE).mismatch(readInto.segment().asSlice(at, SIZE)));
                }
                else
                {
                    assertEquals(-1L, src.segment().asSlice(at, SIZE).mismatch(written.segment().asSlice(at, SIZE)),
                        "WRITE " + i);
                }
            }
            assertEquals(0, bed.a.counters().get(SprayCounters.RNR_RETRIES), "no receive was missing");
            if (loss > 0)
            {
                assertTrue(bed.a.counters().get(SprayCounters.LOST) + bed.b.counters().get(SprayCounters.LOST) > 0);
            }
        }
    }
}
