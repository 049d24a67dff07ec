package io.spraynic.datapath.port;

import java.lang.foreign.MemorySegment;

/**
 * A {@link PacketBurst} of a {@link UdpSocketPacketPort}'s buffer slots: slot {@code s}'s frame starts at
 * {@code s * slotSize} in the port's one buffer segment.
 */
public final class UdpPacketBurst extends SlotPacketBurst
{
    private final UdpSocketPacketPort port;

    UdpPacketBurst(final UdpSocketPacketPort port, final int capacity)
    {
        super(capacity);
        this.port = port;
    }

    public MemorySegment memory()
    {
        return port.buffers();
    }

    public long offset(final int index)
    {
        return port.slotOffset(slot(index));
    }

    public int length(final int index)
    {
        return port.length(slot(index));
    }

    public void length(final int index, final int length)
    {
        if (length < 0 || length > port.slotSize())
        {
            throw new IllegalArgumentException("packet length " + length + " exceeds the slot room " + port.slotSize());
        }
        port.length(slot(index), length);
    }

    public int room(final int index)
    {
        slot(index);
        return port.slotSize();
    }

    /**
     * Gives the packets still held back to the port.
     */
    public void close()
    {
        port.release(this);
    }
}
