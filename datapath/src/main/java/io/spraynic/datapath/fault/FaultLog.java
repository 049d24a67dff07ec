package io.spraynic.datapath.fault;

import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

import java.util.HashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * Rate-limited reporting of unexpected exceptions that a poll loop caught and survived: at most one line per
 * reason (where it happened and the exception's class) per interval, with the count of the ones it kept
 * quiet since, the message and the throwing frame, never a stack trace. A hostile input that triggers an
 * exception on every packet costs one line per interval instead of megabytes of stderr per second.
 * <p>
 * Call {@link #record} only on the exceptional path (it allocates and takes a lock, which is uncontended:
 * one loop per log, read back by tests): keep the {@code catch} block in a small method of its own so the loop that calls it stays
 * compact for the JIT. The counter the caller keeps beside it is what monitoring reads.
 */
public final class FaultLog
{
    /** Default quiet period per reason. */
    public static final long DEFAULT_INTERVAL_NANOS = 10_000_000_000L;

    private final String owner;
    private final long intervalNanos;
    private final NanoClock clock;
    private final Consumer<String> sink;
    private final Map<String, Reason> reasons = new HashMap<>();
    private long total;

    private static final class Reason
    {
        long lastLoggedNanos;
        long suppressed;
        long count;
    }

    /**
     * @param owner what the lines start with, e.g. the agent's role name.
     */
    public FaultLog(final String owner)
    {
        this(owner, DEFAULT_INTERVAL_NANOS, SystemNanoClock.INSTANCE, System.err::println);
    }

    /**
     * @param owner         what the lines start with.
     * @param intervalNanos at most one line per reason within this time.
     * @param clock         the time.
     * @param sink          where lines go.
     */
    public FaultLog(final String owner, final long intervalNanos, final NanoClock clock, final Consumer<String> sink)
    {
        if (intervalNanos < 0)
        {
            throw new IllegalArgumentException("interval " + intervalNanos + " must not be negative");
        }
        this.owner = owner;
        this.intervalNanos = intervalNanos;
        this.clock = clock;
        this.sink = sink;
    }

    /**
     * Counts a fault and writes a line unless this reason had one within the interval.
     *
     * @param where what the loop was doing, e.g. "frame" or "command".
     * @param fault what it caught.
     * @return true if a line was written.
     */
    public synchronized boolean record(final String where, final Throwable fault)
    {
        total++;
        final String key = where + ' ' + fault.getClass().getName();
        final Reason reason = reasons.computeIfAbsent(key, k -> new Reason());
        reason.count++;
        final long now = clock.nanoTime();
        if (reason.count > 1 && now - reason.lastLoggedNanos < intervalNanos)
        {
            reason.suppressed++;
            return false;
        }
        final StringBuilder line = new StringBuilder(160).append(owner).append(": caught ")
            .append(fault.getClass().getName()).append(" handling a ").append(where);
        if (null != fault.getMessage())
        {
            line.append(": ").append(fault.getMessage());
        }
        final StackTraceElement[] trace = fault.getStackTrace();
        if (trace.length > 0)
        {
            line.append(" (at ").append(trace[0]).append(')');
        }
        line.append("; dropped it and carried on");
        if (reason.suppressed > 0)
        {
            line.append(" (").append(reason.suppressed).append(" more like it not logged in the last ")
                .append(intervalNanos / 1_000_000_000L).append(" s)");
        }
        reason.suppressed = 0;
        reason.lastLoggedNanos = now;
        sink.accept(line.toString());
        return true;
    }

    /** @return faults recorded. */
    public synchronized long total()
    {
        return total;
    }

    /**
     * @return faults recorded per reason ("where class"), a copy: what a test reports.
     */
    public synchronized Map<String, Long> counts()
    {
        final Map<String, Long> counts = new HashMap<>();
        reasons.forEach((k, r) -> counts.put(k, r.count));
        return counts;
    }
}
