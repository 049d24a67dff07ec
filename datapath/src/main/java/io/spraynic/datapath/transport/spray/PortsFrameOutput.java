package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.transport.PortFrameSink;

import java.lang.foreign.MemorySegment;

/**
 * A {@link SprayFrameOutput} over one {@link PacketPort} per plane, each through a {@link PortFrameSink}
 * (TX bursts, flushed when full or by {@link #flush()}). Poll thread only.
 */
public final class PortsFrameOutput implements SprayFrameOutput
{
    private final PortFrameSink[] sinks;
    private PortFrameSink claimed;

    /**
     * @param ports         one port per plane, index = plane.
     * @param burstCapacity frames per TX burst.
     */
    public PortsFrameOutput(final PacketPort[] ports, final int burstCapacity)
    {
        sinks = new PortFrameSink[ports.length];
        for (int i = 0; i < ports.length; i++)
        {
            sinks[i] = new PortFrameSink(ports[i], burstCapacity);
        }
    }

    /** Creates the TX bursts (poll thread, before the first claim). */
    public void onStart()
    {
        for (final PortFrameSink sink : sinks)
        {
            sink.onStart();
        }
    }

    public boolean claim(final int plane, final int maxLength)
    {
        final PortFrameSink sink = sinks[plane];
        if (sink.claim(maxLength))
        {
            claimed = sink;
            return true;
        }
        return false;
    }

    public MemorySegment buffer()
    {
        return claimed.buffer();
    }

    public long offset()
    {
        return claimed.offset();
    }

    public void commit(final int length)
    {
        claimed.commit(length);
        claimed = null;
    }

    /**
     * Transmits what is queued on every plane.
     *
     * @return frames the ports took.
     */
    public int flush()
    {
        int sent = 0;
        for (final PortFrameSink sink : sinks)
        {
            sent += sink.flush();
        }
        return sent;
    }

    /** @return the planes. */
    public int planes()
    {
        return sinks.length;
    }

    /** Frees queued frames and bursts (poll thread, at close). */
    public void close()
    {
        for (final PortFrameSink sink : sinks)
        {
            sink.close();
        }
    }
}
