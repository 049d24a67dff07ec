package io.spraynic.bench.e2e;

import io.spraynic.bench.OptionEnums;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

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
        return OptionEnums.text(this);
    }

    public static Idle parse(final String text)
    {
        return OptionEnums.parse(values(), text, "idle strategy");
    }
}
