package io.spraynic.datapath.fabric;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Every frame inside a fabric: fixed-size slots in one off-heap segment, named by slot index.
 * <p>
 * A frame is copied only at the fabric's edges (into a slot when a host sends, out of it when the
 * receiving endpoint reads it during its callback). In between it moves from queue to queue as an
 * {@code int}: each slot has a {@link #next} link, so a queue is just a head and a tail index and
 * holding a frame costs a queue nothing (a slot is in at most one queue or event at a time). Free
 * slots form a stack, so allocation and release are O(1) and allocate nothing.
 * <p>
 * Not thread-safe: the fabric's thread owns it. The memory comes from a shared arena so that the thread
 * closing the fabric need not be the one that ran it.
 */
public final class FramePool implements AutoCloseable
{
    /** The index meaning "no slot": end of a queue, or nothing free. */
    public static final int NONE = -1;

    private final Arena arena;
    private final MemorySegment memory;
    private final int slotBytes;
    private final int capacity;
    private final int[] lengths;
    private final int[] nextSlots;
    private final int[] freeStack;
    private int freeCount;

    /**
     * @param capacity  number of slots.
     * @param slotBytes bytes per slot: the largest frame the fabric carries.
     */
    public FramePool(final int capacity, final int slotBytes)
    {
        if (capacity < 1)
        {
            throw new IllegalArgumentException("frame pool capacity " + capacity + " must be at least 1");
        }
        if (slotBytes < 64)
        {
            throw new IllegalArgumentException("frame slot size " + slotBytes + " B must be at least 64 B");
        }
        this.capacity = capacity;
        this.slotBytes = slotBytes;
        this.arena = Arena.ofShared();
        this.memory = arena.allocate((long)capacity * slotBytes, 64);
        this.lengths = new int[capacity];
        this.nextSlots = new int[capacity];
        this.freeStack = new int[capacity];
        for (int i = 0; i < capacity; i++)
        {
            freeStack[i] = capacity - 1 - i;
            nextSlots[i] = NONE;
        }
        this.freeCount = capacity;
    }

    /**
     * @return a free slot with length 0, or {@link #NONE} when all are in use.
     */
    public int allocate()
    {
        if (freeCount == 0)
        {
            return NONE;
        }
        final int slot = freeStack[--freeCount];
        lengths[slot] = 0;
        nextSlots[slot] = NONE;
        return slot;
    }

    /**
     * Allocates a slot and copies a frame into it: the fabric's ingress edge.
     *
     * @return the slot, or {@link #NONE} if none is free or the frame does not fit a slot.
     */
    public int copyIn(final MemorySegment source, final long offset, final int length)
    {
        if (length < 0 || length > slotBytes)
        {
            return NONE;
        }
        final int slot = allocate();
        if (slot != NONE)
        {
            MemorySegment.copy(source, offset, memory, (long)slot * slotBytes, length);
            lengths[slot] = length;
        }
        return slot;
    }

    /**
     * Gives a slot back.
     */
    public void free(final int slot)
    {
        freeStack[freeCount++] = slot;
    }

    /**
     * @return the segment every slot lies in.
     */
    public MemorySegment memory()
    {
        return memory;
    }

    /**
     * @return the offset of {@code slot}'s first byte in {@link #memory()}.
     */
    public long offset(final int slot)
    {
        return (long)slot * slotBytes;
    }

    /**
     * @return the length of the frame in {@code slot}.
     */
    public int length(final int slot)
    {
        return lengths[slot];
    }

    /**
     * Sets the length of the frame in {@code slot} (after writing it in place).
     */
    public void length(final int slot, final int length)
    {
        if (length < 0 || length > slotBytes)
        {
            throw new IllegalArgumentException("frame length " + length + " outside 0.." + slotBytes);
        }
        lengths[slot] = length;
    }

    /**
     * @return the slot after {@code slot} in the queue holding it, or {@link #NONE}.
     */
    int next(final int slot)
    {
        return nextSlots[slot];
    }

    void next(final int slot, final int next)
    {
        nextSlots[slot] = next;
    }

    /**
     * @return bytes per slot, the largest frame.
     */
    public int slotBytes()
    {
        return slotBytes;
    }

    /**
     * @return number of slots.
     */
    public int capacity()
    {
        return capacity;
    }

    /**
     * @return slots free now.
     */
    public int available()
    {
        return freeCount;
    }

    /**
     * @return slots holding frames now (queued, on a wire, or being delivered).
     */
    public int inUse()
    {
        return capacity - freeCount;
    }

    /**
     * Frees the memory. Nothing may use the pool afterwards.
     */
    public void close()
    {
        if (arena.scope().isAlive())
        {
            arena.close();
        }
    }

    public String toString()
    {
        return "FramePool{capacity=" + capacity + ", slotBytes=" + slotBytes + ", inUse=" + inUse() + '}';
    }
}
