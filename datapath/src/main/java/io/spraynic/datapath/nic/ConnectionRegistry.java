package io.spraynic.datapath.nic;

import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The connections an {@link EmbeddedNic} holds: every open one, and those a peer opened that the application has not
 * accepted yet.
 */
final class ConnectionRegistry
{
    private final ManyToOneConcurrentArrayQueue<NicConnection> accepted = new ManyToOneConcurrentArrayQueue<>(4096);
    private final List<NicConnection> connections = new CopyOnWriteArrayList<>();

    /** An established connection (either thread). */
    void add(final NicConnection c)
    {
        connections.add(c);
    }

    /** Forgets a connection and frees its counters. */
    void remove(final NicConnection c)
    {
        closeCounters(c);
        connections.remove(c);
    }

    /** Forgets a connection whose counters are already freed or never were allocated. */
    void forget(final NicConnection c)
    {
        connections.remove(c);
    }

    /** @return false when too many wait for the application already. */
    boolean offerAccepted(final NicConnection c)
    {
        return accepted.offer(c);
    }

    /** @return the next connection a peer opened, or null. */
    NicConnection pollAccepted()
    {
        return accepted.poll();
    }

    /** @return the open connections, a snapshot. */
    List<NicConnection> open()
    {
        return List.copyOf(connections);
    }

    /** Frees a connection's counters in the counters file. */
    static void closeCounters(final NicConnection c)
    {
        for (final CounterMirror mirror : c.mirrors)
        {
            mirror.close();
        }
        if (null != c.gauges)
        {
            c.gauges.close();
        }
    }
}
