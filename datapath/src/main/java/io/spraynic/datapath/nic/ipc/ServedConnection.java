package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.nic.NicConnection;

/**
 * One connection a client of an {@link IpcConductor} holds: the NIC's connection, the file of rings it shares with
 * the client, and the reader of its request ring, which the connection's worker runs ({@link ClientRequestRing}: the
 * worker takes the client's posts and hands back completions with no conductor in between). Conductor thread only.
 */
final class ServedConnection
{
    final long id;
    final IpcClient client;
    final NicConnection connection;
    final ConnectionRings rings;
    final ClientRequestRing requests;
    /** When the client must have collected the rings (OPEN_MEMORY) by, else the connection is closed. */
    long collectByMs;

    ServedConnection(final long id, final IpcClient client, final NicConnection connection, final ConnectionRings rings,
        final IpcCounters counters)
    {
        this.id = id;
        this.client = client;
        this.connection = connection;
        this.rings = rings;
        this.requests = new ClientRequestRing(rings, counters);
    }
}
