package io.spraynic.datapath.nic;

/**
 * When a poll thread's {@link NicWorker} ticks its engine: on every loop while ticks are cheap; a loop whose tick
 * ended more than {@link #THRESHOLD_NANOS} after the loop began (a tick walks every connection: a few thousand take
 * milliseconds) is followed by as long a time without a tick, so that receiving, posts and completions keep about
 * half the thread. Ticked on every loop, 4,000 connections left the receive ring unread for milliseconds at a time:
 * it filled, ACKs queued behind data past the RTO, and paths were declared failed (benchmarks/RESULTS.md section 21).
 * Timers fire late by at most the tick's own duration. Single-threaded: the worker's.
 * <p>
 * The worker reads the clock once per loop, at its start; a tick's end is read only where it can matter
 * ({@link #readsTickEnd()}): the next loop's start bounds it, and while whole loops with a tick stay within half the
 * threshold no tick can have exceeded it, so the end is not read ({@link #onTickedUnread}) and every loop ticks, as
 * when it was read. A loop that took longer (a long tick, or a thread descheduled anywhere in the loop) makes the
 * next ticks read their end ({@link #onTicked}) until one ends within half the threshold: a tick is spaced by its own
 * measured duration only, never by time spent outside it, and the first tick of a sudden jump from under half to
 * over the threshold goes unspaced once (one more loop of it). On this VM a read costs 25-27 ns
 * (benchmarks/RESULTS.md section 56).
 */
final class TickSpacing
{
    /**
     * A tick that ended later than this after its loop began is followed by loops without one: far above a loop of a
     * few connections (a burst received and a tick that sent up to its 512 packets), well below the milliseconds a
     * tick of thousands takes.
     */
    static final long THRESHOLD_NANOS = 250_000L;

    private static final long NONE = Long.MIN_VALUE;

    private final long thresholdNanos;
    private long nextTickNotBeforeNanos;
    private boolean readsTickEnd;
    private long unreadTickLoopStartNanos = NONE; // the start of the loop whose tick's end was not read, or NONE

    TickSpacing()
    {
        this(THRESHOLD_NANOS);
    }

    /** @param thresholdNanos a loop whose tick ends later than this after it began leaves a gap as long. */
    TickSpacing(final long thresholdNanos)
    {
        if (thresholdNanos < 0)
        {
            throw new IllegalArgumentException("tick spacing threshold must be >= 0 ns: " + thresholdNanos);
        }
        this.thresholdNanos = thresholdNanos;
    }

    /**
     * A loop begins: the time since the previous loop began, when that one ticked without reading the end, bounds
     * that tick's duration.
     *
     * @param loopStartNanos when the loop began (the worker's one clock read of the loop).
     */
    void onLoopStart(final long loopStartNanos)
    {
        final long previous = unreadTickLoopStartNanos;
        if (previous != NONE)
        {
            unreadTickLoopStartNanos = NONE;
            if (loopStartNanos - previous > thresholdNanos >> 1)
            {
                readsTickEnd = true; // that tick may have been long: measure the next ones
            }
        }
    }

    /** @param loopStartNanos when the current loop began. @return whether it ticks. */
    boolean isDue(final long loopStartNanos)
    {
        return loopStartNanos >= nextTickNotBeforeNanos;
    }

    /** @return whether the tick about to end needs its end time ({@link #onTicked}) or not ({@link #onTickedUnread}). */
    boolean readsTickEnd()
    {
        return readsTickEnd;
    }

    /**
     * @param loopStartNanos when the loop that ticked began.
     * @param tickEndNanos   when its tick ended.
     */
    void onTicked(final long loopStartNanos, final long tickEndNanos)
    {
        final long spent = tickEndNanos - loopStartNanos;
        nextTickNotBeforeNanos = spent > thresholdNanos ? loopStartNanos + 2 * spent : loopStartNanos;
        unreadTickLoopStartNanos = NONE;
        readsTickEnd = spent > thresholdNanos >> 1;
    }

    /**
     * A tick ended and its end was not read: the next loop may tick, and {@link #onLoopStart} checks the bound.
     *
     * @param loopStartNanos when the loop that ticked began.
     */
    void onTickedUnread(final long loopStartNanos)
    {
        nextTickNotBeforeNanos = loopStartNanos;
        unreadTickLoopStartNanos = loopStartNanos;
    }
}
