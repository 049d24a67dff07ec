package io.spraynic.datapath.fabric;

import org.agrona.collections.IntArrayList;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A built network: hosts with one port per plane, switches, the links between them, the frame pool
 * they share and the {@link Simulator} they run on. Build one with {@link Topology}; run it with
 * {@link #runUntil} (virtual time) or a {@link RealTimeFabricAgent} (real time).
 * <p>
 * Every random choice derives from the configuration's seed and the element's index (links' loss,
 * switches' ECMP hash seeds), and the simulator orders events deterministically, so the same topology,
 * seed and endpoints give the same run, event for event.
 * <p>
 * Faults can be applied at once (on the fabric's thread) or scheduled in fabric time with {@link #at}
 * and the {@code ...At} helpers. Scheduling allocates (control path); frames never do.
 */
public final class Fabric implements AutoCloseable
{
    private final FabricConfig config;
    private final int planes;
    private final Simulator simulator = new Simulator();
    private final FramePool pool;
    private final FabricAddresses addresses;
    private final List<Host> hosts = new ArrayList<>();
    private final List<Switch> switches = new ArrayList<>();
    private final List<Link> links = new ArrayList<>();
    private final List<Link> hostLinks = new ArrayList<>();
    private final List<Link> fabricLinks = new ArrayList<>();
    private final Map<String, Link> linksByName = new HashMap<>();
    private final Map<String, Switch> switchesByName = new HashMap<>();
    private final List<Runnable> controlActions = new ArrayList<>();
    private final IntArrayList freeControlActions = new IntArrayList();
    private final int controlTarget;

    Fabric(final FabricConfig config, final int planes, final int hostCount)
    {
        if (planes < 1 || planes > 256)
        {
            throw new IllegalArgumentException("planes " + planes + " must be 1..256");
        }
        if (hostCount < 1 || hostCount > 65_536)
        {
            throw new IllegalArgumentException("hosts " + hostCount + " must be 1..65536");
        }
        this.config = config;
        this.planes = planes;
        this.pool = new FramePool(config.frameSlots(), config.slotBytes());
        this.addresses = new FabricAddresses(planes, hostCount);
        this.controlTarget = simulator.register(this::onControl);
    }

    Host addHost(final String name)
    {
        final Host host = new Host(hosts.size(), name, planes, addresses, simulator, pool, derivedSeed(3, hosts.size()));
        hosts.add(host);
        return host;
    }

    Switch addSwitch(final String name, final int plane)
    {
        final int id = switches.size();
        final Switch sw = new Switch(id, name, plane, pool, derivedSeed(2, id));
        if (null != switchesByName.putIfAbsent(name, sw))
        {
            throw new IllegalArgumentException("switch name " + name + " used twice");
        }
        switches.add(sw);
        return sw;
    }

    Link addLink(final String name, final int plane, final boolean hostLink)
    {
        final LinkConfig linkConfig = hostLink ? config.hostLink() : config.fabricLink();
        final int id = links.size();
        final Link link = new Link(id, name, plane, linkConfig, simulator, pool, derivedSeed(1, id));
        if (null != linksByName.putIfAbsent(name, link))
        {
            throw new IllegalArgumentException("link name " + name + " used twice");
        }
        links.add(link);
        (hostLink ? hostLinks : fabricLinks).add(link);
        return link;
    }

    FabricAddresses addressesForBuild()
    {
        return addresses;
    }

    private long derivedSeed(final int purpose, final int index)
    {
        return FrameInspector.finish(config.seed() ^ FrameInspector.finish(((long)purpose << 32) | index));
    }

    private void onControl(final long nowNs, final int kind, final long arg)
    {
        final Runnable action = controlActions.get((int)arg);
        controlActions.set((int)arg, null);
        freeControlActions.addInt((int)arg);
        action.run();
    }

    /**
     * Runs {@code action} on the fabric's thread at fabric time {@code timeNs}: the way to change anything
     * mid-run (fail a link, change a loss rate...). Control path.
     */
    public void at(final long timeNs, final Runnable action)
    {
        if (null == action)
        {
            throw new NullPointerException("action");
        }
        final int index;
        if (freeControlActions.isEmpty())
        {
            index = controlActions.size();
            controlActions.add(action);
        }
        else
        {
            index = freeControlActions.popInt();
            controlActions.set(index, action);
        }
        simulator.schedule(timeNs, controlTarget, 0, index);
    }

    /** Takes down every link of a plane, host links included: the plane has failed. */
    public void failPlane(final int plane)
    {
        setPlaneDown(plane, true);
    }

    /** Brings every link of a plane back up. */
    public void restorePlane(final int plane)
    {
        setPlaneDown(plane, false);
    }

    private void setPlaneDown(final int plane, final boolean down)
    {
        checkPlane(plane);
        for (final Link link : links)
        {
            if (link.plane() == plane)
            {
                link.down(down);
            }
        }
    }

    private void checkPlane(final int plane)
    {
        if (plane < 0 || plane >= planes)
        {
            throw new IllegalArgumentException("no plane " + plane + " (the fabric has " + planes + ")");
        }
    }

    /** Fails a plane at {@code timeNs}. */
    public void failPlaneAt(final long timeNs, final int plane)
    {
        checkPlane(plane);
        at(timeNs, () -> failPlane(plane));
    }

    /** Restores a plane at {@code timeNs}. */
    public void restorePlaneAt(final long timeNs, final int plane)
    {
        checkPlane(plane);
        at(timeNs, () -> restorePlane(plane));
    }

    /** Takes a link down at {@code timeNs}. */
    public void failLinkAt(final long timeNs, final Link link)
    {
        at(timeNs, () -> link.down(true));
    }

    /** Brings a link back up at {@code timeNs}. */
    public void restoreLinkAt(final long timeNs, final Link link)
    {
        at(timeNs, () -> link.down(false));
    }

    /** Blackholes a link from {@code timeNs}. */
    public void blackholeAt(final long timeNs, final Link link)
    {
        at(timeNs, () -> link.blackhole(true));
    }

    /** Ends a link's blackhole at {@code timeNs}. */
    public void endBlackholeAt(final long timeNs, final Link link)
    {
        at(timeNs, () -> link.blackhole(false));
    }

    /** Changes a link's loss probability at {@code timeNs}. */
    public void lossAt(final long timeNs, final Link link, final double probability)
    {
        if (!(probability >= 0.0 && probability < 1.0))
        {
            throw new IllegalArgumentException("loss probability " + probability + " must be in [0, 1)");
        }
        at(timeNs, () -> link.lossProbability(probability));
    }

    /** Fails a switch port (both directions) at {@code timeNs}. */
    public void failSwitchPortAt(final long timeNs, final Switch sw, final int port)
    {
        at(timeNs, () -> sw.failPort(port));
    }

    /** Restores a switch port at {@code timeNs}. */
    public void restoreSwitchPortAt(final long timeNs, final Switch sw, final int port)
    {
        at(timeNs, () -> sw.restorePort(port));
    }

    /**
     * Sets the loss probability of every switch-to-switch link (not host links), at once.
     */
    public void fabricLinkLoss(final double probability)
    {
        for (final Link link : fabricLinks)
        {
            link.lossProbability(probability);
        }
    }

    /** Runs the simulation to {@code timeNs}; see {@link Simulator#runUntil}. @return events run. */
    public long runUntil(final long timeNs)
    {
        return simulator.runUntil(timeNs);
    }

    /** Runs the simulation until no event is pending. @return events run. */
    public long runUntilIdle()
    {
        return simulator.runUntilIdle();
    }

    /** @return fabric time now, in nanoseconds. */
    public long now()
    {
        return simulator.now();
    }

    /** @return the event loop. */
    public Simulator simulator()
    {
        return simulator;
    }

    /** @return the frame pool. */
    public FramePool pool()
    {
        return pool;
    }

    /** @return what it was built from. */
    public FabricConfig config()
    {
        return config;
    }

    /** @return every host port's addresses. */
    public FabricAddresses addresses()
    {
        return addresses;
    }

    /** @return the number of planes. */
    public int planes()
    {
        return planes;
    }

    /** @return the number of hosts. */
    public int hostCount()
    {
        return hosts.size();
    }

    /** @return host {@code index}. */
    public Host host(final int index)
    {
        return hosts.get(index);
    }

    /** @return every host, by index. */
    public List<Host> hosts()
    {
        return Collections.unmodifiableList(hosts);
    }

    /** @return every switch, by index. */
    public List<Switch> switches()
    {
        return Collections.unmodifiableList(switches);
    }

    /** @return every link, by index. */
    public List<Link> links()
    {
        return Collections.unmodifiableList(links);
    }

    /** @return the links between hosts and switches (both directions). */
    public List<Link> hostLinks()
    {
        return Collections.unmodifiableList(hostLinks);
    }

    /** @return the links between switches. */
    public List<Link> fabricLinks()
    {
        return Collections.unmodifiableList(fabricLinks);
    }

    /** @return the link named {@code name}. @throws IllegalArgumentException if none. */
    public Link link(final String name)
    {
        final Link link = linksByName.get(name);
        if (null == link)
        {
            throw new IllegalArgumentException("no link named " + name);
        }
        return link;
    }

    /** @return the switch named {@code name}. @throws IllegalArgumentException if none. */
    public Switch switchNamed(final String name)
    {
        final Switch sw = switchesByName.get(name);
        if (null == sw)
        {
            throw new IllegalArgumentException("no switch named " + name);
        }
        return sw;
    }

    /**
     * @return the counters of every host, link and switch, summed now.
     */
    public FabricTotals totals()
    {
        long sent = 0;
        long refused = 0;
        long received = 0;
        long unclaimed = 0;
        for (final Host host : hosts)
        {
            for (int p = 0; p < planes; p++)
            {
                final HostPort port = host.port(p);
                sent += port.framesSent();
                refused += port.sendsRefused();
                received += port.framesReceived();
                unclaimed += port.framesUnclaimed();
            }
        }
        long tail = 0;
        long loss = 0;
        long blackhole = 0;
        long down = 0;
        long ecn = 0;
        for (final Link link : links)
        {
            tail += link.tailDrops();
            loss += link.randomLossDrops();
            blackhole += link.blackholeDrops();
            down += link.linkDownDrops();
            ecn += link.ecnMarked();
        }
        long switchDrops = 0;
        for (final Switch sw : switches)
        {
            switchDrops += sw.drops();
        }
        return new FabricTotals(
            sent, refused, received, unclaimed, tail, loss, blackhole, down, switchDrops, ecn, pool.inUse());
    }

    /**
     * Frees the frame memory. The fabric must no longer run.
     */
    public void close()
    {
        pool.close();
    }

    public String toString()
    {
        return "Fabric{planes=" + planes + ", hosts=" + hosts.size() + ", switches=" + switches.size() + ", links=" +
            links.size() + ", " + simulator + '}';
    }
}
