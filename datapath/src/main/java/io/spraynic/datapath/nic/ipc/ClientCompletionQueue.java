package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.api.CompletionQueue;
import io.spraynic.datapath.verbs.WorkCompletion;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;

/**
 * One completion queue of a {@link ClientConnection}, as the in-process {@code verbs.CompletionQueue}: the NIC process copies the
 * connection's completions into a shared ring and one application thread polls them here into reused
 * {@link WorkCompletion} holders, with no allocation, lock or exception.
 */
public final class ClientCompletionQueue implements CompletionQueue, MessageHandler
{
    private final OneToOneRingBuffer ring;
    private WorkCompletion[] targets;
    private WorkCompletion target;
    private int filled;

    ClientCompletionQueue(final OneToOneRingBuffer ring)
    {
        this.ring = ring;
    }

    /**
     * Takes the oldest completion.
     *
     * @param into filled with it.
     * @return false when there was none.
     */
    public boolean poll(final WorkCompletion into)
    {
        target = into;
        targets = null;
        filled = 0;
        ring.read(this, 1);
        target = null;
        return filled > 0;
    }

    /**
     * Takes up to {@code into.length} completions, as {@code ibv_poll_cq}.
     *
     * @param into holders filled from index 0; none may be null.
     * @return completions taken.
     */
    public int poll(final WorkCompletion[] into)
    {
        targets = into;
        target = null;
        filled = 0;
        ring.read(this, into.length);
        targets = null;
        return filled;
    }

    /** @return true when no completion waits (a snapshot). */
    public boolean isEmpty()
    {
        return ring.size() == 0;
    }

    public void onMessage(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        if (msgTypeId != ConnectionRings.COMPLETION || length < ConnectionRings.WC_LENGTH)
        {
            return; // not a completion: nothing this queue can hand out
        }
        final WorkCompletion into = null != targets ? targets[filled] : target;
        ConnectionRings.readCompletion(buffer, index, into);
        filled++;
    }
}
