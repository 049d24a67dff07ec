package io.spraynic.datapath.nic;

import io.spraynic.datapath.neighbour.NeighbourAgent;
import io.spraynic.datapath.neighbour.NeighbourCache;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.transport.PortFrameSink;
import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.wire.Wire;
import io.spraynic.pmd.InterfaceAddress;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The control side of an {@link EmbeddedNic}'s neighbours: makes a {@link NeighbourAgent} per plane that has an
 * address (they run on worker 0, which answers ARP and echo and resolves for the whole NIC), chooses each peer's
 * next hop (the peer on-link, the plane's gateway off-link), resolves next hops before a connection starts, and
 * carries every next hop's new MAC to each worker's connections. Control path: it may allocate.
 */
final class NicNeighbours
{
    private final EmbeddedNicConfig config;
    private final long[] localMac;
    private final CountersFile counters;
    private NeighbourAgent[] agents;
    private PortFrameSink[] sinks;
    private NicWorker[] workers;

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
    }

    /** Gives worker 0 the agents and their sinks (before it starts). */
    void attach(final NicWorker worker)
    {
        worker.neighbours(agents, sinks);
    }

    // control path, at construction: worker 0 answers and resolves for every plane that has an address
    void addAgents(final PacketPort[] ports, final String prefix, final List<CounterMirror> mirrors)
    {
        final int planes = config.planes();
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
            agent.addPermanent((int)entry[1], entry[2], now);
        }
    }

    // worker 0's thread: a next hop has a (new) MAC; every worker updates the connections that send to it
    private void onNextHop(final int plane, final int ipv4, final long mac)
    {
        for (final NicWorker worker : workers)
        {
            if (!worker.offer((w, now) -> w.onNextHopMac(plane, ipv4, mac)))
            {
                workers[0].faultLog().record("neighbour update", new IllegalStateException( // this thread's log
                    "command queue full: " + Wire.ipv4ToString(ipv4) + " keeps its old MAC on worker " + worker.index()));
            }
        }
    }

    /**
     * @return per plane, the address the frames to {@code peer} go to: the peer on-link, the gateway off-link.
     * @throws IllegalArgumentException when a plane has no address, or the peer is off-link without a gateway.
     */
    int[] nextHops(final int[] peer)
    {
        final int[] hops = new int[peer.length];
        for (int p = 0; p < peer.length; p++)
        {
            hops[p] = nextHop(p, peer[p]);
        }
        return hops;
    }

    int nextHop(final int plane, final int peer)
    {
        if (!config.linkLayer)
        {
            return peer; // the kernel chooses the route of a socket's datagrams
        }
        final InterfaceAddress address = config.addresses[plane];
        if (null == address)
        {
            throw new IllegalArgumentException("plane " + plane + " has no address: give this NIC one (--ip) before connecting");
        }
        final int hop = address.nextHop(peer);
        if (0 == hop)
        {
            throw new IllegalArgumentException(Wire.ipv4ToString(peer) + " is off-link on plane " + plane + " (" + address +
                ") and the plane has no gateway: give --gateway, or a prefix that holds the peer");
        }
        return hop;
    }

    /**
     * Resolves the MAC of each plane's next hop on worker 0 (ARP, with its retries), waiting up to {@code timeout}.
     *
     * @param hops per plane, an address; 0 skips the plane.
     * @return per plane, the MAC.
     * @throws IllegalStateException naming the address that did not answer.
     */
    long[] resolve(final int[] hops, final Duration timeout)
    {
        if (!config.linkLayer)
        {
            return placeholderMacs(hops);
        }
        final CompletableFuture<long[]> resolved = new CompletableFuture<>();
        final long timeoutNanos = timeout.toNanos();
        final boolean offered = workers[0].offer((w, now) ->
        {
            final long[] macs = new long[hops.length];
            for (int p = 0; p < hops.length; p++)
            {
                if (0 != hops[p])
                {
                    macs[p] = w.neighbour(p).resolve(hops[p], now);
                }
            }
            final long deadline = now + timeoutNanos;
            final Runnable[] poller = new Runnable[1];
            poller[0] = () ->
            {
                boolean all = true;
                for (int p = 0; p < hops.length; p++)
                {
                    if (0 == hops[p] || 0 != macs[p])
                    {
                        continue;
                    }
                    final NeighbourAgent agent = w.neighbour(p);
                    macs[p] = agent.macOf(hops[p]);
                    if (0 == macs[p])
                    {
                        all = false;
                        if (agent.state(hops[p]) == NeighbourCache.FAILED || agent.state(hops[p]) == NeighbourCache.FREE)
                        {
                            w.removePoller(poller[0]);
                            resolved.completeExceptionally(new IllegalStateException("no ARP answer from " +
                                Wire.ipv4ToString(hops[p]) + " on plane " + p + " (" + config.addresses[p] + "): is it up, " +
                                "on this link, and is the address right?"));
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
                    resolved.completeExceptionally(new IllegalStateException("no ARP answer in " + timeout.toMillis() + " ms"));
                }
            };
            w.addPoller(poller[0]);
        });
        if (!offered)
        {
            throw new IllegalStateException("worker 0 has too many control commands queued: retry");
        }
        return EmbeddedNic.await(resolved, timeout.plusSeconds(1), "resolve the next hops");
    }

    /** Without a link layer a next hop has no MAC to resolve: a locally administered one made of its address. */
    private static long[] placeholderMacs(final int[] hops)
    {
        final long[] macs = new long[hops.length];
        for (int p = 0; p < hops.length; p++)
        {
            macs[p] = 0 == hops[p] ? 0 : 0x0200_0000_0000L | Integer.toUnsignedLong(hops[p]);
        }
        return macs;
    }

    /**
     * An accepted connection starts with the MACs its CONNECT came from; from here it sends to each plane's next
     * hop as the neighbour table resolves it (the gateway's MAC for a peer off-link). Worker thread.
     */
    void follow(final NicWorker worker, final NicConnection handle, final SprayConnection connection)
    {
        final int[] hops = new int[connection.planes()];
        for (int p = 0; p < hops.length; p++)
        {
            final int peer = connection.remoteIpv4(p);
            final InterfaceAddress address = p < config.addresses.length ? config.addresses[p] : null;
            hops[p] = 0 == peer || null == address ? 0 : address.nextHop(peer);
        }
        handle.nextHop = hops;
        final boolean offered = workers[0].offer((w, now) ->
        {
            for (int p = 0; p < hops.length; p++)
            {
                final NeighbourAgent agent = w.neighbour(p);
                if (0 != hops[p] && null != agent)
                {
                    final long mac = agent.resolve(hops[p], now); // 0: asked; the answer reaches every worker
                    if (0 != mac)
                    {
                        final int plane = p;
                        final int hop = hops[p];
                        worker.offer((x, t) -> x.onNextHopMac(plane, hop, mac));
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
