package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.api.DrainReport;
import io.spraynic.datapath.api.RocevEndpoint;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.NicConnection;

import java.time.Duration;

/**
 * The {@link IpcConductor}'s connection commands: CONNECT, ACCEPT and CREATE_QUEUE_PAIR (a connection bound to the
 * client's protection domain, with sealed memory of rings its worker reads, {@link ConnectionRings}), CONNECT_QUEUE_PAIR and
 * CLOSE_CONNECTION. Every field is checked on the conductor; what waits on the NIC runs on a control thread.
 * Conductor thread only, except {@link #releaseConnection}.
 */
final class ConnectionCommands
{
    private final IpcConductor conductor;
    private final EmbeddedNic nic;
    private final IpcCounters counters;
    private final IpcConductor.Limits limits;
    private final IpcMessages.ConnectionReady connectionReady = new IpcMessages.ConnectionReady();
    private final IpcMessages.ConnectionClosed connectionClosed = new IpcMessages.ConnectionClosed();

    ConnectionCommands(final IpcConductor conductor, final EmbeddedNic nic, final IpcCounters counters,
        final IpcConductor.Limits limits)
    {
        this.conductor = conductor;
        this.nic = nic;
        this.counters = counters;
        this.limits = limits;
    }

    void onConnect(final IpcClient client, final int type, final IpcMessages.Connect command)
    {
        final long correlationId = command.correlationId();
        final int timeoutMs = command.timeoutMs();
        final int planes = command.planes();
        if (type != IpcMessages.CREATE_QUEUE_PAIR && (timeoutMs <= 0 || timeoutMs > IpcConductor.MAX_TIMEOUT_MS))
        {
            conductor.respondError(client, correlationId, type, IpcMessages.ERR_BAD_VALUE, "a timeout of " + timeoutMs +
                " ms is not in 1.." + IpcConductor.MAX_TIMEOUT_MS);
            return;
        }
        final NicConnection.Kind required = type == IpcMessages.CREATE_QUEUE_PAIR ?
            NicConnection.Kind.ROCEV2 : NicConnection.Kind.SPRAY;
        if (nic.mode() != required)
        {
            conductor.respondError(client, correlationId, type, IpcMessages.ERR_BAD_VALUE, "this NIC runs " + nic.mode() + ": " +
                IpcMessages.name(type) + " needs a " + required + " NIC");
            return;
        }
        if (type == IpcMessages.CONNECT && planes != nic.planes())
        {
            conductor.respondError(client, correlationId, type, IpcMessages.ERR_BAD_VALUE, "this NIC has " + nic.planes() +
                " plane(s), the CONNECT names " + planes + ": give the peer's address on each plane");
            return;
        }
        if (type == IpcMessages.CREATE_QUEUE_PAIR && (planes < 0 || planes >= nic.planes()))
        {
            conductor.respondError(client, correlationId, type, IpcMessages.ERR_BAD_VALUE, "plane " + planes +
                " is not one of this NIC's 0.." + (nic.planes() - 1));
            return;
        }
        if (client.connections.size() + client.pendingConnections >= limits.maxConnectionsPerClient())
        {
            counters.refusedConnections.incrementRelease();
            conductor.respondError(client, correlationId, type, IpcMessages.ERR_LIMIT, "client " + client.id +
                " holds its limit of " + limits.maxConnectionsPerClient() + " connections: close one first, or start " +
                "the NIC with a higher --ipc-max-connections");
            return;
        }
        final int[] ips = new int[type == IpcMessages.CONNECT ? Math.min(planes, IpcMessages.MAX_PLANES) : 0];
        for (int p = 0; p < ips.length; p++)
        {
            ips[p] = command.ipv4(p);
        }
        final long connectionId = conductor.nextObjectId();
        client.pendingConnections++;
        conductor.submit(client, correlationId, type, () ->
        {
            final NicConnection c = switch (type)
            {
                case IpcMessages.CONNECT -> nic.connect(ips, Duration.ofMillis(timeoutMs));
                case IpcMessages.ACCEPT -> nic.accept(Duration.ofMillis(timeoutMs));
                default -> nic.createQueuePair(planes);
            };
            if (null == c)
            {
                throw new IllegalStateException("no peer connected within " + timeoutMs + " ms");
            }
            try
            {
                nic.bindProtectionDomain(c, client.domain()); // only this client's regions, by lkey or by rkey
                final ServedConnection made = new ServedConnection(connectionId, client, c,
                    ConnectionRings.create(connectionId), counters);
                nic.takeRequestsFrom(c, made.requests); // its worker reads the client's ring from now on
                counters.connections.increment();
                return made;
            }
            catch (final RuntimeException ex)
            {
                c.close(Duration.ZERO);
                throw ex;
            }
        }, (ServedConnection made) ->
        {
            if (client.released)
            {
                conductor.releaseLater(() -> releaseConnection(made, Duration.ZERO));
                return;
            }
            client.connections.put(made.id, made);
            conductor.served.add(made);
            final NicConnection c = made.connection;
            final int length;
            if (c.kind() == NicConnection.Kind.ROCEV2)
            {
                final RocevEndpoint e = c.rocevEndpoint();
                length = connectionReady.wrap(conductor.response, 0).set(made.id, c.kind().ordinal(), c.localId(), c.streams(),
                    c.plane(), e.psn(), e.ipv4(), e.mtu(), e.ipv6High(), e.ipv6Low(), "");
            }
            else
            {
                length = connectionReady.wrap(conductor.response, 0).set(made.id, c.kind().ordinal(), c.localId(), c.streams(),
                    c.plane(), 0, 0, 0, 0, 0, "");
            }
            connectionReady.ids(client.id, correlationId);
            conductor.answer(client, IpcMessages.CONNECTION_READY, length);
        }, () -> client.pendingConnections--);
    }

    void onConnectQueuePair(final IpcClient client, final IpcMessages.ConnectQueuePair command)
    {
        final long correlationId = command.correlationId();
        final ServedConnection connection = client.connections.get(command.connectionId());
        final int timeoutMs = command.timeoutMs();
        if (null == connection || connection.connection.kind() != NicConnection.Kind.ROCEV2)
        {
            conductor.refuseUnknownObject(client, correlationId, IpcMessages.CONNECT_QUEUE_PAIR, "queue pair", command.connectionId());
            return;
        }
        if (timeoutMs <= 0 || timeoutMs > IpcConductor.MAX_TIMEOUT_MS)
        {
            conductor.respondError(client, correlationId, IpcMessages.CONNECT_QUEUE_PAIR, IpcMessages.ERR_BAD_VALUE, "a timeout of " +
                timeoutMs + " ms is not in 1.." + IpcConductor.MAX_TIMEOUT_MS);
            return;
        }
        final RocevEndpoint remote;
        try
        {
            remote = new RocevEndpoint(command.qpn(), command.psn(), command.ipv4(), command.mtu(), command.ipv6High(),
                command.ipv6Low()); // checks the address too: exactly one of the two, unicast, not IPv4-mapped
        }
        catch (final IllegalArgumentException ex)
        {
            conductor.respondError(client, correlationId, IpcMessages.CONNECT_QUEUE_PAIR, IpcMessages.ERR_BAD_VALUE, ex.getMessage());
            return;
        }
        conductor.submit(client, correlationId, IpcMessages.CONNECT_QUEUE_PAIR, () ->
        {
            connection.connection.connect(remote, Duration.ofMillis(timeoutMs));
            return connection;
        }, (ServedConnection done) -> conductor.respondOk(client, correlationId, done.id), null);
    }

    void onCloseConnection(final IpcClient client, final IpcMessages.ObjectCommand command)
    {
        final long correlationId = command.correlationId();
        final int timeoutMs = command.timeoutMs();
        if (timeoutMs < 0 || timeoutMs > IpcConductor.MAX_TIMEOUT_MS)
        {
            conductor.respondError(client, correlationId, IpcMessages.CLOSE_CONNECTION, IpcMessages.ERR_BAD_VALUE, "a timeout of " +
                timeoutMs + " ms is not in 0.." + IpcConductor.MAX_TIMEOUT_MS);
            return;
        }
        final ServedConnection connection = client.connections.remove(command.objectId());
        if (null == connection)
        {
            conductor.refuseUnknownObject(client, correlationId, IpcMessages.CLOSE_CONNECTION, "connection", command.objectId());
            return;
        }
        conductor.served.remove(connection); // its worker takes what the client posted before closing until the connection closes
        conductor.submit(client, correlationId, IpcMessages.CLOSE_CONNECTION,
            () -> releaseConnection(connection, Duration.ofMillis(timeoutMs)),
            (DrainReport.ConnectionDrain drain) ->
            {
                connectionClosed.wrap(conductor.response, 0).set(connection.id, drain.postedSends(), drain.postedReceives(),
                    drain.waiting(), drain.idle());
                connectionClosed.ids(client.id, correlationId);
                conductor.answer(client, IpcMessages.CONNECTION_CLOSED, IpcMessages.ConnectionClosed.LENGTH);
            }, null);
    }

    /**
     * Control thread: closes the NIC's connection and unmaps its rings. The connection's worker reads the rings until
     * it let go of the connection: when the close did not confirm that (it failed or timed out), the mapping stays
     * (deliberately leaked until the process ends).
     */
    DrainReport.ConnectionDrain releaseConnection(final ServedConnection connection, final Duration timeout)
    {
        try
        {
            final DrainReport.ConnectionDrain drain = connection.connection.close(timeout);
            connection.rings.close();
            return drain;
        }
        finally
        {
            counters.connections.decrement();
        }
    }
}
