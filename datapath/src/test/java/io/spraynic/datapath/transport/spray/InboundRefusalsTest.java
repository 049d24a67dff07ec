package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.wire.NegativeAckHeader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static io.spraynic.datapath.transport.spray.InboundMessageRecords.MISSING;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S9.3, S9.4, S10.2: a message refused for good puts its stream in error and flushes the
 * stream's later messages, keeping one refusal number per stream; an RNR attempt is refused, under one number,
 * until the sender's retry; a refusal for want of resources gives its placement marks back and is counted; each
 * refusal is NACKed, and a query is answered only where there is something to tell. The NACKs go out through B's
 * connection of a test bed (counted there).
 */
@Timeout(30)
class InboundRefusalsTest
{
    private final SprayTestBed bed = new SprayTestBed(new SprayTestBed.Options());
    private final TransportCounters counters = SprayCounters.create();
    private final InboundMessageRecords records = new InboundMessageRecords(8);
    private final PlacementMarks marks = new PlacementMarks(8);
    private final Refusals numbers = new Refusals();
    private final PostedReceives receives = new PostedReceives(8, 4, bed.receiveCqB, SprayTestBed.CID_B, bed.pdB);
    private final InboundRetirement retirement = new InboundRetirement(4, records, marks, receives, counters,
        bed.engineB.counters(), bed.b);
    private final InboundRefusals refusals = new InboundRefusals(4, records, marks, retirement, numbers,
        bed.b.control(), bed.engineB, counters);

    InboundRefusalsTest()
    {
        records.attach(new InboundMessageRecords.Storage(8));
        receives.attach(new PostedReceives.Storage(8));
    }

    @AfterEach
    void close()
    {
        bed.close();
    }

    private long nacksSent()
    {
        return bed.b.counters().get(SprayCounters.NACKS_SENT);
    }

    private int record(final int stream, final int msn)
    {
        final int record = records.open(SendSlots.key(stream, msn), false, MessageKinds.WRITE, stream, msn, 3000,
            3, 0, 0, 0L);
        marks.mark(record, 0);
        records.countPacket(record);
        return record;
    }

    @Test
    void shouldRefuseForGoodAndFlushTheStreamsLaterMessages()
    {
        final int first = record(0, 1);
        final int second = record(0, 2);
        record(0, 3);
        final int otherStream = record(1, 5);
        final long nacks = nacksSent();

        refusals.refuse(0, second, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, 0, 2);
        assertEquals(nacks + 1, nacksSent(), "NACKed");
        assertEquals(1, numbers.made(), "numbered");
        assertTrue(records.isDone(second));
        assertEquals(NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, records.syndrome(second));
        assertEquals(1, records.refusal(second));
        assertEquals(MISSING, records.recordOf(SendSlots.key(0, 3)), "MSN 3, behind it, flushed");
        assertEquals(1, counters.get(SprayCounters.FLUSHED));
        assertEquals(first, records.recordOf(SendSlots.key(0, 1)), "MSN 1, before it, kept");
        assertEquals(otherStream, records.recordOf(SendSlots.key(1, 5)), "another stream's kept");
        assertEquals(3, records.inUse());
        assertTrue(refusals.isFlushed(0, 3));
        assertFalse(refusals.isFlushed(0, 2));
        assertFalse(refusals.isFlushed(1, 6));

        // an earlier message of the stream refused too: the stream's number, and its error moves back to it
        refusals.refuse(0, first, NegativeAckHeader.SYNDROME_REMOTE_INVALID_REQUEST, 0, 1);
        assertEquals(1, numbers.made(), "one number per stream in error");
        assertEquals(1, records.refusal(first));
        assertTrue(refusals.isFlushed(0, 2));
        assertEquals(MISSING, records.recordOf(SendSlots.key(0, 2)), "MSN 2, now behind it, flushed too");
        assertEquals(2, counters.get(SprayCounters.FLUSHED));
        assertEquals(nacks + 2, nacksSent());

        refusals.repeatRefusal(0, first, 0, 1);
        assertEquals(nacks + 3, nacksSent(), "a further packet of it is refused again");

        // MSN 1 retires once MSN 0 (never recorded) completes; the flushed MSN 2 has no record to retire
        assertEquals(0, retirement.nextMsn(0));
        retirement.completeInOrder(0, MessageKinds.WRITE, 0, MISSING, 0, 10, 0);
        assertEquals(2, retirement.nextMsn(0));
        assertEquals(1, records.inUse());
    }

    @Test
    void shouldRefuseAnRnrAttemptUnderOneNumberUntilItsRetry()
    {
        final int record = record(0, 0);
        final long nacks = nacksSent();
        refusals.refuseRnr(0, record, 0, 0, 0);
        assertTrue(records.isAttemptRefused(record));
        assertEquals(0, records.received(record), "nothing of the refused attempt counts");
        assertEquals(1, records.refusal(record));
        refusals.refuseRnr(0, record, 0, 0, 0); // another packet of the same attempt
        assertEquals(1, records.refusal(record), "the same refusal");
        assertEquals(1, numbers.made());
        assertEquals(nacks + 2, nacksSent(), "every packet of it is NACKed");
        assertEquals(0, counters.get(SprayCounters.NO_RESOURCES));

        records.laterAttempt(record, 1);
        refusals.refuseRnr(0, record, 0, 0, 0); // the retry is refused too: a new refusal
        assertEquals(2, records.refusal(record));
        assertEquals(2, numbers.made());
        assertFalse(refusals.isFlushed(0, 1), "an RNR puts no stream in error");
    }

    @Test
    void shouldRefuseForResourcesGivingTheMarksBack()
    {
        final int record = record(0, 0);
        assertEquals(1, marks.inUse());
        refusals.refuseForResources(0, record, 0, 0, 0);
        assertEquals(0, marks.inUse(), "its retry places every packet again");
        assertTrue(records.isAttemptRefused(record));
        assertTrue(records.isRefusedForResources(record));
        assertEquals(1, records.refusal(record));
        assertEquals(1, counters.get(SprayCounters.NO_RESOURCES));
        refusals.refuseRnr(0, record, 0, 0, 0); // a further packet of the attempt
        assertEquals(2, counters.get(SprayCounters.NO_RESOURCES));
        assertEquals(1, numbers.made(), "the same refusal");
    }

    @Test
    void shouldAnswerAQueryOnlyWithSomethingToTell()
    {
        final int done = record(0, 1);
        records.countPacket(done);
        records.countPacket(done);
        final int placing = record(0, 2);
        final int refusedAttempt = record(0, 3);
        refusals.refuseRnr(0, refusedAttempt, 0, 3, 0);
        retirement.completeInOrder(1, MessageKinds.WRITE, 0, MISSING, 0, 10, 0);
        long nacks = nacksSent();

        refusals.answerQuery(0, 9);
        assertEquals(nacks, nacksSent(), "never seen: nothing to tell");
        refusals.answerQuery(0, 2);
        assertEquals(nacks, nacksSent(), "being placed: nothing to tell yet");
        refusals.answerQuery(0, 1);
        assertEquals(++nacks, nacksSent(), "done: accepted");
        refusals.answerQuery(0, 3);
        assertEquals(++nacks, nacksSent(), "its last attempt refused");
        refusals.answerQuery(1, 0);
        assertEquals(++nacks, nacksSent(), "retired: accepted");

        refusals.refuse(0, placing, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, 0, 2);
        nacks = nacksSent();
        refusals.answerQuery(0, 9);
        assertEquals(++nacks, nacksSent(), "behind a refused message: the refused one is named");
        assertNotEquals(MISSING, records.recordOf(SendSlots.key(0, 1)), "MSN 1 waits for MSN 0");
    }
}
