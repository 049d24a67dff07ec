package io.spraynic.datapath.port;

import java.lang.foreign.MemorySegment;

/**
 * A {@link PacketBurst} of {@link InMemoryLink} frame slots.
 */
public final class InMemoryPacketBurst extends SlotPacketBurst
{
    private final InMemoryLink link;

    InMemoryPacketBurst(final InMemoryLink link, final int capacity)
    {
        super(capacity);
        this.link = link;
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

    void removeLast()
    {
        size(size() - 1);
    }

    void clear()
    {
        size(0);
    }

    public void close()
    {
    }
}
