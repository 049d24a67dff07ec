package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.RecordingFrameSink;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static io.spraynic.datapath.transport.spray.ControlHarness.HEADER;
import static io.spraynic.datapath.transport.spray.ControlHarness.RECEIVE_PSN;
import static io.spraynic.datapath.transport.spray.ControlHarness.RNR_TIMER_MICROS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The control packets a connection writes (docs/PROTOCOL.md S6.3, S9.3, S10.2, S9.2), read back from a real
 * engine's output: an ACK carries its path's window and the refusals made here, an RNR NACK its reason and RNR timer
 * (and no other syndrome does), a query no refusal; with the output full nothing goes out and nothing is counted.
 */
class ControlPacketsTest
{
    private final ControlHarness harness = new ControlHarness();
    private final RecordingFrameSink output = harness.output;
    private final ControlPackets control = harness.control;

    @Test
    void shouldAckAPathWithItsWindowAndTheRefusalsMadeHereS63()
    {
        final int firstPsn = PathScheduler.initialPsn(RECEIVE_PSN, 1);
        harness.acks.onData(1, firstPsn, false, false, 1_000);
        harness.acks.onData(1, firstPsn + 2, false, false, 1_000); // a gap: PSN + 1 missing
        harness.refusals.next();
        harness.refusals.next();
        assertTrue(control.sendAck(1));

        assertEquals(1, output.frames.size());
        assertEquals(SprayOpcodes.ACK, harness.opcode(0));
        final MemorySegment frame = output.frame(0);
        assertEquals(1, SelectiveAckHeader.path(frame, HEADER));
        assertEquals(harness.acks.windows().cumulativePsn(1), SelectiveAckHeader.cumulativePsn(frame, HEADER));
        assertEquals(2, SelectiveAckHeader.refusals(frame, HEADER), "the SACKH carries the refusals made here");
        assertEquals(1, harness.counters.get(SprayCounters.ACKS_SENT));
        assertEquals(1, harness.pathCounters[1].get(SprayCounters.ACKS_SENT));
        assertEquals(0, harness.pathCounters[0].get(SprayCounters.ACKS_SENT), "counted on the path it acknowledges");

        assertTrue(control.sendAck(1));
        assertTrue(SelectiveAckHeader.ackSequence(output.frame(1), HEADER) -
            SelectiveAckHeader.ackSequence(frame, HEADER) > 0, "each ACK of a path a newer sequence (S6.5)");
    }

    @Test
    void shouldCarryTheReasonAndRnrTimerOnlyInAnRnrNackS102()
    {
        control.sendNack(1, NegativeAckHeader.SYNDROME_RNR, NegativeAckHeader.RNR_REASON_NO_RESOURCES, 1, 7, 3);
        // a reason given with another syndrome is not written: it means something only with RNR
        control.sendNack(0, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, NegativeAckHeader.RNR_REASON_NO_RESOURCES,
            0, 8, 4);
        control.sendNack(0, NegativeAckHeader.SYNDROME_RNR, 0, 9, 5); // RNR without a reason: NO_RECEIVE

        assertEquals(3, output.frames.size());
        final MemorySegment rnr = output.frame(0);
        assertEquals(SprayOpcodes.NACK, harness.opcode(0));
        assertEquals(NegativeAckHeader.SYNDROME_RNR, NegativeAckHeader.syndrome(rnr, HEADER));
        assertEquals(NegativeAckHeader.RNR_REASON_NO_RESOURCES, NegativeAckHeader.reason(rnr, HEADER));
        assertEquals(RNR_TIMER_MICROS, NegativeAckHeader.rnrTimerMicros(rnr, HEADER));
        assertEquals(1, NegativeAckHeader.stream(rnr, HEADER));
        assertEquals(7, NegativeAckHeader.msn(rnr, HEADER));
        assertEquals(3, NegativeAckHeader.refusal(rnr, HEADER));

        final MemorySegment accessError = output.frame(1);
        assertEquals(NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, NegativeAckHeader.syndrome(accessError, HEADER));
        assertEquals(0, NegativeAckHeader.reason(accessError, HEADER));
        assertEquals(0, NegativeAckHeader.rnrTimerMicros(accessError, HEADER));
        assertEquals(4, NegativeAckHeader.refusal(accessError, HEADER));

        assertEquals(NegativeAckHeader.RNR_REASON_NO_RECEIVE, NegativeAckHeader.reason(output.frame(2), HEADER));
        assertEquals(RNR_TIMER_MICROS, NegativeAckHeader.rnrTimerMicros(output.frame(2), HEADER));
        assertEquals(3, harness.counters.get(SprayCounters.NACKS_SENT));
    }

    @Test
    void shouldAskAQueryThatNamesNoRefusalS93()
    {
        assertTrue(control.sendQuery(1, 42));
        assertEquals(SprayOpcodes.QUERY, harness.opcode(0));
        final MemorySegment query = output.frame(0);
        assertEquals(NegativeAckHeader.SYNDROME_ACCEPTED, NegativeAckHeader.syndrome(query, HEADER));
        assertEquals(0, NegativeAckHeader.refusal(query, HEADER));
        assertEquals(0, NegativeAckHeader.rnrTimerMicros(query, HEADER));
        assertEquals(1, NegativeAckHeader.stream(query, HEADER));
        assertEquals(42, NegativeAckHeader.msn(query, HEADER));
        assertEquals(1, harness.counters.get(SprayCounters.QUERIES_SENT));
        assertEquals(0, harness.counters.get(SprayCounters.NACKS_SENT));
    }

    @Test
    void shouldSendAndCountNothingWhenTheOutputIsFull()
    {
        output.full = true;
        assertFalse(control.sendAck(0));
        control.sendNack(0, NegativeAckHeader.SYNDROME_RNR, 0, 1, 1);
        assertFalse(control.sendQuery(0, 1));
        assertFalse(control.sendConnectionPacket(SprayOpcodes.CLOSE, 0x1234));
        assertEquals(0, control.pushRateHint(true));
        assertEquals(0, output.frames.size());
        assertEquals(0, harness.counters.get(SprayCounters.ACKS_SENT));
        assertEquals(0, harness.counters.get(SprayCounters.NACKS_SENT));
        assertEquals(0, harness.counters.get(SprayCounters.QUERIES_SENT));
        assertEquals(0, harness.pathCounters[0].get(SprayCounters.ACKS_SENT));

        output.full = false; // room again: the next ACK goes out
        assertTrue(control.sendAck(0));
        assertEquals(1, output.frames.size());
    }

    @Test
    void shouldPushNoRateHintToAPeerThatIsNotSendingS832()
    {
        assertEquals(0, control.pushRateHint(false));
        assertEquals(0, output.frames.size());
        assertEquals(0, harness.counters.get(SprayCounters.HINT_UPDATES_SENT));
    }

    @Test
    void shouldWriteACloseOnTheConnectionS92()
    {
        assertTrue(control.sendConnectionPacket(SprayOpcodes.CLOSE, 0x1234));
        assertEquals(1, output.frames.size());
        assertEquals(SprayOpcodes.CLOSE, harness.opcode(0));
    }
}
