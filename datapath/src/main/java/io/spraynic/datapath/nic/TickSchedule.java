package io.spraynic.datapath.nic;

/**
 * When a {@link NicWorker} that does not tick its engine on every loop ticks it: at most every {@code intervalNanos}.
 * A NIC's poll thread ticks on every loop (no schedule); a worker stepped by a virtual-time fabric, which runs it at
 * every frame arrival and at its timers, would otherwise tick a busy host's engine at every arrival, tens of times a
 * microsecond of virtual time, and never let a simulation of an idle fabric end.
 * <ul>
 *   <li>{@link #whileBusy}: a tick is due {@code intervalNanos} after a frame or a work request arrived (or the first
 *   of several), and then every {@code intervalNanos} while the transport is busy; an idle transport is not ticked,
 *   so a simulation that runs until nothing happens ends.</li>
 *   <li>{@link #periodic}: once {@link #kick kicked}, a tick every {@code intervalNanos}, busy or not (an engine whose
 *   queue pairs are posted to directly, which no arrival announces).</li>
 * </ul>
 * {@link #kick} makes a tick due now (after posting work requests to the engine directly). Worker thread only;
 * allocation-free.
 */
final class TickSchedule
{
    /** No tick is due until something arrives or a kick. */
    static final long NONE = Long.MAX_VALUE;

    private final long intervalNanos;
    private final boolean periodic;
    private long dueNanos = NONE;

    private TickSchedule(final long intervalNanos, final boolean periodic)
    {
        if (intervalNanos <= 0)
        {
            throw new IllegalArgumentException("tick interval must be positive: " + intervalNanos);
        }
        this.intervalNanos = intervalNanos;
        this.periodic = periodic;
    }

    /** @return a schedule that ticks within {@code intervalNanos} of an arrival, and then while the transport is busy. */
    static TickSchedule whileBusy(final long intervalNanos)
    {
        return new TickSchedule(intervalNanos, false);
    }

    /** @return a schedule that ticks every {@code intervalNanos} from its first kick. */
    static TickSchedule periodic(final long intervalNanos)
    {
        return new TickSchedule(intervalNanos, true);
    }

    /** @return whether the engine is to be ticked at {@code nowNanos}. */
    boolean isDue(final long nowNanos)
    {
        return nowNanos >= dueNanos;
    }

    /** Frames or work requests arrived at {@code nowNanos}: a busy-only schedule ticks within an interval. */
    void onArrival(final long nowNanos)
    {
        if (!periodic)
        {
            dueNanos = Math.min(dueNanos, nowNanos + intervalNanos);
        }
    }

    /** The engine was ticked at {@code nowNanos}; {@code idle}: it has nothing in flight. */
    void onTicked(final long nowNanos, final boolean idle)
    {
        dueNanos = periodic || !idle ? nowNanos + intervalNanos : NONE;
    }

    /** Makes a tick due now: the next loop ticks. */
    void kick()
    {
        dueNanos = Long.MIN_VALUE;
    }

    /** @return when the next tick is due ({@link Long#MIN_VALUE}: at once; {@link #NONE}: not until an arrival or a kick). */
    long dueNanos()
    {
        return dueNanos;
    }
}
