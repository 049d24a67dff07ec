package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.verbs.MemoryRegion;

/**
 * The receive queue of one RC queue pair: posted receives in parallel arrays, a ring indexed by ever-growing
 * positions from {@link #head} (the receive the next SEND or WRITE with immediate consumes) to {@link #tail}.
 */
final class RcReceiveQueue extends RcRegionRing
{
    final long[] wrId;
    final long[] offset;
    final int[] length;

    /**
     * @param depth most outstanding receives (rounded up to a power of two).
     */
    RcReceiveQueue(final int depth)
    {
        super(depth);
        wrId = new long[capacity()];
        offset = new long[capacity()];
        length = new int[capacity()];
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
    long consumeHead()
    {
        return wrId[removeHead()];
    }
}
