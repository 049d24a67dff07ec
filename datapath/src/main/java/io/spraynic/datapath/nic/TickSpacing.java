package io.spraynic.datapath.nic;

/**
 * When a poll thread's {@link NicWorker} ticks its engine: on every loop while ticks are cheap; a tick that took more
 * than {@link #THRESHOLD_NANOS} (a tick walks every connection: a few thousand take milliseconds) is followed by as
 * long a time without a tick, so that receiving, posts and completions keep about half the thread. Ticked on every
 * loop, 4,000 connections left the receive ring unread for milliseconds at a time: it filled, ACKs queued behind data
 * past the RTO, and paths were declared failed (benchmarks/RESULTS.md section 21). Timers fire late by at most the
 * tick's own duration. Single-threaded: the worker's.
 * <p>
 * The worker reads the clock once per loop, at its start, and times a tick only where it can matter
 * ({@link #measuresTicks()}): the next loop's start bounds a tick's duration, and while whole loops with a tick stay
 * within half the threshold no tick can have exceeded it, so it is not timed ({@link #onTickedUnmeasured}) and every
 * loop ticks. A loop that took longer (a long tick, or a thread descheduled anywhere in the loop) makes the next ticks
 * timed ({@link #onTicked}: a read before the tick and one after) until one takes within half the threshold. A tick is
 * spaced by its own measured duration only, never by time spent around it: main's rule, which weighed a tick from its
 * loop's start and read every tick's end, took a thread descheduled during the receive bursts for a tick of
 * milliseconds and spaced 800-1,700 ticks in a 5 s run on a loaded 2-core host (section 63). The first tick of a
 * sudden jump from under half to over the threshold goes unspaced once (one more loop of it). On this VM a clock read
 * costs 25-27 ns (section 56).
 */
final class TickSpacing
{
    /**
     * A tick that took longer than this is followed by as long a time without one: far above the tick of a loop of a
     * few connections (up to its 512 packets sent), well below the milliseconds a tick of thousands takes.
     */
    static final long THRESHOLD_NANOS = 250_000L;

    private static final long NONE = Long.MIN_VALUE;

    private final long thresholdNanos;
    private long nextTickNotBeforeNanos;
    private boolean measuresTicks;
    private long unmeasuredTickLoopStartNanos = NONE; // the start of the loop whose tick was not timed, or NONE

    TickSpacing()
    {
        this(THRESHOLD_NANOS);
    }

    /** @param thresholdNanos a tick that takes longer than this leaves a gap as long after it. */
    TickSpacing(final long thresholdNanos)
    {
        if (thresholdNanos < 0)
        {
            throw new IllegalArgumentException("tick spacing threshold must be >= 0 ns: " + thresholdNanos);
        }
        this.thresholdNanos = thresholdNanos;
    }

    /**
     * A loop begins: the time since the previous loop began, when that one ticked untimed, bounds that tick.
     *
     * @param loopStartNanos when the loop began (the worker's one clock read of the loop).
     */
    void onLoopStart(final long loopStartNanos)
    {
        final long previous = unmeasuredTickLoopStartNanos;
        if (previous != NONE)
        {
            unmeasuredTickLoopStartNanos = NONE;
            if (loopStartNanos - previous > thresholdNanos >> 1)
            {
                measuresTicks = true; // that tick may have been long: time the next ones
            }
        }
    }

    /** @param nowNanos the loop's time. @return whether it ticks. */
    boolean isDue(final long nowNanos)
    {
        return nowNanos >= nextTickNotBeforeNanos;
    }

    /** @return whether the tick about to run is timed ({@link #onTicked}) or not ({@link #onTickedUnmeasured}). */
    boolean measuresTicks()
    {
        return measuresTicks;
    }

    /**
     * A timed tick ended: one over the threshold leaves as long again after it without a tick.
     *
     * @param tickStartNanos when the tick began.
     * @param tickEndNanos   when it ended.
     */
    void onTicked(final long tickStartNanos, final long tickEndNanos)
    {
        final long spent = tickEndNanos - tickStartNanos;
        nextTickNotBeforeNanos = spent > thresholdNanos ? tickStartNanos + 2 * spent : tickStartNanos;
        unmeasuredTickLoopStartNanos = NONE;
        measuresTicks = spent > thresholdNanos >> 1;
    }

    /**
     * A tick ended untimed: the next loop may tick, and {@link #onLoopStart} checks the bound.
     *
     * @param loopStartNanos when the loop that ticked began.
     */
    void onTickedUnmeasured(final long loopStartNanos)
    {
        nextTickNotBeforeNanos = loopStartNanos;
        unmeasuredTickLoopStartNanos = loopStartNanos;
    }
}
