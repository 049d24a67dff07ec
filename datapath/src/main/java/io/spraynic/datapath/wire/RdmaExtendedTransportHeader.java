package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the RDMA Extended Transport Header (RETH), 16 bytes, after the BTH of RDMA WRITE
 * First/Only and RDMA READ Request packets.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                     Virtual Address (64 bits)                 |
 * +                                                               +
 * |                                                               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                          Remote Key                           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                          DMA Length                           |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * @see <a href="https://www.infinibandta.org/ibta-specification/">InfiniBand Architecture Specification
 * Volume 1, section 9.3.3 (RETH)</a>
 */
public final class RdmaExtendedTransportHeader
{
    /** Offset of the 64-bit virtual address. */
    public static final int VIRTUAL_ADDRESS_OFFSET = 0;
    /** Offset of the remote key. */
    public static final int RKEY_OFFSET = 8;
    /** Offset of the DMA length. */
    public static final int DMA_LENGTH_OFFSET = 12;
    /** Length of the header. */
    public static final int LENGTH = 16;

    private RdmaExtendedTransportHeader()
    {
    }

    /** @param s frame memory. @param o offset of the RETH. @return the virtual address (unsigned 64 bits). */
    public static long virtualAddress(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + VIRTUAL_ADDRESS_OFFSET);
    }

    /** @param s frame memory. @param o offset of the RETH. @param va the virtual address. */
    public static void virtualAddress(final MemorySegment s, final long o, final long va)
    {
        s.set(Wire.LONG_BE, o + VIRTUAL_ADDRESS_OFFSET, va);
    }

    /** @param s frame memory. @param o offset of the RETH. @return the remote key (unsigned 32 bits). */
    public static int rkey(final MemorySegment s, final long o)
    {
        return Wire.i32(s, o + RKEY_OFFSET);
    }

    /** @param s frame memory. @param o offset of the RETH. @param rkey the remote key. */
    public static void rkey(final MemorySegment s, final long o, final int rkey)
    {
        Wire.put32(s, o + RKEY_OFFSET, rkey);
    }

    /** @param s frame memory. @param o offset of the RETH. @return the DMA length (unsigned 32 bits). */
    public static int dmaLength(final MemorySegment s, final long o)
    {
        return Wire.i32(s, o + DMA_LENGTH_OFFSET);
    }

    /** @param s frame memory. @param o offset of the RETH. @param length the DMA length. */
    public static void dmaLength(final MemorySegment s, final long o, final int length)
    {
        Wire.put32(s, o + DMA_LENGTH_OFFSET, length);
    }

    /**
     * Describes a header for debugging.
     *
     * @param s frame memory.
     * @param o offset of the RETH.
     * @return the header's fields as text.
     */
    public static String toString(final MemorySegment s, final long o)
    {
        return "RETH{va=0x" + Long.toHexString(virtualAddress(s, o)) + ", rkey=0x" + Integer.toHexString(rkey(s, o)) +
            ", dmaLength=" + Integer.toUnsignedString(dmaLength(s, o)) + "}";
    }
}
