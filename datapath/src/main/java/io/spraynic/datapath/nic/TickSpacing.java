package io.spraynic.datapath.nic;

/**
 * When a poll thread's {@link NicWorker} ticks its engine: on every loop while ticks are cheap; a loop whose tick
 * ended more than {@link #THRESHOLD_NANOS} after the loop began (a tick walks every connection: a few thousand take
 * milliseconds) is followed by as long a time without a tick, so that receiving, posts and completions keep about
 * half the thread. Ticked on every loop, 4,000 connections left the receive ring unread for milliseconds at a time:
 * it filled, ACKs queued behind data past the RTO, and paths were declared failed (benchmarks/RESULTS.md section 21).
 * Timers fire late by at most the tick's own duration. Single-threaded: the worker's.
 */
final class TickSpacing
{
    /**
     * A tick that ended later than this after its loop began is followed by loops without one: far above a loop of a
     * few connections (a burst received and a tick that sent up to its 512 packets), well below the milliseconds a
     * tick of thousands takes.
     */
    static final long THRESHOLD_NANOS = 250_000L;

    private final long thresholdNanos;
    private long nextTickNotBeforeNanos;

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

    /** @param loopStartNanos when the current loop began. @return whether it ticks. */
    boolean isDue(final long loopStartNanos)
    {
        return loopStartNanos >= nextTickNotBeforeNanos;
    }

    /**
     * @param loopStartNanos when the loop that ticked began.
     * @param tickEndNanos   when its tick ended.
     */
    void onTicked(final long loopStartNanos, final long tickEndNanos)
    {
        final long spent = tickEndNanos - loopStartNanos;
        nextTickNotBeforeNanos = spent > thresholdNanos ? loopStartNanos + 2 * spent : loopStartNanos;
    }
}
