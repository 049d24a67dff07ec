package io.spraynic.datapath.port;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A crossed pair of in-JVM ports, {@link #first()} and {@link #second()}: what one transmits the
 * other receives, in order, with no copy. It exists for fast, deterministic unit tests of the
 * code above the port layer; wherever DPDK can run, tests also run over DPDK ports.
 * <p>
 * Frames live in one off-heap segment of fixed-size slots. Slots {@code [0, n)} belong to the first
 * port's pool and {@code [n, 2n)} to the second's. Each direction is a single-producer
 * single-consumer ring of slot numbers; a slot released by the receiving side returns to its
 * owner through a second such ring. So each port may be driven by its own thread, with no locks
 * and no allocation per packet.
 */
public final class InMemoryLink implements AutoCloseable
{
    /** Bytes reserved before each frame, as DPDK's mbuf headroom. */
    public static final int HEADROOM = 128;

    private final Arena arena;
    private final MemorySegment memory;
    private final int slotsPerPort;
    private final int slotSize;
    private final int[] lengths;
    private final InMemoryPacketPort first;
    private final InMemoryPacketPort second;

    /**
     * @param name         a prefix for the ports' names.
     * @param slotsPerPort frame buffers each port owns, a power of two.
     * @param slotSize     bytes per buffer, headroom included.
     */
    public InMemoryLink(final String name, final int slotsPerPort, final int slotSize)
    {
        if (slotsPerPort < 2 || Integer.bitCount(slotsPerPort) != 1)
        {
            throw new IllegalArgumentException("slots per port " + slotsPerPort + " must be a power of two >= 2");
        }
        if (slotSize <= HEADROOM + 64)
        {
            throw new IllegalArgumentException("slot size " + slotSize + " must exceed the " + HEADROOM +
                " B headroom plus a 64 B frame");
        }
        this.slotsPerPort = slotsPerPort;
        this.slotSize = slotSize;
        this.arena = Arena.ofShared();
        this.memory = arena.allocate((long)slotsPerPort * 2 * slotSize, 64);
        this.lengths = new int[slotsPerPort * 2];

        final SpscIntRing firstToSecond = new SpscIntRing(slotsPerPort);
        final SpscIntRing secondToFirst = new SpscIntRing(slotsPerPort);
        final SpscIntRing returnsToFirst = new SpscIntRing(slotsPerPort);
        final SpscIntRing returnsToSecond = new SpscIntRing(slotsPerPort);
        this.first = new InMemoryPacketPort(name + "a", this, 0, secondToFirst, firstToSecond, returnsToFirst, returnsToSecond);
        this.second = new InMemoryPacketPort(
            name + "b", this, slotsPerPort, firstToSecond, secondToFirst, returnsToSecond, returnsToFirst);
    }

    public InMemoryPacketPort first()
    {
        return first;
    }

    public InMemoryPacketPort second()
    {
        return second;
    }

    MemorySegment memory()
    {
        return memory;
    }

    int slotsPerPort()
    {
        return slotsPerPort;
    }

    int slotRoom()
    {
        return slotSize - HEADROOM;
    }

    long offset(final int slot)
    {
        return (long)slot * slotSize + HEADROOM;
    }

    int length(final int slot)
    {
        return lengths[slot];
    }

    void length(final int slot, final int length)
    {
        lengths[slot] = length;
    }

    /**
     * Frees the frame memory. Both ports' threads must have stopped.
     */
    public void close()
    {
        if (arena.scope().isAlive())
        {
            arena.close();
        }
    }
}
