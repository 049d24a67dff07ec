package io.spraynic.cli;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.util.Locale;
import java.util.function.Supplier;

/**
 * The {@code --idle} option of the commands that run poll threads.
 */
final class IdleStrategies
{
    static final String DESCRIPTION = "Poll threads' idle strategy: busy, yield, backoff or sleep (default ${DEFAULT-VALUE}).";

    private IdleStrategies()
    {
    }

    /**
     * @param name busy, yield, backoff or sleep.
     * @return a supplier of fresh strategies (one per thread).
     */
    static Supplier<IdleStrategy> parse(final String name)
    {
        return switch (name.toLowerCase(Locale.ROOT))
        {
            case "busy" -> BusySpinIdleStrategy::new;
            case "yield" -> YieldingIdleStrategy::new;
            case "backoff" -> BackoffIdleStrategy::new;
            case "sleep" -> () -> new SleepingMillisIdleStrategy(1);
            default -> throw new IllegalArgumentException("--idle " + name + " is not one of busy, yield, backoff, sleep");
        };
    }
}
