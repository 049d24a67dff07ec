package io.spraynic.bench.nic;

import org.agrona.concurrent.IdleStrategy;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A poll thread's idle strategy that counts the thread's loops and its empty ones (a loop whose agents reported no
 * work), then idles as the strategy it wraps. A busy-spinning poll thread with nothing to do still burns its core on
 * empty loops (a clock read each, in a NIC worker), so "work per CPU second" charges whichever run spun more;
 * the empty loops counted here, at what one costs ({@link CaptureCost#busyCpuNanos}), take that spin back out.
 * Written by the poll thread only (one opaque store a loop, a second in an empty one); read by any thread.
 */
public final class CountingIdleStrategy implements IdleStrategy
{
    private static final VarHandle LOOPS;
    private static final VarHandle EMPTY_LOOPS;

    static
    {
        try
        {
            final MethodHandles.Lookup lookup = MethodHandles.lookup();
            LOOPS = lookup.findVarHandle(CountingIdleStrategy.class, "loops", long.class);
            EMPTY_LOOPS = lookup.findVarHandle(CountingIdleStrategy.class, "emptyLoops", long.class);
        }
        catch (final ReflectiveOperationException ex)
        {
            throw new ExceptionInInitializerError(ex);
        }
    }

    private final IdleStrategy delegate;
    @SuppressWarnings("unused") // through LOOPS
    private long loops;
    @SuppressWarnings("unused") // through EMPTY_LOOPS
    private long emptyLoops;

    public CountingIdleStrategy(final IdleStrategy delegate)
    {
        this.delegate = delegate;
    }

    public void idle(final int workCount)
    {
        LOOPS.setOpaque(this, (long)LOOPS.get(this) + 1);
        if (workCount <= 0)
        {
            EMPTY_LOOPS.setOpaque(this, (long)EMPTY_LOOPS.get(this) + 1);
        }
        delegate.idle(workCount);
    }

    public void idle()
    {
        LOOPS.setOpaque(this, (long)LOOPS.get(this) + 1);
        EMPTY_LOOPS.setOpaque(this, (long)EMPTY_LOOPS.get(this) + 1);
        delegate.idle();
    }

    public void reset()
    {
        delegate.reset();
    }

    public String alias()
    {
        return "counting-" + delegate.alias();
    }

    /** @return loops the poll thread has run so far. */
    public long loops()
    {
        return (long)LOOPS.getOpaque(this);
    }

    /** @return loops so far in which the poll thread found no work. */
    public long emptyLoops()
    {
        return (long)EMPTY_LOOPS.getOpaque(this);
    }
}
