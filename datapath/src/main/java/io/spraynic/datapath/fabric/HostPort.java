package io.spraynic.datapath.fabric;

import java.lang.foreign.MemorySegment;

/**
 * A host's NIC port on one plane: the {@link FabricPort} its endpoint uses, and the sink of the link
 * from its switch.
 */
public final class HostPort implements FabricPort, FrameSink
{
    private final Host host;
    private final int portIndex;
    private final FabricAddresses addresses;
    private final Simulator simulator;
    private final FramePool pool;
    private Link uplink;
    private Link downlink;

    private long framesSent;
    private long sendsRefused;
    private long framesReceived;
    private long bytesReceived;
    private long framesUnclaimed;

    HostPort(
        final Host host,
        final int portIndex,
        final FabricAddresses addresses,
        final Simulator simulator,
        final FramePool pool)
    {
        this.host = host;
        this.portIndex = portIndex;
        this.addresses = addresses;
        this.simulator = simulator;
        this.pool = pool;
    }

    void connect(final Link up, final Link down)
    {
        this.uplink = up;
        this.downlink = down;
        down.connect(this, portIndex);
    }

    public int hostIndex()
    {
        return host.index();
    }

    public int portIndex()
    {
        return portIndex;
    }

    public int localAddress()
    {
        return addresses.ipv4Of(host.index(), portIndex);
    }

    public long localMac()
    {
        return addresses.macOf(host.index(), portIndex);
    }

    public int hostCount()
    {
        return addresses.hosts();
    }

    public int addressOf(final int otherHost)
    {
        return addresses.ipv4Of(otherHost, portIndex);
    }

    public long macOf(final int otherHost)
    {
        return addresses.macOf(otherHost, portIndex);
    }

    public boolean send(final MemorySegment source, final long offset, final int length)
    {
        if (!uplink.hasRoomFor(length))
        {
            // a NIC's transmit queue pushes back rather than drops: the sender keeps the frame and retries
            sendsRefused++;
            return false;
        }
        final int slot = pool.copyIn(source, offset, length);
        if (slot == FramePool.NONE)
        {
            sendsRefused++;
            return false;
        }
        framesSent++;
        uplink.offer(simulator.now(), slot);
        return true;
    }

    public void scheduleTimer(final long atNs)
    {
        host.scheduleTimer(atNs);
    }

    public long now()
    {
        return simulator.now();
    }

    public boolean isUp()
    {
        return uplink.isUp() && downlink.isUp();
    }

    public int queuedBytes()
    {
        return uplink.queueBytes();
    }

    public int queueCapacityBytes()
    {
        return uplink.queueCapacityBytes();
    }

    public int maxFrameLength()
    {
        return pool.slotBytes();
    }

    public void onFrameArrival(final long nowNs, final int inputPort, final int slot)
    {
        final Endpoint endpoint = host.endpoint();
        final int length = pool.length(slot);
        if (null == endpoint)
        {
            framesUnclaimed++;
            pool.free(slot);
            return;
        }
        framesReceived++;
        bytesReceived += length;
        try
        {
            endpoint.onFrame(nowNs, portIndex, pool.memory(), pool.offset(slot), length);
        }
        finally
        {
            // the frame was the endpoint's only for the call, even if the call failed
            pool.free(slot);
        }
    }

    /** @return the host. */
    public Host host()
    {
        return host;
    }

    /** @return the link from this port to its switch (the NIC's egress queue). */
    public Link uplink()
    {
        return uplink;
    }

    /** @return the link from the switch to this port. */
    public Link downlink()
    {
        return downlink;
    }

    /** @return frames the endpoint sent that the fabric took. */
    public long framesSent()
    {
        return framesSent;
    }

    /** @return sends refused (transmit queue full, no free frame slot, or too long). */
    public long sendsRefused()
    {
        return sendsRefused;
    }

    /** @return frames handed to the endpoint. */
    public long framesReceived()
    {
        return framesReceived;
    }

    /** @return bytes of the frames handed to the endpoint. */
    public long bytesReceived()
    {
        return bytesReceived;
    }

    /** @return frames that arrived with no endpoint attached, and were dropped. */
    public long framesUnclaimed()
    {
        return framesUnclaimed;
    }

    public String toString()
    {
        return "HostPort{" + host.name() + "/" + portIndex + ", sent=" + framesSent + ", refused=" + sendsRefused +
            ", received=" + framesReceived + ", unclaimed=" + framesUnclaimed + '}';
    }
}
