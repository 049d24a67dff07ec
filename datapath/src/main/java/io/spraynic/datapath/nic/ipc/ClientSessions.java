package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.EmbeddedNic;
import org.agrona.collections.Long2ObjectHashMap;
import org.agrona.concurrent.status.AtomicCounter;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The clients an {@link IpcConductor} serves, their liveness and their cleanup (as Aeron's driver conductor keeps its
 * clients' liveness apart from its commands): a client is admitted by ADD_CLIENT, watched for keepalives and for the
 * connection rings its workers found broken, and released when it closes, times out or is dropped; releasing it stops
 * its capture, stops watching its connections and unmaps its answer ring at once, then closes its connections, frees
 * its regions and its protection domain on a control thread. Conductor thread only, except {@link #releaseAll}.
 */
final class ClientSessions
{
    private static final long LOG_INTERVAL_MS = 10_000;

    private final IpcConductor conductor;
    private final EmbeddedNic nic; // null when serving live capture only
    private final IpcCounters counters;
    private final long clientTimeoutMs;
    private final Long2ObjectHashMap<IpcClient> clients = new Long2ObjectHashMap<>();
    /** Connections whose rings the workers read; a client that broke one is dropped. */
    private final ArrayList<ServedConnection> served = new ArrayList<>();
    private final ArrayList<IpcClient> drops = new ArrayList<>();

    ClientSessions(final IpcConductor conductor, final EmbeddedNic nic, final IpcCounters counters,
        final long clientTimeoutMs)
    {
        this.conductor = conductor;
        this.nic = nic;
        this.counters = counters;
        this.clientTimeoutMs = clientTimeoutMs;
    }

    /** @return clients served now. */
    int clientCount()
    {
        return clients.size();
    }

    boolean hasClient(final long clientId)
    {
        return clients.containsKey(clientId);
    }

    /** @return the client of that id, else null. */
    IpcClient client(final long clientId)
    {
        return clients.get(clientId);
    }

    void addClient(final IpcClient client)
    {
        clients.put(client.id, client);
        counters.clients.incrementRelease();
    }

    /** @return whether a client other than {@code client} holds a region or connection of that id. */
    boolean heldByAnother(final IpcClient client, final long objectId)
    {
        for (final IpcClient other : clients.values())
        {
            if (other != client && (other.regions.containsKey(objectId) || other.connections.containsKey(objectId)))
            {
                return true;
            }
        }
        return false;
    }

    /**
     * A connection made for a client: its worker reads its rings from now on, a client that breaks them goes, and one
     * that does not collect them within the client timeout loses the connection ({@link #closeUncollected}).
     */
    void serve(final ServedConnection connection)
    {
        connection.collectByMs = conductor.nowMs() + clientTimeoutMs;
        connection.client.connections.put(connection.id, connection);
        served.add(connection);
    }

    /** A connection its client closes: no longer watched (its worker takes what was posted until it closes). */
    void stopServing(final ServedConnection connection)
    {
        served.remove(connection);
    }

    /** @return connections served now. */
    int servedCount()
    {
        return served.size();
    }

    /**
     * @return the connections of {@code client} whose rings it has not collected (each holds a descriptor open here),
     * and those being made for it (each will).
     */
    int uncollectedConnections(final IpcClient client)
    {
        int uncollected = client.pendingConnections;
        for (final ServedConnection connection : client.connections.values())
        {
            if (connection.rings.sealedMemory().fd() >= 0)
            {
                uncollected++;
            }
        }
        return uncollected;
    }

    /**
     * Closes the connections whose rings their client did not collect by their deadline: the descriptor goes here and
     * now, the connection on a control thread; the client keeps its other connections. @return connections closed.
     */
    int closeUncollected(final long now)
    {
        int closed = 0;
        final ArrayList<ServedConnection> served = this.served;
        for (int i = served.size() - 1; i >= 0; i--)
        {
            final ServedConnection connection = served.get(i);
            final SealedMemory rings = connection.rings.sealedMemory();
            if (rings.fd() >= 0 && now - connection.collectByMs >= 0)
            {
                served.remove(i);
                connection.client.connections.remove(connection.id);
                rings.closeDescriptor(); // the worker keeps the mapping until the connection is closed
                counters.connectionsUncollected.incrementRelease();
                counters.log("closed connection " + connection.id + " of client " + connection.client.id + " (pid " +
                    connection.client.pid + "), whose rings it did not collect (OPEN_MEMORY) within " + clientTimeoutMs +
                    " ms", null, now, LOG_INTERVAL_MS);
                conductor.releaseLater(() -> releaseAll(List.of(connection), List.of(), Duration.ZERO));
                closed++;
            }
        }
        return closed;
    }

    /** Drops the clients whose connection rings a worker found broken. @return the connections found broken. */
    int dropBrokenRings()
    {
        int work = 0;
        final ArrayList<ServedConnection> served = this.served;
        for (int i = 0, n = served.size(); i < n; i++)
        {
            final ServedConnection connection = served.get(i);
            final int broken = connection.requests.broken();
            if (0 != broken)
            {
                dropLater(connection.client, broken == ClientRequestRing.CORRUPT_REQUESTS ? counters.droppedCorruptRing :
                    counters.droppedBadAnswerRing, connection.requests.brokenReason() + " (connection " + connection.id + ")");
                work++;
            }
        }
        return work + dropPending();
    }

    /** Releases the clients that sent no keepalive for the client timeout. @return clients released. */
    int timeOutClients(final long now)
    {
        int released = 0;
        List<IpcClient> dead = null;
        for (final IpcClient client : clients.values())
        {
            if (now - client.lastSeenMs > clientTimeoutMs)
            {
                if (null == dead)
                {
                    dead = new ArrayList<>();
                }
                dead.add(client);
            }
        }
        if (null != dead)
        {
            for (final IpcClient client : dead)
            {
                release(client, counters.clientsTimedOut, "sent no keepalive for " + clientTimeoutMs + " ms");
                released++;
            }
        }
        return released;
    }

    /** Drops a client once the loop over served connections is done with the list it would change. */
    private void dropLater(final IpcClient client, final AtomicCounter reason, final String why)
    {
        if (null == client.dropReason)
        {
            client.dropReason = reason;
            client.dropWhy = why;
            drops.add(client);
        }
    }

    private int dropPending()
    {
        final int n = drops.size();
        for (int i = 0; i < n; i++)
        {
            final IpcClient client = drops.get(i);
            drop(client, client.dropReason, client.dropWhy);
        }
        drops.clear();
        return n;
    }

    /** Drops a client that broke the protocol: everything it held is released; the others carry on. */
    void drop(final IpcClient client, final AtomicCounter reason, final String why)
    {
        if (!client.released)
        {
            release(client, reason, why);
        }
    }

    /**
     * A client that closed (CLOSE_CLIENT, after its last answer), or whose ADD_CLIENT answer could not be sent (it goes
     * again, counted as closed).
     */
    void releaseClosed(final IpcClient client)
    {
        release(client, counters.clientsClosed, null);
    }

    /**
     * Forgets a client: stops watching its connections, unmaps its answer ring, then closes its connections, frees
     * its regions and removes its files on a control thread.
     *
     * @param reason counted once.
     * @param why    logged (rate-limited) when not null.
     */
    private void release(final IpcClient client, final AtomicCounter reason, final String why)
    {
        if (client.released)
        {
            return;
        }
        client.released = true;
        conductor.captures.onReleased(client);
        clients.remove(client.id);
        counters.clients.decrementRelease();
        reason.incrementRelease();
        if (null != why)
        {
            counters.log("released client " + client.id + " (pid " + client.pid + "), which " + why + ", with its " +
                client.connections.size() + " connection(s) and " + client.regions.size() + " region(s)", null,
                conductor.nowMs(), LOG_INTERVAL_MS);
        }
        final List<ServedConnection> connections = new ArrayList<>(client.connections.values());
        final List<IpcClient.Region> regions = new ArrayList<>(client.regions.values());
        for (final ServedConnection connection : connections)
        {
            served.remove(connection);
        }
        client.connections.clear();
        client.regions.clear();
        client.answerMemory.close();
        // a dead or dropped client's peers get CLOSE at once; a closing client already waited for its own completions
        final Duration drain = Duration.ofMillis(reason == counters.clientsClosed ? 100 : 0);
        conductor.releaseLater(() ->
        {
            releaseAll(connections, regions, drain);
            releaseDomain(client);
        });
    }

    /**
     * Control thread: forgets a released client's protection domain on every worker, where it holds no region. A
     * REGISTER or CONNECT that was under way when its client went makes the domain anew on its workers: the late result
     * frees what it made and then calls this again, so that the domain goes with the last of them.
     */
    void releaseDomain(final IpcClient client)
    {
        try
        {
            if (null != nic)
            {
                nic.releaseProtectionDomain(client.domain());
            }
        }
        catch (final RuntimeException ex)
        {
            System.err.println("spraynic ipc: releasing client " + client.id + "'s domain failed: " + ex.getMessage());
        }
    }

    /** Control thread: closes connections, then frees regions; a failure of one is told and the rest go on. */
    void releaseAll(final Iterable<ServedConnection> connections, final Iterable<IpcClient.Region> regions,
        final Duration drain)
    {
        for (final ServedConnection connection : connections)
        {
            try
            {
                conductor.connectionCommands.releaseConnection(connection, drain);
            }
            catch (final RuntimeException ex)
            {
                System.err.println("spraynic ipc: closing connection " + connection.id + " failed: " + ex.getMessage());
            }
        }
        for (final IpcClient.Region region : regions)
        {
            try
            {
                conductor.regionCommands.releaseRegion(region);
            }
            catch (final RuntimeException ex)
            {
                System.err.println("spraynic ipc: freeing region " + region.id() + " failed: " + ex.getMessage());
            }
        }
    }

    /**
     * The conductor closes: every client is forgotten, then {@code control} closes (the results of actions still in
     * progress find their client released and free what they made), then what the clients held is freed here with no
     * drain (clients see the heartbeat stop). Call once the conductor thread stopped.
     */
    void releaseEveryone(final ControlActions control)
    {
        final List<ServedConnection> connections = new ArrayList<>();
        final List<IpcClient.Region> regions = new ArrayList<>();
        for (final IpcClient client : clients.values())
        {
            client.released = true;
            connections.addAll(client.connections.values());
            regions.addAll(client.regions.values());
            client.answerMemory.close();
        }
        clients.clear();
        served.clear();
        control.close();
        releaseAll(connections, regions, Duration.ZERO);
    }
}
