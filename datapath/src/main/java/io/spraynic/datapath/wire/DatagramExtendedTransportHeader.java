package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the Datagram Extended Transport Header (DETH), 8 bytes, in UD packets.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                          Queue Key                            |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Reserved    |                Source QP                      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * @see <a href="https://www.infinibandta.org/ibta-specification/">InfiniBand Architecture Specification
 * Volume 1, section 9.3.2 (DETH)</a>
 */
public final class DatagramExtendedTransportHeader
{
    /** Offset of the queue key. */
    public static final int QKEY_OFFSET = 0;
    /** Offset of the 24-bit source QP (after one reserved byte). */
    public static final int SOURCE_QP_OFFSET = 5;
    /** Length of the header. */
    public static final int LENGTH = 8;

    private DatagramExtendedTransportHeader()
    {
    }

    /** @param s frame memory. @param o offset of the DETH. @return the queue key. */
    public static int qkey(final MemorySegment s, final long o)
    {
        return Wire.i32(s, o + QKEY_OFFSET);
    }

    /** @param s frame memory. @param o offset of the DETH. @param qkey the queue key. */
    public static void qkey(final MemorySegment s, final long o, final int qkey)
    {
        Wire.put32(s, o + QKEY_OFFSET, qkey);
    }

    /** @param s frame memory. @param o offset of the DETH. @return the 24-bit source QP. */
    public static int sourceQp(final MemorySegment s, final long o)
    {
        return Wire.u24(s, o + SOURCE_QP_OFFSET);
    }

    /**
     * Sets the source QP and clears the reserved byte.
     *
     * @param s  frame memory.
     * @param o  offset of the DETH.
     * @param qp the 24-bit source QP.
     */
    public static void sourceQp(final MemorySegment s, final long o, final int qp)
    {
        Wire.put32(s, o + SOURCE_QP_OFFSET - 1, qp & 0xFF_FFFF);
    }

    /**
     * Describes a header for debugging.
     *
     * @param s frame memory.
     * @param o offset of the DETH.
     * @return the header's fields as text.
     */
    public static String toString(final MemorySegment s, final long o)
    {
        return "DETH{qkey=0x" + Integer.toHexString(qkey(s, o)) + ", srcQp=0x" + Integer.toHexString(sourceQp(s, o)) +
            "}";
    }
}
