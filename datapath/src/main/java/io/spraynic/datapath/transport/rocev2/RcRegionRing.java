package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.verbs.MemoryRegion;
import org.agrona.BitUtil;

/**
 * What the rings of an RC queue pair share: a power-of-two capacity indexed by ever-growing positions from
 * {@link #head} (the oldest entry) to {@link #tail} (where the next goes), each entry naming the memory region it
 * reads or places into. An entry drops its region when it leaves, so that deregistering a region can ask whether
 * any entry still names it. A subclass keeps the rest of each entry in parallel arrays of {@link #capacity()}.
 */
abstract class RcRegionRing
{
    final int mask;
    final MemoryRegion[] region;

    long head;
    long tail;

    /**
     * @param depth most entries (rounded up to a power of two).
     */
    RcRegionRing(final int depth)
    {
        final int capacity = BitUtil.findNextPositivePowerOfTwo(depth);
        mask = capacity - 1;
        region = new MemoryRegion[capacity];
    }

    /** @return how many entries it holds at most. */
    final int capacity()
    {
        return mask + 1;
    }

    /** @return the array index of a position. */
    final int index(final long position)
    {
        return (int)position & mask;
    }

    /** @return the array index of the head entry. */
    final int headIndex()
    {
        return (int)head & mask;
    }

    final boolean isEmpty()
    {
        return head == tail;
    }

    final boolean isFull()
    {
        return tail - head > mask;
    }

    /** @return entries between head and tail. */
    final int size()
    {
        return (int)(tail - head);
    }

    /**
     * Drops the head entry and its memory reference.
     *
     * @return the array index it had (its other fields stay readable until the slot is reused).
     */
    final int removeHead()
    {
        final int slot = (int)head & mask;
        region[slot] = null;
        head++;
        return slot;
    }

    /** @return the position of the oldest entry that names {@code memory}, or -1. */
    final long positionOf(final MemoryRegion memory)
    {
        for (long at = head; at != tail; at++)
        {
            if (region[(int)at & mask] == memory)
            {
                return at;
            }
        }
        return -1;
    }

    /** @return true when an entry still held names {@code memory}. */
    final boolean uses(final MemoryRegion memory)
    {
        return positionOf(memory) >= 0;
    }

    /** Empties the ring without completions and restarts the positions, as a move to RESET does. */
    void clear()
    {
        for (int i = 0; i <= mask; i++)
        {
            region[i] = null;
        }
        head = tail = 0;
    }
}
