package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.wire.NegativeAckHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static io.spraynic.datapath.transport.spray.MessageKinds.WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S4.8, S9.3, S9.4: how sent messages finish: in MSN order per stream, held while a refusal of
 * the peer is unknown, failed or restarted by a NACK, flushed; MSNs compared across their wrap.
 */
@Timeout(10)
class SendCompletionsTest
{
    private static final int MTU = 1024;
    private static final int CID = 77;

    private final SprayConfig config = new SprayConfig();
    private final SendSlots slots = new SendSlots(8, 2, MTU);
    private final Refusals refusals = new Refusals();
    private final CompletionQueue sendCq = new CompletionQueue(64);
    private final TransportCounters counters = SprayCounters.create();
    private final TransportCounters engineCounters = SprayCounters.create();
    private final List<long[]> queries = new ArrayList<>();
    private final SendCompletions completions = completions(sendCq);

    private SendCompletions completions(final CompletionQueue cq)
    {
        return new SendCompletions(slots, new PlacementMarks(4), 16, refusals, cq, CID, MTU, config,
            new PathScheduler(2, config, new SplittableRandom(1), 0, 50_000), counters, engineCounters,
            (streamId, msn) -> queries.add(new long[] {streamId, msn}));
    }

    // a signaled WRITE of `packets` packets, every packet sent
    private int sent(final int streamId, final long wrId, final int packets)
    {
        final int slot = slots.take();
        slots.kind(slot, WRITE);
        slots.wrId(slot, wrId);
        slots.stream(slot, streamId);
        slots.msn(slot, slots.takeMsn(streamId));
        slots.length(slot, packets * MTU);
        slots.packets(slot, packets);
        slots.signaled(slot, true);
        slots.appendToStream(slot);
        slots.nextPacket(slot, packets);
        slots.outstanding(slot, packets);
        return slot;
    }

    private void ackAll(final int slot, final long now)
    {
        for (int packet = 0; packet < slots.packets(slot); packet++)
        {
            completions.onPacketAcked(slots.handle(slot, packet), now);
        }
    }

    private WorkCompletion poll()
    {
        final WorkCompletion wc = new WorkCompletion();
        assertTrue(sendCq.poll(wc), "a completion");
        return wc;
    }

    @Test
    void shouldDeliverInMsnOrderPerStreamAndFreeEverySlot()
    {
        final int first = sent(0, 1, 2);
        final int second = sent(0, 2, 1);
        final int other = sent(1, 3, 1);
        ackAll(second, 0);
        assertTrue(sendCq.isEmpty(), "the stream's first message is not finished");
        ackAll(other, 0);
        assertEquals(3, poll().wrId(), "another stream is not held up");
        completions.onPacketAcked(slots.handle(first, 0), 0);
        assertTrue(sendCq.isEmpty());
        completions.onPacketAcked(slots.handle(first, 1), 0);
        final WorkCompletion wc = poll();
        assertEquals(1, wc.wrId());
        assertEquals(WorkCompletionStatus.SUCCESS, wc.status());
        assertEquals(WorkCompletionOpcode.RDMA_WRITE, wc.opcode());
        assertEquals(2 * MTU, wc.byteLength());
        assertEquals(CID, wc.qpNumber());
        assertEquals(2, poll().wrId());
        assertEquals(0, slots.inUse());
        assertEquals(3, counters.get(SprayCounters.MESSAGES_SENT));
    }

    @Test
    void shouldIgnoreTheAckOfAPacketOfAnEarlierUseOfTheSlot()
    {
        final int slot = sent(0, 1, 1);
        final long oldHandle = slots.handle(slot, 0);
        ackAll(slot, 0);
        poll();
        final int again = sent(0, 2, 1);
        assertEquals(slot, again, "the freed slot is taken again");
        completions.onPacketAcked(oldHandle, 0); // e.g. a duplicate ACK of the first use
        assertEquals(0, slots.acked(again));
        assertEquals(1, slots.outstanding(again));
        assertTrue(sendCq.isEmpty());
    }

    @Test
    void shouldHoldWhileAPeerRefusalIsUnknownQueryAndCompleteOnTheAnswerS93()
    {
        refusals.onPeerCount(1); // the peer refused something this end has not heard about
        final int slot = sent(0, 1, 1);
        ackAll(slot, 1_000);
        assertTrue(sendCq.isEmpty(), "all acknowledged, but it may be the refused one");
        assertTrue(slots.held(slot));
        assertEquals(1, counters.get(SprayCounters.COMPLETIONS_HELD));

        final long queryAt = slots.queryAt(slot);
        assertTrue(queryAt >= 1_000 + config.rtoMinNanos);
        assertEquals(0, completions.sendQueries(queryAt - 1));
        assertEquals(1, completions.sendQueries(queryAt));
        assertEquals(1, queries.size());
        assertEquals(0, queries.get(0)[0]);
        assertEquals(slots.msn(slot), queries.get(0)[1]);
        assertTrue(slots.queryAt(slot) > queryAt, "asked again later if the answer is lost");

        assertTrue(completions.onNack(0, slots.msn(slot), NegativeAckHeader.SYNDROME_ACCEPTED, 0, 0, queryAt));
        assertEquals(WorkCompletionStatus.SUCCESS, poll().status(), "placed: it was not the refused one");
        assertEquals(0, slots.heldCount());
    }

    @Test
    void shouldReleaseHeldMessagesOnceTheRefusalIsLearnedAndFailTheRefusedOne()
    {
        refusals.onPeerCount(1);
        final int placed = sent(0, 1, 1);
        final int refused = sent(1, 2, 1);
        ackAll(placed, 0);
        ackAll(refused, 0);
        assertEquals(2, slots.heldCount());
        assertTrue(completions.onNack(1, slots.msn(refused), NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, 1, 0, 5));
        final WorkCompletion first = poll();
        final WorkCompletion second = poll();
        final WorkCompletion refusedCompletion = first.wrId() == 2 ? first : second;
        final WorkCompletion placedCompletion = first.wrId() == 2 ? second : first;
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, refusedCompletion.status());
        assertEquals(WorkCompletionStatus.SUCCESS, placedCompletion.status(), "refusal 1 is known: not this one");
        assertEquals(0, slots.heldCount());
    }

    @Test
    void shouldFailAHeldMessageNobodyAnswersForAfterTheConnectionTimeoutS931()
    {
        refusals.onPeerCount(1);
        final int slot = sent(0, 1, 1);
        ackAll(slot, 0);
        assertEquals(1, completions.sendQueries(config.connectionTimeoutNanos - 1), "a query, not yet the end");
        assertTrue(sendCq.isEmpty());
        final long nextQueryAt = slots.queryAt(slot);
        assertEquals(1, completions.sendQueries(nextQueryAt));
        assertEquals(WorkCompletionStatus.RETRY_EXC_ERR, poll().status());
    }

    @Test
    void shouldFailTheRefusedMessageAndFlushTheRestOfItsStreamInOrderS94()
    {
        sent(0, 1, 1);
        sent(0, 2, 3);
        sent(0, 3, 1);
        assertTrue(completions.onNack(0, 0, NegativeAckHeader.SYNDROME_REMOTE_INVALID_REQUEST, 1, 0, 0));
        assertEquals(WorkCompletionStatus.REM_INV_REQ_ERR, poll().status());
        final WorkCompletion second = poll();
        assertEquals(2, second.wrId());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, second.status());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, poll().status());
        assertTrue(slots.errored(0));
        assertFalse(slots.errored(1));
        assertEquals(3, slots.inUse(), "their packets are still in flight: the slots wait for the ACKs");
        for (int slot = 0; slot < 3; slot++)
        {
            ackAll(slot, 0);
        }
        assertEquals(0, slots.inUse());
    }

    @Test
    void shouldWaitAndRestartAfterRnrNotTwiceForOneRefusalAndGiveUpAfterTheRetries()
    {
        final int slot = sent(0, 1, 2);
        assertTrue(completions.onNack(0, 0, NegativeAckHeader.SYNDROME_RNR, 1, 100, 1_000));
        assertTrue(slots.rnrWaiting(slot));
        assertTrue(completions.onNack(0, 0, NegativeAckHeader.SYNDROME_RNR, 1, 100, 1_000),
            "the NACK of the refused attempt's next packet");
        assertEquals(1, slots.rnrCount(slot), "one refusal, one wait");
        ackAll(slot, 1_000); // the path layer acknowledged the packets: the receiver had no buffer for them
        assertTrue(sendCq.isEmpty());
        final int generation = slots.generation(slot);
        assertEquals(0, completions.retryRnrWaits(1_000 + 100_000 - 1));
        assertEquals(1, completions.retryRnrWaits(1_000 + 100_000));
        assertEquals(generation + 1, slots.generation(slot), "ACKs of the refused attempt are ignored");
        assertEquals(0, slots.nextPacket(slot));
        assertEquals(0, slots.acked(slot));
        assertEquals(1, slots.sendQueueSize());

        for (int refusal = 2; refusal <= config.rnrRetries + 1; refusal++)
        {
            slots.nextPacket(slot, 2);
            assertTrue(completions.onNack(0, 0, NegativeAckHeader.SYNDROME_RNR, refusal, 100, 2_000));
            completions.retryRnrWaits(Long.MAX_VALUE);
        }
        assertEquals(WorkCompletionStatus.RNR_RETRY_EXC_ERR, poll().status());
        assertEquals(config.rnrRetries, counters.get(SprayCounters.RNR_RETRIES));
    }

    @Test
    void shouldMatchNacksToSentMessagesAcrossTheMsnWrapS128()
    {
        slots.nextMsn(0, Integer.MAX_VALUE);
        final int last = sent(0, 1, 1);
        final int wrapped = sent(0, 2, 1);
        assertEquals(Integer.MAX_VALUE, slots.msn(last));
        assertEquals(Integer.MIN_VALUE, slots.msn(wrapped));
        assertFalse(completions.onNack(0, Integer.MIN_VALUE + 1, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, 1,
            0, 0), "not sent yet: forged");
        assertEquals(0, counters.get(SprayCounters.NACKS_RECEIVED));
        assertTrue(completions.onNack(0, Integer.MAX_VALUE - 3, NegativeAckHeader.SYNDROME_ACCEPTED, 0, 0, 0),
            "sent before, already finished: harmless");
        assertTrue(sendCq.isEmpty());
        assertTrue(completions.onNack(0, Integer.MIN_VALUE, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, 1, 0, 0));
        ackAll(last, 0);
        assertTrue(sendCq.isEmpty(), "held: its stream is in error, so it may be refused after the later one");
        assertTrue(completions.onNack(0, Integer.MAX_VALUE, NegativeAckHeader.SYNDROME_ACCEPTED, 0, 0, 0));
        assertEquals(WorkCompletionStatus.SUCCESS, poll().status());
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, poll().status());
        assertEquals(3, counters.get(SprayCounters.NACKS_RECEIVED));
    }

    @Test
    void shouldFailLocallyWhenTheCompletionQueueOverruns()
    {
        final CompletionQueue tiny = new CompletionQueue(1);
        final SendCompletions overrun = completions(tiny);
        for (int i = 0; i < 2; i++)
        {
            final int slot = sent(0, i, 1);
            overrun.onPacketAcked(slots.handle(slot, 0), 0);
        }
        assertTrue(overrun.localError());
        assertEquals(1, counters.get(SprayCounters.CQ_OVERRUNS));
        assertFalse(completions.localError());
    }

    @Test
    void shouldFlushEveryUnfinishedMessageInOrderAndFreeEverySlot()
    {
        sent(0, 1, 2);
        sent(1, 2, 1);
        sent(0, 3, 1);
        completions.flush(WorkCompletionStatus.RETRY_EXC_ERR);
        final List<Long> order = new ArrayList<>();
        final WorkCompletion wc = new WorkCompletion();
        while (sendCq.poll(wc))
        {
            assertEquals(WorkCompletionStatus.RETRY_EXC_ERR, wc.status());
            order.add(wc.wrId());
        }
        assertEquals(List.of(1L, 3L, 2L), order, "stream by stream, MSN order in each");
        assertEquals(0, slots.inUse());
        assertEquals(0, slots.sendQueueSize());
    }

    @Test
    void shouldCountAReadResponseForNoReadHereAsADuplicateWithoutPlacingIt()
    {
        assertTrue(completions.roomForReadResponse(SendSlots.MISSING, 0), "let through, to be counted");
        completions.placeReadResponse(null, SendSlots.MISSING, 0, MTU, MTU);
        final int write = sent(0, 1, 1);
        completions.placeReadResponse(null, write, 0, MTU, MTU);
        assertEquals(2, counters.get(SprayCounters.DUPLICATES));
        assertEquals(0, counters.get(SprayCounters.RX_BYTES));
    }
}
