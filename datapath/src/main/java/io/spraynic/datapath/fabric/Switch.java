package io.spraynic.datapath.fabric;

import org.agrona.collections.Int2ObjectHashMap;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A switch: ports, each an output {@link Link} (and the link arriving from the same neighbour), and a
 * forwarding table from destination IPv4 address to a group of equal-cost output ports.
 * <p>
 * A frame arriving on any port is inspected ({@link FrameInspector}), looked up by destination (falling
 * back to the default group, if any), and offered to one port of the group chosen by ECMP: a hash of
 * (source, destination, protocol, UDP source port, UDP destination port) under this switch's own seed.
 * So a flow keeps its path, and the UDP source port, which the transport chooses, picks it. Members
 * whose link is down are skipped (the switch has seen the failure); blackholed ones are not (it has
 * not). Forwarding itself takes no time: a hop's latency is in its link's propagation delay.
 * <p>
 * A switch may instead balance each frame on its own ({@link Balancing}): round robin over the group, as a LAG that
 * balances per packet does, or to the live member with the fewest bytes queued, as adaptive routing does. A flow's
 * frames then take different routes and may arrive out of order: the fabric the reordering window of
 * docs/PROTOCOL.md S6.5-3 is for.
 * <p>
 * Frames that cannot be parsed, or have no route, are counted and dropped; nothing here throws on a
 * frame. Lookups use Agrona's primitive-keyed map, so forwarding allocates nothing.
 */
public final class Switch implements FrameSink
{
    /** How a switch picks the member of a group a frame leaves by. */
    public enum Balancing
    {
        /** ECMP: by a hash of the flow's 5-tuple; a flow keeps its route. */
        FLOW_HASH,
        /** Each frame the next live member of the group in turn (a LAG balanced per packet, Linux's balance-rr). */
        ROUND_ROBIN,
        /** Each frame the live member with the fewest bytes queued, ties by the flow hash (adaptive routing). */
        LEAST_QUEUED
    }

    private final int id;
    private final String name;
    private final int plane;
    private final FramePool pool;
    private final long hashSeed;
    private final FrameInspector inspector = new FrameInspector();
    private final Int2ObjectHashMap<int[]> routes = new Int2ObjectHashMap<>();
    private final List<Link> outputList = new ArrayList<>();
    private final List<Link> inputList = new ArrayList<>();
    private Link[] outputs = new Link[0];
    private int[] defaultGroup;
    private Balancing balancing = Balancing.FLOW_HASH;
    private int roundRobin;

    private long framesForwarded;
    private long malformedDrops;
    private long noRouteDrops;
    private long noLivePortDrops;

    /**
     * @param id       the switch's index in its fabric.
     * @param name     for humans, e.g. {@code p0/spine1}.
     * @param plane    the plane it belongs to.
     * @param pool     where frames live.
     * @param hashSeed its ECMP hash seed.
     */
    public Switch(final int id, final String name, final int plane, final FramePool pool, final long hashSeed)
    {
        this.id = id;
        this.name = name;
        this.plane = plane;
        this.pool = pool;
        this.hashSeed = hashSeed;
    }

    /**
     * Adds a port. Control path.
     *
     * @param output the link frames leave by.
     * @param input  the link frames arrive by (connected to this switch here), or null.
     * @return the port's index.
     */
    public int addPort(final Link output, final Link input)
    {
        final int port = outputList.size();
        outputList.add(output);
        inputList.add(input);
        outputs = outputList.toArray(new Link[0]);
        if (null != input)
        {
            input.connect(this, port);
        }
        return port;
    }

    /**
     * Routes a destination to a group of equal-cost ports, replacing any route it had. Control path.
     */
    public void route(final int destination, final int... ports)
    {
        routes.put(destination, checkedGroup(ports));
    }

    /**
     * Routes everything without a route of its own (and non-IP frames) to a group; null for none.
     */
    public void defaultRoute(final int... ports)
    {
        defaultGroup = null == ports || ports.length == 0 ? null : checkedGroup(ports);
    }

    private int[] checkedGroup(final int[] ports)
    {
        if (ports.length == 0)
        {
            throw new IllegalArgumentException(name + ": a route needs at least one port");
        }
        for (final int port : ports)
        {
            if (port < 0 || port >= outputList.size())
            {
                throw new IllegalArgumentException(name + ": no port " + port + " (it has " + outputList.size() + ")");
            }
        }
        return ports.clone();
    }

    public void onFrameArrival(final long nowNs, final int inputPort, final int slot)
    {
        final int kind = inspector.inspect(pool.memory(), pool.offset(slot), pool.length(slot));
        if (kind == FrameInspector.MALFORMED)
        {
            malformedDrops++;
            pool.free(slot);
            return;
        }
        int[] group = kind == FrameInspector.NOT_IP ? null : routes.get(inspector.routeAddress());
        if (null == group)
        {
            group = defaultGroup;
            if (null == group)
            {
                noRouteDrops++;
                pool.free(slot);
                return;
            }
        }
        final int port = choose(group, inspector.flowHash(hashSeed));
        if (port < 0)
        {
            noLivePortDrops++;
            pool.free(slot);
            return;
        }
        framesForwarded++;
        outputs[port].offer(nowNs, slot);
    }

    /** @param balancing how frames are spread over a group from now on (control path). */
    public void balancing(final Balancing balancing)
    {
        this.balancing = java.util.Objects.requireNonNull(balancing, "balancing");
    }

    /** @return how frames are spread over a group. */
    public Balancing balancing()
    {
        return balancing;
    }

    private int choose(final int[] group, final long hash)
    {
        return switch (balancing)
        {
            case FLOW_HASH -> chooseByHash(group, hash);
            case ROUND_ROBIN -> chooseInTurn(group);
            case LEAST_QUEUED -> chooseLeastQueued(group, hash);
        };
    }

    private int chooseInTurn(final int[] group)
    {
        for (int tried = 0; tried < group.length; tried++)
        {
            final int port = group[Integer.remainderUnsigned(roundRobin++, group.length)];
            if (outputs[port].isUp())
            {
                return port;
            }
        }
        return -1;
    }

    private int chooseLeastQueued(final int[] group, final long hash)
    {
        final int hashed = chooseByHash(group, hash);
        if (hashed < 0)
        {
            return -1;
        }
        int best = hashed;
        int bestBytes = outputs[hashed].queueBytes();
        for (final int port : group)
        {
            final Link output = outputs[port];
            if (output.isUp() && output.queueBytes() < bestBytes)
            {
                best = port;
                bestBytes = output.queueBytes();
            }
        }
        return best;
    }

    private int chooseByHash(final int[] group, final long hash)
    {
        final int members = group.length;
        // multiply-shift maps the hash's high 32 bits onto [0, members) without a division
        final int first = group[(int)(((hash >>> 32) * members) >>> 32)];
        if (outputs[first].isUp())
        {
            return first;
        }
        int live = 0;
        for (final int port : group)
        {
            if (outputs[port].isUp())
            {
                live++;
            }
        }
        if (live == 0)
        {
            return -1;
        }
        int pick = (int)(((hash & 0xFFFF_FFFFL) * live) >>> 32);
        for (final int port : group)
        {
            if (outputs[port].isUp() && pick-- == 0)
            {
                return port;
            }
        }
        return -1;
    }

    /**
     * The port ECMP would choose for a frame now, without sending it (for tests and path probing).
     *
     * @return the port, or -1 if the frame would be dropped.
     */
    public int portFor(final MemorySegment segment, final long offset, final int length)
    {
        final int kind = inspector.inspect(segment, offset, length);
        if (kind == FrameInspector.MALFORMED)
        {
            return -1;
        }
        int[] group = kind == FrameInspector.NOT_IP ? null : routes.get(inspector.routeAddress());
        if (null == group)
        {
            group = defaultGroup;
        }
        return null == group ? -1 : chooseByHash(group, inspector.flowHash(hashSeed)); // no turn taken
    }

    /**
     * Fails a port: both its links go down.
     */
    public void failPort(final int port)
    {
        setPortDown(port, true);
    }

    /**
     * Restores a failed port.
     */
    public void restorePort(final int port)
    {
        setPortDown(port, false);
    }

    private void setPortDown(final int port, final boolean isDown)
    {
        outputList.get(port).down(isDown);
        final Link input = inputList.get(port);
        if (null != input)
        {
            input.down(isDown);
        }
    }

    /** @return the switch's index in its fabric. */
    public int id()
    {
        return id;
    }

    /** @return its name. */
    public String name()
    {
        return name;
    }

    /** @return its plane. */
    public int plane()
    {
        return plane;
    }

    /** @return its number of ports. */
    public int portCount()
    {
        return outputs.length;
    }

    /** @return port {@code port}'s output link. */
    public Link output(final int port)
    {
        return outputs[port];
    }

    /** @return port {@code port}'s input link, or null. */
    public Link input(final int port)
    {
        return inputList.get(port);
    }

    /** @return the ports a destination is routed to (a copy), or null if it has no route of its own. */
    public int[] routeOf(final int destination)
    {
        final int[] group = routes.get(destination);
        return null == group ? null : group.clone();
    }

    /** @return frames forwarded to an output link (which may still drop them). */
    public long framesForwarded()
    {
        return framesForwarded;
    }

    /** @return frames dropped because they could not be parsed. */
    public long malformedDrops()
    {
        return malformedDrops;
    }

    /** @return frames dropped for want of a route. */
    public long noRouteDrops()
    {
        return noRouteDrops;
    }

    /** @return frames dropped because every port of their route was down. */
    public long noLivePortDrops()
    {
        return noLivePortDrops;
    }

    /** @return frames dropped by the switch itself, for any reason. */
    public long drops()
    {
        return malformedDrops + noRouteDrops + noLivePortDrops;
    }

    public String toString()
    {
        return "Switch{" + name + ", ports=" + outputs.length + ", routes=" + routes.size() +
            (null == defaultGroup ? "" : ", default=" + Arrays.toString(defaultGroup)) + ", forwarded=" +
            framesForwarded + ", malformed=" + malformedDrops + ", noRoute=" + noRouteDrops + ", noLivePort=" +
            noLivePortDrops + '}';
    }
}
