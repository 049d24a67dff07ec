package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.RocevEndpoint;
import io.spraynic.datapath.telemetry.CounterMirror;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.telemetry.SprayGauges;
import io.spraynic.datapath.transport.rocev2.RcConnectionAttributes;
import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.transport.rocev2.RcQueuePair;
import io.spraynic.datapath.transport.spray.RejectReason;
import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.transport.spray.SprayConnectionConfig;
import io.spraynic.datapath.transport.spray.SprayCounters;
import io.spraynic.datapath.transport.spray.SprayEngine;
import io.spraynic.datapath.transport.spray.SprayHandshake;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.pmd.InterfaceAddress;

import java.net.InetAddress;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

/**
 * Opening connections of an {@link EmbeddedNic}: spray connections this end opens ({@link #connect}) or a peer opens
 * (the engines' listeners, {@link #accept}), and RoCEv2 queue pairs ({@link #createQueuePair}, then
 * {@link #connectQueuePair} with the peer's attributes). Each new connection goes to the next worker in turn.
 */
final class ConnectionControl
{
    /**
     * A path's counters in the file; its ACKs taken show when it went silent, against its timeouts and losses (issue
     * 14: how long a dead link goes unnoticed).
     */
    private static final int[] PATH_SLOTS = {SprayCounters.TX_PACKETS, SprayCounters.TX_BYTES,
        SprayCounters.RX_PACKETS, SprayCounters.RETRANSMITTED, SprayCounters.LOST, SprayCounters.ECN_MARKS_RECEIVED,
        SprayCounters.SACK_GAPS, SprayCounters.TIMEOUTS, SprayCounters.MOVED, SprayCounters.ACKS_RECEIVED};

    private final EmbeddedNic nic;
    private final EmbeddedNicConfig config;
    private final CountersFile counters;
    private final WorkerCalls calls;
    private final NicNeighbours neighbours;
    private final ConnectionRegistry registry;
    private final SplittableRandom random = new SplittableRandom();
    private int nextWorker;

    ConnectionControl(final EmbeddedNic nic, final EmbeddedNicConfig config, final CountersFile counters,
        final WorkerCalls calls, final NicNeighbours neighbours, final ConnectionRegistry registry)
    {
        this.nic = nic;
        this.config = config;
        this.counters = counters;
        this.calls = calls;
        this.neighbours = neighbours;
        this.registry = registry;
    }

    /** @return {@code peerIpv4} as 128-bit addresses (IPv4-mapped): {@code {high[], low[]}}. */
    static long[][] addresses(final int[] peerIpv4)
    {
        final long[] high = new long[peerIpv4.length];
        final long[] low = new long[peerIpv4.length];
        for (int p = 0; p < low.length; p++)
        {
            low[p] = InterfaceAddress.mappedLow(peerIpv4[p]);
        }
        return new long[][]{high, low};
    }

    /** @return {@code peers} as 128-bit addresses (IPv4-mapped for IPv4): {@code {high[], low[]}}. */
    static long[][] addresses(final InetAddress[] peers)
    {
        final long[] high = new long[peers.length];
        final long[] low = new long[peers.length];
        for (int p = 0; p < peers.length; p++)
        {
            final byte[] b = peers[p].getAddress();
            final byte[] a = b.length == 16 ? b : new byte[]{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, b[0], b[1], b[2], b[3]};
            for (int i = 0; i < 8; i++)
            {
                high[p] = high[p] << 8 | (a[i] & 0xFF);
                low[p] = low[p] << 8 | (a[i + 8] & 0xFF);
            }
        }
        return new long[][]{high, low};
    }

    /** Makes {@code worker}'s spray engine accept CONNECTs; what it accepts waits for {@link #accept}. */
    void listen(final NicWorker worker)
    {
        final SprayWorkerTransport transport = (SprayWorkerTransport)worker.transport();
        final SprayConnectionConfig template = new SprayConnectionConfig().paths(config.paths).streams(config.streams)
            .mtu(config.mtu).depths(config.sendQueueDepth, config.receiveQueueDepth, config.receiveQueueDepth);
        transport.engine().listen(template, config.peerResolver, new SprayHandshake.AcceptListener()
        {
            private SprayNicConnection accepting;
            private long[] peerHigh;
            private long[] peerLow;

            public void onAccepting(final SprayConnectionConfig c)
            {
                accepting = new SprayNicConnection(nic, worker.index(), config.ringCapacity, config.completionQueueCapacity);
                c.completionQueues(accepting.sendCompletionQueue(), accepting.receiveCompletionQueue())
                    .sourcePortBase(sourcePortBase(config.paths));
                peerHigh = new long[config.planes()]; // the handshake learnt the peer's addresses before this
                peerLow = new long[config.planes()];
                for (int p = 0; p < peerHigh.length; p++)
                {
                    peerHigh[p] = c.remoteHigh(p);
                    peerLow[p] = c.remoteLow(p);
                }
            }

            public void onAccepted(final SprayConnection connection)
            {
                final SprayNicConnection handle = accepting;
                accepting = null;
                if (!registry.admitAccepted(handle))
                {
                    // over the limit (counted): CLOSE it on the wire, so that a well-behaved peer learns of it at once
                    if (!transport.engine().close(connection, config.clock.nanoTime()))
                    {
                        transport.engine().close(connection);
                    }
                    return;
                }
                attachSpray(worker, handle, connection);
                neighbours.follow(worker, handle, connection, peerHigh, peerLow);
                if (!registry.offerAccepted(handle))
                {
                    transport.engine().close(connection); // nobody is accepting: refuse rather than grow without bound
                    worker.detach(handle);
                    registry.release(handle);
                }
            }
        });
    }

    /** See {@link EmbeddedNic#connect(InetAddress[], Duration)}; each address as 128 bits. */
    NicConnection connect(final long[] peerHigh, final long[] peerLow, final Duration timeout)
    {
        if (peerHigh.length != config.planes())
        {
            throw new IllegalArgumentException("give the peer's address on each of the " + config.planes() + " plane(s)");
        }
        final String peerText = InterfaceAddress.text(peerHigh[0], peerLow[0]);
        final NextHops hops = neighbours.nextHops(peerHigh, peerLow);
        final long[] peerMac = neighbours.resolve(hops, timeout);
        final NicWorker worker = nextWorker();
        final SprayNicConnection handle = new SprayNicConnection(nic, worker.index(), config.ringCapacity,
            config.completionQueueCapacity);
        registry.admitOpened(handle); // the NIC's stated limit refuses the one over, not an engine's table
        neighbours.use(handle, hops);
        try
        {
            return connect(worker, handle, peerHigh, peerLow, peerMac, peerText, timeout);
        }
        catch (final RuntimeException e)
        {
            registry.abandonOpened(handle);
            neighbours.unfollow(handle);
            throw e;
        }
    }

    private NicConnection connect(final NicWorker worker, final SprayNicConnection handle, final long[] peerHigh,
        final long[] peerLow, final long[] peerMac, final String peerText, final Duration timeout)
    {
        final int sourcePortBase = sourcePortBase(config.paths);
        final CompletableFuture<NicConnection> established = new CompletableFuture<>();
        final boolean offered = worker.offer((w, now) ->
        {
            final SprayEngine engine = ((SprayWorkerTransport)w.transport()).engine();
            // CID 0: the engine draws a random one in its partition, and the initial PSN (S12.2)
            final SprayConnectionConfig c = new SprayConnectionConfig().cids(0, 0).paths(config.paths)
                .streams(config.streams).mtu(config.mtu).sourcePortBase(sourcePortBase)
                .depths(config.sendQueueDepth, config.receiveQueueDepth, config.receiveQueueDepth)
                .completionQueues(handle.sendCompletionQueue(), handle.receiveCompletionQueue());
            for (int p = 0; p < peerHigh.length; p++)
            {
                if (InterfaceAddress.isMapped(peerHigh[p], peerLow[p]))
                {
                    c.remote(p, (int)peerLow[p], peerMac[p]);
                }
                else
                {
                    c.remoteIpv6(p, peerHigh[p], peerLow[p], peerMac[p]);
                }
            }
            final SprayHandshake.Pending pending;
            try
            {
                // CONNECTs until shortly before the caller stops waiting, so that it learns "no answer" rather than a timeout
                pending = engine.connect(c, now, now + timeout.toNanos() - timeout.toNanos() / 8);
            }
            catch (final IllegalStateException e)
            {
                established.completeExceptionally(new IllegalStateException("cannot connect to " +
                    peerText + " from worker " + w.index() + ": " + e.getMessage()));
                return;
            }
            final Runnable[] poller = new Runnable[1];
            poller[0] = () ->
            {
                if (pending.state() == SprayHandshake.Pending.State.ESTABLISHED)
                {
                    w.removePoller(poller[0]);
                    attachSpray(w, handle, pending.connection());
                    neighbours.refresh(w, handle.nextHop); // a MAC that changed during the handshake
                    established.complete(handle);
                }
                else if (pending.state() == SprayHandshake.Pending.State.FAILED)
                {
                    w.removePoller(poller[0]);
                    established.completeExceptionally(new IllegalStateException(
                        pending.reason() == RejectReason.NO_ANSWER ? "no answer from " + peerText +
                        " after " + pending.tries() + " CONNECTs: is a spray NIC listening there, are the addresses " +
                        "right, and do both NICs hold the same pre-shared key (if any)?" :
                        "connect to " + peerText + " failed: " + pending.failure()));
                }
            };
            w.addPoller(poller[0]);
        });
        if (!offered)
        {
            throw new IllegalStateException("worker " + worker.index() + " has too many control commands queued: retry");
        }
        return WorkerCalls.await(established, timeout, "connect to " + peerText);
    }

    /** See {@link EmbeddedNic#accept}. */
    NicConnection accept(final Duration timeout)
    {
        final long deadline = System.nanoTime() + timeout.toNanos();
        while (true)
        {
            final NicConnection c = registry.pollAccepted();
            if (null != c || System.nanoTime() >= deadline)
            {
                return c;
            }
            WorkerCalls.sleepBriefly();
        }
    }

    /** See {@link EmbeddedNic#createQueuePair}. */
    NicConnection createQueuePair(final int plane)
    {
        if (plane < 0 || plane >= config.planes())
        {
            throw new IllegalArgumentException("plane " + plane + " is not one of this NIC's 0.." + (config.planes() - 1));
        }
        final NicWorker worker = nextWorker();
        final int psn;
        synchronized (random)
        {
            psn = random.nextInt(1 << 24);
        }
        final RocevNicConnection handle = new RocevNicConnection(nic, worker.index(), plane, psn, config.ringCapacity,
            config.completionQueueCapacity);
        return WorkerCalls.call(worker, (w, now) ->
        {
            final RcEngine engine = ((RocevWorkerTransport)w.transport()).engine(plane);
            final RcQueuePair qp = engine.createQueuePair(handle.sendCompletionQueue(), handle.receiveCompletionQueue(),
                config.sendQueueDepth, config.receiveQueueDepth);
            qp.toInit(AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
            handle.created(qp);
            w.attach(handle);
            registry.add(handle);
            return handle;
        }, EmbeddedNic.CONTROL_TIMEOUT, "create a queue pair");
    }

    /** @return the local half of a queue pair's connection attributes. */
    RocevEndpoint rocevEndpoint(final RocevNicConnection c)
    {
        final InterfaceAddress address = config.addresses[c.plane()];
        return null != address && address.isIpv6() ?
            new RocevEndpoint(c.localId, c.localPsn(), 0, config.mtu, address.ipv6High(), address.ipv6Low()) :
            new RocevEndpoint(c.localId, c.localPsn(), config.localIpv4[c.plane()], config.mtu);
    }

    /** Resolves the peer's next hop and moves the queue pair INIT to RTR to RTS on its worker. */
    void connectQueuePair(final RocevNicConnection c, final RocevEndpoint remote, final Duration timeout)
    {
        final int plane = c.plane();
        final NextHops hops = NextHops.none(config.planes());
        final long remoteHigh = remote.isIpv6() ? remote.ipv6High() : InterfaceAddress.MAPPED_HIGH;
        final long remoteLow = remote.isIpv6() ? remote.ipv6Low() : InterfaceAddress.mappedLow(remote.ipv4());
        neighbours.nextHop(plane, remoteHigh, remoteLow, hops);
        final long mac = neighbours.resolve(hops, timeout)[plane];
        neighbours.use(c, hops);
        RcConnectionAttributes rc = RcConnectionAttributes.of(remote.qpNumber(), mac, remote.ipv4(),
            49152 + (c.localId & 0x3FFF), Math.min(config.mtu, remote.mtu()), c.localPsn(), remote.psn())
            .withRetry(config.rocevAckTimeoutNanos, config.rocevRetries);
        if (remote.isIpv6())
        {
            final InterfaceAddress local = config.addresses[plane]; // the next hop above checked it is IPv6
            rc = rc.withIpv6(local.ipv6High(), local.ipv6Low(), remote.ipv6High(), remote.ipv6Low());
        }
        final RcConnectionAttributes attributes = rc;
        WorkerCalls.call(calls.worker(c.worker()), (w, now) ->
        {
            c.queuePair().toRtr(attributes);
            c.queuePair().toRts();
            return c;
        }, timeout, "connect queue pair 0x" + Integer.toHexString(c.localId));
        neighbours.refresh(calls.worker(c.worker()), hops); // a MAC that changed since it was resolved above
    }

    private int sourcePortBase(final int paths)
    {
        synchronized (random)
        {
            return 49152 + random.nextInt(16384 - paths);
        }
    }

    /** Worker thread: joins the established transport connection, mirrors its counters, and starts taking its posts. */
    private void attachSpray(final NicWorker worker, final SprayNicConnection handle, final SprayConnection connection)
    {
        handle.established(connection);
        final String prefix = "conn 0x" + Integer.toHexString(connection.localCid()) + ": ";
        final CounterMirror[] mirrors = new CounterMirror[1 + connection.paths()];
        mirrors[0] = new CounterMirror(counters, prefix, connection.counters(), SprayCounters.connectionSlots());
        // a path's counters are lent for a traffic period and zeroed when given back: the file shows the periods
        // folded here plus the current one, read through the connection at each publish (this thread)
        final SprayPathTotals pathTotals = new SprayPathTotals(connection, PATH_SLOTS, SprayCounters.SLOT_COUNT);
        connection.foldPathCountersInto(pathTotals);
        handle.pathTotals(pathTotals);
        for (int p = 0; p < connection.paths(); p++)
        {
            final int path = p;
            mirrors[1 + p] = new CounterMirror(counters, prefix + "path " + p + " ",
                slot -> pathTotals.get(path, slot), SprayCounters::label, PATH_SLOTS);
        }
        handle.mirrors = mirrors;
        handle.gauges = new SprayGauges(counters, prefix, connection);
        worker.attach(handle);
        registry.add(handle);
    }

    private synchronized NicWorker nextWorker()
    {
        final NicWorker[] workers = calls.workers();
        final NicWorker worker = workers[nextWorker];
        nextWorker = (nextWorker + 1) % workers.length;
        return worker;
    }
}
