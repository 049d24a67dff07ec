package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.verbs.MemoryRegion;
import org.agrona.BitUtil;

/**
 * The receive queue of one RC queue pair: posted receives in parallel arrays, a ring indexed by ever-growing
 * positions from {@link #head} (the receive the next SEND or WRITE with immediate consumes) to {@link #tail}.
 */
final class RcReceiveQueue
{
    final int mask;
    final long[] wrId;
    final MemoryRegion[] region;
    final long[] offset;
    final int[] length;

    long head;
    long tail;

    /**
     * @param depth most outstanding receives (rounded up to a power of two).
     */
    RcReceiveQueue(final int depth)
    {
        final int capacity = BitUtil.findNextPositivePowerOfTwo(depth);
        mask = capacity - 1;
        wrId = new long[capacity];
        region = new MemoryRegion[capacity];
        offset = new long[capacity];
        length = new int[capacity];
    }

    /** @return the array index of the head receive. */
    int headIndex()
    {
        return (int)head & mask;
    }

    boolean isEmpty()
    {
        return head == tail;
    }

    boolean isFull()
    {
        return tail - head > mask;
    }

    /** @return receives posted and not consumed. */
    int size()
    {
        return (int)(tail - head);
    }

    /**
     * Appends a receive.
     *
     * @param memory where it places, or null when it has no buffer.
     * @param at     where in {@code memory} it starts.
     */
    void add(final long id, final MemoryRegion memory, final long at, final int bytes)
    {
        final int slot = (int)tail & mask;
        wrId[slot] = id;
        region[slot] = memory;
        offset[slot] = at;
        length[slot] = bytes;
        tail++;
    }

    /**
     * Consumes the head receive, dropping its memory reference.
     *
     * @return its work request id.
     */
    long removeHead()
    {
        final int slot = (int)head & mask;
        region[slot] = null;
        head++;
        return wrId[slot];
    }

    /** @return true when a receive still posted names {@code memory}. */
    boolean uses(final MemoryRegion memory)
    {
        for (long w = head; w != tail; w++)
        {
            if (region[(int)w & mask] == memory)
            {
                return true;
            }
        }
        return false;
    }

    /** Empties the queue without completions, as a move to RESET does. */
    void clear()
    {
        for (int i = 0; i <= mask; i++)
        {
            region[i] = null;
        }
        head = tail = 0;
    }
}
