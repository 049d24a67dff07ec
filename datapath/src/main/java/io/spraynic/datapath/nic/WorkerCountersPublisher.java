package io.spraynic.datapath.nic;

import io.spraynic.datapath.telemetry.CounterMirror;

/**
 * Copies a {@link NicWorker}'s counters into the counters file once per {@link #INTERVAL_NANOS}: the worker's parse and
 * engine counters every time, and the counters and gauges of {@link #CONNECTIONS_PER_PUBLISH} of its connections in
 * turn, so that each connection is published every (connections / {@link #CONNECTIONS_PER_PUBLISH}) intervals: all of
 * them every millisecond took most of the thread with thousands (JFR: 142 of 372 worker samples at 256 connections,
 * benchmarks/RESULTS.md section 21). A connection whose transport closed it on its own is handed to
 * {@link NicWorker.ClosedConnections} when its turn comes. Single-threaded: the worker's; allocates nothing.
 */
final class WorkerCountersPublisher
{
    /** How often the worker publishes. */
    static final long INTERVAL_NANOS = 1_000_000L;
    /** Connections whose counters one publish copies (the rest in the following ones, in turn). */
    static final int CONNECTIONS_PER_PUBLISH = 32;

    private final NicWorker.WorkerCounters counters;
    private final WorkerFaults faults;
    private NicWorker.ClosedConnections closedConnections; // null: kept until the application closes them
    private long nextPublishNanos;
    private int cursor; // the first connection the next publish covers

    /**
     * @param counters the worker's own counters and their mirrors.
     * @param faults   where a closed-connection handler that throws is counted.
     */
    WorkerCountersPublisher(final NicWorker.WorkerCounters counters, final WorkerFaults faults)
    {
        this.counters = counters;
        this.faults = faults;
    }

    /** @param closed told of every connection the transport closed on its own (before the worker starts). */
    void closedConnections(final NicWorker.ClosedConnections closed)
    {
        this.closedConnections = closed;
    }

    /**
     * Publishes when an interval has passed since the last publish.
     *
     * @param worker      the worker the connections belong to (told to the closed-connection handler).
     * @param connections the worker's connections now.
     * @param nowNanos    the loop's time.
     */
    void publishIfDue(final NicWorker worker, final NicConnection[] connections, final long nowNanos)
    {
        if (nowNanos >= nextPublishNanos)
        {
            nextPublishNanos = nowNanos + INTERVAL_NANOS;
            publish(worker, connections, CONNECTIONS_PER_PUBLISH);
        }
    }

    /** Publishes everything, every connection included (the worker's last loop). */
    void publishAll(final NicWorker worker, final NicConnection[] connections)
    {
        publish(worker, connections, Integer.MAX_VALUE);
    }

    private void publish(final NicWorker worker, final NicConnection[] connections, final int maxConnections)
    {
        if (null != counters.parse())
        {
            counters.parse().publish();
        }
        for (final CounterMirror engine : counters.engines())
        {
            engine.publish();
        }
        final int slice = Math.min(connections.length, maxConnections);
        for (int k = 0; k < slice; k++)
        {
            final NicConnection c = connections[(cursor + k) % connections.length];
            for (final CounterMirror mirror : c.mirrors)
            {
                mirror.publish();
            }
            if (null != c.gauges)
            {
                c.gauges.publish();
            }
            if (null != closedConnections && !c.isClosing() && c.isTransportClosed())
            {
                try
                {
                    closedConnections.onTransportClosed(worker, c);
                }
                catch (final RuntimeException | AssertionError ex)
                {
                    faults.onLoopFault("closed connection", ex);
                }
            }
        }
        cursor = connections.length == 0 ? 0 : (cursor + slice) % connections.length;
    }
}
