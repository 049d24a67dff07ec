package io.spraynic.datapath.verbs;

/**
 * The verbs face of a reliable connection endpoint, whatever transport carries it (the standard RoCEv2
 * RC engine, later the spray transport): post work requests, learn outcomes from the completion queues.
 * <p>
 * Posting copies the request into a preallocated work queue entry and returns a {@link PostResult};
 * it never allocates or throws. Like {@code ibv_post_send}, posting in the ERROR state is accepted and
 * the request completes with {@link WorkCompletionStatus#WR_FLUSH_ERR}; when the QP went to ERROR because a
 * completion queue overran, posts answer {@link PostResult#COMPLETION_QUEUE_OVERRUN} instead. Posting happens on the thread
 * that drives the transport engine.
 */
public interface QueuePair
{
    /** @return the 24-bit local QP number. */
    int qpNumber();

    /** @return the current state. */
    QueuePairState state();

    /** @return where send queue requests complete. */
    CompletionQueue sendCompletionQueue();

    /** @return where receive queue requests complete. */
    CompletionQueue receiveCompletionQueue();

    /**
     * @param request the request (copied).
     * @return a {@link PostResult}.
     */
    int postSend(SendWorkRequest request);

    /**
     * @param request the request (copied).
     * @return a {@link PostResult}.
     */
    int postReceive(ReceiveWorkRequest request);
}
