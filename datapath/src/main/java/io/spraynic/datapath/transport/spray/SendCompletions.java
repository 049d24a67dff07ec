package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.RoceFrame;

import java.lang.foreign.MemorySegment;

import static io.spraynic.datapath.transport.spray.MessageKinds.READ;
import static io.spraynic.datapath.transport.spray.MessageKinds.READ_RESPONSE;
import static io.spraynic.datapath.transport.spray.MessageKinds.WRITE;
import static io.spraynic.datapath.transport.spray.MessageKinds.WRITE_IMM;

/**
 * How the messages one spray connection sent finish (docs/PROTOCOL.md S4.8, S9.3, S9.4): a message whose
 * packets are all acknowledged succeeds, unless a refusal of the peer this end has not learned of yet may be
 * it, when its completion is held and queried (S9.3); a NACK fails it (and flushes the rest of its stream,
 * S9.4) or makes it wait and start again (RNR); a READ succeeds once its responses are placed. Completions
 * leave for the send completion queue in MSN order per stream, and a slot is freed once its message is
 * delivered and nothing of it is in flight.
 * <p>
 * The state it works on is the connection's {@link SendSlots}; it owns only the flag of a local error (a
 * completion queue overran, a READ's target was deregistered), on which the connection fails. Allocation-free.
 */
final class SendCompletions
{
    private static final int MISSING = SendSlots.MISSING;
    private static final int PENDING = SendSlots.PENDING;
    private static final WorkCompletionStatus[] STATUSES = WorkCompletionStatus.values();

    /** Writes the query of S9.3 about a held message. */
    interface QueryWriter
    {
        /** @return whether it went out (false: no room in the output; it is asked again later). */
        boolean query(int streamId, int msn);
    }

    private final SendSlots slots;
    private final PlacementMarks marks;
    private final int readMarksBase;
    private final Refusals refusals;
    private final CompletionQueue sendCq;
    private final int localCid;
    private final int mtu;
    private final SprayConfig config;
    private final PathScheduler scheduler;
    private final TransportCounters counters;
    private final TransportCounters engineCounters;
    private final QueryWriter queries;
    private boolean localError;
    private int readsCheckedAtPeerCount; // the peer's refusal count when waiting READs were last held

    /**
     * @param readMarksBase the {@link PlacementMarks} owner of slot 0's READ responses: a READ's placed responses
     *                      are marked under {@code readMarksBase + slot}, above the inbound message records.
     */
    SendCompletions(
        final SendSlots slots,
        final PlacementMarks marks,
        final int readMarksBase,
        final Refusals refusals,
        final CompletionQueue sendCq,
        final int localCid,
        final int mtu,
        final SprayConfig config,
        final PathScheduler scheduler,
        final TransportCounters counters,
        final TransportCounters engineCounters,
        final QueryWriter queries)
    {
        this.slots = slots;
        this.marks = marks;
        this.readMarksBase = readMarksBase;
        this.refusals = refusals;
        this.sendCq = sendCq;
        this.localCid = localCid;
        this.mtu = mtu;
        this.config = config;
        this.scheduler = scheduler;
        this.counters = counters;
        this.engineCounters = engineCounters;
        this.queries = queries;
    }

    /** @return whether a completion queue overran or a READ's target was deregistered: the connection fails. */
    boolean localError()
    {
        return localError;
    }

    // ---- acknowledgements and READ responses

    /** A packet named by {@code handle} was acknowledged (an ACK of an earlier use of its slot is ignored). */
    void onPacketAcked(final long handle, final long now)
    {
        if (!slots.isCurrent(handle))
        {
            return;
        }
        final int slot = SendSlots.slotOf(handle);
        slots.outstanding(slot, slots.outstanding(slot) - 1);
        slots.acked(slot, slots.acked(slot) + 1);
        if (slots.status(slot) == PENDING && !slots.rnrWaiting(slot) && slots.acked(slot) == slots.packets(slot))
        {
            if (slots.kind(slot) == READ_RESPONSE)
            {
                slots.status(slot, WorkCompletionStatus.SUCCESS.ordinal());
            }
            else if (mustHold(slot))
            {
                hold(slot, now);
            }
            else if (slots.kind(slot) != READ)
            {
                slots.status(slot, WorkCompletionStatus.SUCCESS.ordinal());
                deliver(slots.stream(slot));
                return;
            }
        }
        freeIfFinished(slot);
    }

    /**
     * Places a READ response packet of the READ in {@code slot} (the caller checked it with
     * {@link #roomForReadResponse}: the slot holds a READ, or the packet is counted a duplicate here).
     */
    void placeReadResponse(
        final RoceFrame frame, final int slot, final int offset, final int messageLength, final int payloadLength)
    {
        if (slot == MISSING || slots.kind(slot) != READ || slots.status(slot) != PENDING ||
            slots.readReceived(slot) >= slots.readExpected(slot))
        {
            counters.increment(SprayCounters.DUPLICATES); // a response to a READ already finished
            return;
        }
        if (messageLength != slots.length(slot))
        {
            engineCounters.increment(SprayCounters.MALFORMED);
            return;
        }
        if (payloadLength > 0 && !slots.region(slot).isRegistered())
        {
            localError = true; // the READ's target was deregistered: nothing is placed, the connection fails
            return;
        }
        if (marks.mark(readMarksBase + slot, offset / mtu) == PlacementMarks.DUPLICATE)
        {
            counters.increment(SprayCounters.DUPLICATES);
            return;
        }
        if (payloadLength > 0)
        {
            final MemoryRegion region = slots.region(slot);
            MemorySegment.copy(frame.segment(), frame.payloadOffset(), region.segment(),
                region.offsetOf(slots.localAddress(slot)) + offset, payloadLength);
            counters.add(SprayCounters.RX_BYTES, payloadLength);
        }
        slots.readReceived(slot, slots.readReceived(slot) + 1);
        if (slots.readReceived(slot) == slots.readExpected(slot))
        {
            slots.status(slot, WorkCompletionStatus.SUCCESS.ordinal());
            deliver(slots.stream(slot));
        }
    }

    /** @return whether a READ response packet can be marked (a response to no READ here is let through). */
    boolean roomForReadResponse(final int slot, final int packet)
    {
        return slot == MISSING || slots.kind(slot) != READ || marks.roomToMark(readMarksBase + slot, packet);
    }

    // ---- S9.3, S9.4: NACKs, holds and queries, RNR waits

    /**
     * A NACK (or the answer to a query) about message {@code msn} of {@code streamId}.
     *
     * @return false if it names no message this end sent (S12.8); nothing changed then.
     */
    boolean onNack(
        final int streamId, final int msn, final int syndrome, final int refusal, final int rnrTimerMicros,
        final long now)
    {
        if (msn - slots.nextMsn(streamId) >= 0)
        {
            return false;
        }
        counters.increment(SprayCounters.NACKS_RECEIVED);
        final boolean fresh =
            syndrome != NegativeAckHeader.SYNDROME_ACCEPTED && refusal != 0 && refusals.learn(refusal);
        refusals.onPeerCount(refusal);
        final int slot = slots.slotFor(SendSlots.key(streamId, msn));
        if (slot != MISSING && slots.status(slot) == PENDING && slots.kind(slot) != READ_RESPONSE)
        {
            onRefusal(slot, syndrome, refusal, fresh, rnrTimerMicros, now);
        }
        releaseHeld();
        return true;
    }

    private void onRefusal(
        final int slot, final int syndrome, final int refusal, final boolean fresh, final int rnrTimerMicros,
        final long now)
    {
        switch (syndrome)
        {
            case NegativeAckHeader.SYNDROME_ACCEPTED ->
            {
                // the answer to a query: every byte was placed (S9.3)
                if (slots.held(slot))
                {
                    completeUnheld(slot);
                }
            }
            case NegativeAckHeader.SYNDROME_RNR ->
            {
                if (slots.rnrWaiting(slot) || (refusal != 0 && !fresh))
                {
                    return; // the rest of the refused attempt, or an earlier attempt's
                }
                slots.unhold(slot);
                slots.rnrCount(slot, slots.rnrCount(slot) + 1);
                if (slots.rnrCount(slot) > config.rnrRetries)
                {
                    fail(slot, WorkCompletionStatus.RNR_RETRY_EXC_ERR);
                    return;
                }
                counters.increment(SprayCounters.RNR_RETRIES);
                slots.startRnrWait(slot, now + rnrTimerMicros * 1000L);
            }
            case NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR -> fail(slot, WorkCompletionStatus.REM_ACCESS_ERR);
            case NegativeAckHeader.SYNDROME_REMOTE_INVALID_REQUEST -> fail(slot, WorkCompletionStatus.REM_INV_REQ_ERR);
            default -> fail(slot, WorkCompletionStatus.REM_OP_ERR);
        }
    }

    // S9.3: a message whose packets were all acknowledged may still have been refused if the peer made a
    // refusal this end has not learned of, or if its stream is in error (an earlier message of the stream can
    // be refused after a later one, under the later one's refusal number)
    private boolean mustHold(final int slot)
    {
        return refusals.anyUnlearned() || slots.errored(slots.stream(slot));
    }

    private void hold(final int slot, final long now)
    {
        if (slots.hold(slot, now, queryInterval()))
        {
            counters.increment(SprayCounters.COMPLETIONS_HELD);
        }
    }

    // a missing NACK may be on its way over a slower path: ask only after a round trip of the slowest path
    private long queryInterval()
    {
        return Math.max(config.rtoMinNanos, 2 * scheduler.siblingSrtt());
    }

    // a held message need no longer wait: it succeeds if every packet was acknowledged (and it is no READ, which
    // succeeds by its responses)
    private void completeUnheld(final int slot)
    {
        slots.unhold(slot);
        if (slots.kind(slot) != READ && !slots.rnrWaiting(slot) && slots.acked(slot) == slots.packets(slot))
        {
            slots.status(slot, WorkCompletionStatus.SUCCESS.ordinal());
            deliver(slots.stream(slot));
        }
    }

    // completes held messages that need no longer wait (control path: only after a refusal)
    private void releaseHeld()
    {
        if (slots.heldCount() == 0)
        {
            return;
        }
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            if (slots.held(slot) && slots.status(slot) == PENDING && !mustHold(slot))
            {
                completeUnheld(slot);
            }
        }
    }

    /**
     * Asks about held messages whose query is due (S9.3); one held without an answer for
     * {@code connectionTimeout} fails with RETRY_EXC_ERR (S9.3.1: its fate is unknown).
     *
     * @return queries sent and messages failed.
     */
    int sendQueries(final long now)
    {
        if (refusals.peerMade() != readsCheckedAtPeerCount)
        {
            readsCheckedAtPeerCount = refusals.peerMade();
            holdWaitingReads(now);
        }
        if (slots.heldCount() == 0)
        {
            return 0;
        }
        int work = 0;
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            if (slots.held(slot) && slots.status(slot) == PENDING && now >= slots.queryAt(slot))
            {
                if (now - slots.heldAt(slot) >= config.connectionTimeoutNanos)
                {
                    fail(slot, WorkCompletionStatus.RETRY_EXC_ERR);
                    work++;
                    continue;
                }
                if (queries.query(slots.stream(slot), slots.msn(slot)))
                {
                    work++;
                }
                slots.queryAt(slot, now + queryInterval());
            }
        }
        return work;
    }

    // S9.3.2: a refusal unknown here may be of a READ response the peer could not finish: a READ whose request
    // was acknowledged and which still waits for its responses is held (and so asked about) like any message
    // completed while a refusal is unknown (control path: once per rise of the peer's count)
    private void holdWaitingReads(final long now)
    {
        if (!refusals.anyUnlearned())
        {
            return;
        }
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            if (slots.kind(slot) == READ && slots.status(slot) == PENDING && !slots.held(slot) &&
                slots.acked(slot) == slots.packets(slot))
            {
                hold(slot, now);
            }
        }
    }

    /**
     * Restarts the messages whose RNR wait is over and of which nothing is in flight (a new generation: ACKs of
     * the refused attempt are ignored).
     *
     * @return messages restarted.
     */
    int retryRnrWaits(final long now)
    {
        if (slots.rnrWaitingCount() == 0)
        {
            return 0;
        }
        int work = 0;
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            if (slots.rnrWaiting(slot) && slots.outstanding(slot) == 0 &&
                slots.nextPacket(slot) == slots.packets(slot) &&
                now >= slots.rnrRetryAt(slot))
            {
                slots.stopRnrWait(slot);
                slots.unhold(slot);
                slots.generation(slot, slots.generation(slot) + 1);
                slots.nextPacket(slot, 0);
                slots.acked(slot, 0);
                if (!slots.inSendQueue(slot))
                {
                    slots.enqueueSendFirst(slot); // S10.2: not behind a message waiting for the peer's window
                }
                work++;
            }
        }
        return work;
    }

    // S9.4: the message completes with the error, later messages of its stream are flushed
    private void fail(final int slot, final WorkCompletionStatus completionStatus)
    {
        slots.status(slot, completionStatus.ordinal());
        slots.nextPacket(slot, slots.packets(slot));
        slots.stopRnrWait(slot);
        final int streamId = slots.stream(slot);
        slots.errored(streamId, true);
        for (int i = slots.nextInStream(slot); i != MISSING; i = slots.nextInStream(i))
        {
            if (slots.status(i) == PENDING)
            {
                slots.status(i, WorkCompletionStatus.WR_FLUSH_ERR.ordinal());
                slots.nextPacket(i, slots.packets(i));
                slots.stopRnrWait(i);
            }
        }
        deliver(streamId);
    }

    // ---- delivery

    /** Delivers the finished messages at the head of a stream, in MSN order, up to its first unfinished one. */
    void deliver(final int streamId)
    {
        int head = slots.streamHead(streamId);
        while (head != MISSING && slots.status(head) != PENDING)
        {
            final WorkCompletionStatus completionStatus = STATUSES[slots.status(head)];
            if (slots.signaled(head) || completionStatus != WorkCompletionStatus.SUCCESS)
            {
                final WorkCompletionOpcode op = switch (slots.kind(head))
                {
                    case WRITE, WRITE_IMM -> WorkCompletionOpcode.RDMA_WRITE;
                    case READ -> WorkCompletionOpcode.RDMA_READ;
                    default -> WorkCompletionOpcode.SEND;
                };
                if (!sendCq.offer(slots.wrId(head), completionStatus, op, slots.length(head), false, 0, localCid))
                {
                    counters.increment(SprayCounters.CQ_OVERRUNS);
                    localError = true;
                }
            }
            counters.increment(SprayCounters.MESSAGES_SENT);
            slots.unhold(head);
            slots.forget(head);
            slots.delivered(head, true);
            final int done = head;
            head = slots.nextInStream(head);
            freeIfFinished(done);
        }
        slots.streamHead(streamId, head);
        if (head == MISSING)
        {
            slots.streamTail(streamId, MISSING);
        }
    }

    /** Frees the slot if its message was delivered and nothing of it is in flight or queued. */
    void freeIfFinished(final int slot)
    {
        if (slots.isFinished(slot))
        {
            if (slots.kind(slot) == READ)
            {
                marks.release(readMarksBase + slot, slots.readExpected(slot));
            }
            slots.free(slot);
        }
    }

    /**
     * Every send work request not finished completes with {@code completionStatus}, in order per stream; nothing
     * is left in flight (the caller forgets its retransmit queues). Control path.
     */
    void flush(final WorkCompletionStatus completionStatus)
    {
        final int streams = slots.streams();
        if (!slots.isAttached())
        {
            for (int streamId = 0; streamId < streams; streamId++)
            {
                slots.errored(streamId, true); // an idle connection's table is empty: nothing to complete
            }
            return;
        }
        for (int streamId = 0; streamId < streams; streamId++)
        {
            for (int slot = slots.streamHead(streamId); slot != MISSING; slot = slots.nextInStream(slot))
            {
                if (slots.status(slot) == PENDING)
                {
                    slots.status(slot, completionStatus.ordinal());
                }
            }
            slots.errored(streamId, true);
        }
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            if (slots.kind(slot) == READ_RESPONSE && slots.status(slot) == PENDING && !slots.isFree(slot))
            {
                slots.status(slot, completionStatus.ordinal());
            }
        }
        slots.clearInFlight();
        for (int streamId = 0; streamId < streams; streamId++)
        {
            deliver(streamId);
        }
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            if (!slots.isFree(slot))
            {
                freeIfFinished(slot);
            }
        }
    }
}
