package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.api.CompletionQueue;
import io.spraynic.datapath.verbs.WorkCompletion;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

/**
 * One completion queue of a {@link ClientConnection}, as the in-process {@code verbs.CompletionQueue}: the NIC process copies the
 * connection's completions into a shared ring and one application thread polls them here into reused
 * {@link WorkCompletion} holders, with no allocation, lock or exception.
 * <p>
 * The NIC writes the ring, so nothing in it is believed (docs/IPC.md I10.8): each record is checked against the ring and
 * copied out before it is read, the head is this queue's own, and a ring holding what no NIC of this version writes
 * breaks the queue for good ({@link #failure()}) instead of throwing out of {@code poll} or handing a record out twice.
 */
public final class ClientCompletionQueue implements CompletionQueue
{
    /** The longest record body a NIC writes into a completion ring (docs/IPC.md I10.8). */
    static final int MAX_RECORD_BODY = 64;
    /** Records not completions (no NIC of this version writes one) a poll removes beyond what it hands out. */
    static final int MAX_SKIPPED_PER_POLL = 16;

    private final UntrustedRingReader ring;
    private final UntrustedRingReader.Handler handler = this::onRecord;
    private WorkCompletion[] targets;
    private WorkCompletion target;
    private int filled;
    private String failure;

    ClientCompletionQueue(final OneToOneRingBuffer ring)
    {
        this.ring = new UntrustedRingReader(ring.buffer(), MAX_RECORD_BODY);
    }

    /**
     * Takes the oldest completion.
     *
     * @param into filled with it.
     * @return false when there was none (or the queue is broken: {@link #failure()}).
     */
    public boolean poll(final WorkCompletion into)
    {
        target = into;
        targets = null;
        filled = 0;
        read(1);
        target = null;
        return filled > 0;
    }

    /**
     * Takes up to {@code into.length} completions, as {@code ibv_poll_cq}.
     *
     * @param into holders filled from index 0; none may be null.
     * @return completions taken (none once the queue is broken: {@link #failure()}).
     */
    public int poll(final WorkCompletion[] into)
    {
        targets = into;
        target = null;
        filled = 0;
        read(into.length);
        targets = null;
        return filled;
    }

    /**
     * @return true when no completion waits (a snapshot; always once the queue is broken). The polling thread's, as
     * {@code poll}: it checks the next record and may take padding out of the ring.
     */
    public boolean isEmpty()
    {
        return null != failure || peek() <= 0;
    }

    /**
     * @return null while the queue works; once the NIC wrote into its ring what no NIC of this version writes, why
     * (the queue then hands out nothing more: the connection's completions are lost, and it should be closed).
     */
    public String failure()
    {
        return failure;
    }

    private boolean onRecord(final int type, final MutableDirectBuffer record, final int length)
    {
        if (filled == (null != targets ? targets.length : 1))
        {
            return false; // a record skipped on the way took no holder: this one waits for the next poll
        }
        if (type == ConnectionRings.COMPLETION && length >= ConnectionRings.WC_LENGTH)
        {
            ConnectionRings.readCompletion(record, 0, null != targets ? targets[filled] : target);
            filled++;
        }
        return true; // anything else is not a completion: nothing this queue can hand out, removed
    }

    private void read(final int limit)
    {
        // records that are not completions are skipped, a few of them per poll: the handler stops at the limit
        if (null == failure && ring.read(handler, limit + MAX_SKIPPED_PER_POLL) == UntrustedRingReader.CORRUPT)
        {
            failure = ring.corruption();
        }
    }

    private int peek()
    {
        final int type = ring.peek();
        if (type == UntrustedRingReader.CORRUPT)
        {
            failure = ring.corruption();
        }
        return type;
    }
}
