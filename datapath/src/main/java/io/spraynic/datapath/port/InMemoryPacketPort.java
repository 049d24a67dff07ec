package io.spraynic.datapath.port;

/**
 * One end of an {@link InMemoryLink}.
 */
public final class InMemoryPacketPort implements PacketPort
{
    private final String name;
    private final InMemoryLink link;
    private final int firstOwnedSlot;
    private final int[] freeSlots;
    private int freeCount;
    private final SpscIntRing incoming;
    private final SpscIntRing outgoing;
    private final SpscIntRing returnsToMe;
    private final SpscIntRing returnsToPeer;

    InMemoryPacketPort(
        final String name,
        final InMemoryLink link,
        final int firstOwnedSlot,
        final SpscIntRing incoming,
        final SpscIntRing outgoing,
        final SpscIntRing returnsToMe,
        final SpscIntRing returnsToPeer)
    {
        this.name = name;
        this.link = link;
        this.firstOwnedSlot = firstOwnedSlot;
        this.incoming = incoming;
        this.outgoing = outgoing;
        this.returnsToMe = returnsToMe;
        this.returnsToPeer = returnsToPeer;
        this.freeSlots = new int[link.slotsPerPort()];
        for (int i = 0; i < freeSlots.length; i++)
        {
            freeSlots[i] = firstOwnedSlot + freeSlots.length - 1 - i;
        }
        this.freeCount = freeSlots.length;
    }

    public String name()
    {
        return name;
    }

    public InMemoryPacketBurst newBurst(final int capacity)
    {
        return new InMemoryPacketBurst(link, capacity);
    }

    public int receive(final PacketBurst burst)
    {
        final InMemoryPacketBurst slots = (InMemoryPacketBurst)burst;
        int received = 0;
        while (slots.size() < slots.capacity())
        {
            final int slot = incoming.poll();
            if (SpscIntRing.EMPTY == slot)
            {
                break;
            }
            slots.add(slot);
            received++;
        }
        return received;
    }

    public boolean allocate(final PacketBurst burst, final int count)
    {
        final InMemoryPacketBurst slots = (InMemoryPacketBurst)burst;
        if (count > slots.capacity() - slots.size())
        {
            throw new IllegalArgumentException(
                "cannot add " + count + " packets to a burst holding " + slots.size() + " of " + slots.capacity());
        }
        if (freeCount < count)
        {
            reclaimReturnedSlots();
            if (freeCount < count)
            {
                return false;
            }
        }
        for (int i = 0; i < count; i++)
        {
            final int slot = freeSlots[--freeCount];
            link.length(slot, 0);
            slots.add(slot);
        }
        return true;
    }

    public int transmit(final PacketBurst burst)
    {
        final InMemoryPacketBurst slots = (InMemoryPacketBurst)burst;
        int sent = 0;
        final int size = slots.size();
        while (sent < size && outgoing.offer(slots.slot(sent)))
        {
            sent++;
        }
        slots.removeFirst(sent);
        return sent;
    }

    public void release(final PacketBurst burst)
    {
        final InMemoryPacketBurst slots = (InMemoryPacketBurst)burst;
        for (int i = 0, size = slots.size(); i < size; i++)
        {
            giveBack(slots.slot(i));
        }
        slots.clear();
    }

    public void releaseLast(final PacketBurst burst)
    {
        final InMemoryPacketBurst slots = (InMemoryPacketBurst)burst;
        if (slots.size() > 0)
        {
            giveBack(slots.slot(slots.size() - 1));
            slots.removeLast();
        }
    }

    private void giveBack(final int slot)
    {
        if (owns(slot))
        {
            freeSlots[freeCount++] = slot;
        }
        else if (!returnsToPeer.offer(slot))
        {
            // Cannot happen: the return ring holds every slot the peer owns.
            throw new IllegalStateException("return ring of " + name + "'s peer is full");
        }
    }

    private boolean owns(final int slot)
    {
        return slot >= firstOwnedSlot && slot < firstOwnedSlot + freeSlots.length;
    }

    private void reclaimReturnedSlots()
    {
        int slot;
        while (SpscIntRing.EMPTY != (slot = returnsToMe.poll()))
        {
            freeSlots[freeCount++] = slot;
        }
    }

    /**
     * @return buffers of this port's pool not in use right now (slots returned by the peer count
     * once reclaimed).
     */
    public int freeBuffers()
    {
        return freeCount + returnsToMe.size();
    }

    /**
     * @return packets waiting to be received.
     */
    public int pendingReceive()
    {
        return incoming.size();
    }

    public void close()
    {
    }

    public String toString()
    {
        return "InMemoryPacketPort{" + name + '}';
    }
}
