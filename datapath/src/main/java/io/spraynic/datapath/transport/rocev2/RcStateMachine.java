package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.QueuePairState;
import io.spraynic.datapath.verbs.WorkCompletionStatus;

/**
 * The state of one RC queue pair and what each state allows (InfiniBand Vol 1, 10.3.1; the transitions are
 * {@link QueuePairState#canTransitionTo}'s):
 * <pre>
 *   state  post send          post receive      inbound packets   requester  responder, ACKs  timers
 *   RESET  refused            refused           dropped           -          -                -
 *   INIT   refused            queued            dropped           -          -                -
 *   RTR    refused            queued            processed         -          runs             -
 *   RTS    queued             queued            processed         runs       runs             run
 *   SQD    queued, not begun  queued            processed         finishes   runs             run
 *   ERROR  flushed at once    flushed at once   dropped           -          -                -
 * </pre>
 * SQE is UC/UD's: an RC queue pair never enters it. Entering ERROR flushes both work queues (the owner does it,
 * see {@link RcQueuePair}); what was flushed completes with {@link #flushStatus}.
 */
final class RcStateMachine
{
    private QueuePairState state = QueuePairState.RESET;

    QueuePairState state()
    {
        return state;
    }

    /**
     * @param target the state asked for.
     * @throws IllegalStateException when {@code ibv_modify_qp} would refuse the move (control path).
     */
    void checkTransitionTo(final QueuePairState target)
    {
        state.checkTransitionTo(target);
    }

    /** Moves to a state {@link #checkTransitionTo} accepted. */
    void moveTo(final QueuePairState target)
    {
        state = target;
    }

    /**
     * Enters ERROR, from any state.
     *
     * @return false when already there: nothing is left to flush.
     */
    boolean enterError()
    {
        if (state == QueuePairState.ERROR)
        {
            return false;
        }
        state = QueuePairState.ERROR;
        return true;
    }

    boolean isError()
    {
        return state == QueuePairState.ERROR;
    }

    /** @return true when nothing runs yet (RESET, INIT): no timer, no transmission. */
    boolean isIdle()
    {
        return state == QueuePairState.RESET || state == QueuePairState.INIT;
    }

    /** @return true when a send work request may be posted (queued, or flushed at once in ERROR). */
    boolean acceptsSendPosts()
    {
        return state == QueuePairState.RTS || state == QueuePairState.SQD || state == QueuePairState.ERROR;
    }

    /** @return true when a receive work request may be posted (queued, or flushed at once in ERROR). */
    boolean acceptsReceivePosts()
    {
        return state != QueuePairState.RESET;
    }

    /** @return true when the requester runs: it transmits, and takes ACKs and READ responses. */
    boolean requesterRuns()
    {
        return state == QueuePairState.RTS || state == QueuePairState.SQD;
    }

    /** @return true when no new request may begin: those under way finish. */
    boolean isDraining()
    {
        return state == QueuePairState.SQD;
    }

    /** @return true when inbound packets are processed. */
    boolean receives()
    {
        return state.canReceive();
    }

    /**
     * @param region  a flushed work request's memory, or null.
     * @param revoked the region whose deregistration is failing the queue pair, or null.
     * @return LOC_PROT_ERR when the request's memory is gone, else WR_FLUSH_ERR.
     */
    static WorkCompletionStatus flushStatus(final MemoryRegion region, final MemoryRegion revoked)
    {
        return null != region && (region == revoked || !region.isRegistered()) ?
            WorkCompletionStatus.LOC_PROT_ERR : WorkCompletionStatus.WR_FLUSH_ERR;
    }

    public String toString()
    {
        return state.toString();
    }
}
