package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the Invalidate Extended Transport Header (IETH), 4 bytes, in SEND Last/Only with
 * Invalidate packets: the remote key the receiver invalidates.
 *
 * @see <a href="https://www.infinibandta.org/ibta-specification/">InfiniBand Architecture Specification
 * Volume 1, section 9.3.7 (IETH)</a>
 */
public final class InvalidateExtendedTransportHeader
{
    /** Offset of the remote key to invalidate. */
    public static final int RKEY_OFFSET = 0;
    /** Length of the header. */
    public static final int LENGTH = 4;

    private InvalidateExtendedTransportHeader()
    {
    }

    /** @param s frame memory. @param o offset of the IETH. @return the remote key. */
    public static int rkey(final MemorySegment s, final long o)
    {
        return Wire.i32(s, o + RKEY_OFFSET);
    }

    /** @param s frame memory. @param o offset of the IETH. @param rkey the remote key. */
    public static void rkey(final MemorySegment s, final long o, final int rkey)
    {
        Wire.put32(s, o + RKEY_OFFSET, rkey);
    }

    /**
     * Describes a header for debugging.
     *
     * @param s frame memory.
     * @param o offset of the IETH.
     * @return the header's field as text.
     */
    public static String toString(final MemorySegment s, final long o)
    {
        return "IETH{rkey=0x" + Integer.toHexString(rkey(s, o)) + "}";
    }
}
