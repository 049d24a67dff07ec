package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.api.Connection;
import io.spraynic.datapath.api.ReceiveRequest;
import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.api.DrainReport;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.api.RocevEndpoint;
import io.spraynic.datapath.verbs.PostResult;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

import java.time.Duration;

/**
 * A client's end of one connection of a NIC process, as {@link NicConnection} is an in-process application's:
 * posting copies the request into the connection's shared request ring (the NIC worker that owns the connection
 * reads it there, checks it and posts it), and that worker copies completions into the two shared completion rings.
 * <p>
 * Posting never blocks, allocates or throws: {@link PostResult#QUEUE_FULL} when the ring is full,
 * {@link PostResult#INVALID_ARGUMENT} for a stream the connection does not have, {@link PostResult#INVALID_STATE}
 * once the connection is closing or the NIC stopped. A request the NIC cannot post (an lkey that is not one of
 * this client's regions, a bad opcode) completes with an error status. One thread at a time may post, and one
 * may poll each completion queue.
 */
public final class ClientConnection implements Connection
{
    private final NicClient client;
    private final long id;
    private final NicConnection.Kind kind;
    private final int localId;
    private final int streams;
    private final int plane;
    private final RocevEndpoint endpoint;
    private final ConnectionRings rings;
    private final OneToOneRingBuffer requests;
    private final AtomicBuffer requestBuffer;
    private final ClientCompletionQueue sendCq;
    private final ClientCompletionQueue receiveCq;
    private volatile boolean closing;
    private long postedSends;
    private long postedReceives;

    ClientConnection(final NicClient client, final long id, final NicConnection.Kind kind, final int localId,
        final int streams, final int plane, final RocevEndpoint endpoint, final ConnectionRings rings)
    {
        this.client = client;
        this.id = id;
        this.kind = kind;
        this.localId = localId;
        this.streams = streams;
        this.plane = plane;
        this.endpoint = endpoint;
        this.rings = rings;
        this.requests = rings.requests();
        this.requestBuffer = requests.buffer();
        this.sendCq = new ClientCompletionQueue(rings.sendCompletions());
        this.receiveCq = new ClientCompletionQueue(rings.receiveCompletions());
    }

    /** @return its shared rings (tests play a client that corrupts them). */
    ConnectionRings rings()
    {
        return rings;
    }

    /** @return the NIC's id for it. */
    public long id()
    {
        return id;
    }

    /** @return the transport. */
    public NicConnection.Kind kind()
    {
        return kind;
    }

    /** @return the local connection ID (spray) or QP number (RoCEv2). */
    public int localId()
    {
        return localId;
    }

    /** @return streams (RoCEv2: 1). */
    public int streams()
    {
        return streams;
    }

    /** @return the plane of a RoCEv2 queue pair; 0 for spray. */
    public int plane()
    {
        return plane;
    }

    /** @return where send requests complete. */
    public ClientCompletionQueue sendCompletionQueue()
    {
        return sendCq;
    }

    /** @return where receive requests complete. */
    public ClientCompletionQueue receiveCompletionQueue()
    {
        return receiveCq;
    }

    /**
     * Posts a send request (WRITE, WRITE with immediate, SEND, READ) on a stream.
     *
     * @return a {@link PostResult}.
     */
    public int postSend(final int stream, final SendRequest request)
    {
        if (closing || client.isNicClosed())
        {
            return PostResult.INVALID_STATE;
        }
        if (stream < 0 || stream >= streams)
        {
            return PostResult.INVALID_ARGUMENT;
        }
        final int index = requests.tryClaim(ConnectionRings.SEND_REQUEST, ConnectionRings.WR_LENGTH);
        if (index < 0)
        {
            return PostResult.QUEUE_FULL;
        }
        final AtomicBuffer b = requestBuffer;
        b.putLong(index + ConnectionRings.WR_ID_OFFSET, request.wrId(), IpcMessages.ORDER);
        b.putLong(index + ConnectionRings.WR_LOCAL_ADDRESS_OFFSET, request.localAddress(), IpcMessages.ORDER);
        b.putLong(index + ConnectionRings.WR_REMOTE_ADDRESS_OFFSET, request.remoteAddress(), IpcMessages.ORDER);
        b.putInt(index + ConnectionRings.WR_LKEY_OFFSET, request.lkey(), IpcMessages.ORDER);
        b.putInt(index + ConnectionRings.WR_LENGTH_OFFSET, request.length(), IpcMessages.ORDER);
        b.putInt(index + ConnectionRings.WR_RKEY_OFFSET, request.rkey(), IpcMessages.ORDER);
        b.putInt(index + ConnectionRings.WR_IMMEDIATE_OFFSET, request.immediateData(), IpcMessages.ORDER);
        b.putInt(index + ConnectionRings.WR_STREAM_OFFSET, stream, IpcMessages.ORDER);
        b.putByte(index + ConnectionRings.WR_OPCODE_OFFSET, (byte)request.opcode().code());
        b.putByte(index + ConnectionRings.WR_FLAGS_OFFSET, (byte)((request.signaled() ? ConnectionRings.FLAG_SIGNALED : 0) |
            (request.solicited() ? ConnectionRings.FLAG_SOLICITED : 0)));
        requests.commit(index);
        postedSends++;
        return PostResult.OK;
    }

    /**
     * Posts a receive buffer on a stream.
     *
     * @return a {@link PostResult}.
     */
    public int postReceive(final int stream, final ReceiveRequest request)
    {
        if (closing || client.isNicClosed())
        {
            return PostResult.INVALID_STATE;
        }
        if (stream < 0 || stream >= streams)
        {
            return PostResult.INVALID_ARGUMENT;
        }
        final int index = requests.tryClaim(ConnectionRings.RECEIVE_REQUEST, ConnectionRings.WR_LENGTH);
        if (index < 0)
        {
            return PostResult.QUEUE_FULL;
        }
        final AtomicBuffer b = requestBuffer;
        b.putLong(index + ConnectionRings.WR_ID_OFFSET, request.wrId(), IpcMessages.ORDER);
        b.putLong(index + ConnectionRings.WR_LOCAL_ADDRESS_OFFSET, request.address(), IpcMessages.ORDER);
        b.putLong(index + ConnectionRings.WR_REMOTE_ADDRESS_OFFSET, 0, IpcMessages.ORDER);
        b.putInt(index + ConnectionRings.WR_LKEY_OFFSET, request.lkey(), IpcMessages.ORDER);
        b.putInt(index + ConnectionRings.WR_LENGTH_OFFSET, request.length(), IpcMessages.ORDER);
        b.putInt(index + ConnectionRings.WR_STREAM_OFFSET, stream, IpcMessages.ORDER);
        requests.commit(index);
        postedReceives++;
        return PostResult.OK;
    }

    /** @return send requests posted (posting thread). */
    public long postedSends()
    {
        return postedSends;
    }

    /** @return receive requests posted (posting thread). */
    public long postedReceives()
    {
        return postedReceives;
    }

    /**
     * @return this queue pair's attributes to hand to the peer out of band.
     * @throws IllegalStateException for a spray connection.
     */
    public RocevEndpoint rocevEndpoint()
    {
        if (null == endpoint)
        {
            throw new IllegalStateException("a " + kind + " connection has no ROCEV2 attributes");
        }
        return endpoint;
    }

    /**
     * Connects a RoCEv2 queue pair to its peer's.
     *
     * @param remote  the peer QP's attributes.
     * @param timeout how long the NIC may take.
     */
    public void connect(final RocevEndpoint remote, final Duration timeout)
    {
        rocevEndpoint();
        client.connectQueuePair(this, remote, timeout);
    }

    /**
     * Stops accepting posts, lets the NIC finish what was posted (up to {@code timeout}) and closes the connection.
     * The rings stay mapped until this object is collected, so a thread still polling reads an empty queue
     * rather than freed memory.
     *
     * @return what the NIC found when it closed it.
     */
    public DrainReport.ConnectionDrain close(final Duration timeout)
    {
        closing = true;
        try
        {
            return client.closeConnection(this, timeout);
        }
        finally
        {
            unmap();
        }
    }

    boolean isClosing()
    {
        return closing;
    }

    void unmap()
    {
        closing = true; // no explicit unmap: see close()
    }

    public String toString()
    {
        return "ClientConnection{id=" + id + ", " + kind + ", localId=0x" + Integer.toHexString(localId) + ", streams=" +
            streams + '}';
    }
}
