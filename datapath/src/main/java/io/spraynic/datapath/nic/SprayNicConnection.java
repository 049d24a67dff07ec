package io.spraynic.datapath.nic;

import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;

/**
 * A spray connection of an {@link EmbeddedNic}: the application's {@link NicConnection} and, once the handshake
 * established it, the transport's {@link SprayConnection} it posts to (a worker attaches the connection only then).
 */
public final class SprayNicConnection extends NicConnection
{
    private SprayConnection spray; // set on the worker before it attaches this connection, never null after

    SprayNicConnection(final EmbeddedNic nic, final int worker, final int ringCapacity, final int cqCapacity)
    {
        super(nic, Kind.SPRAY, worker, ringCapacity, cqCapacity);
    }

    /** Joins the established transport connection (worker thread, before the worker attaches this one). */
    void established(final SprayConnection connection)
    {
        this.spray = connection;
        this.localId = connection.localCid();
        this.streams = connection.streams();
    }

    /** @return the transport's connection (worker thread, or tests after a command's completion published it). */
    public SprayConnection spray()
    {
        return spray;
    }

    int transportPostSend(final int stream, final SendWorkRequest request)
    {
        return spray.postSend(stream, request);
    }

    int transportPostReceive(final int stream, final ReceiveWorkRequest request)
    {
        return spray.postReceive(stream, request);
    }

    boolean isTransportIdle()
    {
        return null == spray || spray.isIdle();
    }

    boolean isTransportClosed()
    {
        return null != spray && spray.isClosed();
    }

    void nextHopMac(final int plane, final long mac)
    {
        spray.nextHopMac(plane, mac);
    }

    void onCompletionQueueOverrun()
    {
        // the spray connection sees the overrun on its next tick and goes to error itself
    }

    void bindProtectionDomain(final ProtectionDomain domain)
    {
        spray.protectionDomain(domain);
    }

    void destroy(final WorkerTransport transport)
    {
        if (null != spray && !spray.isClosed())
        {
            ((SprayWorkerTransport)transport).engine().close(spray); // the peer did not answer the CLOSE in time
        }
    }
}
