package io.spraynic.datapath.nic;

import io.spraynic.datapath.telemetry.CounterMirror;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.status.AtomicCounter;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * The connections an {@link EmbeddedNic} holds: every open one, and those a peer opened that the application has not
 * accepted yet. It holds nothing forever: a connection is forgotten (counters freed, detached from its worker) once the
 * application closes it or once its transport closed it on its own (the peer closed it, it idled out, it failed; one
 * another process posts to is left to the IPC conductor, which bounds those per client),
 * and connections peers open are bounded ({@link EmbeddedNicConfig#maxAcceptedConnections}): one over the bound is
 * closed at once and counted, so that neither a hostile nor a merely long-lived peer population grows the NIC's state.
 */
final class ConnectionRegistry implements NicWorker.ClosedConnections
{
    private final int maxAccepted;
    private final int maxOpened;
    private final ManyToOneConcurrentArrayQueue<NicConnection> accepted;
    private final List<NicConnection> connections = new CopyOnWriteArrayList<>();
    private final AtomicInteger liveAccepted = new AtomicInteger();
    private final AtomicInteger liveOpened = new AtomicInteger();
    private final AtomicCounter refusedOverLimit;
    private final AtomicCounter openedOverLimit;
    private final AtomicCounter forgottenClosed;
    private Consumer<NicConnection> onReleased = c -> { };

    /**
     * @param maxAccepted      connections peers opened, held at once.
     * @param refusedOverLimit counts connections closed for being over {@code maxAccepted}.
     * @param forgottenClosed  counts connections forgotten because their transport closed them.
     */
    ConnectionRegistry(final int maxAccepted, final AtomicCounter refusedOverLimit, final AtomicCounter forgottenClosed)
    {
        this(maxAccepted, refusedOverLimit, forgottenClosed, EmbeddedNicConfig.DEFAULT_MAX_OPENED_CONNECTIONS, null);
    }

    /**
     * @param maxOpened       connections this NIC opened, held at once.
     * @param openedOverLimit counts connects refused for being over {@code maxOpened} (null: not counted).
     */
    ConnectionRegistry(final int maxAccepted, final AtomicCounter refusedOverLimit, final AtomicCounter forgottenClosed,
        final int maxOpened, final AtomicCounter openedOverLimit)
    {
        this.maxAccepted = maxAccepted;
        this.maxOpened = maxOpened;
        this.accepted = new ManyToOneConcurrentArrayQueue<>(maxAccepted);
        this.refusedOverLimit = refusedOverLimit;
        this.openedOverLimit = openedOverLimit;
        this.forgottenClosed = forgottenClosed;
    }

    /** @param onReleased told once of each connection released (the neighbours stop following its next hops). */
    void onReleased(final Consumer<NicConnection> onReleased)
    {
        this.onReleased = onReleased;
    }

    /**
     * Takes a connection this NIC is about to open into the bound (control thread, before its CONNECT).
     *
     * @throws IllegalStateException naming the limit, counted, when the NIC holds its limit already.
     */
    void admitOpened(final NicConnection c)
    {
        if (liveOpened.incrementAndGet() > maxOpened)
        {
            liveOpened.decrementAndGet();
            if (null != openedOverLimit)
            {
                openedOverLimit.incrementRelease();
            }
            throw new IllegalStateException("this NIC holds its limit of " + maxOpened + " connections it opened " +
                "(maxOpenedConnections; spraynic nic: --ipc-max-clients x --ipc-max-connections): close one first, or " +
                "raise it");
        }
        c.opened = true;
    }

    /** Gives back the place of a connection {@link #admitOpened} took that was never established (control thread). */
    void abandonOpened(final NicConnection c)
    {
        if (c.opened && !c.isReleased())
        {
            c.opened = false;
            liveOpened.decrementAndGet();
        }
    }

    /**
     * Takes a connection a peer opened into the bound (worker thread, before it is attached).
     *
     * @return false, counted, when the NIC holds its limit already: the caller closes it.
     */
    boolean admitAccepted(final NicConnection c)
    {
        if (liveAccepted.incrementAndGet() > maxAccepted)
        {
            liveAccepted.decrementAndGet();
            refusedOverLimit.incrementRelease();
            return false;
        }
        c.accepted = true;
        return true;
    }

    /** An established connection (either thread). */
    void add(final NicConnection c)
    {
        connections.add(c);
    }

    /**
     * Forgets a connection and frees its counters, once (either thread; the connection is detached from its worker or
     * its worker stopped).
     *
     * @return false when it was forgotten already.
     */
    boolean release(final NicConnection c)
    {
        if (!c.releaseOnce())
        {
            return false;
        }
        onReleased.accept(c);
        closeCounters(c);
        connections.remove(c);
        if (c.accepted)
        {
            liveAccepted.decrementAndGet();
        }
        if (c.opened)
        {
            liveOpened.decrementAndGet();
        }
        return true;
    }

    /**
     * Worker thread: the transport closed {@code c}. The first time, posts are refused from then on; once the worker
     * flushed what was left in its ring, it is detached and forgotten (an application still holding it gets
     * {@code INVALID_STATE} for every post, and its close returns at once).
     */
    public void onTransportClosed(final NicWorker worker, final NicConnection c)
    {
        if (c.requests != c.ring())
        {
            return; // another process posts to it: its worker flushes what comes until the IPC conductor closes it
        }
        if (c.transportGone() || c.requests.size() > 0)
        {
            return; // a post may be on its way into the ring: look again at the next publish
        }
        worker.detach(c);
        if (release(c))
        {
            forgottenClosed.incrementRelease();
        }
    }

    /** @return false when too many wait for the application already. */
    boolean offerAccepted(final NicConnection c)
    {
        return accepted.offer(c);
    }

    /** @return the next connection a peer opened and that is still open, or null. */
    NicConnection pollAccepted()
    {
        NicConnection c;
        while (null != (c = accepted.poll()) && c.isReleased())
        {
            // closed before the application took it: forgotten already
        }
        return c;
    }

    /** @return the connections the NIC holds, a snapshot. */
    List<NicConnection> open()
    {
        return List.copyOf(connections);
    }

    /** @return connections peers opened that were closed for being over the limit, since start. */
    long acceptedOverLimit()
    {
        return refusedOverLimit.get();
    }

    /** @return connections this NIC opened that it holds (admitted, not yet forgotten or abandoned). */
    int liveOpened()
    {
        return liveOpened.get();
    }

    /** @return connections peers opened that the NIC holds (accepted, not yet forgotten). */
    int liveAccepted()
    {
        return liveAccepted.get();
    }

    /** Frees a connection's counters in the counters file. */
    private static void closeCounters(final NicConnection c)
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
