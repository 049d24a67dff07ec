package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.verbs.MemoryRegion;

/**
 * What the requester and the responder of a queue pair call when it must fail as a whole: its owner
 * ({@link RcQueuePair}) moves it to ERROR and flushes both work queues, which neither half can do alone.
 */
interface RcFailureHandler
{
    /** The queue pair goes to ERROR (a no-op when already there); everything outstanding is flushed. */
    void enterError();

    /**
     * A region the queue pair uses was found deregistered: every operation on it is cut short (see
     * {@link RcEngine#revoke}).
     *
     * @return true when an operation used it.
     */
    boolean revoke(MemoryRegion region);
}
