package io.spraynic.datapath.port;

import java.lang.foreign.MemorySegment;

/**
 * A {@link PacketBurst} of {@link InMemoryLink} frame slots.
 */
public final class InMemoryPacketBurst implements PacketBurst
{
    private final InMemoryLink link;
    private final int[] slots;
    private int size;

    InMemoryPacketBurst(final InMemoryLink link, final int capacity)
    {
        if (capacity < 1)
        {
            throw new IllegalArgumentException("burst capacity " + capacity + " must be at least 1");
        }
        this.link = link;
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
        return link.memory();
    }

    public long offset(final int index)
    {
        return link.offset(slot(index));
    }

    public int length(final int index)
    {
        return link.length(slot(index));
    }

    public void length(final int index, final int length)
    {
        if (length < 0 || length > link.slotRoom())
        {
            throw new IllegalArgumentException("packet length " + length + " exceeds the slot room " + link.slotRoom());
        }
        link.length(slot(index), length);
    }

    public int room(final int index)
    {
        slot(index);
        return link.slotRoom();
    }

    int slot(final int index)
    {
        if (index < 0 || index >= size)
        {
            throw new IndexOutOfBoundsException("packet " + index + " of a burst holding " + size);
        }
        return slots[index];
    }

    void add(final int slot)
    {
        slots[size++] = slot;
    }

    /**
     * Drops the first {@code count} entries (sent), moving the rest to the front.
     */
    void removeFirst(final int count)
    {
        System.arraycopy(slots, count, slots, 0, size - count);
        size -= count;
    }

    void removeLast()
    {
        size--;
    }

    void clear()
    {
        size = 0;
    }

    public void close()
    {
    }
}
