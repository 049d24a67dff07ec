package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.wire.NegativeAckHeader;

import static io.spraynic.datapath.transport.spray.SendSlots.key;
import static io.spraynic.datapath.transport.spray.MessageKinds.SEND;
import static io.spraynic.datapath.transport.spray.MessageKinds.SEND_IMM;
import static io.spraynic.datapath.transport.spray.MessageKinds.WRITE_IMM;

/**
 * Inbound messages retire in MSN order per stream (docs/PROTOCOL.md S4.8): each stream's next MSN, and the
 * completion of a retiring message's receive (a SEND's, or a WRITE with immediate's) with the status its
 * refusal, if any, calls for. A message done out of order keeps its record until the ones before it retire; one
 * done when its MSN is next and never recorded (complete on its first packet) retires at once. What remembers a
 * retired message is its stream's next MSN having passed it. Allocation-free.
 */
final class InboundRetirement
{
    private static final int MISSING = SendSlots.MISSING;

    private final InboundMessageRecords records;
    private final PlacementMarks marks;
    private final PostedReceives receives;
    private final TransportCounters engineCounters; // a peer's protocol violations
    private final TransportCounters counters;
    private final SprayConnection connection; // a completion queue overrun is the connection's local error
    private final int[] nextMsn;

    InboundRetirement(
        final int streams,
        final InboundMessageRecords records,
        final PlacementMarks marks,
        final PostedReceives receives,
        final TransportCounters counters,
        final TransportCounters engineCounters,
        final SprayConnection connection)
    {
        this.records = records;
        this.marks = marks;
        this.receives = receives;
        this.counters = counters;
        this.engineCounters = engineCounters;
        this.connection = connection;
        nextMsn = new int[streams];
    }

    /** @return the MSN of a stream that retires next: every earlier one has retired. */
    int nextMsn(final int streamId)
    {
        return nextMsn[streamId];
    }

    /** The message next in its stream's order completed without a record: it retires, then any recorded after it. */
    void completeInOrder(
        final int streamId, final byte messageKind, final int rsn, final int receive, final int syndrome,
        final int length, final int immediate)
    {
        completeReceive(streamId, messageKind, rsn, receive, syndrome, length, immediate);
        nextMsn[streamId]++;
        retire(streamId);
    }

    /** Retires the recorded messages of a stream that are done, from its next MSN on, until one is not. */
    void retire(final int streamId)
    {
        while (!records.isEmpty()) // no record: none waits to retire
        {
            final long key = key(streamId, nextMsn[streamId]);
            final int record = records.lookUp(key);
            if (record == MISSING || !records.isDone(record))
            {
                return;
            }
            completeReceive(streamId, records.kind(record), records.rsn(record), records.receive(record),
                records.syndrome(record), records.length(record), records.immediate(record));
            marks.release(record, records.expected(record));
            records.close(key, record);
            nextMsn[streamId]++;
        }
    }

    // S4.8: a message retiring in MSN order completes its receive (a SEND's, or a WRITE with immediate's), with
    // the status its refusal, if any, calls for
    private void completeReceive(
        final int streamId, final byte messageKind, final int rsn, final int receive, final int syndrome,
        final int length, final int immediate)
    {
        if (receive != MISSING && (messageKind == SEND || messageKind == SEND_IMM || messageKind == WRITE_IMM) &&
            !receives.holds(streamId, rsn, receive))
        {
            // a second message of the same RSN: completing it too would free the slot twice (an exception out of
            // the packet path, or a later receive's slot handed to two posts) and complete a wrId twice
            engineCounters.increment(SprayCounters.RECEIVES_CLAIMED_TWICE);
        }
        else if (receive != MISSING && (messageKind == SEND || messageKind == SEND_IMM || messageKind == WRITE_IMM))
        {
            final WorkCompletionStatus status = syndrome == 0 ? WorkCompletionStatus.SUCCESS :
                syndrome == NegativeAckHeader.SYNDROME_REMOTE_INVALID_REQUEST ?
                WorkCompletionStatus.LOC_LEN_ERR : WorkCompletionStatus.LOC_PROT_ERR;
            final boolean imm = messageKind != SEND;
            if (!receives.complete(streamId, rsn, receive, status,
                messageKind == WRITE_IMM ? WorkCompletionOpcode.RECV_RDMA_WITH_IMM : WorkCompletionOpcode.RECV,
                length, imm, imm ? immediate : 0))
            {
                counters.increment(SprayCounters.CQ_OVERRUNS);
                connection.localError();
            }
        }
        counters.increment(SprayCounters.MESSAGES_RECEIVED);
    }
}
