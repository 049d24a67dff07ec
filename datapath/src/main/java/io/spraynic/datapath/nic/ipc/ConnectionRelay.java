package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

/**
 * One connection a client of an {@link IpcConductor} holds, and its relay: each duty cycle the conductor moves the
 * work requests the client posted in the connection's request ring into the {@link NicConnection}, every field
 * checked first (a request naming memory the client does not hold completes with an error at once), and the
 * connection's completions back out into the client's completion rings. The request ring is read with an
 * {@link UntrustedRingReader}: a ring no honest client writes makes {@link #relay} answer
 * {@link UntrustedRingReader#CORRUPT} and the conductor drops the client. Conductor thread only; no allocation.
 */
final class ConnectionRelay
{
    /** Longest record an honest client puts in a connection's request ring. */
    static final int MAX_REQUEST_LENGTH = 64;
    private static final int REQUESTS_PER_CYCLE = 64;
    private static final int OPCODES = WorkRequestOpcode.values().length;

    final long id;
    final IpcClient client;
    final NicConnection connection;
    final ConnectionRings rings;
    private final UntrustedRingReader requests;
    private final IpcCounters counters;
    private final UntrustedRingReader.Handler requestHandler = this::onRequest;
    private final WorkCompletion sendCompletion = new WorkCompletion();
    private final WorkCompletion receiveCompletion = new WorkCompletion();
    private final WorkCompletion errorCompletion = new WorkCompletion();
    private final SendWorkRequest sendRequest = new SendWorkRequest();
    private final ReceiveWorkRequest receiveRequest = new ReceiveWorkRequest();
    private boolean sendPending;
    private boolean receivePending;

    ConnectionRelay(final long id, final IpcClient client, final NicConnection connection, final ConnectionRings rings,
        final IpcCounters counters)
    {
        this.id = id;
        this.client = client;
        this.connection = connection;
        this.rings = rings;
        this.counters = counters;
        this.requests = new UntrustedRingReader(rings.requests().buffer(), MAX_REQUEST_LENGTH);
    }

    /** @return work done, or {@link UntrustedRingReader#CORRUPT} when the client corrupted its request ring. */
    int relay()
    {
        final int read = requests.read(requestHandler, REQUESTS_PER_CYCLE);
        if (read == UntrustedRingReader.CORRUPT)
        {
            return UntrustedRingReader.CORRUPT;
        }
        return read + relayCompletions(connection.sendCompletionQueue(), rings.sendCompletions(), sendCompletion, true) +
            relayCompletions(connection.receiveCompletionQueue(), rings.receiveCompletions(), receiveCompletion, false);
    }

    /** Relays every request the client posted so far (before its connection closes); a corrupt ring just ends it. */
    void drainRequests()
    {
        requests.read(requestHandler, Integer.MAX_VALUE);
    }

    /** @return what was wrong with the request ring when {@link #relay} answered {@link UntrustedRingReader#CORRUPT}. */
    String corruption()
    {
        return requests.corruption();
    }

    private int relayCompletions(final CompletionQueue cq, final OneToOneRingBuffer ring, final WorkCompletion holder,
        final boolean send)
    {
        int work = 0;
        while ((send ? sendPending : receivePending) || cq.poll(holder))
        {
            if (!ConnectionRings.offerCompletion(ring, holder))
            {
                // the client is slow to poll: keep this one and leave the rest in the NIC's queue
                if (send)
                {
                    sendPending = true;
                }
                else
                {
                    receivePending = true;
                }
                return work;
            }
            if (send)
            {
                sendPending = false;
            }
            else
            {
                receivePending = false;
            }
            counters.completionsRelayed.incrementRelease();
            work++;
        }
        return work;
    }

    /** One request record, copied out of the client's ring: every field is checked before it reaches the NIC. */
    private boolean onRequest(final int type, final MutableDirectBuffer buffer, final int length)
    {
        if (length < ConnectionRings.WR_LENGTH || (type != ConnectionRings.SEND_REQUEST &&
            type != ConnectionRings.RECEIVE_REQUEST))
        {
            counters.requestsRefused.incrementRelease();
            return true; // not a request: nothing to complete it with
        }
        final long wrId = buffer.getLong(ConnectionRings.WR_ID_OFFSET, IpcMessages.ORDER);
        final int lkey = buffer.getInt(ConnectionRings.WR_LKEY_OFFSET, IpcMessages.ORDER);
        final long localAddress = buffer.getLong(ConnectionRings.WR_LOCAL_ADDRESS_OFFSET, IpcMessages.ORDER);
        final int bytes = buffer.getInt(ConnectionRings.WR_LENGTH_OFFSET, IpcMessages.ORDER);
        final int stream = buffer.getInt(ConnectionRings.WR_STREAM_OFFSET, IpcMessages.ORDER);
        // a client names only its own regions: another client's lkey is as unknown as a made-up one
        final MemoryRegion region = 0 == lkey ? null : client.regionsByLkey.get(lkey);
        final boolean send = type == ConnectionRings.SEND_REQUEST;
        final int opcode = send ? buffer.getByte(ConnectionRings.WR_OPCODE_OFFSET) : 0;
        final boolean opcodeValid = opcode >= 0 && opcode < OPCODES;
        final WorkCompletionOpcode completionOpcode = !send ? WorkCompletionOpcode.RECV :
            opcodeValid ? WorkRequestOpcode.of(opcode).completionOpcode() : WorkCompletionOpcode.SEND;
        if (bytes < 0)
        {
            return refuse(send, wrId, completionOpcode, WorkCompletionStatus.LOC_LEN_ERR);
        }
        // the engines check bounds too; checking here keeps a client's mistake from reaching a worker at all
        if ((0 != lkey && null == region) || (null == region && bytes != 0) ||
            (null != region && !region.contains(localAddress, bytes)))
        {
            return refuse(send, wrId, completionOpcode, WorkCompletionStatus.LOC_PROT_ERR);
        }
        if (send && !opcodeValid)
        {
            return refuse(true, wrId, completionOpcode, WorkCompletionStatus.LOC_QP_OP_ERR);
        }
        final int result;
        if (send)
        {
            result = connection.postSend(stream,
                ConnectionRings.readSendRequest(buffer, 0, WorkRequestOpcode.of(opcode), region, sendRequest));
        }
        else
        {
            receiveRequest.reset().wrId(wrId).buffer(region, localAddress, bytes);
            result = connection.postReceive(stream, receiveRequest);
        }
        return switch (result)
        {
            case PostResult.OK ->
            {
                counters.requestsRelayed.incrementRelease();
                yield true;
            }
            case PostResult.QUEUE_FULL -> false; // stays in the ring: retried next cycle
            case PostResult.INVALID_ARGUMENT -> refuse(send, wrId, completionOpcode, WorkCompletionStatus.LOC_QP_OP_ERR);
            default -> refuse(send, wrId, completionOpcode, WorkCompletionStatus.WR_FLUSH_ERR);
        };
    }

    /** Completes a request the NIC cannot post with an error, straight into the client's completion ring. */
    private boolean refuse(final boolean send, final long wrId, final WorkCompletionOpcode opcode,
        final WorkCompletionStatus status)
    {
        errorCompletion.set(wrId, status, opcode, 0, false, 0, connection.localId());
        final OneToOneRingBuffer ring = send ? rings.sendCompletions() : rings.receiveCompletions();
        if ((send ? sendPending : receivePending) || !ConnectionRings.offerCompletion(ring, errorCompletion))
        {
            return false; // no room for the error yet: try the request again later
        }
        counters.requestsRefused.incrementRelease();
        return true;
    }
}
