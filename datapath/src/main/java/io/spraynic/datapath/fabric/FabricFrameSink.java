package io.spraynic.datapath.fabric;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A {@link io.spraynic.datapath.transport.FrameSink} onto one {@link FabricPort} per plane (index = plane): a
 * protocol engine writes each frame into a scratch buffer and the commit hands it to the fabric (which copies it).
 * A claim fails while the plane's port transmit queue could not take the frame, as a NIC's full TX ring pushes
 * back, so the engine keeps the frame's state and retries on a later tick instead of losing it and recovering it
 * by timeout. Allocation-free per frame.
 */
public final class FabricFrameSink implements io.spraynic.datapath.transport.FrameSink // not fabric.FrameSink: that is a link's far end
{
    private final FabricPort[] ports;
    private final MemorySegment scratch;
    private int claimedPlane = -1;
    private long claimsRefused;
    private long framesRefused;

    /** A sink onto a single fabric port (plane 0). */
    public FabricFrameSink(final FabricPort port, final Arena arena)
    {
        this(new FabricPort[]{port}, arena);
    }

    /** A sink onto every port of a host, in plane order. */
    public FabricFrameSink(final Host host, final Arena arena)
    {
        this(portsOf(host), arena);
    }

    /**
     * @param ports one port per plane, index = plane.
     * @param arena where the scratch buffer (the largest frame of any port) is allocated.
     */
    public FabricFrameSink(final FabricPort[] ports, final Arena arena)
    {
        this.ports = ports.clone();
        int maxFrame = 0;
        for (final FabricPort port : ports)
        {
            maxFrame = Math.max(maxFrame, port.maxFrameLength());
        }
        this.scratch = arena.allocate(maxFrame, 64);
    }

    private static FabricPort[] portsOf(final Host host)
    {
        final FabricPort[] ports = new FabricPort[host.portCount()];
        for (int i = 0; i < ports.length; i++)
        {
            ports[i] = host.port(i);
        }
        return ports;
    }

    public int maxFrameLength()
    {
        return (int)scratch.byteSize();
    }

    public boolean claim(final int plane, final int maxLength)
    {
        if (maxLength > scratch.byteSize())
        {
            // cannot happen when the engine checked its MTU against maxFrameLength()
            throw new IllegalStateException("frame of " + maxLength + " B exceeds the fabric's " + scratch.byteSize() +
                " B frames: lower the MTU");
        }
        final FabricPort port = ports[plane];
        if (port.queuedBytes() + maxLength > port.queueCapacityBytes())
        {
            claimsRefused++; // the NIC's transmit queue is full: push back
            return false;
        }
        claimedPlane = plane;
        return true;
    }

    public MemorySegment buffer()
    {
        return scratch;
    }

    public long offset()
    {
        return 0;
    }

    public void commit(final int length)
    {
        if (!ports[claimedPlane].send(scratch, 0, length))
        {
            framesRefused++; // no frame slot left in the fabric: the frame is lost at the NIC, and counted
        }
        claimedPlane = -1;
    }

    /** @return claims refused because the port's transmit queue could not take the frame (push-back). */
    public long claimsRefused()
    {
        return claimsRefused;
    }

    /** @return frames committed that the fabric could not take (its frame pool was exhausted), lost. */
    public long framesRefused()
    {
        return framesRefused;
    }
}
