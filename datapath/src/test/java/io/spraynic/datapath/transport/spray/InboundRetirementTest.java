package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.wire.NegativeAckHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S4.8: inbound messages retire in MSN order per stream, whatever order they are done in, across
 * the wrap of the MSN space; a retiring message completes its receive with the status its refusal calls for, and
 * gives its record and placement marks back.
 */
@Timeout(10)
class InboundRetirementTest
{
    private static final int STREAMS = 2;

    private final Arena arena = Arena.ofConfined();
    private final ProtectionDomain pd = new ProtectionDomain();
    private final MemoryRegion region = pd.register(arena.allocate(1 << 16), AccessFlags.LOCAL_WRITE);
    private final CompletionQueue cq = new CompletionQueue(64); // never full here: no local error to raise
    private final TransportCounters counters = SprayCounters.create();
    private final TransportCounters engineCounters = SprayCounters.create();
    private final InboundMessageRecords records = new InboundMessageRecords(8);
    private final PlacementMarks marks = new PlacementMarks(8);
    private final PostedReceives receives = new PostedReceives(8, STREAMS, cq, 1, pd);
    private final InboundRetirement retirement =
        new InboundRetirement(STREAMS, records, marks, receives, counters, engineCounters, null);

    InboundRetirementTest()
    {
        records.attach(new InboundMessageRecords.Storage(8));
        receives.attach(new PostedReceives.Storage(8));
    }

    @AfterEach
    void close()
    {
        arena.close();
    }

    private void post(final int stream, final long wrId)
    {
        assertEquals(PostResult.OK, receives.post(stream, new ReceiveWorkRequest().wrId(wrId)
            .buffer(region, region.address() + wrId * 1024, 1024)));
    }

    // a recorded SEND of two packets, its receive matched by its RSN, placed (one mark) and done or not
    private int recordSend(final int stream, final int msn, final int rsn, final boolean done)
    {
        final int record = records.open(SendSlots.key(stream, msn), false, MessageKinds.SEND, stream, msn, 1500,
            2, rsn, 0, 0L);
        records.receive(record, receives.find(stream, rsn));
        marks.mark(record, 0);
        records.countPacket(record);
        if (done)
        {
            records.countPacket(record);
        }
        return record;
    }

    private List<String> completions()
    {
        final List<String> seen = new ArrayList<>();
        for (final WorkCompletion wc : SprayTestBed.drain(cq))
        {
            seen.add(wc.wrId() + " " + wc.status() + " " + wc.opcode() + " " + wc.byteLength());
        }
        return seen;
    }

    @Test
    void shouldRetireInMsnOrderWhateverOrderMessagesAreDoneIn()
    {
        post(0, 0);
        post(0, 1);
        post(0, 2);
        final int second = recordSend(0, 1, 1, true);
        final int third = recordSend(0, 2, 2, false);
        retirement.retire(0);
        assertEquals(0, retirement.nextMsn(0), "MSN 0 is not done: nothing retires");
        assertEquals(List.of(), completions());

        // MSN 0 completes on its first packet, never recorded: it retires, then MSN 1 behind it, not MSN 2
        retirement.completeInOrder(0, MessageKinds.SEND, 0, receives.find(0, 0), 0, 100, 0);
        assertEquals(2, retirement.nextMsn(0));
        assertEquals(List.of("0 SUCCESS RECV 100", "1 SUCCESS RECV 1500"), completions());
        assertEquals(1, records.inUse(), "MSN 1's record was given back");
        assertEquals(InboundMessageRecords.MISSING, records.recordOf(SendSlots.key(0, 1)));
        assertEquals(1, marks.inUse(), "and its marks");

        assertTrue(records.countPacket(third));
        retirement.retire(0);
        assertEquals(3, retirement.nextMsn(0));
        assertEquals(List.of("2 SUCCESS RECV 1500"), completions());
        assertEquals(0, records.inUse());
        assertEquals(0, marks.inUse());
        assertEquals(0, retirement.nextMsn(1), "another stream's order is its own");
        assertEquals(3, counters.get(SprayCounters.MESSAGES_RECEIVED));
        assertTrue(second != third);
    }

    /**
     * S4.5 gives each RSN one message, but a peer may name one RSN in two: before, both completed the receive and
     * freed its slot, so the second free ran past the free list (an exception out of the packet path, and every later
     * post threw) or, with other receives posted, one wrId completed twice and a slot went to two later posts.
     */
    @Test
    void shouldCompleteAReceiveOnceWhenTwoMessagesClaimItsRsn()
    {
        post(0, 0);
        recordSend(0, 0, 0, true);
        recordSend(0, 1, 0, true); // the same RSN as MSN 0's
        retirement.retire(0);
        assertEquals(2, retirement.nextMsn(0), "both retire");
        assertEquals(List.of("0 SUCCESS RECV 1500"), completions(), "the receive completes once");
        assertEquals(1, engineCounters.get(SprayCounters.RECEIVES_CLAIMED_TWICE));
        for (int wrId = 1; wrId <= 8; wrId++)
        {
            post(0, wrId); // the table holds 8: its free list is whole, neither short nor past its end
        }
        assertEquals(PostResult.QUEUE_FULL, receives.post(0, new ReceiveWorkRequest().wrId(9)
            .buffer(region, region.address(), 16)));
    }

    @Test
    void shouldCompleteARefusedMessagesReceiveWithItsStatus()
    {
        post(1, 0);
        post(1, 1);
        post(1, 2);
        records.refused(recordSend(1, 0, 0, false), NegativeAckHeader.SYNDROME_REMOTE_INVALID_REQUEST, 1);
        records.refused(recordSend(1, 1, 1, false), NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, 1);
        // a READ retires without a receive to complete
        final int read = records.open(SendSlots.key(1, 2), false, MessageKinds.READ, 1, 2, 64, 1, 0, 0, 0L);
        records.readTaken(read);
        retirement.retire(1);
        assertEquals(3, retirement.nextMsn(1));
        assertEquals(List.of("0 LOC_LEN_ERR RECV 1500", "1 LOC_PROT_ERR RECV 1500"), completions());
        assertEquals(3, counters.get(SprayCounters.MESSAGES_RECEIVED));
        assertEquals(0, records.inUse());
    }

    @Test
    void shouldRetireAcrossTheWrapOfTheMsnSpace() throws ReflectiveOperationException
    {
        final Field next = InboundRetirement.class.getDeclaredField("nextMsn");
        next.setAccessible(true);
        ((int[])next.get(retirement))[0] = -1; // as if 2^32 - 1 messages had been received on stream 0
        post(0, 0);
        post(0, 1);
        recordSend(0, 0, 1, true); // MSN 0 comes after MSN 2^32 - 1
        final int last = records.open(SendSlots.key(0, -1), false, MessageKinds.WRITE_IMM, 0, -1, 10, 1, 0, 0, 0L);
        records.receive(last, receives.find(0, 0));
        records.immediate(last, 42);
        retirement.retire(0);
        assertEquals(-1, retirement.nextMsn(0), "MSN 2^32 - 1 is not done");
        assertTrue(records.countPacket(last));
        retirement.retire(0);
        assertEquals(1, retirement.nextMsn(0));
        assertEquals(List.of("0 SUCCESS RECV_RDMA_WITH_IMM 10", "1 SUCCESS RECV 1500"), completions());
    }
}
