package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.Connection;
import io.spraynic.datapath.api.DrainReport;
import io.spraynic.datapath.api.ReceiveRequest;
import io.spraynic.datapath.api.RocevEndpoint;
import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.telemetry.CounterMirror;
import io.spraynic.datapath.telemetry.SprayGauges;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveRequestFields;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendRequestFields;
import io.spraynic.datapath.verbs.SendWorkRequest;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An application's end of one connection of an {@link EmbeddedNic}: a spray connection (many streams, many
 * paths) or a RoCEv2 RC queue pair (one stream, one path), each behind this one class (the transport's half lives
 * in a subclass of its own, {@code SprayNicConnection} or {@code RocevNicConnection}). It lives on one worker; the
 * application posts from its own thread into the connection's {@link WorkRequestRing} (as ringing a NIC doorbell)
 * and polls the connection's own completion queues, so the two threads share only those two rings.
 * <p>
 * Posting never blocks, allocates or throws: {@link PostResult#QUEUE_FULL} when the ring (and behind it
 * the transport's send queue) is full, {@link PostResult#INVALID_ARGUMENT} for a stream the connection does
 * not have, {@link PostResult#INVALID_STATE} once the connection or the NIC is closing, or the peer closed it. A request the
 * transport refuses later (an unknown lkey, a request that is too long) completes with an error status. One
 * thread at a time may post to a connection, and one may poll each of its completion queues.
 * <p>
 * The ring and the two queues hold no slots until they are first used, then grow by doubling, only when full, up to
 * {@link EmbeddedNicConfig#queues the capacities the NIC was given} ({@link WorkRequestRing#growing},
 * {@link CompletionQueue#growing}): what the connection holds follows what it has had outstanding at once, not the
 * most it may have, and the limits, back-pressure and overruns are those of the capacities as before. They give their
 * slots back once they have been idle for {@link EmbeddedNicConfig#queuesIdle} ({@link #trimQueues}, which the worker calls for
 * one connection a loop), so an idle connection holds none again after a burst.
 */
public abstract sealed class NicConnection implements Connection permits SprayNicConnection, RocevNicConnection
{
    final EmbeddedNic nic;
    private final Kind kind;
    private final int worker;
    private final WorkRequestRing ring;
    /** Where the worker takes posted requests from: {@link #ring}, or a client process's request ring (worker thread). */
    WorkRequestSource requests;
    private final CompletionQueue sendCq;
    private final CompletionQueue receiveCq;
    private volatile boolean closing;
    // set by the worker when the transport closed the connection on its own (the peer closed it, idle, error)
    private volatile boolean transportGone;
    private final AtomicBoolean released = new AtomicBoolean();
    /** A peer opened it: it counts against {@link EmbeddedNicConfig#maxAcceptedConnections} until released. */
    boolean accepted;
    /**
     * This NIC opened it: it counts against {@link EmbeddedNicConfig#maxOpenedConnections} until released, or until its
     * connect gave up (cleared then by the control thread; a handshake that completes later reads it on the worker).
     */
    volatile boolean opened;
    // written by the posting thread, read by whoever reports a drain
    private volatile long postedSends;
    private volatile long postedReceives;

    // owned by the worker thread once attached; published to the application by the command's completion
    /** Per plane, the address whose MAC this connection's frames go to (the peer, or the gateway). */
    NextHops nextHop = NextHops.none(0);
    /** Whether worker 0 follows {@link #nextHop}'s entries for it (guarded by this; {@link NicNeighbours#use}). */
    boolean followsNextHops;
    /** The planes whose next hop worker 0's table counts this connection as following (worker 0's thread only). */
    long followedPlanes;
    int localId;
    int streams = 1;
    ProtectionDomain protectionDomain; // null: the worker's default domain (0)
    CounterMirror[] mirrors = new CounterMirror[0];
    SprayGauges gauges;

    NicConnection(final EmbeddedNic nic, final Kind kind, final int worker, final int ringCapacity, final int cqCapacity)
    {
        this.nic = nic;
        this.kind = kind;
        this.worker = worker;
        // made as they fill, up to the configured capacities: an idle connection's handle holds no slots (issue 13)
        this.ring = WorkRequestRing.growing(ringCapacity);
        this.requests = ring;
        this.sendCq = CompletionQueue.growing(cqCapacity);
        this.receiveCq = CompletionQueue.growing(cqCapacity);
    }

    /** @return the transport. */
    public Kind kind()
    {
        return kind;
    }

    /** @return the worker that owns it. */
    public int worker()
    {
        return worker;
    }

    /** @return the local connection ID (spray) or QP number (RoCEv2), as packets to it carry in DestQP. */
    public int localId()
    {
        return localId;
    }

    /** @return streams (spray: as negotiated; RoCEv2: 1). */
    public int streams()
    {
        return streams;
    }

    /** @return the plane (port) of a RoCEv2 queue pair; 0 for spray, which uses every plane. */
    public int plane()
    {
        return 0;
    }

    /** @return where send requests complete. */
    public CompletionQueue sendCompletionQueue()
    {
        return sendCq;
    }

    /** @return where receive requests complete. */
    public CompletionQueue receiveCompletionQueue()
    {
        return receiveCq;
    }

    /**
     * Posts an application's send request (WRITE, WRITE with immediate, SEND, READ) on a stream; its local memory
     * is named by lkey, which the worker resolves in the connection's protection domain.
     *
     * @param stream  0..streams-1 (RoCEv2: 0).
     * @param request copied.
     * @return a {@link PostResult}.
     */
    public int postSend(final int stream, final SendRequest request)
    {
        return offerSend(stream, request);
    }

    /**
     * Posts a send request whose local region is already resolved (the NIC's own callers, e.g. the IPC conductor
     * relaying a client's request).
     *
     * @param stream  0..streams-1 (RoCEv2: 0).
     * @param request copied; its local region must be one of the NIC's ({@link EmbeddedNic#register}).
     * @return a {@link PostResult}.
     */
    public int postSend(final int stream, final SendWorkRequest request)
    {
        return offerSend(stream, request);
    }

    private int offerSend(final int stream, final SendRequestFields<?> request)
    {
        final int refusal = checkPost(stream, sendCq);
        if (PostResult.OK != refusal)
        {
            return refusal;
        }
        return ring.offerSend(stream, request) ? sent() : PostResult.QUEUE_FULL;
    }

    /**
     * Posts a receive buffer, named by lkey, on a stream.
     *
     * @param stream  0..streams-1 (RoCEv2: 0).
     * @param request copied.
     * @return a {@link PostResult}.
     */
    public int postReceive(final int stream, final ReceiveRequest request)
    {
        return offerReceive(stream, request);
    }

    /**
     * Posts a receive buffer whose region is already resolved (the NIC's own callers).
     *
     * @param stream  0..streams-1 (RoCEv2: 0).
     * @param request copied.
     * @return a {@link PostResult}.
     */
    public int postReceive(final int stream, final ReceiveWorkRequest request)
    {
        return offerReceive(stream, request);
    }

    private int offerReceive(final int stream, final ReceiveRequestFields<?> request)
    {
        final int refusal = checkPost(stream, receiveCq);
        if (PostResult.OK != refusal)
        {
            return refusal;
        }
        return ring.offerReceive(stream, request) ? received() : PostResult.QUEUE_FULL;
    }

    private int checkPost(final int stream, final CompletionQueue cq)
    {
        if (closing || transportGone || nic.isClosing())
        {
            return PostResult.INVALID_STATE;
        }
        if (stream < 0 || stream >= streams)
        {
            return PostResult.INVALID_ARGUMENT;
        }
        if (cq.hasOverrun())
        {
            return PostResult.COMPLETION_QUEUE_OVERRUN; // the connection went to error when its queue overran
        }
        return PostResult.OK;
    }

    private int sent()
    {
        postedSends = postedSends + 1; // one posting thread: no lost update
        return PostResult.OK;
    }

    private int received()
    {
        postedReceives = postedReceives + 1;
        return PostResult.OK;
    }

    /** @return send requests this connection accepted from the application. */
    public long postedSends()
    {
        return postedSends;
    }

    /** @return receive requests this connection accepted from the application. */
    public long postedReceives()
    {
        return postedReceives;
    }

    /**
     * The local half of a RoCEv2 queue pair's connection attributes, to hand to the peer out of band (as an
     * application does with ibverbs, e.g. over TCP).
     *
     * @return this QP's number, first PSN, address and MTU.
     * @throws IllegalStateException for a spray connection, which the NICs connect on the wire.
     */
    public RocevEndpoint rocevEndpoint()
    {
        throw new IllegalStateException("a " + kind + " connection has no ROCEV2 attributes: the NICs connect it on the wire");
    }

    /**
     * Connects a RoCEv2 queue pair to its peer's (INIT to RTR to RTS, on the worker).
     *
     * @param remote  the peer QP's attributes, from its {@link #rocevEndpoint()}.
     * @param timeout how long to wait for the worker.
     * @throws IllegalStateException for a spray connection.
     */
    public void connect(final RocevEndpoint remote, final Duration timeout)
    {
        rocevEndpoint();
    }

    /**
     * Stops accepting posts, waits (up to {@code timeout}) for the worker to finish what was posted, then
     * forgets the connection.
     *
     * @return what was still in flight when it was forgotten.
     */
    public DrainReport.ConnectionDrain close(final Duration timeout)
    {
        closing = true;
        return nic.closeConnection(this, timeout);
    }

    /** Hands a request taken from the ring to the transport (worker thread). @return a {@link PostResult}. */
    abstract int transportPostSend(int stream, SendWorkRequest request);

    /** Hands a receive taken from the ring to the transport (worker thread). @return a {@link PostResult}. */
    abstract int transportPostReceive(int stream, ReceiveWorkRequest request);

    /** @return true when the transport has nothing of this connection's in flight (worker thread). */
    abstract boolean isTransportIdle();

    /** The next hop on {@code plane} got a (new) MAC: send there (worker thread). */
    abstract void nextHopMac(int plane, long mac);

    /** A completion queue of this connection refused a completion (worker thread). */
    abstract void onCompletionQueueOverrun();

    /** Binds the transport's half to a tenant's protection domain (worker thread). */
    abstract void bindProtectionDomain(ProtectionDomain domain);

    /** Forgets the transport's half, after its worker stopped taking its work requests (worker thread). */
    abstract void destroy(WorkerTransport transport);

    boolean isClosing()
    {
        return closing;
    }

    /** @return true when the transport closed the connection itself: the peer closed it, it idled out or failed (worker thread). */
    abstract boolean isTransportClosed();

    /**
     * The transport closed the connection on its own: posts are refused from now on (worker thread).
     *
     * @return true the first time.
     */
    boolean transportGone()
    {
        final boolean first = !transportGone;
        transportGone = true;
        return first;
    }

    /** @return true once, for whoever frees the connection's counters and forgets it (either thread). */
    boolean releaseOnce()
    {
        return released.compareAndSet(false, true);
    }

    /** @return whether the NIC forgot it. */
    boolean isReleased()
    {
        return released.get();
    }

    WorkRequestRing ring()
    {
        return ring;
    }

    /**
     * Worker thread (the ring's consumer, the queues' producer): gives back the slots of the ring and the queues that
     * have been empty, with nothing posted or completed, for {@code idleNanos} ({@link EmbeddedNicConfig#queuesIdle}).
     *
     * @return how many of the three gave their slots back now.
     */
    int trimQueues(final long now, final long idleNanos)
    {
        return (ring.trimIfIdle(now, idleNanos) ? 1 : 0) + (sendCq.trimIfIdle(now, idleNanos) ? 1 : 0) +
            (receiveCq.trimIfIdle(now, idleNanos) ? 1 : 0);
    }

    /**
     * Worker thread: a request reached the transport. Requests posted in process were counted when posted; those of
     * another process (read from its request ring by the worker, the one writer then) are counted here.
     */
    void countTaken(final boolean send)
    {
        if (requests != ring)
        {
            if (send)
            {
                postedSends = postedSends + 1;
            }
            else
            {
                postedReceives = postedReceives + 1;
            }
        }
    }

    public String toString()
    {
        return "NicConnection{" + kind + ", worker=" + worker + ", id=0x" + Integer.toHexString(localId) +
            ", streams=" + streams + '}';
    }
}
