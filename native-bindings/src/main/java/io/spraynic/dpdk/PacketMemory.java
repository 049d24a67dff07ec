package io.spraynic.dpdk;

import java.lang.foreign.MemorySegment;

/**
 * One {@link MemorySegment} spanning the memory of every mbuf pool this process created, so that
 * mbuf headers and packet data are reached by offset into a single long-lived segment: no segment
 * is created per packet, and every access is still bounds-checked against pool memory.
 * <p>
 * The span grows as pools are created; take {@link #segment()} after creating the pools a
 * datapath uses (ports and bursts do this when they are built).
 */
public final class PacketMemory
{
    private static long lowest = Long.MAX_VALUE;
    private static long highest = Long.MIN_VALUE;

    private final MemorySegment segment;

    private PacketMemory(final MemorySegment segment)
    {
        this.segment = segment;
    }

    /**
     * @return the packet memory as it spans the pools created so far.
     * @throws IllegalStateException when no pool exists yet.
     */
    public static synchronized PacketMemory current()
    {
        if (lowest == Long.MAX_VALUE)
        {
            throw new IllegalStateException("no mbuf pool exists yet: create a Mempool before ports and bursts");
        }
        return new PacketMemory(MemorySegment.ofAddress(lowest).reinterpret(highest - lowest));
    }

    static synchronized void include(final long address, final long length)
    {
        lowest = Math.min(lowest, address);
        highest = Math.max(highest, address + length);
    }

    /**
     * @return the segment; offsets into it are addresses minus {@code segment().address()}.
     */
    public MemorySegment segment()
    {
        return segment;
    }

    /**
     * @return whether {@code length} bytes at a native address lie inside this packet memory.
     */
    public boolean contains(final long address, final long length)
    {
        final long base = segment.address();
        return address >= base && length >= 0 && address + length <= base + segment.byteSize();
    }

    public String toString()
    {
        return "PacketMemory{base=0x" + Long.toHexString(segment.address()) + ", length=" + segment.byteSize() + '}';
    }
}
