package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.wire.NegativeAckHeader;

import static io.spraynic.datapath.transport.spray.SendSlots.key;

/**
 * How the receiver of one spray connection refuses inbound messages and answers for them (docs/PROTOCOL.md S9.3,
 * S9.4, S10.2): a message refused for good (access, length) puts its stream in error, and the stream's later
 * messages are flushed; an attempt refused RNR (no receive) or for want of resources is refused packet by packet
 * until the sender's retry (a later attempt, S9.3-3) starts clean; every refusal is numbered ({@link Refusals})
 * and NACKed, an RNR for resources only within the engine's response rate (S10.2, S12.9); a query about a
 * message is answered with its fate. Holds each stream's error state; a message's own refusal state is its
 * record's ({@link InboundMessageRecords}). Allocation-free.
 */
final class InboundRefusals
{
    private static final int MISSING = SendSlots.MISSING;

    private final InboundMessageRecords records;
    private final PlacementMarks marks;
    private final InboundRetirement retirement;
    private final Refusals refusals;
    private final ControlPackets control; // NACKs
    private final SprayEngine engine; // the response rate (S12.9)
    private final TransportCounters counters;
    private final int capacity;

    // ---- per stream (S9.4): the first message refused for good, after which the stream's messages are flushed
    private final boolean[] errored;
    private final int[] erroredMsn;
    private final int[] erroredSyndrome;
    private final int[] erroredRefusal;

    InboundRefusals(
        final int streams,
        final InboundMessageRecords records,
        final PlacementMarks marks,
        final InboundRetirement retirement,
        final Refusals refusals,
        final ControlPackets control,
        final SprayEngine engine,
        final TransportCounters counters)
    {
        this.records = records;
        this.marks = marks;
        this.retirement = retirement;
        this.refusals = refusals;
        this.control = control;
        this.engine = engine;
        this.counters = counters;
        capacity = records.capacity;
        errored = new boolean[streams];
        erroredMsn = new int[streams];
        erroredSyndrome = new int[streams];
        erroredRefusal = new int[streams];
    }

    /** @return whether a message comes after one of its stream refused for good: it is not placed (S9.4). */
    boolean isFlushed(final int streamId, final int msn)
    {
        return errored[streamId] && msn - erroredMsn[streamId] > 0;
    }

    /** S9.3: refuses a recorded message for good with a syndrome, NACKs it, and puts its stream in error. */
    void refuse(final int path, final int record, final int syndrome, final int streamId, final int msn)
    {
        // S9.3: counted before its NACK and the ACK of its packet leave, so every ACK that covers a refused
        // packet tells the sender a refusal exists; a refusal of an earlier message of a stream already in
        // error keeps the stream's number (the sender, which then holds that stream's earlier messages until
        // the receiver confirms them, learns of it by the number it already has or by asking)
        final int refusal = errored[streamId] ? erroredRefusal[streamId] : refusals.next();
        records.refused(record, syndrome, refusal);
        control.sendNack(path, syndrome, streamId, msn, refusal);
        if (!errored[streamId] || msn - erroredMsn[streamId] < 0)
        {
            errored[streamId] = true;
            erroredMsn[streamId] = msn;
            erroredSyndrome[streamId] = syndrome;
            erroredRefusal[streamId] = refusal;
            // later messages of the stream that had begun arriving are abandoned (control path: rare)
            for (int other = 0; other < capacity; other++)
            {
                if (records.stream(other) == streamId &&
                    records.lookUp(key(streamId, records.msn(other))) == other && records.msn(other) - msn > 0)
                {
                    marks.release(other, records.expected(other));
                    records.close(key(streamId, records.msn(other)), other);
                    counters.increment(SprayCounters.FLUSHED);
                }
            }
        }
        retirement.retire(streamId);
    }

    /** S9.3: a further packet of a message refused for good is refused again, with the same number. */
    void repeatRefusal(final int path, final int record, final int streamId, final int msn)
    {
        control.sendNack(path, records.syndrome(record), streamId, msn, records.refusal(record));
    }

    // S10.2: no room for this attempt (a record inside the window, placement marks, READ response resources): it
    // is refused as an RNR attempt is, and the marks of any packet of it placed so far are given back (its retry
    // places every packet again)
    void refuseForResources(final int path, final int record, final int streamId, final int msn, final long now)
    {
        marks.release(record, records.expected(record));
        records.attemptRefused(record, refusals.next(), true);
        refuseRnr(path, record, streamId, msn, now);
    }

    // RNR: the whole attempt is refused, packet by packet, until a packet of a later attempt (the sender's retry,
    // S9.3-3) starts clean, so no byte of a refused attempt is ever counted, however many copies of its packets
    // arrive (a packet moved to another path whose original arrived too, S7.4.1). A refusal for want
    // of resources is NACKed only within the engine's response rate (S10.2, S12.9): the SACKH's refusal count and
    // the sender's query stand in for a NACK withheld
    void refuseRnr(final int path, final int record, final int streamId, final int msn, final long now)
    {
        if (!records.isAttemptRefused(record))
        {
            // each refused attempt is a refusal the sender must learn of (S9.3)
            records.attemptRefused(record, refusals.next(), false);
        }
        if (!records.isRefusedForResources(record))
        {
            control.sendNack(path, NegativeAckHeader.SYNDROME_RNR, streamId, msn, records.refusal(record));
        }
        else
        {
            counters.increment(SprayCounters.NO_RESOURCES);
            if (engine.tryRespond(now))
            {
                control.sendNack(path, NegativeAckHeader.SYNDROME_RNR, NegativeAckHeader.RNR_REASON_NO_RESOURCES,
                    streamId, msn, records.refusal(record));
            }
        }
    }

    // S9.3: the receiver of a message tells its fate: placed, or refused (again, with the refusal's number)
    void answerQuery(final int streamId, final int msn)
    {
        if (errored[streamId] && msn - erroredMsn[streamId] >= 0)
        {
            // refused, or flushed behind the refused message: the answer names the refused one
            control.sendNack(0, erroredSyndrome[streamId], streamId, erroredMsn[streamId], erroredRefusal[streamId]);
            return;
        }
        final int record = records.recordOf(key(streamId, msn)); // detached: no record
        if (record == MISSING)
        {
            if (msn - retirement.nextMsn(streamId) < 0)
            {
                final int lateRefusal = refusals.lateRefusal(streamId, msn); // a READ whose response was refused
                control.sendNack(0, lateRefusal != 0 ? NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR :
                    NegativeAckHeader.SYNDROME_ACCEPTED, streamId, msn, lateRefusal); // completed and retired
            }
            return;
        }
        final int refusal = records.refusal(record);
        if (records.syndrome(record) != 0)
        {
            control.sendNack(0, records.syndrome(record), streamId, msn, refusal);
        }
        else if (records.isDone(record))
        {
            control.sendNack(0, NegativeAckHeader.SYNDROME_ACCEPTED, streamId, msn, 0);
        }
        else if (refusal != 0 && (records.isAttemptRefused(record) || records.received(record) == 0))
        {
            // the last attempt was refused
            control.sendNack(0, NegativeAckHeader.SYNDROME_RNR, records.isRefusedForResources(record) ?
                NegativeAckHeader.RNR_REASON_NO_RESOURCES : NegativeAckHeader.RNR_REASON_NO_RECEIVE, streamId, msn,
                refusal);
        }
    }
}
