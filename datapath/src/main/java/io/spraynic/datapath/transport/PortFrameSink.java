package io.spraynic.datapath.transport;

import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;

import java.lang.foreign.MemorySegment;

/**
 * A {@link FrameSink} over a {@link PacketPort}: each claim takes one buffer from the port into a TX burst,
 * and a full burst, or {@link #flush()}, transmits. Packets the port cannot take yet stay in the burst for
 * the next flush, so nothing is lost to a full TX ring; claims fail until there is room again.
 * Used on the poll thread only.
 */
public final class PortFrameSink implements FrameSink
{
    private final PacketPort port;
    private final int burstCapacity;
    private final int maxFrameLength;
    private PacketBurst burst;
    private int claimed = -1;
    private long transmitted;

    /**
     * A sink that does not know its port's buffer size: queue pairs cannot check their MTU against it, and a
     * frame too large for a buffer fails its claim with an {@link IllegalStateException}.
     *
     * @param port          where frames go.
     * @param burstCapacity frames per TX burst.
     */
    public PortFrameSink(final PacketPort port, final int burstCapacity)
    {
        this(port, burstCapacity, Integer.MAX_VALUE);
    }

    /**
     * @param port           where frames go.
     * @param burstCapacity  frames per TX burst.
     * @param maxFrameLength bytes each of the port's buffers holds (a DPDK mbuf's data room less headroom,
     *                       2048 by default; an {@code InMemoryLink} slot less its headroom).
     */
    public PortFrameSink(final PacketPort port, final int burstCapacity, final int maxFrameLength)
    {
        this.port = port;
        this.burstCapacity = burstCapacity;
        this.maxFrameLength = maxFrameLength;
    }

    public int maxFrameLength()
    {
        return maxFrameLength;
    }

    /**
     * Creates the TX burst; call on the poll thread before the first claim (a DPDK burst needs the lcore).
     */
    public void onStart()
    {
        if (null == burst)
        {
            burst = port.newBurst(burstCapacity);
        }
    }

    public boolean claim(final int maxLength)
    {
        if (null == burst)
        {
            onStart();
        }
        if (claimed >= 0)
        {
            // the last claim was never committed (its writer threw): its buffer is still ours, reuse it
            if (burst.room(claimed) < maxLength)
            {
                abandonClaim();
            }
            else
            {
                return true;
            }
        }
        if (burst.size() == burst.capacity())
        {
            flush();
            if (burst.size() == burst.capacity())
            {
                return false;
            }
        }
        if (!port.allocate(burst, 1))
        {
            flush();
            if (!port.allocate(burst, 1))
            {
                return false;
            }
        }
        final int index = burst.size() - 1;
        if (burst.room(index) < maxLength)
        {
            // cannot happen when maxFrameLength was declared right: queue pairs check their MTU against it
            throw new IllegalStateException("frame of " + maxLength + " B exceeds the " + burst.room(index) +
                " B buffers of " + port.name() + " (declared " + maxFrameLength + ")");
        }
        claimed = index;
        return true;
    }

    public MemorySegment buffer()
    {
        return burst.memory();
    }

    public long offset()
    {
        return burst.offset(claimed);
    }

    public void commit(final int length)
    {
        burst.length(claimed, length);
        claimed = -1;
    }

    /**
     * Transmits what is queued.
     *
     * @return frames the port took.
     */
    public int flush()
    {
        if (null == burst || burst.size() == 0)
        {
            return 0;
        }
        if (claimed >= 0)
        {
            abandonClaim(); // an unwritten buffer never goes on the wire (it would leave as an empty frame)
        }
        final int sent = port.transmit(burst);
        transmitted += sent;
        return sent;
    }

    // control path: only after a writer threw between claim and commit
    private void abandonClaim()
    {
        port.releaseLast(burst);
        claimed = -1;
    }

    /** @return frames waiting in the TX burst. */
    public int pending()
    {
        return null == burst ? 0 : burst.size();
    }

    /** @return frames transmitted. */
    public long transmitted()
    {
        return transmitted;
    }

    /**
     * Frees frames still queued and the burst (poll thread, at close).
     */
    public void close()
    {
        if (null != burst)
        {
            port.release(burst);
            burst.close();
            burst = null;
        }
    }
}
