package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.RecordingFrameSink;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static io.spraynic.datapath.transport.spray.ControlHarness.HEADER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * S9.3.2: the refusal of a READ response (its region deregistered before all of it was sent) is numbered once per
 * READ, NACKed with REMOTE_ACCESS_ERROR and its count carried by an ACK of path 0; a bounded number is kept for
 * twice the connection timeout, and beyond that bound a new one is refused rather than answered wrongly; a query
 * has the kept ones told again, but for the READ it asked about.
 */
class ReadResponseRefusalsTest
{
    private static final long TIMEOUT = 1_000_000;

    private final ControlHarness harness = new ControlHarness();
    private final RecordingFrameSink output = harness.output;
    private final ReadResponseRefusals refusals =
        new ReadResponseRefusals(harness.refusals, harness.control, TIMEOUT);

    private MemorySegment frame(final int index)
    {
        return output.frame(index);
    }

    @Test
    void shouldNumberTheRefusalOfAReadOnceAndTellItWithANackAndAnAckS932()
    {
        assertTrue(refusals.refuse(1, 10, 1_000));
        assertEquals(2, output.frames.size(), "a NACK and an ACK of path 0");
        assertEquals(SprayOpcodes.NACK, harness.opcode(0));
        assertEquals(NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, NegativeAckHeader.syndrome(frame(0), HEADER));
        assertEquals(1, NegativeAckHeader.stream(frame(0), HEADER));
        assertEquals(10, NegativeAckHeader.msn(frame(0), HEADER));
        final int number = NegativeAckHeader.refusal(frame(0), HEADER);
        assertEquals(1, number);
        assertEquals(SprayOpcodes.ACK, harness.opcode(1));
        assertEquals(0, SelectiveAckHeader.path(frame(1), HEADER));
        assertEquals(1, SelectiveAckHeader.refusals(frame(1), HEADER), "the ACK carries the count in case the NACK is lost");

        // every further packet of the same response is refused under the same number: no new refusal
        assertTrue(refusals.refuse(1, 10, 2_000));
        assertEquals(number, NegativeAckHeader.refusal(frame(2), HEADER));
        assertEquals(1, harness.refusals.made());

        // another READ: a refusal of its own
        assertTrue(refusals.refuse(0, 10, 3_000));
        assertNotEquals(number, NegativeAckHeader.refusal(frame(4), HEADER));
        assertEquals(2, harness.refusals.made());
    }

    @Test
    void shouldRefuseToForgetAYoungRefusalAndKeepANewOneOnceTheOldestIsOldS932()
    {
        for (int msn = 0; msn < Refusals.LATE_CAPACITY; msn++)
        {
            assertTrue(refusals.refuse(0, msn, 1_000 + msn));
        }
        final int sent = output.frames.size();
        // a fifth READ while all four are younger than twice the timeout: nothing kept, nothing sent (the caller
        // fails the connection rather than answer a later query wrongly)
        assertFalse(refusals.refuse(0, 99, 2 * TIMEOUT));
        assertEquals(sent, output.frames.size());
        assertEquals(Refusals.LATE_CAPACITY, harness.refusals.made());
        // once the oldest is older than that, it gives way
        assertTrue(refusals.refuse(0, 99, 1_000 + 2 * TIMEOUT));
        assertEquals(Refusals.LATE_CAPACITY + 1, harness.refusals.made());
        assertEquals(0, harness.refusals.lateRefusal(0, 0), "the oldest is forgotten");
        assertEquals(Refusals.LATE_CAPACITY + 1, harness.refusals.lateRefusal(0, 99));
    }

    @Test
    void shouldTellTheKeptRefusalsAgainOnAQueryButTheOneAskedAboutS932()
    {
        refusals.refuse(0, 1, 1_000);
        refusals.refuse(1, 2, 1_000);
        refusals.refuse(0, 3, 1_000);
        output.frames.clear();

        refusals.tellAgain(1, 2); // the query about (1, 2) is answered by the connection itself
        assertEquals(2, output.frames.size());
        for (int i = 0; i < 2; i++)
        {
            assertEquals(SprayOpcodes.NACK, harness.opcode(i));
            assertEquals(NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, NegativeAckHeader.syndrome(frame(i), HEADER));
            final int stream = NegativeAckHeader.stream(frame(i), HEADER);
            final int msn = NegativeAckHeader.msn(frame(i), HEADER);
            assertFalse(stream == 1 && msn == 2);
            assertEquals(harness.refusals.lateRefusal(stream, msn), NegativeAckHeader.refusal(frame(i), HEADER));
        }

        output.frames.clear();
        refusals.tellAgain(3, 3); // a query about a READ never refused: all of them again
        assertEquals(3, output.frames.size());
    }
}
