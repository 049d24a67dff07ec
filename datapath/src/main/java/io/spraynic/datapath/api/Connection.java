package io.spraynic.datapath.api;

import io.spraynic.datapath.verbs.PostResult;

import java.time.Duration;

/**
 * An application's end of one connection of a {@link Nic}: a spray connection (many streams, many paths) or a
 * RoCEv2 RC queue pair (one stream, one path), whichever the NIC runs, in the NIC's process or in another.
 * <p>
 * Posting copies the request and never blocks, allocates or throws: {@link PostResult#QUEUE_FULL} when the
 * connection's request queue is full, {@link PostResult#INVALID_ARGUMENT} for a stream it does not have,
 * {@link PostResult#INVALID_STATE} once it or its NIC is closing. A request the NIC refuses later (an lkey that
 * names none of this application's regions, a buffer outside its region, a bad opcode) completes with an error
 * status. One thread at a time may post, and one may poll each completion queue.
 * <p>
 * Where the placements still differ: an lkey that names nothing is refused before the transport in both
 * ({@code LOC_PROT_ERR}); a buffer outside its region is refused so across processes too, while in process the
 * transport meets it ({@code LOC_PROT_ERR} or {@code LOC_QP_OP_ERR}) and a RoCEv2 queue pair then goes to the error
 * state, as in ibverbs, flushing what follows.
 */
public interface Connection
{
    /** Which transport carries a connection. */
    enum Kind
    {
        SPRAY, ROCEV2
    }

    /** @return the transport that carries it. */
    Kind kind();

    /** @return the local connection ID (spray) or QP number (RoCEv2), as packets to it carry in DestQP. */
    int localId();

    /** @return streams (spray: as negotiated; RoCEv2: 1). */
    int streams();

    /** @return the plane of a RoCEv2 queue pair; 0 for spray, which uses every plane. */
    int plane();

    /**
     * Posts a send request (WRITE, WRITE with immediate, SEND, READ) on a stream.
     *
     * @param stream  0..streams-1 (RoCEv2: 0).
     * @param request copied.
     * @return a {@link PostResult}.
     */
    int postSend(int stream, SendRequest request);

    /**
     * Posts a receive buffer on a stream.
     *
     * @param stream  0..streams-1 (RoCEv2: 0).
     * @param request copied.
     * @return a {@link PostResult}.
     */
    int postReceive(int stream, ReceiveRequest request);

    /** @return where send requests complete. */
    CompletionQueue sendCompletionQueue();

    /** @return where receive requests complete. */
    CompletionQueue receiveCompletionQueue();

    /** @return send requests accepted from the application. */
    long postedSends();

    /** @return receive requests accepted from the application. */
    long postedReceives();

    /**
     * The local half of a RoCEv2 queue pair's connection attributes, to hand to the peer out of band (as an
     * ibverbs application does, e.g. over TCP).
     *
     * @return this QP's number, first PSN, address and MTU.
     * @throws IllegalStateException for a spray connection, which the NICs connect on the wire.
     */
    RocevEndpoint rocevEndpoint();

    /**
     * Connects a RoCEv2 queue pair to its peer's (INIT to RTR to RTS).
     *
     * @param remote  the peer QP's attributes, from its {@link #rocevEndpoint()}.
     * @param timeout how long the NIC may take.
     * @throws IllegalStateException for a spray connection.
     */
    void connect(RocevEndpoint remote, Duration timeout);

    /**
     * Stops accepting posts, lets the NIC finish what was posted (up to {@code timeout}) and closes the connection.
     *
     * @return what was still in flight when it was closed.
     */
    DrainReport.ConnectionDrain close(Duration timeout);
}
