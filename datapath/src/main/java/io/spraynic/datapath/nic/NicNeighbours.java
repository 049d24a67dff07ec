package io.spraynic.datapath.nic;

import io.spraynic.datapath.neighbour.NeighbourAgent;
import io.spraynic.datapath.neighbour.NeighbourCache;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.telemetry.CounterMirror;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.pmd.InterfaceAddress;
import org.agrona.concurrent.status.AtomicCounter;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The control side of an {@link EmbeddedNic}'s neighbours: makes a {@link NeighbourAgent} per plane that has an
 * address (they run on worker 0, which answers ARP and echo and resolves for the whole NIC), chooses each peer's
 * next hop (the peer on-link, the plane's gateway off-link), resolves next hops before a connection starts, and
 * carries every next hop's new MAC to each worker's connections. Control path: it may allocate.
 */
final class NicNeighbours
{
    /** How often worker 0 tries again to give a worker the next hops' MACs it missed. */
    static final long RESYNC_INTERVAL_NANOS = 10_000_000L;

    private final EmbeddedNicConfig config;
    private final long[] localMac;
    private final CountersFile counters;
    private AtomicCounter updatesDeferred; // made with the agents
    private NeighbourAgent[] agents;
    private PortFrameSink[] sinks;
    private NicWorker[] workers;
    // any thread to worker 0's: a connection that follows a next hop or no longer does, or a worker to be told a next
    // hop's MAC now (a connection attached there)
    private final ConcurrentLinkedQueue<NextHopRequest> followChanges = new ConcurrentLinkedQueue<>();

    /** @param kind +1 follow, -1 unfollow (for {@code connection}), 0 tell worker {@code worker} the MAC. */
    private record NextHopRequest(int kind, int plane, long high, long low, NicConnection connection, int worker)
    {
    }
    // worker 0's thread: the workers whose command queue was full when a next hop's MAC changed
    private boolean[] missedUpdate;
    private boolean anyMissed;
    private long nextResyncNanos;

    NicNeighbours(final EmbeddedNicConfig config, final long[] localMac, final CountersFile counters)
    {
        this.config = config;
        this.localMac = localMac;
        this.counters = counters;
    }

    /** @param workers the NIC's workers, worker 0 running the agents. */
    void workers(final NicWorker[] workers)
    {
        this.workers = workers;
        this.missedUpdate = new boolean[workers.length];
    }

    /** Gives worker 0 the agents and their sinks (before it starts), and the resync of workers that missed an update. */
    void attach(final NicWorker worker)
    {
        worker.neighbours(agents, sinks, this::onTick);
    }

    // control path, at construction: worker 0 answers and resolves for every plane that has an address
    void addAgents(final PacketPort[] ports, final String prefix, final List<CounterMirror> mirrors)
    {
        final int planes = config.planes();
        updatesDeferred = counters.newCounter("neighbour: next-hop MAC updates deferred (worker command queue full)");
        agents = new NeighbourAgent[planes];
        sinks = new PortFrameSink[planes];
        for (int p = 0; p < planes; p++)
        {
            if (null == config.addresses[p] || !config.linkLayer)
            {
                continue;
            }
            sinks[p] = new PortFrameSink(ports[p], 8, config.maxFrameLength);
            agents[p] = new NeighbourAgent(p, config.addresses[p], localMac[p], sinks[p],
                config.neighbourConfig, this::onNextHop);
            mirrors.add(new CounterMirror(counters, prefix + "plane " + p + " neighbour ", agents[p].counters(), null));
        }
        final long now = config.clock.nanoTime();
        for (final long[] entry : config.linkLayer ? config.staticNeighbours : java.util.List.<long[]>of())
        {
            final NeighbourAgent agent = agents[(int)entry[0]];
            if (null == agent)
            {
                throw new IllegalArgumentException("a static neighbour on plane " + entry[0] + " needs the plane's address");
            }
            agent.addPermanent(entry[1], entry[2], entry[3], now);
        }
    }

    // worker 0's thread: a next hop has a (new) MAC; every worker updates the connections that send to it. A worker
    // whose queue is full gets every next hop's MAC again once it has room (resyncMissed), so that no connection keeps
    // a MAC the table no longer holds
    private void onNextHop(final int plane, final long high, final long low, final long mac)
    {
        for (final NicWorker worker : workers)
        {
            if (!worker.offer((w, now) -> w.onNextHopMac(plane, high, low, mac)))
            {
                missed(worker);
            }
        }
    }

    private void missed(final NicWorker worker)
    {
        if (!missedUpdate[worker.index()])
        {
            missedUpdate[worker.index()] = true;
            updatesDeferred.increment();
        }
        anyMissed = true;
    }

    /**
     * Sets {@code c}'s next hops and has worker 0 follow them: their entries are kept, and asked again when they fail,
     * for as long as {@code c} sends to them ({@link NeighbourAgent#follow}). Any thread.
     */
    void use(final NicConnection c, final NextHops hops)
    {
        synchronized (c)
        {
            unfollowLocked(c); // a queue pair connected again
            c.nextHop = hops;
            c.followsNextHops = queueFollowChanges(c, hops, 1);
        }
    }

    /** {@code c} sends to its next hops no more (released, or its connect given up); once. Any thread. */
    void unfollow(final NicConnection c)
    {
        synchronized (c)
        {
            unfollowLocked(c);
        }
    }

    private void unfollowLocked(final NicConnection c)
    {
        if (c.followsNextHops)
        {
            c.followsNextHops = false;
            queueFollowChanges(c, c.nextHop, -1);
        }
    }

    // @return whether any plane's next hop is followed (a plane whose agent resolves it)
    private boolean queueFollowChanges(final NicConnection c, final NextHops hops, final int kind)
    {
        boolean any = false;
        for (int p = 0; null != agents && p < hops.planes() && p < agents.length && p < Long.SIZE; p++)
        {
            if (hops.has(p) && null != agents[p])
            {
                followChanges.offer(new NextHopRequest(kind, p, hops.high()[p], hops.low()[p], c, -1));
                any = true;
            }
        }
        return any;
    }

    /**
     * Has worker 0 tell {@code worker} each of {@code hops}' MAC as the table holds it now: a connection attached there
     * after its next hops were resolved (its handshake, a queue pair's RTR) missed a change in between otherwise, since
     * an update reaches only the connections attached when it runs. Any thread.
     */
    void refresh(final NicWorker worker, final NextHops hops)
    {
        for (int p = 0; null != agents && p < hops.planes() && p < agents.length; p++)
        {
            if (hops.has(p) && null != agents[p])
            {
                followChanges.offer(new NextHopRequest(0, p, hops.high()[p], hops.low()[p], null, worker.index()));
            }
        }
    }

    /** Worker 0's thread, after the agents' timers: follows, unfollows and refreshes, then resyncs. @return work done. */
    int onTick(final long nowNanos)
    {
        int work = 0;
        NextHopRequest change;
        while (null != (change = followChanges.poll()))
        {
            final int plane = change.plane();
            final long high = change.high();
            final long low = change.low();
            final NeighbourAgent agent = agents[plane];
            final long bit = 1L << plane;
            if (change.kind() > 0)
            {
                if (agent.follow(high, low, nowNanos))
                {
                    change.connection().followedPlanes |= bit; // what its unfollow takes back, and only that
                }
            }
            else if (change.kind() < 0)
            {
                if ((change.connection().followedPlanes & bit) != 0)
                {
                    change.connection().followedPlanes &= ~bit;
                    agent.unfollow(high, low);
                }
            }
            else
            {
                final long mac = agent.macOf(high, low);
                final NicWorker worker = workers[change.worker()];
                if (0 != mac && !worker.offer((w, now) -> w.onNextHopMac(plane, high, low, mac)))
                {
                    missed(worker);
                }
            }
            work++;
        }
        return work + resyncMissed(nowNanos);
    }

    /**
     * Worker 0's thread, after the agents' timers: gives each worker that missed an update every next hop's MAC, at
     * most every {@link #RESYNC_INTERVAL_NANOS} while one still has no room. @return workers given them.
     */
    int resyncMissed(final long nowNanos)
    {
        if (!anyMissed || nowNanos - nextResyncNanos < 0)
        {
            return 0;
        }
        nextResyncNanos = nowNanos + RESYNC_INTERVAL_NANOS;
        final long[] nextHops = everyNextHop(); // rare: a worker's queue was full
        int given = 0;
        anyMissed = false;
        for (final NicWorker worker : workers)
        {
            if (missedUpdate[worker.index()])
            {
                if (worker.offer((w, now) -> w.onNextHopMacs(nextHops)))
                {
                    missedUpdate[worker.index()] = false;
                    given++;
                }
                else
                {
                    anyMissed = true;
                }
            }
        }
        return given;
    }

    // worker 0's thread: {plane, high, low, mac} of every next hop with a MAC, over every plane
    private long[] everyNextHop()
    {
        final org.agrona.collections.LongArrayList hops = new org.agrona.collections.LongArrayList();
        for (final NeighbourAgent agent : agents)
        {
            if (null != agent)
            {
                agent.forEachNextHop((plane, high, low, mac) ->
                {
                    hops.addLong(plane);
                    hops.addLong(high);
                    hops.addLong(low);
                    hops.addLong(mac);
                });
            }
        }
        return hops.toLongArray();
    }

    /**
     * @param peerHigh per plane, the peer's address, first 64 bits (as 128: IPv4-mapped for IPv4).
     * @param peerLow  per plane, its last 64 bits.
     * @return per plane, the address the frames to the peer go to: the peer on-link, the gateway off-link.
     * @throws IllegalArgumentException when a plane has no address, the peer is of the other family, or it is
     *                                  off-link without a gateway.
     */
    NextHops nextHops(final long[] peerHigh, final long[] peerLow)
    {
        final NextHops hops = NextHops.none(peerHigh.length);
        for (int p = 0; p < peerHigh.length; p++)
        {
            nextHop(p, peerHigh[p], peerLow[p], hops);
        }
        return hops;
    }

    /** Sets {@code plane}'s next hop towards {@code high:low} in {@code hops}; see {@link #nextHops}. */
    void nextHop(final int plane, final long high, final long low, final NextHops hops)
    {
        final InterfaceAddress address = config.addresses[plane];
        final String peer = InterfaceAddress.text(high, low);
        if (null != address && InterfaceAddress.isMapped(high, low) == address.isIpv6())
        {
            // a socket port too: its frames and sockets are of its address's family only
            throw new IllegalArgumentException(peer + " is not of the family of plane " + plane + "'s address " + address +
                ": give the peer's " + (address.isIpv6() ? "IPv6" : "IPv4") + " address on that plane");
        }
        if (!config.linkLayer)
        {
            hops.high()[plane] = high; // the kernel chooses the route of a socket's datagrams
            hops.low()[plane] = low;
            return;
        }
        if (null == address)
        {
            throw new IllegalArgumentException("plane " + plane + " has no address: give this NIC one (--ip) before connecting");
        }
        final long[] hop = address.nextHop(high, low);
        if (0 == hop[0] && 0 == hop[1])
        {
            throw new IllegalArgumentException(peer + " is off-link on plane " + plane + " (" + address +
                ") and the plane has no gateway: give --gateway, or a prefix that holds the peer");
        }
        hops.high()[plane] = hop[0];
        hops.low()[plane] = hop[1];
    }

    /**
     * Resolves the MAC of each plane's next hop on worker 0 (ARP or neighbour solicitations, with their retries),
     * waiting up to {@code timeout}.
     *
     * @param hops per plane, an address; none skips the plane.
     * @return per plane, the MAC.
     * @throws IllegalStateException naming the address that did not answer.
     */
    long[] resolve(final NextHops hops, final Duration timeout)
    {
        final int planes = hops.planes();
        if (!config.linkLayer)
        {
            return placeholderMacs(hops);
        }
        final CompletableFuture<long[]> resolved = new CompletableFuture<>();
        final long timeoutNanos = timeout.toNanos();
        final boolean offered = workers[0].offer((w, now) ->
        {
            final long[] macs = new long[planes];
            for (int p = 0; p < planes; p++)
            {
                if (hops.has(p))
                {
                    macs[p] = w.neighbour(p).resolve(hops.high()[p], hops.low()[p], now);
                }
            }
            final long deadline = now + timeoutNanos;
            final Runnable[] poller = new Runnable[1];
            poller[0] = () ->
            {
                boolean all = true;
                for (int p = 0; p < planes; p++)
                {
                    if (!hops.has(p) || 0 != macs[p])
                    {
                        continue;
                    }
                    final NeighbourAgent agent = w.neighbour(p);
                    final long high = hops.high()[p];
                    final long low = hops.low()[p];
                    macs[p] = agent.macOf(high, low);
                    if (0 == macs[p])
                    {
                        all = false;
                        final int state = agent.state(high, low);
                        if (state == NeighbourCache.FAILED || state == NeighbourCache.FREE)
                        {
                            w.removePoller(poller[0]);
                            resolved.completeExceptionally(new IllegalStateException("no " +
                                (InterfaceAddress.isMapped(high, low) ? "ARP" : "neighbour advertisement") + " answer from " +
                                hops.text(p) + " on plane " + p + " (" + config.addresses[p] + "): is it up, on this link, " +
                                "and is the address right?"));
                            return;
                        }
                    }
                }
                if (all)
                {
                    w.removePoller(poller[0]);
                    resolved.complete(macs);
                }
                else if (config.clock.nanoTime() - deadline > 0)
                {
                    w.removePoller(poller[0]);
                    resolved.completeExceptionally(new IllegalStateException("no neighbour answer in " +
                        timeout.toMillis() + " ms"));
                }
            };
            w.addPoller(poller[0]);
        });
        if (!offered)
        {
            throw new IllegalStateException("worker 0 has too many control commands queued: retry");
        }
        return WorkerCalls.await(resolved, timeout.plusSeconds(1), "resolve the next hops");
    }

    /** Without a link layer a next hop has no MAC to resolve: a locally administered one made of its address. */
    private static long[] placeholderMacs(final NextHops hops)
    {
        final long[] macs = new long[hops.planes()];
        for (int p = 0; p < macs.length; p++)
        {
            macs[p] = hops.has(p) ? 0x0200_0000_0000L | (hops.low()[p] & 0xFFFF_FFFFL) : 0;
        }
        return macs;
    }

    /**
     * An accepted connection starts with the MACs its CONNECT came from; from here it sends to each plane's next
     * hop as the neighbour table resolves it (the gateway's MAC for a peer off-link). Worker thread.
     *
     * @param peerHigh per plane, the peer's address as the handshake learnt it, first 64 bits (IPv4-mapped).
     * @param peerLow  last 64 bits; both 0 for a plane without.
     */
    void follow(final NicWorker worker, final NicConnection handle, final SprayConnection connection,
        final long[] peerHigh, final long[] peerLow)
    {
        final NextHops hops = NextHops.none(connection.planes());
        for (int p = 0; p < hops.planes() && p < peerHigh.length; p++)
        {
            final InterfaceAddress address = p < config.addresses.length ? config.addresses[p] : null;
            if ((0 != peerHigh[p] || 0 != peerLow[p]) && null != address)
            {
                final long[] hop = address.nextHop(peerHigh[p], peerLow[p]); // {0, 0}: unreachable, left alone
                hops.high()[p] = hop[0];
                hops.low()[p] = hop[1];
            }
        }
        use(handle, hops);
        final boolean offered = workers[0].offer((w, now) ->
        {
            for (int p = 0; p < hops.planes(); p++)
            {
                final NeighbourAgent agent = w.neighbour(p);
                if (hops.has(p) && null != agent)
                {
                    final long high = hops.high()[p];
                    final long low = hops.low()[p];
                    final long mac = agent.resolve(high, low, now); // 0: asked; the answer reaches every worker
                    if (0 != mac)
                    {
                        final int plane = p;
                        if (!worker.offer((x, t) -> x.onNextHopMac(plane, high, low, mac)))
                        {
                            missed(worker); // worker 0's thread, as the resync
                        }
                    }
                }
            }
        });
        if (!offered)
        {
            worker.faultLog().record("neighbour update", new IllegalStateException("worker 0's command queue is full"));
        }
    }
}
