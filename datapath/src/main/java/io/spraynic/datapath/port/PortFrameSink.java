package io.spraynic.datapath.port;

import io.spraynic.datapath.transport.FrameSink;

import java.lang.foreign.MemorySegment;

/**
 * A {@link FrameSink} over one {@link PacketPort} per plane (index = plane): each claim takes one buffer from its
 * plane's port into that port's TX burst ({@link PacketPort#allocateOne}: on DPDK from a reserve the burst refills
 * in bulk, freed with the burst at {@link #close()}), and a full burst, or {@link #flush()}, transmits. Packets a
 * port cannot take yet stay in its burst for the next flush, so nothing is lost to a full TX ring; claims fail until
 * there is room again. A claimed buffer is looked up once ({@link PacketBurst#writable}: on DPDK one read of the
 * burst's pointer array for the room check, the offset and the commit, which took three). Used on the poll thread
 * only; allocation-free after {@link #onStart()}.
 */
public final class PortFrameSink implements FrameSink
{
    private final PacketPort[] ports;
    private final PacketBurst[] bursts;
    private final int[] claimed; // per plane: the index of a buffer claimed and not yet committed, or -1
    private final int burstCapacity;
    private final int maxFrameLength;
    private int claimedPlane = -1;
    // the claimed buffer, looked up once per claim (PacketBurst#writable): its handle for the commit, and its offset
    private long claimedHandle;
    private long claimedOffset;
    private long transmitted;

    /**
     * A sink that does not know its ports' buffer size: queue pairs cannot check their MTU against it, and a
     * frame too large for a buffer fails its claim with an {@link IllegalStateException}.
     *
     * @param ports         one port per plane, index = plane.
     * @param burstCapacity frames per TX burst.
     */
    public PortFrameSink(final PacketPort[] ports, final int burstCapacity)
    {
        this(ports, burstCapacity, Integer.MAX_VALUE);
    }

    /**
     * @param ports          one port per plane, index = plane.
     * @param burstCapacity  frames per TX burst.
     * @param maxFrameLength bytes each of the ports' buffers holds (a DPDK mbuf's data room less headroom; an
     *                       {@code InMemoryLink} slot less its headroom).
     */
    public PortFrameSink(final PacketPort[] ports, final int burstCapacity, final int maxFrameLength)
    {
        this.ports = ports.clone();
        this.bursts = new PacketBurst[ports.length];
        this.claimed = new int[ports.length];
        java.util.Arrays.fill(claimed, -1);
        this.burstCapacity = burstCapacity;
        this.maxFrameLength = maxFrameLength;
    }

    /** A sink over a single port (plane 0) whose buffer size it does not know; see above. */
    public PortFrameSink(final PacketPort port, final int burstCapacity)
    {
        this(new PacketPort[]{port}, burstCapacity, Integer.MAX_VALUE);
    }

    /** A sink over a single port (plane 0); see above. */
    public PortFrameSink(final PacketPort port, final int burstCapacity, final int maxFrameLength)
    {
        this(new PacketPort[]{port}, burstCapacity, maxFrameLength);
    }

    public int maxFrameLength()
    {
        return maxFrameLength;
    }

    /** @return the planes. */
    public int planes()
    {
        return ports.length;
    }

    /**
     * Creates the TX bursts; call on the poll thread before the first claim (a DPDK burst needs the lcore).
     */
    public void onStart()
    {
        for (int plane = 0; plane < ports.length; plane++)
        {
            if (null == bursts[plane])
            {
                bursts[plane] = ports[plane].newBurst(burstCapacity);
            }
        }
    }

    public boolean claim(final int plane, final int maxLength)
    {
        PacketBurst burst = bursts[plane];
        if (null == burst)
        {
            onStart();
            burst = bursts[plane];
        }
        if (claimed[plane] >= 0)
        {
            // the last claim was never committed (its writer threw): its buffer is still ours, reuse it
            final long handle = burst.writable(claimed[plane], maxLength);
            if (handle < 0)
            {
                abandonClaim(plane);
            }
            else
            {
                claimed(plane, burst, handle);
                return true;
            }
        }
        final PacketPort port = ports[plane];
        if (burst.size() == burst.capacity())
        {
            flush(plane);
            if (burst.size() == burst.capacity())
            {
                return false;
            }
        }
        if (!port.allocateOne(burst))
        {
            flush(plane);
            if (!port.allocateOne(burst))
            {
                return false;
            }
        }
        final int index = burst.size() - 1;
        final long handle = burst.writable(index, maxLength);
        if (handle < 0)
        {
            // cannot happen when maxFrameLength was declared right: queue pairs check their MTU against it
            throw new IllegalStateException("frame of " + maxLength + " B exceeds the " + burst.room(index) +
                " B buffers of " + port.name() + " (declared " + maxFrameLength + ")");
        }
        claimed[plane] = index;
        claimed(plane, burst, handle);
        return true;
    }

    private void claimed(final int plane, final PacketBurst burst, final long handle)
    {
        claimedPlane = plane;
        claimedHandle = handle;
        claimedOffset = burst.offsetOf(handle);
    }

    public MemorySegment buffer()
    {
        return bursts[claimedPlane].memory();
    }

    public long offset()
    {
        return claimedOffset;
    }

    public void commit(final int length)
    {
        bursts[claimedPlane].lengthOf(claimedHandle, length);
        claimed[claimedPlane] = -1;
        claimedPlane = -1;
    }

    /**
     * Transmits what is queued on every plane.
     *
     * @return frames the ports took.
     */
    public int flush()
    {
        int sent = 0;
        for (int plane = 0; plane < ports.length; plane++)
        {
            sent += flush(plane);
        }
        return sent;
    }

    private int flush(final int plane)
    {
        final PacketBurst burst = bursts[plane];
        if (null == burst || burst.size() == 0)
        {
            return 0;
        }
        if (claimed[plane] >= 0)
        {
            abandonClaim(plane); // an unwritten buffer never goes on the wire (it would leave as an empty frame)
        }
        final int sent = ports[plane].transmit(burst);
        transmitted += sent;
        return sent;
    }

    // control path: only after a writer threw between claim and commit
    private void abandonClaim(final int plane)
    {
        ports[plane].releaseLast(bursts[plane]);
        claimed[plane] = -1;
    }

    /** @return frames waiting in the TX bursts. */
    public int pending()
    {
        int pending = 0;
        for (final PacketBurst burst : bursts)
        {
            pending += null == burst ? 0 : burst.size();
        }
        return pending;
    }

    /** @return frames transmitted. */
    public long transmitted()
    {
        return transmitted;
    }

    /**
     * Frees frames still queued and the bursts (poll thread, at close).
     */
    public void close()
    {
        for (int plane = 0; plane < ports.length; plane++)
        {
            final PacketBurst burst = bursts[plane];
            if (null != burst)
            {
                ports[plane].release(burst);
                burst.close();
                bursts[plane] = null;
            }
        }
    }
}
