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

import static io.spraynic.datapath.transport.spray.SprayConnection.PROBE_HANDLE;
import static io.spraynic.datapath.transport.spray.MessageKinds.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S6.5-S6.8, S7.3-S7.5: what an ACK says packet by packet (holes at the SACK bitmap's ends
 * and word boundaries, across the PSN wrap; stale and repeated ACKs), timeouts, relocation, failure and RESYNC.
 */
@Timeout(10)
class LossDetectorTest
{
    private static final int MTU = 1024;
    private static final int NEAR_WRAP = Psn.MASK - 3; // path 0's PSNs wrap after four packets

    private final SprayConfig config = new SprayConfig().lateMarginMaxNanos(10_000_000); // S6.8.1 learns
    private final PathScheduler scheduler = new PathScheduler(2, config, new SplittableRandom(5), NEAR_WRAP, 50_000);
    private final SendSlots slots = new SendSlots(4, 1, MTU);
    private final RetransmitQueues resend = new RetransmitQueues(2 * PathSendWindow.CAPACITY);
    private final TransportCounters counters = SprayCounters.create();
    private final TransportCounters[] pathCounters = {SprayCounters.create(), SprayCounters.create()};
    private final CompletionQueue sendCq = new CompletionQueue(16);
    private final Refusals refusals = new Refusals();
    private final SendCompletions completions = new SendCompletions(slots, new PlacementMarks(1), 16, refusals,
        sendCq, 1, MTU, config, scheduler, counters, SprayCounters.create(), (streamId, msn) -> true);
    private final LossDetector loss =
        new LossDetector(scheduler, resend, completions, refusals, config, counters, pathCounters);
    private final MemorySegment ack = Arena.ofAuto().allocate(SelectiveAckHeader.LENGTH);

    // a message of `packets` packets, each sent on `path` at `now`
    private int send(final int path, final int packets, final long now)
    {
        return sendWrite(slots, scheduler.sendWindows[path], packets, now);
    }

    /** A WRITE of {@code packets} packets of {@link #MTU} bytes on stream 0, each sent on {@code window} at {@code now}. */
    static int sendWrite(final SendSlots slots, final PathSendWindow window, final int packets, final long now)
    {
        final int slot = slots.take();
        slots.kind(slot, WRITE);
        slots.stream(slot, 0);
        slots.msn(slot, slots.takeMsn(0));
        slots.length(slot, packets * MTU);
        slots.packets(slot, packets);
        slots.signaled(slot, true);
        slots.appendToStream(slot);
        for (int packet = 0; packet < packets; packet++)
        {
            window.send(slots.handle(slot, packet), now);
        }
        slots.nextPacket(slot, packets);
        slots.outstanding(slot, packets);
        return slot;
    }

    // the ACK a receiver writes after receiving the given distances from `firstPsn`
    private MemorySegment ackOf(final int firstPsn, final int... received)
    {
        final PathReceiveWindow receiver = new PathReceiveWindow(firstPsn);
        for (final int distance : received)
        {
            receiver.onPacket(0, Psn.add(firstPsn, distance));
        }
        receiver.writeTo(0, ack, 0);
        return ack;
    }

    // the rest of the SACK header of the ACK ackOf wrote last
    private MemorySegment header(final int path, final int sequence, final int peerRefusals, final int ceCount)
    {
        SelectiveAckHeader.path(ack, 0, path);
        SelectiveAckHeader.ackSequence(ack, 0, sequence);
        SelectiveAckHeader.refusals(ack, 0, peerRefusals);
        SelectiveAckHeader.ceCount(ack, 0, ceCount);
        return ack;
    }

    private static int[] range(final int from, final int to)
    {
        final int[] distances = new int[to - from];
        for (int i = 0; i < distances.length; i++)
        {
            distances[i] = from + i;
        }
        return distances;
    }

    @Test
    void shouldRetransmitAHoleAtItsPsnAcrossTheWrapAndCompleteTheMessageOnceItArrives()
    {
        final PathSendWindow window = scheduler.sendWindows[0];
        final int first = window.nextPsn();
        final int slot = send(0, 8, 0);
        assertEquals(7, loss.onAck(0, ackOf(first, 0, 1, 3, 4, 5, 6, 7), 0, 1_000));
        assertEquals(1, resend.retransmissions());
        assertEquals(0, resend.retransmissionPath());
        assertEquals(Psn.add(first, 2), resend.retransmissionPsn());
        assertEquals(slots.handle(slot, 2), resend.retransmissionHandle());
        assertEquals(1, counters.get(SprayCounters.LOST));
        assertEquals(1, pathCounters[0].get(SprayCounters.LOST));
        assertEquals(Psn.add(first, 2), window.basePsn(), "the window slides up to the hole");
        assertEquals(7, slots.acked(slot));
        assertTrue(sendCq.isEmpty());

        assertEquals(0, loss.onAck(0, ackOf(first, 0, 1, 3, 4, 5, 6, 7), 0, 1_100), "the same ACK again");
        assertEquals(1, resend.retransmissions(), "a repeated ACK finds no new loss");

        assertEquals(1, loss.onAck(0, ackOf(first, range(0, 8)), 0, 2_000));
        assertEquals(0, window.outstanding());
        assertFalse(sendCq.isEmpty(), "all eight acknowledged: the WRITE completes");
    }

    @Test
    void shouldRefuseAnAckBelowOrBeyondTheWindowAndChangeNothing()
    {
        final PathSendWindow window = scheduler.sendWindows[0];
        final int first = window.nextPsn();
        send(0, 4, 0);
        assertEquals(-1, loss.onAck(0, ackOf(Psn.add(first, 5)), 0, 1_000), "acknowledges what was never sent");
        assertEquals(2, loss.onAck(0, ackOf(first, 0, 1), 0, 1_000));
        assertEquals(-1, loss.onAck(0, ackOf(Psn.add(first, -1)), 0, 1_000), "below the window: stale");
        assertEquals(2, window.outstanding());
        assertEquals(0, resend.retransmissions());
    }

    @Test
    void shouldReadEveryBitOfTheSackBitmapAtItsEndsAndWordBoundaries()
    {
        final PathSendWindow window = scheduler.sendWindows[1];
        final int first = window.nextPsn();
        final int slot = send(1, PathSendWindow.CAPACITY, 0);
        assertTrue(window.isFull());
        // PSN first itself lost (the cumulative PSN), then received at bits 1, 63, 64 and 255
        assertEquals(4, loss.onAck(1, ackOf(first, 1, 63, 64, 255), 0, 1_000));
        assertEquals(4, slots.acked(slot));
        assertEquals(PathSendWindow.CAPACITY - 4, resend.retransmissions(), "every hole below bit 255 is lost");
        assertEquals(first, resend.retransmissionPsn(), "the first: the cumulative PSN itself");
        assertEquals(1, resend.retransmissionPath());
        assertEquals(PathSendWindow.CAPACITY - 4, pathCounters[1].get(SprayCounters.LOST));
        assertEquals(0, pathCounters[0].get(SprayCounters.LOST));
    }

    @Test
    void shouldRetransmitTheOldestAfterAnRtoThenFailThePathAndMoveItsPacketsThenResyncOnANewRoute()
    {
        final PathSendWindow window = scheduler.sendWindows[0];
        final int first = window.nextPsn();
        final int slot = send(0, 2, 0);
        scheduler.refreshSiblingEstimates();
        final long rto = scheduler.rtoNanos(0);
        assertNotEquals(LossDetector.RECOVERED, loss.onTimer(0, rto - 1));
        assertEquals(0, resend.retransmissions());
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, rto));
        assertEquals(1, counters.get(SprayCounters.TIMEOUTS));
        assertEquals(first, resend.retransmissionPsn(), "the path's oldest packet, on the same path");
        assertEquals(slots.handle(slot, 0), resend.retransmissionHandle());
        assertEquals(1, counters.get(SprayCounters.LOST));
        assertEquals(0, resend.moves(), "no other path answers: nothing relocated");

        long now = rto;
        for (int timeout = 2; timeout <= config.failAfterTimeouts; timeout++)
        {
            final long backedOff = scheduler.rtoNanos(0);
            assertTrue(backedOff > rto, "backed off");
            now += backedOff;
            assertEquals(LossDetector.RECOVERED, loss.onTimer(0, now));
        }
        assertEquals(SprayConnection.FAILED, scheduler.state(0));
        assertEquals(1, counters.get(SprayCounters.PATH_FAILURES));
        assertEquals(2, resend.moves(), "both packets go to the live paths");
        assertEquals(2, counters.get(SprayCounters.MOVED));
        assertEquals(0, window.outstanding());

        final int oldPort = scheduler.sourcePort(0);
        final int nextPsn = window.nextPsn();
        assertEquals(LossDetector.NOTHING, loss.onTimer(0, now + config.probeIntervalNanos - 1));
        assertEquals(LossDetector.RESYNC, loss.onTimer(0, now + config.probeIntervalNanos));
        assertNotEquals(oldPort, scheduler.sourcePort(0), "a new route (S7.5)");
        assertEquals(nextPsn, window.basePsn());
        assertEquals(LossDetector.NOTHING, loss.onTimer(0, now + config.probeIntervalNanos + 1), "one per interval");
    }

    @Test
    void shouldRelocateTheOverduePacketsOfASilentPathWhileAnotherAnswersS741()
    {
        final PathSendWindow window = scheduler.sendWindows[0];
        final int slot = send(0, 1, 0);
        scheduler.onAckTaken(1, 1, 10); // path 1 answers after path 0's packet left
        scheduler.refreshSiblingEstimates();
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, scheduler.rtoNanos(0)));
        assertEquals(1, resend.moves());
        assertEquals(slots.handle(slot, 0), resend.moveHandle());
        assertEquals(0, resend.moveLostOn(), "lost on path 0: its retransmission is counted there");
        assertEquals(1, resend.retransmissions());
        assertEquals(PROBE_HANDLE, resend.retransmissionHandle(), "a payload-free probe keeps the PSN");
        assertEquals(PROBE_HANDLE, window.oldestHandle());
        assertEquals(1, counters.get(SprayCounters.LOST), "the packet, not the placeholder");
    }

    @Test
    void shouldTakeASiblingsAckOfTheLoopThatSentAPacketAsAnAnswerAndRelocateItAtTheRtoS741()
    {
        // one clock read per loop: path 1's ACK and the packet of path 0 it clocked out share a time; path 0 then dies
        // and path 1 has nothing more to acknowledge. The packet moves at the first RTO; timed as every path silent it
        // went again on the dead path, backed off, and moved only once overdue (CI run 15, the lab: 4.13 RTOs)
        final PathSendWindow window = scheduler.sendWindows[0];
        scheduler.onAckTaken(1, 1, 0);
        final int slot = send(0, 1, 0);
        scheduler.refreshSiblingEstimates();
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, scheduler.rtoNanos(0)));
        assertEquals(1, resend.moves(), "relocated at the first RTO");
        assertEquals(slots.handle(slot, 0), resend.moveHandle());
        assertEquals(PROBE_HANDLE, window.oldestHandle(), "a placeholder keeps its PSN");
    }

    @Test
    void shouldProbeAQuietPathAndSayWhenAProbeIsAcknowledged()
    {
        final PathSendWindow window = scheduler.sendWindows[1];
        final int first = window.nextPsn();
        assertEquals(LossDetector.NOTHING, loss.onTimer(1, 1_000_000), "nothing outstanding: nothing to find");
        window.send(PROBE_HANDLE, 0);
        scheduler.refreshSiblingEstimates();
        assertEquals(1, loss.onAck(1, ackOf(first, 0), 0, 500));
        assertTrue(loss.probeAcked());
        assertEquals(0, counters.get(SprayCounters.LOST));

        window.send(PROBE_HANDLE, 600);
        window.send(PROBE_HANDLE, 700);
        assertEquals(1, loss.onAck(1, ackOf(first, 0, 2), 0, 800));
        assertEquals(1, resend.retransmissions(), "a lost probe goes again at its PSN");
        assertEquals(PROBE_HANDLE, resend.retransmissionHandle());
        assertEquals(0, counters.get(SprayCounters.LOST), "a probe is no lost data");

    }

    @Test
    void shouldTakeAcksInSequenceOrderAcrossTheWrapAndCountTheRestStale()
    {
        final PathSendWindow window = scheduler.sendWindows[0];
        final int first = window.nextPsn();
        send(0, 4, 0);
        ackOf(first, 0);
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(header(0, Integer.MAX_VALUE, 0, 0), 0, 100));
        assertEquals(3, window.outstanding(), "one acknowledged");
        ackOf(first, 0, 1);
        assertEquals(LossDetector.ACK_STALE, loss.onAckPacket(header(0, Integer.MAX_VALUE, 0, 0), 0, 200),
            "the same sequence number again: a duplicate, even though it would acknowledge more");
        assertEquals(3, window.outstanding());
        assertEquals(LossDetector.ACK_STALE, loss.onAckPacket(header(0, Integer.MAX_VALUE - 1, 0, 0), 0, 200));
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(header(0, Integer.MIN_VALUE, 0, 2), 0, 300),
            "the number after the wrap is newer");
        assertEquals(2, window.outstanding());
        assertEquals(2, counters.get(SprayCounters.ACKS_STALE));
        assertEquals(2, counters.get(SprayCounters.ACKS_RECEIVED));
        assertEquals(2, pathCounters[0].get(SprayCounters.ECN_MARKS_ECHOED));
        ackOf(Psn.add(first, 9));
        assertEquals(LossDetector.ACK_STALE, loss.onAckPacket(header(0, Integer.MIN_VALUE + 1, 0, 0), 0, 400),
            "beyond what was sent: refused by the window");
        assertEquals(3, counters.get(SprayCounters.ACKS_STALE));
    }

    @Test
    void shouldLearnThePeersRefusalCountBeforeCompletingWhatTheAckCoversS93()
    {
        final int first = scheduler.sendWindows[0].nextPsn();
        final int slot = send(0, 1, 0);
        ackOf(first, 0);
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(header(0, 1, 1, 0), 0, 100));
        assertTrue(sendCq.isEmpty(), "the peer refused something: this message may be it");
        assertTrue(slots.held(slot));
    }

    @Test
    void shouldRestoreAFailedPathOnlyByAnAckOfItsProbeS75()
    {
        final PathSendWindow window = scheduler.sendWindows[1];
        scheduler.fail(1, 0);
        window.reset(window.nextPsn());
        final int first = window.nextPsn();
        send(1, 1, 10); // e.g. sent before the failure was known
        ackOf(first, 0);
        assertEquals(LossDetector.ACK_OF_FAILED_PATH, loss.onAckPacket(header(1, 1, 0, 0), 0, 100));
        assertEquals(SprayConnection.FAILED, scheduler.state(1));
        window.send(PROBE_HANDLE, 200);
        ackOf(first, 0, 1);
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(header(1, 2, 0, 0), 0, 300));
        assertEquals(SprayConnection.ACTIVE, scheduler.state(1));
        assertEquals(1, counters.get(SprayCounters.PATH_RESTORES));
    }

    @Test
    void shouldWaitForTheAnswerToARresyncProbeLongerThanTheProbeIntervalAndBackOffS75()
    {
        // path 0 answers in 5 ms (the Linux ECMP lab on a loaded host), 5x the probe interval; the shared-core rtoMax
        config.rto(config.rtoMinNanos, 200_000_000L);
        final long rtt = 5 * config.probeIntervalNanos;
        scheduler.rtt.onSample(0, rtt);
        scheduler.refreshSiblingEstimates();
        final PathSendWindow window = scheduler.sendWindows[1];
        final long failedAt = 1_000_000_000L;
        scheduler.fail(1, failedAt);
        long now = failedAt + config.probeIntervalNanos;
        assertEquals(LossDetector.RESYNC, loss.onTimer(1, now));
        final int probePsn = window.nextPsn();
        window.send(PROBE_HANDLE, now);
        assertEquals(LossDetector.NOTHING, loss.onTimer(1, now + config.probeIntervalNanos),
            "the probe's answer is not due yet: a RESYNC now would restart the window under it");
        assertEquals(LossDetector.NOTHING, loss.onTimer(1, now + 2 * rtt - 1));
        ackOf(probePsn, 0);
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(header(1, 1, 0, 0), 0, now + rtt));
        assertEquals(SprayConnection.ACTIVE, scheduler.state(1), "restored by the answer an RTT later");

        // unanswered RESYNCs: the wait doubles, up to rtoMax or an eighth of connectionTimeout
        final long longest = Math.max(2 * rtt, Math.min(config.rtoMaxNanos, config.connectionTimeoutNanos / 8));
        scheduler.fail(1, now);
        scheduler.refreshSiblingEstimates();
        long interval = 2 * rtt;
        now += config.probeIntervalNanos;
        assertEquals(LossDetector.RESYNC, loss.onTimer(1, now));
        for (int resync = 0; resync < 12; resync++)
        {
            assertEquals(LossDetector.NOTHING, loss.onTimer(1, now + interval - 1), "resync " + resync);
            now += interval;
            assertEquals(LossDetector.RESYNC, loss.onTimer(1, now), "resync " + resync);
            interval = Math.min(2 * interval, longest);
        }
        assertEquals(config.connectionTimeoutNanos / 8, interval, "an eighth of connectionTimeout, below rtoMax");
    }

    // S6.8.1: both paths have an RTT sample of 20 us; the ACKs taken (scheduler.onAckTaken) at `now`
    private void sampleBothPaths(final long now)
    {
        for (int path = 0; path < 2; path++)
        {
            final int first = scheduler.sendWindows[path].nextPsn();
            send(path, 1, now);
            assertEquals(1, loss.onAck(path, ackOf(first, 0), 0, now + 20_000));
            scheduler.onAckTaken(path, path, now + 20_000);
        }
        scheduler.refreshSiblingEstimates();
    }

    @Test
    void shouldFindATimeoutSpuriousWhenItsPacketIsAcknowledgedSoonerThanAnyRoundTripAndStopTimingOutSuchPacketsS681()
    {
        // a descheduled sender: on waking its timer fires before it reads the ACK already waiting in its ring
        sampleBothPaths(0);
        final PathSendWindow window = scheduler.sendWindows[0];
        int first = window.nextPsn();
        send(0, 1, 100_000);
        final long wake = 100_000 + 5_000_000;
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, wake));
        assertEquals(1, counters.get(SprayCounters.TIMEOUTS));
        assertEquals(1, resend.retransmissions(), "the oldest again, at its PSN");
        assertEquals(1, loss.onAck(0, ackOf(first, 0), 0, wake + 1_000));
        assertEquals(1, counters.get(SprayCounters.SPURIOUS_TIMEOUTS), "acknowledged 1 us after: the first one's");
        assertEquals(0, scheduler.rtt.consecutiveTimeouts(0), "the backoff undone");
        assertTrue(scheduler.rtt.lateMarginNanos() >= 5_001_000, "covers the 5 ms the packet took");

        // the next descheduling as long: no timeout
        first = window.nextPsn();
        send(0, 1, 10_000_000);
        scheduler.refreshSiblingEstimates();
        assertNotEquals(LossDetector.RECOVERED, loss.onTimer(0, 10_000_000 + 5_000_000));
        assertEquals(1, loss.onAck(0, ackOf(first, 0), 0, 10_000_000 + 5_001_000));
        assertEquals(1, counters.get(SprayCounters.TIMEOUTS), "without S6.8.1 the path times out again here");
        assertEquals(1, counters.get(SprayCounters.LOST));
    }

    @Test
    void shouldNotTakeTheAckOfARetransmissionForTheFirstTransmissionsKarnS681()
    {
        sampleBothPaths(0);
        final int first = scheduler.sendWindows[0].nextPsn();
        send(0, 1, 100_000);
        final long rto = 100_000 + scheduler.rtoNanos(0);
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, rto));
        assertEquals(1, loss.onAck(0, ackOf(first, 0), 0, rto + 20_000), "a round trip after it: maybe the resend's");
        assertEquals(0, counters.get(SprayCounters.SPURIOUS_TIMEOUTS));
        assertEquals(0, scheduler.rtt.lateMarginNanos());
    }

    // the SACK header of the ACK ackOf wrote last, of `path`, with its sequence and the duplicates it reports (S5.1-3)
    private MemorySegment reporting(final int path, final int sequence, final int duplicates)
    {
        header(path, sequence, 0, 0);
        SelectiveAckHeader.duplicates(ack, 0, duplicates);
        return ack;
    }

    private MemorySegment reporting(final int sequence, final int duplicates)
    {
        return reporting(0, sequence, duplicates);
    }

    @Test
    void shouldFindATimeoutSpuriousWhenTheReceiverReportsItsCopyAsADuplicateS681c()
    {
        // a descheduled receiver: the packet and the timeout's copy of it wait in its ring, and one ACK answers both
        // 5 ms after the copy, as long after it as after the first: neither (a) nor (b) can judge
        sampleBothPaths(0);
        for (int path = 1; path >= 0; path--)
        {
            final int first = scheduler.sendWindows[path].nextPsn();
            send(path, 1, 100_000);
            final long rto = 100_000 + scheduler.rtoNanos(path);
            assertEquals(LossDetector.RECOVERED, loss.onTimer(path, rto));
            assertEquals(1, scheduler.rtt.consecutiveTimeouts(path));
            ackOf(first, 0);
            // path 1's receiver is an older peer's, which reports none; path 0's reports the copy
            assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(reporting(path, 10, 1 - path), 0, rto + 5_000_000));
        }
        assertEquals(1, counters.get(SprayCounters.SPURIOUS_TIMEOUTS), "path 0's: the receiver saw it arrive twice");
        assertEquals(1, counters.get(SprayCounters.SPURIOUS_TIMEOUTS_REPORTED));
        assertEquals(0, scheduler.rtt.consecutiveTimeouts(0), "the backoff undone");
        assertEquals(1, scheduler.rtt.consecutiveTimeouts(1), "path 1's stays: a report of 0 says nothing");
        assertTrue(scheduler.rtt.lateMarginNanos() >= 5_000_000, "the margin covers how late the packet was");
        ackOf(scheduler.sendWindows[0].nextPsn());
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(reporting(11, 1), 0, 5_300_000));
        assertEquals(1, counters.get(SprayCounters.SPURIOUS_TIMEOUTS), "a timeout is judged once");
    }

    @Test
    void shouldWidenTheMarginFromTheRtoAfterTheSamplesOfTheAckThatReportsTheDuplicateS681c()
    {
        // S6.8.1: a timeout judged spurious by (c) reads the ACK's report of duplicates, after all of the ACK's
        // samples: here a packet sent after the timeout, acknowledged 5 ms later in the same ACK, raises the RTO
        // without L that the widening subtracts from R'
        sampleBothPaths(0);
        final PathSendWindow window = scheduler.sendWindows[0];
        final int first = window.nextPsn();
        send(0, 1, 100_000);
        final long timeout = 100_000 + scheduler.rtoNanos(0);
        final long rtoBefore = scheduler.rtt.rtoNanos(0) - scheduler.rtt.lateMarginNanos();
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, timeout));
        send(0, 1, timeout + 1_000);
        final long ackAt = timeout + 1_000 + 5_000_000;
        ackOf(first, 0, 1);
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(reporting(10, 1), 0, ackAt));
        assertEquals(1, counters.get(SprayCounters.SPURIOUS_TIMEOUTS_REPORTED), "judged by (c)");
        assertEquals(0, scheduler.rtt.consecutiveTimeouts(0));
        final long rtoAfter = scheduler.rtt.rtoNanos(0) - scheduler.rtt.lateMarginNanos();
        assertTrue(rtoAfter > 2 * rtoBefore, "the second packet's 5 ms sample raised the RTO: " + rtoBefore + " -> " +
            rtoAfter);
        final long slack = Math.max(config.ackDelayNanos + config.rtoSlackNanos, 1_000);
        final long shortBy = Math.max(0, ackAt - 100_000 - rtoAfter); // R' from the original
        assertEquals(Math.min(config.lateMarginMaxNanos, Math.max(slack, shortBy + shortBy / 4)),
            scheduler.rtt.lateMarginNanos(), "widened from the RTO after the ACK's samples (before them it would be " +
            Math.min(config.lateMarginMaxNanos, (ackAt - 100_000 - rtoBefore) * 5 / 4) + ")");
    }

    @Test
    void shouldTakeAPeersInflatedReportsOfDuplicatesForNothingMoreThanOneSpuriousTimeoutS681c()
    {
        // a peer (or a bug) that reports the most duplicates in every ACK: with no copy on the path they judge nothing,
        // and after a timeout they judge it once; the margin they can widen stays within lateMarginMax
        sampleBothPaths(0);
        final PathSendWindow window = scheduler.sendWindows[0];
        final int first = window.nextPsn();
        send(0, 1, 100_000);
        ackOf(first, 0);
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(reporting(10, 255), 0, 120_000));
        assertEquals(0, counters.get(SprayCounters.SPURIOUS_TIMEOUTS), "no copy sent: nothing to judge");
        assertEquals(0, scheduler.rtt.lateMarginNanos());

        final int second = window.nextPsn();
        send(0, 1, 200_000);
        final long rto = 200_000 + scheduler.rtoNanos(0);
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, rto));
        for (int sequence = 11; sequence < 16; sequence++)
        {
            ackOf(second, 0);
            assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(reporting(sequence, 255), 0, rto + sequence * 1_000_000L));
        }
        assertEquals(1, counters.get(SprayCounters.SPURIOUS_TIMEOUTS_REPORTED), "one timeout, judged once");
        assertTrue(scheduler.rtt.lateMarginNanos() <= config.lateMarginMaxNanos, "within lateMarginMax");
    }

    @Test
    void shouldNotTakeAnotherCopysDuplicateForTheTimeoutsUntilAnAckShowsThatCopyArrivedS681c()
    {
        sampleBothPaths(0);
        final PathSendWindow window = scheduler.sendWindows[0];
        final int first = window.nextPsn();
        send(0, 2, 100_000);
        ackOf(first, 1);
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(reporting(10, 0), 0, 120_000));
        assertEquals(1, resend.retransmissions(), "the first was lost (S6.5): a copy at its PSN, which may arrive " +
            "after an earlier transmission did, for all the sender knows");
        send(0, 1, 130_000); // the third, after that copy
        final long rto = 130_000 + scheduler.rtoNanos(0);
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, rto), "the first's copy timed out: the timeout's copy");

        // both packets at once, and a duplicate: the earlier copy's or the timeout's, no telling
        ackOf(first, 0, 1);
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(reporting(11, 1), 0, rto + 5_000_000));
        assertEquals(0, counters.get(SprayCounters.SPURIOUS_TIMEOUTS), "one duplicate, two copies that could make it");
        // a second one: only one of them can have made each
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(reporting(12, 1), 0, rto + 5_001_000));
        assertEquals(1, counters.get(SprayCounters.SPURIOUS_TIMEOUTS_REPORTED));

        // after an ACK of a packet sent after the other copies, no duplicate of theirs is left to come
        final int next = window.nextPsn();
        send(0, 1, 20_000_000);
        ackOf(next, 0);
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(reporting(13, 0), 0, 20_020_000));
        final int last = window.nextPsn();
        send(0, 1, 30_000_000);
        scheduler.refreshSiblingEstimates();
        final long rto2 = 30_000_000 + scheduler.rtoNanos(0);
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, rto2));
        ackOf(last, 0);
        assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(reporting(14, 1), 0, rto2 + 5_000_000));
        assertEquals(2, counters.get(SprayCounters.SPURIOUS_TIMEOUTS_REPORTED), "the only copy that could make it");
    }

    @Test
    void shouldFindATimeoutSpuriousWhenAPacketItRelocatedArrivesOnItsFirstTransmissionS681()
    {
        final PathSendWindow window = scheduler.sendWindows[0];
        final int first = window.nextPsn();
        send(0, 2, 0);
        scheduler.onAckTaken(1, 1, 10); // path 1 answered: S7.4.1 relocates path 0's packets at its RTO
        scheduler.refreshSiblingEstimates();
        final long rto = scheduler.rtoNanos(0);
        assertEquals(LossDetector.RECOVERED, loss.onTimer(0, rto));
        assertEquals(2, resend.moves());
        assertEquals(0, counters.get(SprayCounters.SPURIOUS_TIMEOUTS));
        // no RTT sample on path 0: the oldest's ACK cannot be judged, but the second was never sent again
        assertEquals(2, loss.onAck(0, ackOf(first, 0, 1), 0, rto + 10_000));
        assertEquals(1, counters.get(SprayCounters.SPURIOUS_TIMEOUTS));
        assertTrue(scheduler.rtt.lateMarginNanos() > 0);
        assertTrue(scheduler.rtoNanos(0) > rto + 10_000, "a packet as late no longer times out");
    }

    @Test
    void shouldTimeOutAPathSilentAloneWithoutTheLateMarginAndFailItAsFastS681()
    {
        sampleBothPaths(0);
        scheduler.onSpuriousTimeout(0, 20_000_000); // a margin learnt from descheduling
        final long margin = scheduler.rtt.lateMarginNanos();
        assertEquals(config.lateMarginMaxNanos, margin, "10 ms, the cap");
        final PathSendWindow window = scheduler.sendWindows[0];
        send(0, 1, 100_000);
        final long withMargin = scheduler.rtoNanos(0);
        assertTrue(withMargin > margin, "nobody answered anything sent later: the margin applies");

        // path 0's link is dead; path 1 keeps answering packets sent after path 0's was due
        final PathSendWindow other = scheduler.sendWindows[1];
        long now = 100_000;
        final long plain = scheduler.rtt.rtoNanos(0, scheduler.siblingSrtt(), 0, false);
        int timeouts = 0;
        while (scheduler.state(0) == SprayConnection.ACTIVE && now < 100_000 + withMargin)
        {
            now += 10_000;
            final int otherFirst = other.nextPsn();
            other.send(PROBE_HANDLE, now);
            loss.onAck(1, ackOf(otherFirst, 0), 0, now + 20_000);
            scheduler.onAckTaken(1, (int)(now / 10_000), now + 20_000);
            scheduler.refreshSiblingEstimates();
            if (loss.onTimer(0, now + 20_000) == LossDetector.RECOVERED)
            {
                timeouts++;
            }
        }
        assertEquals(SprayConnection.FAILED, scheduler.state(0), "failed before one RTO with the margin");
        assertEquals(config.failAfterTimeouts, counters.get(SprayCounters.PATH_FAILURES) * config.failAfterTimeouts);
        assertTrue(now - 100_000 <= 8 * plain + 100_000, "within the three plain, backed-off RTOs (1 + 2 + 4) " +
            "and a sibling's round trip: " + (now - 100_000) + " ns against RTO " + plain);
        assertEquals(0, counters.get(SprayCounters.SPURIOUS_TIMEOUTS));
        assertTrue(timeouts >= 2);
        assertEquals(0, window.outstanding(), "its packets moved (S7.4)");
    }

    // ---- S6.7-2 (RFC 8985 section 7.3) is not done: a tail probe leaves its path's RTO where it was, so that a dead
    // path is found an RTO after its packet, not a probe time later (benchmarks/RESULTS.md section 75)

    private static final long T0 = 100_000;
    private static final long SIBLING_EVERY_NANOS = 10_000;
    private static final long SIBLING_RTT_NANOS = 20_000;

    /**
     * Both paths sampled at 20 us, a late margin learnt (10 ms, the cap); path 0 sends one packet at {@link #T0} and
     * then nothing, while path 1 sends a packet every 10 us, each acknowledged 20 us later (so from about T0 + 80 us a
     * sibling has answered a first transmission sent after path 0's packet was due, and S6.8-3 leaves the margin out
     * of path 0's RTO). Path 0's ACKs are dropped, all of them ({@code deadPath}) or only the one of its packet, the
     * answer to a probe then coming {@code probeRttNanos} after the probe (a round trip above the path's srtt: the
     * loaded lab's spread them 1-55 ms around an srtt of 15). Steps of 1 us; each tail probe the timer asks for is
     * sent as {@link SprayConnection} sends it.
     *
     * @return when path 0 first timed out, or -1 if it had not when the run ended: at the probe's answer, or at its
     * failure (S7.4) for a dead path; {@code events[0]} the first probe's time, {@code events[1]} the end.
     */
    private long silentPath(final boolean deadPath, final long probeRttNanos, final long[] events)
    {
        final PathSendWindow window = scheduler.sendWindows[0];
        final PathSendWindow sibling = scheduler.sendWindows[1];
        final int first = window.basePsn(); // the one packet it sent
        long firstTimeout = -1;
        long probeAnsweredAt = Long.MAX_VALUE;
        int probes = 0;
        int ackSequence = 100;
        events[0] = -1;
        for (long now = T0 + 1_000; now < T0 + 2_000_000; now += 1_000)
        {
            if ((now - T0) % SIBLING_EVERY_NANOS == 0)
            {
                sibling.send(PROBE_HANDLE, now);
            }
            // the sibling's packet sent a round trip ago is answered now
            if ((now - T0) % SIBLING_EVERY_NANOS == 0 && now - T0 >= SIBLING_RTT_NANOS)
            {
                ackOf(sibling.basePsn(), 0);
                assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(header(1, ackSequence++, 0, 0), 0, now));
            }
            if (now >= probeAnsweredAt)
            {
                ackOf(first, range(0, 1 + probes));
                assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(header(0, ackSequence++, 0, 0), 0, now));
                events[1] = now;
                return firstTimeout;
            }
            scheduler.refreshSiblingEstimates();
            final int action = loss.onTimer(0, now);
            if (action == LossDetector.RECOVERED && firstTimeout < 0)
            {
                firstTimeout = now;
            }
            if (action == LossDetector.PROBE)
            {
                window.send(PROBE_HANDLE, now);
                scheduler.times.lastProbeAt[0] = now;
                probes++;
                if (events[0] < 0)
                {
                    events[0] = now;
                    probeAnsweredAt = deadPath ? Long.MAX_VALUE : now + probeRttNanos;
                }
            }
            if (scheduler.state(0) == SprayConnection.FAILED)
            {
                events[1] = now;
                return firstTimeout;
            }
        }
        events[1] = -1;
        return firstTimeout;
    }

    private void learnMarginAndSendOneOnPathZero()
    {
        sampleBothPaths(0);
        scheduler.onSpuriousTimeout(0, 20_000_000); // a margin learnt from descheduling
        assertEquals(config.lateMarginMaxNanos, scheduler.rtt.lateMarginNanos(), "10 ms, the cap");
        send(0, 1, T0);
    }

    @Test
    void shouldTimeADeadPathsFirstRtoFromItsPacketThoughATailProbeWentOutBeforeIt()
    {
        // every ACK of path 0 lost: its tail probe goes out 2 srtt after the packet and does not push the RTO
        learnMarginAndSendOneOnPathZero();
        final long plain = scheduler.rtt.rtoNanos(0, scheduler.siblingSrtt(), 0, false);
        final long probeTimeout = Math.max(2 * scheduler.srttNanos(0), config.probeMinNanos);
        final long[] events = new long[2];
        final long firstTimeout = silentPath(true, 0, events);
        assertEquals(T0 + probeTimeout, events[0], "the tail probe, 2 srtt after the packet");
        assertTrue(events[0] < firstTimeout, "the probe went out before the RTO");
        // timed from the packet: at its RTO, the late margin left out once the sibling answered a packet sent after
        // this one was due (S6.8-3: a round trip of the sibling later), not a probe time later
        assertEquals(T0 + plain + SIBLING_RTT_NANOS, firstTimeout, "timed from the packet, not from the probe");
        assertEquals(SprayConnection.FAILED, scheduler.state(0), "fails (S7.4)");
        assertEquals(config.failAfterTimeouts, counters.get(SprayCounters.TIMEOUTS));
        // the timeouts after the first back off from their own resends (2 + 4 RTOs)
        assertEquals(firstTimeout + 6 * plain, events[1], "failed 6 RTOs after its first timeout");
        assertEquals(0, scheduler.sendWindows[0].outstanding(), "its packets moved (S7.4)");
    }

    // ---- S6.8-7: at a message's tail only a probe on a sibling can show a dead path silent alone (S6.8-3)

    /**
     * {@link #learnMarginAndSendOneOnPathZero}, and nothing more to send: path 1 idle. Steps of 1 us; each probe the
     * timer asks for is sent as {@link SprayConnection} sends it; path 1's probe is answered {@code siblingRttNanos}
     * after it (never, if negative: every path as late, a descheduled host), path 0's never (its link is dead).
     *
     * @return {the first timeout of path 0, the first probe on path 1, the number of probes on path 1}.
     */
    private long[] deadPathAtATail(final long siblingRttNanos)
    {
        final PathSendWindow sibling = scheduler.sendWindows[1];
        final long[] result = {-1, -1, 0};
        long answerAt = Long.MAX_VALUE;
        int probePsn = -1;
        for (long now = T0 + 1_000; now < T0 + 20_000_000 && result[0] < 0; now += 1_000)
        {
            if (now == answerAt)
            {
                ackOf(probePsn, 0);
                assertEquals(LossDetector.ACK_TAKEN, loss.onAckPacket(header(1, 100, 0, 0), 0, now));
            }
            final int action = loss.onTimer(0, now);
            if (action == LossDetector.RECOVERED)
            {
                result[0] = now;
            }
            else if (action == LossDetector.PROBE)
            {
                scheduler.sendWindows[0].send(PROBE_HANDLE, now);
                scheduler.times.lastProbeAt[0] = now;
            }
            else if (action == LossDetector.PROBE_SIBLING)
            {
                assertEquals(1, loss.siblingToProbe());
                probePsn = sibling.send(PROBE_HANDLE, now);
                scheduler.times.lastProbeAt[1] = now;
                result[1] = result[1] < 0 ? now : result[1];
                result[2]++;
                answerAt = siblingRttNanos < 0 ? Long.MAX_VALUE : now + siblingRttNanos;
            }
        }
        return result;
    }

    @Test
    void shouldProbeAnIdleSiblingWhenADeadPathsMarginWouldHoldItsTimeoutAtAMessagesTailS687()
    {
        learnMarginAndSendOneOnPathZero();
        final long margin = scheduler.rtt.lateMarginNanos();
        final long plain = scheduler.rtt.rtoNanos(0, scheduler.siblingSrtt(), 0, false);
        final long due = T0 + scheduler.ackExpectedWithinNanos(0);
        final long[] events = deadPathAtATail(SIBLING_RTT_NANOS);
        assertEquals(1, events[2], "one probe on the sibling");
        // answers count for packets sent after the due time (S6.8.1), so it goes at the first tick after it
        assertEquals(due + 1_000, events[1], "sent once path 0's packet was due (its RTO before rtoMin, margin, backoff)");
        // its answer shows path 0 silent alone: the margin left out (S6.8-3), the RTO fires then or at its plain value
        assertEquals(Math.max(T0 + plain, events[1] + SIBLING_RTT_NANOS), events[0], "margin " + margin + ", plain " + plain);
        assertTrue(events[0] - T0 < margin / 10, "long before the margin of " + margin + " ns");
        assertEquals(1, counters.get(SprayCounters.TIMEOUTS));
    }

    @Test
    void shouldKeepTheMarginWhenTheSiblingsProbeIsAnsweredNoSoonerAndProbeItOnlyOnce()
    {
        // every path as late (a descheduled receiver): the sibling's probe is not answered before the RTO with margin
        learnMarginAndSendOneOnPathZero();
        final long withMargin = scheduler.rtoNanos(0);
        final long[] events = deadPathAtATail(-1);
        assertEquals(1, events[2], "one probe on the sibling, not one a tick");
        assertEquals(T0 + withMargin, events[0], "the RTO with the margin, as without the probe");
    }

    @Test
    void shouldProbeNoSiblingWithoutALateMargin()
    {
        sampleBothPaths(0);
        send(0, 1, T0);
        assertEquals(0, scheduler.rtt.lateMarginNanos());
        final long rto = scheduler.rtoNanos(0);
        final long[] events = deadPathAtATail(SIBLING_RTT_NANOS);
        assertEquals(0, events[2], "the RTO needs no sibling's answer");
        assertEquals(T0 + rto, events[0]);
    }
}
