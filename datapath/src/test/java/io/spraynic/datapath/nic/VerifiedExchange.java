package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.BulkTransfer;
import io.spraynic.datapath.api.DrainReport;
import io.spraynic.datapath.api.ReceiveRequest;
import io.spraynic.datapath.api.RocevEndpoint;
import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The datapath tests' verified transfer between two NICs of this process: each registers a buffer of
 * pseudo-random bytes and a target, they connect (spray: on the wire, the server accepting; RoCEv2: queue pairs
 * on plane 0 handed each other's attributes as text, as out of band), both RDMA-WRITE their bytes into the other's
 * target at once over every stream through {@link BulkTransfer} (the one post/poll loop), the last write with
 * immediate data, and each checks every byte it received. Both NICs are closed (drained) before it returns.
 * <p>
 * The same exchange across processes, through a directory, is the tools' {@code PeerExchange} (apps module), which
 * the datapath cannot depend on.
 */
public final class VerifiedExchange
{
    /** Seeds of each side's pattern. */
    private static final long CLIENT_SEED = 0x5EED_0001L;
    private static final long SERVER_SEED = 0x5EED_0002L;

    /**
     * What one side found.
     *
     * @param verified      every byte the peer wrote is what its seed says.
     * @param bytesEachWay  bytes written in each direction.
     * @param firstMismatch the first wrong byte, -1 when none.
     * @param peerAddress   the peer's plane-0 address as this side named it (IPv6 text or IPv4).
     * @param drain         what closing its NIC found.
     */
    public record Result(String role, NicConnection.Kind mode, boolean verified, long bytesEachWay, long firstMismatch,
        String peerAddress, DrainReport drain)
    {
        /** @return one line for assertion messages. */
        public String describe()
        {
            return role + " " + mode + ": verified=" + verified + " bytes=" + bytesEachWay + " firstMismatch=" +
                firstMismatch + " peer=" + peerAddress + " drained=" + drain.drained();
        }
    }

    /** Both sides of one exchange. */
    public record Pair(Result client, Result server)
    {
        /** @return whether both sides verified every byte. */
        public boolean verified()
        {
            return client.verified() && server.verified();
        }

        /** @return both sides, for assertion messages. */
        public String describe()
        {
            return client.describe() + " / " + server.describe();
        }
    }

    private VerifiedExchange()
    {
    }

    /**
     * Runs the exchange; the server's NIC must listen in spray mode. Both NICs are closed before it returns, also
     * when it fails (their workers stop before the memory of posted work is freed).
     *
     * @param bytes        to write each way.
     * @param messageBytes per RDMA WRITE.
     * @param timeout      for each wait.
     */
    public static Pair runBoth(final EmbeddedNic client, final EmbeddedNic server, final long bytes,
        final int messageBytes, final Duration timeout) throws Exception
    {
        try (Arena arena = Arena.ofShared())
        {
            try
            {
                return exchange(client, server, bytes, messageBytes, timeout, arena);
            }
            finally
            {
                client.close(Duration.ZERO); // a no-op after the drained close of a run that succeeded
                server.close(Duration.ZERO);
            }
        }
    }

    private static Pair exchange(final EmbeddedNic client, final EmbeddedNic server, final long bytes,
        final int messageBytes, final Duration timeout, final Arena arena) throws Exception
    {
        final Side clientSide = new Side(client, SeededPattern.allocate(arena, bytes, CLIENT_SEED),
            arena.allocate(bytes, 64));
        final Side serverSide = new Side(server, SeededPattern.allocate(arena, bytes, SERVER_SEED),
            arena.allocate(bytes, 64));
        final String serverAddress = server.localAddressText(0);
        final String clientAddress = client.localAddressText(0);
        if (client.mode() == NicConnection.Kind.SPRAY)
        {
            final InetAddress[] peers = new InetAddress[client.planes()];
            for (int p = 0; p < peers.length; p++)
            {
                peers[p] = InetAddress.ofLiteral(server.localAddressText(p)); // a literal, never a name lookup
            }
            clientSide.connection = client.connect(peers, timeout);
            serverSide.connection = server.accept(timeout);
            if (null == serverSide.connection)
            {
                throw new IllegalStateException("the server accepted no connection within " + timeout.toMillis() + " ms");
            }
        }
        else
        {
            clientSide.connection = client.createQueuePair(0);
            serverSide.connection = server.createQueuePair(0);
            final String clientEndpoint = clientSide.connection.rocevEndpoint().format();
            clientSide.connection.connect(RocevEndpoint.parse(serverSide.connection.rocevEndpoint().format()), timeout);
            serverSide.connection.connect(RocevEndpoint.parse(clientEndpoint), timeout);
        }
        clientSide.postReceive();
        serverSide.postReceive();
        final CompletableFuture<Void> served = CompletableFuture.runAsync(() -> serverSide.writeInto(clientSide,
            messageBytes, timeout));
        clientSide.writeInto(serverSide, messageBytes, timeout);
        served.get(timeout.multipliedBy(2).toNanos(), TimeUnit.NANOSECONDS);
        final long clientMismatch = clientSide.target.mismatch(serverSide.source);
        final long serverMismatch = serverSide.target.mismatch(clientSide.source);
        final DrainReport clientDrain = client.close(timeout);
        final DrainReport serverDrain = server.close(timeout);
        return new Pair(
            new Result("client", client.mode(), clientMismatch == -1, bytes, clientMismatch, serverAddress, clientDrain),
            new Result("server", server.mode(), serverMismatch == -1, bytes, serverMismatch, clientAddress, serverDrain));
    }

    /** One NIC's memory and its end of the connection. */
    private static final class Side
    {
        final EmbeddedNic nic;
        final MemorySegment source;
        final MemorySegment target;
        final MemoryRegion local;
        final MemoryRegion inbound;
        NicConnection connection;

        Side(final EmbeddedNic nic, final MemorySegment source, final MemorySegment target)
        {
            this.nic = nic;
            this.source = source;
            this.target = target;
            this.local = nic.register(source, AccessFlags.NONE);
            this.inbound = nic.register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        }

        void postReceive()
        {
            if (connection.postReceive(0, new ReceiveRequest().wrId(1).buffer(null, 0, 0)) != PostResult.OK)
            {
                throw new IllegalStateException("could not post the receive for the peer's last write");
            }
        }

        /** Writes this side's bytes into the peer's target and waits for the peer's last write into ours. */
        void writeInto(final Side peer, final int messageBytes, final Duration timeout)
        {
            BulkTransfer.write(connection, local, peer.inbound.address(), peer.inbound.rkey(), messageBytes, true, timeout);
            BulkTransfer.awaitImmediate(connection, timeout);
        }
    }
}
