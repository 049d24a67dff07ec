package io.spraynic.bench.e2e;

import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.util.Locale;

/**
 * What a poll thread does when a pass found no work. {@code spin} is the low-latency choice when every poll
 * thread has a core of its own; on a machine with fewer free cores than poll threads a spinning thread
 * holds its core until the scheduler preempts it (milliseconds) while its peer waits to run, and
 * {@code yield} hands the core over at once.
 */
public enum Idle
{
    SPIN, YIELD;

    public IdleStrategy newStrategy()
    {
        return this == SPIN ? new BusySpinIdleStrategy() : new YieldingIdleStrategy();
    }

    public String text()
    {
        return name().toLowerCase(Locale.ROOT);
    }

    public static Idle parse(final String text)
    {
        for (final Idle idle : values())
        {
            if (idle.text().equalsIgnoreCase(text))
            {
                return idle;
            }
        }
        throw new IllegalArgumentException("idle strategy '" + text + "' is not one of spin, yield");
    }
}
