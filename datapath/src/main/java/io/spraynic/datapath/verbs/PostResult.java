package io.spraynic.datapath.verbs;

/**
 * What {@link QueuePair#postSend} and {@link QueuePair#postReceive} return: 0 or the errno that
 * {@code ibv_post_send}/{@code ibv_post_recv} would, so callers port over unchanged. Posting never throws:
 * it is on the application's fast path.
 */
public final class PostResult
{
    /** Posted. */
    public static final int OK = 0;
    /** ENOMEM: the work queue is full. */
    public static final int QUEUE_FULL = 12;
    /** EINVAL: a bad field: opcode, length beyond 2^31, a local buffer outside the region named. */
    public static final int INVALID_ARGUMENT = 22;
    /** EINVAL as well in ibverbs; kept apart here: the QP's state does not accept this queue's requests. */
    public static final int INVALID_STATE = 1022;
    /**
     * The QP is in the error state because one of its completion queues overran: the request could not even be
     * flushed (ibverbs reports {@code IBV_EVENT_CQ_ERR}); destroy the QP and size its queues for its depths.
     */
    public static final int COMPLETION_QUEUE_OVERRUN = 1023;

    private PostResult()
    {
    }

    /**
     * @param result a post result.
     * @return its name.
     */
    public static String name(final int result)
    {
        return switch (result)
        {
            case OK -> "OK";
            case QUEUE_FULL -> "QUEUE_FULL";
            case INVALID_ARGUMENT -> "INVALID_ARGUMENT";
            case INVALID_STATE -> "INVALID_STATE";
            case COMPLETION_QUEUE_OVERRUN -> "COMPLETION_QUEUE_OVERRUN";
            default -> "UNKNOWN_" + result;
        };
    }
}
