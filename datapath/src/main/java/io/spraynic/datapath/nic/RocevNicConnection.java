package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.RocevEndpoint;
import io.spraynic.datapath.transport.rocev2.RcQueuePair;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;

import java.time.Duration;

/**
 * A RoCEv2 RC queue pair of an {@link EmbeddedNic}: the application's {@link NicConnection} and the transport's
 * {@link RcQueuePair}, made together on the worker, on one plane. It connects out of band: the application hands
 * its {@link #rocevEndpoint()} to the peer and {@link #connect}s to the peer's.
 */
final class RocevNicConnection extends NicConnection
{
    private final int plane;
    private final int localPsn;
    private RcQueuePair queuePair; // set on the worker before it attaches this connection, never null after

    RocevNicConnection(final EmbeddedNic nic, final int worker, final int plane, final int localPsn, final int ringCapacity,
        final int cqCapacity)
    {
        super(nic, Kind.ROCEV2, worker, ringCapacity, cqCapacity);
        this.plane = plane;
        this.localPsn = localPsn;
    }

    /** Joins the queue pair made for it (worker thread, before the worker attaches this one). */
    void created(final RcQueuePair queuePair)
    {
        this.queuePair = queuePair;
        this.localId = queuePair.qpNumber();
    }

    /** @return the transport's queue pair (worker thread). */
    RcQueuePair queuePair()
    {
        return queuePair;
    }

    public int plane()
    {
        return plane;
    }

    /** @return the first PSN this queue pair sends. */
    int localPsn()
    {
        return localPsn;
    }

    public RocevEndpoint rocevEndpoint()
    {
        return nic.rocevEndpoint(this);
    }

    public void connect(final RocevEndpoint remote, final Duration timeout)
    {
        nic.connectQueuePair(this, remote, timeout);
    }

    int transportPostSend(final int stream, final SendWorkRequest request)
    {
        return queuePair.postSend(request);
    }

    int transportPostReceive(final int stream, final ReceiveWorkRequest request)
    {
        return queuePair.postReceive(request);
    }

    boolean isTransportIdle()
    {
        return null == queuePair || queuePair.outstandingSends() == 0;
    }

    boolean isTransportClosed()
    {
        return false; // a queue pair closes only when its application closes it
    }

    void nextHopMac(final int plane, final long mac)
    {
        if (plane == this.plane)
        {
            queuePair.nextHopMac(mac);
        }
    }

    void onCompletionQueueOverrun()
    {
        queuePair.toError(); // a CQ overrun is an error of the queue pair using it, as in IB
    }

    void bindProtectionDomain(final ProtectionDomain domain)
    {
        queuePair.protectionDomain(domain);
    }

    void destroy(final WorkerTransport transport)
    {
        ((RocevWorkerTransport)transport).engine(plane).destroyQueuePair(queuePair);
    }
}
