package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S6.5-3 in the loss detector: a gap held by the reordering window is judged by the path's timer
 * when no ACK comes, and the engine's window widens on a report of duplicates that no timeout explains, once per
 * round trip; a peer that lies about duplicates on every ACK widens it to the configured ceiling and no further, and
 * a real loss is still found within {@code srtt} + the path's cap.
 */
@Timeout(10)
class LossDetectorReorderTest
{
    private static final int MTU = 1024;
    private static final long FLOOR = 5_000;

    private final SprayConfig config = new SprayConfig().reorderWindowNanos(FLOOR).reorderWindowMaxNanos(1_000_000);
    private final PathScheduler scheduler = new PathScheduler(2, config, new SplittableRandom(5), 100, 50_000);
    private final SendSlots slots = new SendSlots(4, 1, MTU);
    private final RetransmitQueues resend = new RetransmitQueues(2 * PathSendWindow.CAPACITY);
    private final TransportCounters counters = SprayCounters.create();
    private final TransportCounters[] pathCounters = {SprayCounters.create(), SprayCounters.create()};
    private final Refusals refusals = new Refusals();
    private final SendCompletions completions = new SendCompletions(slots, new PlacementMarks(1), 16, refusals,
        new CompletionQueue(16), 1, MTU, config, scheduler, counters, SprayCounters.create(), (streamId, msn) -> true);
    private final LossDetector loss =
        new LossDetector(scheduler, resend, completions, refusals, config, counters, pathCounters);
    private final MemorySegment ack = Arena.ofAuto().allocate(SelectiveAckHeader.LENGTH);
    private int ackSequence;

    // a message of `packets` packets on path 0, all sent at `now`
    private void send(final int packets, final long now)
    {
        LossDetectorTest.sendWrite(slots, scheduler.sendWindows[0], packets, now);
    }

    // path 0's ACK of the given distances from `firstPsn`, reporting `duplicates`
    private MemorySegment ackOf(final int firstPsn, final int duplicates, final int... received)
    {
        final PathReceiveWindow receiver = new PathReceiveWindow(firstPsn);
        for (final int distance : received)
        {
            receiver.onPacket(0, Psn.add(firstPsn, distance));
        }
        receiver.writeTo(0, ack, 0);
        SelectiveAckHeader.path(ack, 0, 0);
        SelectiveAckHeader.ackSequence(ack, 0, ++ackSequence);
        SelectiveAckHeader.duplicates(ack, 0, duplicates);
        return ack;
    }

    @Test
    void shouldJudgeAHeldGapOnThePathsTimerWhenNoAckComes()
    {
        final int first = scheduler.sendWindows[0].nextPsn();
        send(8, 0);
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(ackOf(first, 0, 1, 2, 3, 4, 5, 6, 7), 0, 1_000));
        assertEquals(0, resend.retransmissions(), "sent with the packets above it: held by the 5 us window");
        final long srtt = scheduler.srttNanos(0);
        loss.onTimer(0, srtt + FLOOR - 1);
        assertEquals(0, resend.retransmissions(), "srtt + W has not passed since it was sent");
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, srtt + FLOOR));
        assertEquals(1, resend.retransmissions(), "no ACK came: the timer found it lost, long before the RTO");
        assertEquals(first, resend.retransmissionPsn());
        assertEquals(0, counters.get(SprayCounters.TIMEOUTS));
        assertEquals(1, counters.get(SprayCounters.LOST));
    }

    @Test
    void shouldWidenTheWindowOnDuplicatesNoTimeoutExplainsOncePerRoundTrip()
    {
        final ReorderWindow window = scheduler.rtt.reorderWindow();
        final int first = scheduler.sendWindows[0].nextPsn();
        send(4, 0);
        loss.onAckPacket(ackOf(first, 0, 0, 1), 0, 1_000); // an RTT sample: srtt 1 us
        assertEquals(FLOOR, window.nanos());
        loss.onAckPacket(ackOf(first, 1, 0, 1, 2), 0, 100_000);
        assertEquals(2 * FLOOR, window.nanos(), "a copy arrived after its packet had: the window doubles");
        loss.onAckPacket(ackOf(first, 1, 0, 1, 2, 3), 0, 100_000 + scheduler.srttNanos(0) / 2);
        assertEquals(2 * FLOOR, window.nanos(), "within a round trip of the widening: the same reordering");
        assertEquals(2, window.spuriousLosses());
        send(1, 200_000);
        loss.onAckPacket(ackOf(first, 1, 0, 1, 2, 3, 4), 0, 300_000);
        assertEquals(4 * FLOOR, window.nanos(), "a round trip later: still too narrow");
    }
    @Test
    void shouldNotWidenTheWindowOnTheDuplicateOfAnEarlierTimeoutsCopyWhichIsLatenessNotReordering()
    {
        final ReorderWindow window = scheduler.rtt.reorderWindow();
        final PathSendWindow path = scheduler.sendWindows[0];
        final int sampled = path.nextPsn();
        send(1, 0);
        loss.onAckPacket(ackOf(sampled, 0, 0), 0, 1_000); // an RTT sample
        final int first = path.nextPsn();
        send(1, 10_000);
        scheduler.refreshSiblingEstimates();
        long now = 10_000 + scheduler.rtoNanos(0);
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, now));
        now += scheduler.rtoNanos(0); // backed off
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, now), "the second timeout ends the first's judgement");
        assertEquals(2, counters.get(SprayCounters.TIMEOUTS));
        assertEquals(2, resend.retransmissions());

        // the original was only late: it arrived, then the first timeout's copy, reported as a duplicate
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(ackOf(first, 1, 0), 0, now + 1_000));
        assertEquals(0, window.spuriousLosses(), "a timeout's copy arriving twice shows lateness (S6.8-2)");
        assertEquals(FLOOR, window.nanos(), "not within-path reordering: the window stays");

        // a copy a gap sent, then its duplicate: reordering, and the window widens as before
        final int gapped = path.nextPsn();
        send(4, now + 2_000);
        loss.onAckPacket(ackOf(gapped, 0, 1, 2, 3), 0, now + 3_000);
        final long due = now + 2_000 + scheduler.srttNanos(0) + FLOOR;
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, due), "the held gap judged lost");
        assertEquals(3, resend.retransmissions(), "the gap's packet sent again");
        loss.onAckPacket(ackOf(gapped, 1, 0, 1, 2, 3), 0, due + 1_000);
        assertEquals(1, window.spuriousLosses());
        assertEquals(2 * FLOOR, window.nanos());
    }

    @Test
    void shouldBoundWhatAPeerLyingAboutDuplicatesOnEveryAckCanDo()
    {
        final ReorderWindow window = scheduler.rtt.reorderWindow();
        long now = 0;
        for (int round = 0; round < 200; round++)
        {
            final int psn = scheduler.sendWindows[0].nextPsn();
            send(1, now);
            // a peer that reports the most duplicates the field holds on every ACK, none of them ever sent twice
            assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(ackOf(psn, 255, 0), 0, now + 1_000));
            assertTrue(window.nanos() <= config.reorderWindowMaxNanos, "never past the configured ceiling");
            now += 10_000;
        }
        assertEquals(config.reorderWindowMaxNanos, window.nanos(), "the lie widened it to the ceiling, no further");
        assertEquals(0, resend.retransmissions(), "nothing was lost");

        // a real loss now: the first of 8 packets; the 7 after it acknowledged
        final int first = scheduler.sendWindows[0].nextPsn();
        send(8, now);
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(ackOf(first, 255, 1, 2, 3, 4, 5, 6, 7), 0, now + 1_000));
        final long srtt = scheduler.srttNanos(0);
        final long cap = Math.max(srtt, scheduler.ackExpectedWithinNanos(0) - srtt);
        assertTrue(cap < config.reorderWindowMaxNanos, "the path's cap, not the ceiling, holds its gap: " + cap);
        loss.onTimer(0, now + srtt + cap - 1);
        assertEquals(0, resend.retransmissions(), "held while a packet sent after it could still overtake it");
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, now + srtt + cap));
        assertEquals(1, resend.retransmissions(), "found lost by the path's timer within srtt + the cap");
        assertEquals(first, resend.retransmissionPsn());
        assertEquals(0, counters.get(SprayCounters.TIMEOUTS), "before any RTO");
    }
}
