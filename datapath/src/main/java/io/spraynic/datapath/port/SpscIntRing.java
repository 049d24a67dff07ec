package io.spraynic.datapath.port;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A bounded single-producer single-consumer queue of {@code int}s: no boxing, no locks, no
 * allocation after construction. The producer publishes with a release store of the tail and the
 * consumer frees slots with a release store of the head, so plain writes made before an
 * {@link #offer(int)} are visible after the matching {@link #poll()}.
 */
final class SpscIntRing
{
    private static final VarHandle HEAD;
    private static final VarHandle TAIL;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            HEAD = lookup.findVarHandle(SpscIntRing.class, "head", long.class);
            TAIL = lookup.findVarHandle(SpscIntRing.class, "tail", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    /** Value {@link #poll()} returns when the ring is empty. */
    static final int EMPTY = -1;

    private final int[] slots;
    private final int mask;

    @SuppressWarnings("unused")
    private long p01, p02, p03, p04, p05, p06, p07;
    private volatile long head;
    @SuppressWarnings("unused")
    private long p11, p12, p13, p14, p15, p16, p17;
    private volatile long tail;
    @SuppressWarnings("unused")
    private long p21, p22, p23, p24, p25, p26, p27;

    SpscIntRing(final int capacity)
    {
        if (capacity < 2 || Integer.bitCount(capacity) != 1)
        {
            throw new IllegalArgumentException("ring capacity " + capacity + " must be a power of two >= 2");
        }
        slots = new int[capacity];
        mask = capacity - 1;
    }

    int capacity()
    {
        return slots.length;
    }

    /**
     * Producer side.
     *
     * @return false when full.
     */
    boolean offer(final int value)
    {
        final long currentTail = (long)TAIL.getOpaque(this);
        if (currentTail - (long)HEAD.getAcquire(this) >= slots.length)
        {
            return false;
        }
        slots[(int)currentTail & mask] = value;
        TAIL.setRelease(this, currentTail + 1);
        return true;
    }

    /**
     * Consumer side.
     *
     * @return the oldest value, or {@link #EMPTY}.
     */
    int poll()
    {
        final long currentHead = (long)HEAD.getOpaque(this);
        if (currentHead >= (long)TAIL.getAcquire(this))
        {
            return EMPTY;
        }
        final int value = slots[(int)currentHead & mask];
        HEAD.setRelease(this, currentHead + 1);
        return value;
    }

    /**
     * @return an estimate of the number of values queued.
     */
    int size()
    {
        return (int)((long)TAIL.getAcquire(this) - (long)HEAD.getAcquire(this));
    }
}
