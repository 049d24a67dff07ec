package io.spraynic.datapath.port;

import java.lang.foreign.MemorySegment;

/**
 * A {@link PacketBurst} of a {@link UdpSocketPacketPort}'s buffer slots: slot {@code s}'s frame starts at
 * {@code s * slotSize} in the port's one buffer segment.
 */
public final class UdpPacketBurst implements PacketBurst
{
    private final UdpSocketPacketPort port;
    private final int[] slots;
    private int size;

    UdpPacketBurst(final UdpSocketPacketPort port, final int capacity)
    {
        if (capacity < 1)
        {
            throw new IllegalArgumentException("burst capacity " + capacity + " must be at least 1");
        }
        this.port = port;
        this.slots = new int[capacity];
    }

    public int size()
    {
        return size;
    }

    public int capacity()
    {
        return slots.length;
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

    int slot(final int index)
    {
        if (index < 0 || index >= size)
        {
            throw new IndexOutOfBoundsException("packet " + index + " of a burst holding " + size);
        }
        return slots[index];
    }

    int slotUnchecked(final int index)
    {
        return slots[index];
    }

    void add(final int slot)
    {
        slots[size++] = slot;
    }

    void set(final int index, final int slot)
    {
        slots[index] = slot;
    }

    void size(final int size)
    {
        this.size = size;
    }

    /**
     * Gives the packets still held back to the port.
     */
    public void close()
    {
        port.release(this);
    }
}
