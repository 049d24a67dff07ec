package io.spraynic.datapath.nic;

import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.WorkRequestOpcode;

/**
 * Where the worker that owns a connection takes the work requests its application posted, one at a time, as a NIC
 * reads its doorbell-rung work queue: the in-process {@link WorkRequestRing}, or the request ring in shared memory
 * that a client in another process writes (the NIC's IPC server side), which the worker reads in place, with no
 * relay in between. The worker {@link #peek peeks} the oldest request, reads it with the accessors, checks every
 * field (lkey, bounds, stream, opcode) before the transport sees it, and {@link #advance advances} once the
 * transport took or refused it. Worker thread only; nothing here allocates, locks or throws.
 */
public interface WorkRequestSource
{
    /** A send request (WRITE, WRITE with immediate, SEND, READ). */
    byte SEND = 1;
    /** A receive buffer. */
    byte RECEIVE = 2;
    /** A record that is no work request (an unknown type, too short): the source counted it; the worker skips it. */
    byte MALFORMED = 3;

    /** Refusal reason: the lkey names no region of the connection's protection domain. */
    int REFUSED_LKEY = 0;
    /** Refusal reason: the local memory is not all inside the lkey's region (or no region and a length). */
    int REFUSED_OUT_OF_REGION = 1;
    /** Refusal reason: a negative length. */
    int REFUSED_LENGTH = 2;
    /** Refusal reason: an opcode or flags no request has. */
    int REFUSED_OPCODE = 3;
    /** Refusal reason: a stream the connection does not have. */
    int REFUSED_STREAM = 4;
    /** Refusal reason: the transport refused it (closing, completion queue overrun, too long). */
    int REFUSED_BY_TRANSPORT = 5;
    /** Refusal reasons. */
    int REFUSAL_REASONS = 6;

    /**
     * Makes the oldest request current without taking it.
     *
     * @return {@link #SEND}, {@link #RECEIVE}, {@link #MALFORMED}, or 0 when none waits.
     */
    byte peek();

    /** Takes the current request: the transport took or refused it. */
    void advance();

    /** @return requests waiting, roughly (any thread; for drain reports). */
    int size();

    /** @return the current request's stream (unchecked). */
    int stream();

    /** @return the current request's wrId. */
    long wrId();

    /** @return the current request's local key (0: no local memory; unchecked). */
    int lkey();

    /** @return the current request's local address (unchecked). */
    long localAddress();

    /** @return the current request's length (unchecked). */
    int length();

    /** @return the current send request's opcode, or null when its opcode or flags are none a request has. */
    WorkRequestOpcode opcode();

    /** @return the current send request's remote address. */
    long remoteAddress();

    /** @return the current send request's rkey. */
    int rkey();

    /** @return the current send request's immediate data. */
    int immediateData();

    /** @return whether the current send request asks for a completion. */
    boolean signaled();

    /** @return whether the current send request is solicited. */
    boolean solicited();

    /**
     * The worker refused the current request (it completes with an error): counted where its poster can read why.
     *
     * @param reason one of the {@code REFUSED_*} reasons.
     */
    default void refused(final int reason)
    {
    }

    /**
     * Each loop, after the tick: moves the connection's completions to where its poster takes them, when that is not
     * the completion queues themselves (another process's completion rings).
     *
     * @return completions moved.
     */
    default int relayCompletions(final CompletionQueue sends, final CompletionQueue receives)
    {
        return 0;
    }
}
