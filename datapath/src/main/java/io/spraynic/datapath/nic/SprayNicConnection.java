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
    private SprayPathTotals pathTotals; // set with it, by the worker that attaches it

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

    /** Keeps the per-path totals the worker folds the connection's traffic periods into (worker thread). */
    void pathTotals(final SprayPathTotals totals)
    {
        this.pathTotals = totals;
    }

    /**
     * A per-path counter since the connection opened: the connection's own per-path counters cover only its current
     * traffic period (they are lent with its tables), so the periods given back are added here.
     *
     * @param path a path. @param slot a {@link io.spraynic.datapath.transport.spray.SprayCounters} path slot.
     * @return its value; 0 before the connection was established or for a slot the totals do not keep. Worker
     * thread, or another thread once the connection is quiet (then exact).
     */
    public long pathTotal(final int path, final int slot)
    {
        final SprayPathTotals totals = pathTotals;
        return null == totals ? 0 : totals.get(path, slot);
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
