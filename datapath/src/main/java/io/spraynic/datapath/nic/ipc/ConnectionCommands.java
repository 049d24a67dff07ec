package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.api.DrainReport;
import io.spraynic.datapath.api.RocevEndpoint;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.wire.Wire;

import java.net.InetAddress;
import java.net.UnknownHostException;
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
    private final AnswerSender answers;
    private final ClientSessions sessions;
    private final EmbeddedNic nic;
    private final IpcCounters counters;
    private final IpcConductor.Limits limits;
    private final IpcAnswers.ConnectionReady connectionReady = new IpcAnswers.ConnectionReady();
    private final IpcAnswers.ConnectionClosed connectionClosed = new IpcAnswers.ConnectionClosed();

    ConnectionCommands(final IpcConductor conductor, final AnswerSender answers, final ClientSessions sessions,
        final EmbeddedNic nic, final IpcCounters counters, final IpcConductor.Limits limits)
    {
        this.conductor = conductor;
        this.answers = answers;
        this.sessions = sessions;
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
            answers.respondError(client, correlationId, type, IpcMessages.ERR_BAD_VALUE, "a timeout of " + timeoutMs +
                " ms is not in 1.." + IpcConductor.MAX_TIMEOUT_MS);
            return;
        }
        final NicConnection.Kind required = type == IpcMessages.CREATE_QUEUE_PAIR ?
            NicConnection.Kind.ROCEV2 : NicConnection.Kind.SPRAY;
        if (nic.mode() != required)
        {
            answers.respondError(client, correlationId, type, IpcMessages.ERR_BAD_VALUE, "this NIC runs " + nic.mode() + ": " +
                IpcMessages.name(type) + " needs a " + required + " NIC");
            return;
        }
        if (type == IpcMessages.CONNECT && planes != nic.planes())
        {
            answers.respondError(client, correlationId, type, IpcMessages.ERR_BAD_VALUE, "this NIC has " + nic.planes() +
                " plane(s), the CONNECT names " + planes + ": give the peer's address on each plane");
            return;
        }
        if (type == IpcMessages.CREATE_QUEUE_PAIR && (planes < 0 || planes >= nic.planes()))
        {
            answers.respondError(client, correlationId, type, IpcMessages.ERR_BAD_VALUE, "plane " + planes +
                " is not one of this NIC's 0.." + (nic.planes() - 1));
            return;
        }
        if (client.connections.size() + client.pendingConnections >= limits.maxConnectionsPerClient())
        {
            counters.refusedConnections.incrementRelease();
            answers.respondError(client, correlationId, type, IpcMessages.ERR_LIMIT, "client " + client.id +
                " holds its limit of " + limits.maxConnectionsPerClient() + " connections: close one first, or start " +
                "the NIC with a higher --ipc-max-connections");
            return;
        }
        final int uncollected = sessions.uncollectedConnections(client);
        if (uncollected >= IpcConductor.MAX_UNCOLLECTED_CONNECTIONS)
        {
            counters.refusedUncollected.incrementRelease();
            answers.respondError(client, correlationId, type, IpcMessages.ERR_LIMIT, "client " + client.id + " has " +
                uncollected + " connections being made or whose rings it has not collected with OPEN_MEMORY, its " +
                "limit: collect them first");
            return;
        }
        final InetAddress[] peers = type == IpcMessages.CONNECT ? peerAddresses(client, command) : null;
        if (type == IpcMessages.CONNECT && null == peers)
        {
            return; // refused, with the plane and its reason
        }
        final long connectionId = conductor.nextObjectId();
        client.pendingConnections++;
        conductor.submit(client, correlationId, type, () ->
        {
            final NicConnection c = switch (type)
            {
                case IpcMessages.CONNECT -> nic.connect(peers, Duration.ofMillis(timeoutMs));
                case IpcMessages.ACCEPT -> nic.accept(Duration.ofMillis(timeoutMs));
                default -> nic.createQueuePair(planes);
            };
            if (null == c)
            {
                throw new IllegalStateException("no peer connected within " + timeoutMs + " ms");
            }
            ConnectionRings rings = null;
            try
            {
                nic.bindProtectionDomain(c, client.domain()); // only this client's regions, by lkey or by rkey
                rings = ConnectionRings.create(connectionId);
                final ServedConnection made = new ServedConnection(connectionId, client, c, rings, counters);
                nic.takeRequestsFrom(c, made.requests); // its worker reads the client's ring from now on
                counters.connections.increment();
                return made;
            }
            catch (final RuntimeException ex)
            {
                c.close(Duration.ZERO);
                if (null != rings)
                {
                    rings.close(); // its memfd and mapping: no worker reads them (taking the ring is what failed)
                }
                throw ex;
            }
        }, (ServedConnection made) ->
        {
            if (client.released)
            {
                conductor.releaseLater(() -> // the client went while it was made: bound, its domain was made anew
                {
                    try
                    {
                        releaseConnection(made, Duration.ZERO);
                    }
                    finally
                    {
                        sessions.releaseDomain(client);
                    }
                });
                return;
            }
            sessions.serve(made);
            final NicConnection c = made.connection;
            final int length;
            if (c.kind() == NicConnection.Kind.ROCEV2)
            {
                final RocevEndpoint e = c.rocevEndpoint();
                length = connectionReady.wrap(answers.response, 0).set(made.id, c.kind().ordinal(), c.localId(), c.streams(),
                    c.plane(), e.psn(), e.ipv4(), e.mtu(), e.ipv6High(), e.ipv6Low(), "");
            }
            else
            {
                length = connectionReady.wrap(answers.response, 0).set(made.id, c.kind().ordinal(), c.localId(), c.streams(),
                    c.plane(), 0, 0, 0, 0, 0, "");
            }
            connectionReady.ids(client.id, correlationId);
            answers.answer(client, IpcMessages.CONNECTION_READY, length);
        }, () ->
        {
            client.pendingConnections--;
            if (client.released)
            {
                // it went while this ran: a connection bound and then failed may have made its domain anew
                conductor.releaseLater(() -> sessions.releaseDomain(client));
            }
        });
    }

    /**
     * CONNECT's peer address on each of the NIC's planes (I5.5), checked where it enters: exactly one of {@code ipv4}
     * and {@code ipv6}, unicast, not IPv4-mapped, and of the family of the NIC's address on that plane (a spray path
     * speaks its plane's family). Control path: allocates.
     *
     * @return the addresses, or null when one was refused (answered BAD_VALUE and counted).
     */
    private InetAddress[] peerAddresses(final IpcClient client, final IpcMessages.Connect command)
    {
        if (nic.planes() > IpcMessages.MAX_PLANES)
        {
            // CONNECT has room for MAX_PLANES addresses: a plane past them would be read from another field, or
            // from past the command (what an earlier command left in the copy buffer)
            counters.refusedPeerAddresses.incrementRelease();
            answers.respondError(client, command.correlationId(), IpcMessages.CONNECT, IpcMessages.ERR_BAD_VALUE,
                "this NIC has " + nic.planes() + " planes and CONNECT carries a peer's addresses on at most " +
                IpcMessages.MAX_PLANES + ": ACCEPT the connection instead, or run the NIC with at most " +
                IpcMessages.MAX_PLANES + " planes");
            return null;
        }
        final InetAddress[] peers = new InetAddress[nic.planes()];
        for (int plane = 0; plane < peers.length; plane++)
        {
            final int ipv4 = command.ipv4(plane);
            final long high = command.ipv6High(plane);
            final long low = command.ipv6Low(plane);
            String problem = RocevEndpoint.addressProblem(ipv4, high, low);
            final boolean ipv6 = high != 0 || low != 0;
            final boolean planeHasAddress = nic.speaksIpv6(plane) || nic.localIpv4(plane) != 0; // else the NIC decides
            if (null == problem && planeHasAddress && ipv6 != nic.speaksIpv6(plane))
            {
                problem = (ipv6 ? Wire.ipv6ToString(high, low) : Wire.ipv4ToString(ipv4)) + " is not of the family " +
                    "of this NIC's address " + nic.localAddressText(plane) + ": give the peer's " +
                    (ipv6 ? "IPv4" : "IPv6") + " address on that plane";
            }
            if (null != problem)
            {
                counters.refusedPeerAddresses.incrementRelease();
                answers.respondError(client, command.correlationId(), IpcMessages.CONNECT, IpcMessages.ERR_BAD_VALUE,
                    "CONNECT plane " + plane + ": " + problem);
                return null;
            }
            peers[plane] = ipv6 ? ipv6Address(high, low) : ipv4Address(ipv4);
        }
        return peers;
    }

    private static InetAddress ipv4Address(final int ipv4)
    {
        return address(new byte[]{(byte)(ipv4 >>> 24), (byte)(ipv4 >>> 16), (byte)(ipv4 >>> 8), (byte)ipv4});
    }

    private static InetAddress ipv6Address(final long high, final long low)
    {
        final byte[] bytes = new byte[16];
        for (int i = 0; i < 8; i++)
        {
            bytes[i] = (byte)(high >>> (56 - 8 * i));
            bytes[8 + i] = (byte)(low >>> (56 - 8 * i));
        }
        return address(bytes);
    }

    private static InetAddress address(final byte[] bytes)
    {
        try
        {
            return InetAddress.getByAddress(bytes);
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalStateException(ex); // 4 or 16 bytes: never
        }
    }

    void onConnectQueuePair(final IpcClient client, final IpcMessages.ConnectQueuePair command)
    {
        final long correlationId = command.correlationId();
        final ServedConnection connection = client.connections.get(command.connectionId());
        final int timeoutMs = command.timeoutMs();
        if (null == connection || connection.connection.kind() != NicConnection.Kind.ROCEV2)
        {
            answers.refuseUnknownObject(client, correlationId, IpcMessages.CONNECT_QUEUE_PAIR, "queue pair", command.connectionId());
            return;
        }
        if (timeoutMs <= 0 || timeoutMs > IpcConductor.MAX_TIMEOUT_MS)
        {
            answers.respondError(client, correlationId, IpcMessages.CONNECT_QUEUE_PAIR, IpcMessages.ERR_BAD_VALUE, "a timeout of " +
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
            if (null != RocevEndpoint.addressProblem(command.ipv4(), command.ipv6High(), command.ipv6Low()))
            {
                counters.refusedPeerAddresses.incrementRelease();
            }
            answers.respondError(client, correlationId, IpcMessages.CONNECT_QUEUE_PAIR, IpcMessages.ERR_BAD_VALUE, ex.getMessage());
            return;
        }
        conductor.submit(client, correlationId, IpcMessages.CONNECT_QUEUE_PAIR, () ->
        {
            connection.connection.connect(remote, Duration.ofMillis(timeoutMs));
            return connection;
        }, (ServedConnection done) -> answers.respondOk(client, correlationId, done.id), null);
    }

    void onCloseConnection(final IpcClient client, final IpcMessages.ObjectCommand command)
    {
        final long correlationId = command.correlationId();
        final int timeoutMs = command.timeoutMs();
        if (timeoutMs < 0 || timeoutMs > IpcConductor.MAX_TIMEOUT_MS)
        {
            answers.respondError(client, correlationId, IpcMessages.CLOSE_CONNECTION, IpcMessages.ERR_BAD_VALUE, "a timeout of " +
                timeoutMs + " ms is not in 0.." + IpcConductor.MAX_TIMEOUT_MS);
            return;
        }
        final ServedConnection connection = client.connections.get(command.objectId());
        if (null == connection)
        {
            answers.refuseUnknownObject(client, correlationId, IpcMessages.CLOSE_CONNECTION, "connection", command.objectId());
            return;
        }
        // taken from the client only once a control thread took the close: refused for a busy NIC, the connection
        // stays the client's and served, closed by a retry or when the client goes (the conductor runs nothing else
        // between the submit and the lines after it)
        final boolean taken = conductor.submit(client, correlationId, IpcMessages.CLOSE_CONNECTION,
            () -> releaseConnection(connection, Duration.ofMillis(timeoutMs)),
            (DrainReport.ConnectionDrain drain) ->
            {
                connectionClosed.wrap(answers.response, 0).set(connection.id, drain.postedSends(), drain.postedReceives(),
                    drain.waiting(), drain.idle());
                connectionClosed.ids(client.id, correlationId);
                answers.answer(client, IpcMessages.CONNECTION_CLOSED, IpcAnswers.ConnectionClosed.LENGTH);
            }, null);
        if (taken)
        {
            client.connections.remove(command.objectId());
            sessions.stopServing(connection); // its worker takes what the client posted before closing until it closes
        }
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
