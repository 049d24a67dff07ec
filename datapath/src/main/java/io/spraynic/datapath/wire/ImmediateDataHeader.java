package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the Immediate Data Extended Transport Header (ImmDt), 4 bytes, in SEND and RDMA WRITE
 * packets "with immediate". The value is opaque: it is handed to the receiver's completion as is.
 *
 * @see <a href="https://www.infinibandta.org/ibta-specification/">InfiniBand Architecture Specification
 * Volume 1, section 9.3.6 (ImmDt)</a>
 */
public final class ImmediateDataHeader
{
    /** Offset of the 32-bit immediate data. */
    public static final int IMMEDIATE_DATA_OFFSET = 0;
    /** Length of the header. */
    public static final int LENGTH = 4;

    private ImmediateDataHeader()
    {
    }

    /** @param s frame memory. @param o offset of the ImmDt. @return the immediate data, big-endian. */
    public static int immediateData(final MemorySegment s, final long o)
    {
        return Wire.i32(s, o + IMMEDIATE_DATA_OFFSET);
    }

    /** @param s frame memory. @param o offset of the ImmDt. @param value the immediate data. */
    public static void immediateData(final MemorySegment s, final long o, final int value)
    {
        Wire.put32(s, o + IMMEDIATE_DATA_OFFSET, value);
    }

    /**
     * Describes a header for debugging.
     *
     * @param s frame memory.
     * @param o offset of the ImmDt.
     * @return the header's field as text.
     */
    public static String toString(final MemorySegment s, final long o)
    {
        return "ImmDt{0x" + Integer.toHexString(immediateData(s, o)) + "}";
    }
}
