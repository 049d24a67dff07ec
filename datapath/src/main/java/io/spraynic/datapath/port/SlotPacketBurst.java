package io.spraynic.datapath.port;

/**
 * A {@link PacketBurst} of buffer slot numbers in one memory segment, for ports that keep their own pool of
 * fixed-size slots ({@link InMemoryPacketPort}, {@link UdpSocketPacketPort}): the burst holds the slots, its
 * port knows where each starts and how long its packet is.
 */
abstract class SlotPacketBurst implements PacketBurst
{
    private final int[] slots;
    private int size;

    SlotPacketBurst(final int capacity)
    {
        if (capacity < 1)
        {
            throw new IllegalArgumentException("burst capacity " + capacity + " must be at least 1");
        }
        this.slots = new int[capacity];
    }

    public final int size()
    {
        return size;
    }

    public final int capacity()
    {
        return slots.length;
    }

    /** @return packet {@code index}'s slot, the index checked. */
    final int slot(final int index)
    {
        if (index < 0 || index >= size)
        {
            throw new IndexOutOfBoundsException("packet " + index + " of a burst holding " + size);
        }
        return slots[index];
    }

    /** @return packet {@code index}'s slot, for a port's loops over {@code 0..size()}. */
    final int slotUnchecked(final int index)
    {
        return slots[index];
    }

    final void add(final int slot)
    {
        slots[size++] = slot;
    }

    final void set(final int index, final int slot)
    {
        slots[index] = slot;
    }

    final void size(final int size)
    {
        this.size = size;
    }

    /**
     * Drops the first {@code count} entries (sent), moving the rest to the front.
     */
    final void removeFirst(final int count)
    {
        System.arraycopy(slots, count, slots, 0, size - count);
        size -= count;
    }
}
