package io.spraynic.datapath.nic;

import io.spraynic.datapath.neighbour.NeighbourAgent;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.wire.ArpHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.IcmpHeader;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Ipv6Header;

import java.lang.foreign.MemorySegment;
import java.util.function.LongToIntFunction;

/**
 * The neighbour agents (ARP, IPv6 neighbour discovery, ICMP echo) of every plane on the one {@link NicWorker} that
 * runs them, each with its own sink on that worker's queue of the plane's port. The control path: only frames the
 * parser found not RoCEv2 reach it, and its timers run once per loop after the transport's. An agent that throws is
 * counted as a loop fault and the other planes' agents go on.
 */
final class WorkerNeighbours
{
    private final NeighbourAgent[] agents;
    private final PortFrameSink[] sinks;
    private final WorkerFaults faults;
    private final LongToIntFunction afterTick;

    /**
     * @param agents per plane, an agent or null for a plane without an address.
     * @param sinks  per plane, the agent's sink (null where the agent is).
     * @param faults where an agent's exception is counted.
     */
    WorkerNeighbours(final NeighbourAgent[] agents, final PortFrameSink[] sinks, final WorkerFaults faults)
    {
        this(agents, sinks, faults, now -> 0);
    }

    /** @param afterTick run after the agents' timers each loop (the NIC's resync of workers that missed an update). */
    WorkerNeighbours(final NeighbourAgent[] agents, final PortFrameSink[] sinks, final WorkerFaults faults,
        final LongToIntFunction afterTick)
    {
        if (agents.length != sinks.length)
        {
            throw new IllegalArgumentException(agents.length + " agents for " + sinks.length + " sinks");
        }
        this.agents = agents;
        this.sinks = sinks;
        this.faults = faults;
        this.afterTick = afterTick;
    }

    /** @return the agent of {@code plane}, or null (a plane without an address, or out of range). */
    NeighbourAgent agent(final int plane)
    {
        return plane >= 0 && plane < agents.length ? agents[plane] : null;
    }

    /** Starts every agent (gratuitous ARP, unsolicited NA) once its sink has started (worker thread, at start). */
    void start(final long now)
    {
        for (int plane = 0; plane < agents.length; plane++)
        {
            if (null != agents[plane])
            {
                sinks[plane].onStart();
                agents[plane].start(now);
                sinks[plane].flush();
            }
        }
    }

    /** A frame of {@code plane} not of this transport: the plane's agent takes it, if it has one; it may throw. */
    void onFrame(final int plane, final MemorySegment memory, final long offset, final int length, final long now)
    {
        final NeighbourAgent agent = agent(plane);
        if (null != agent)
        {
            agent.onFrame(memory, offset, length, now);
        }
    }

    /** @return the agents' work: retries, time-outs and the frames they sent, flushed. */
    int tick(final long now)
    {
        int work = 0;
        for (int plane = 0; plane < agents.length; plane++)
        {
            final NeighbourAgent agent = agents[plane];
            if (null != agent)
            {
                try
                {
                    work += agent.onTick(now);
                    sinks[plane].flush();
                }
                catch (final RuntimeException | AssertionError ex)
                {
                    faults.onLoopFault("neighbours", ex);
                }
            }
        }
        try
        {
            work += afterTick.applyAsInt(now);
        }
        catch (final RuntimeException ex)
        {
            faults.onLoopFault("neighbours", ex);
        }
        return work;
    }

    /** Closes the agents' sinks (worker thread, at close). */
    void close()
    {
        for (final PortFrameSink sink : sinks)
        {
            if (null != sink)
            {
                sink.close();
            }
        }
    }

    /**
     * @return whether a frame is one a neighbour agent takes: ARP, ICMP over IPv4, ICMPv6 (the worker that does not
     * run the agents steers these to the one that does, and drops the rest).
     */
    static boolean isNeighbourFrame(final MemorySegment memory, final long offset, final int length)
    {
        if (length < EthernetHeader.LENGTH)
        {
            return false;
        }
        final int etherType = EthernetHeader.etherType(memory, offset);
        return etherType == ArpHeader.ETHER_TYPE_ARP || etherType == EthernetHeader.ETHER_TYPE_IPV4 &&
            length >= EthernetHeader.LENGTH + Ipv4Header.LENGTH &&
            Ipv4Header.protocol(memory, offset + EthernetHeader.LENGTH) == IcmpHeader.PROTOCOL_ICMP ||
            etherType == EthernetHeader.ETHER_TYPE_IPV6 && length >= EthernetHeader.LENGTH + Ipv6Header.LENGTH &&
            Ipv6Header.nextHeader(memory, offset + EthernetHeader.LENGTH) == Ipv6Header.NEXT_HEADER_ICMPV6;
    }
}
