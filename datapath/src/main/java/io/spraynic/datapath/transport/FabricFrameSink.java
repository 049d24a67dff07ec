package io.spraynic.datapath.transport;

import io.spraynic.datapath.fabric.FabricPort;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A {@link FrameSink} onto a {@link FabricPort}: a protocol engine writes each frame into a scratch
 * buffer and the commit hands it to the fabric (which copies it). A claim fails while the port's
 * transmit queue could not take the frame, as a NIC's TX ring pushes back, so the engine keeps the
 * frame's state and retries on a later tick.
 */
public final class FabricFrameSink implements FrameSink
{
    private final FabricPort port;
    private final MemorySegment scratch;
    private long refused;

    public FabricFrameSink(final FabricPort port, final Arena arena)
    {
        this.port = port;
        this.scratch = arena.allocate(port.maxFrameLength(), 64);
    }

    public int maxFrameLength()
    {
        return port.maxFrameLength();
    }

    public boolean claim(final int maxLength)
    {
        return maxLength <= scratch.byteSize() && port.queuedBytes() + maxLength <= port.queueCapacityBytes();
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
        if (!port.send(scratch, 0, length))
        {
            refused++; // no frame slot left in the fabric: the frame is lost at the NIC, and counted
        }
    }

    /**
     * @return frames committed that the fabric could not take (its frame pool was exhausted).
     */
    public long refused()
    {
        return refused;
    }
}
