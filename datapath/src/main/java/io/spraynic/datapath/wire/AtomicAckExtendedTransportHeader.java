package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the Atomic Acknowledge Extended Transport Header (AtomicAckETH), 8 bytes, after the AETH
 * of an Atomic Acknowledge: the original remote data.
 *
 * @see <a href="https://www.infinibandta.org/ibta-specification/">InfiniBand Architecture Specification
 * Volume 1, section 9.5.3 (AtomicAckETH)</a>
 */
public final class AtomicAckExtendedTransportHeader
{
    /** Offset of the 64-bit original remote data. */
    public static final int ORIGINAL_DATA_OFFSET = 0;
    /** Length of the header. */
    public static final int LENGTH = 8;

    private AtomicAckExtendedTransportHeader()
    {
    }

    /** @param s frame memory. @param o offset of the AtomicAckETH. @return the original remote data. */
    public static long originalData(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + ORIGINAL_DATA_OFFSET);
    }

    /** @param s frame memory. @param o offset of the AtomicAckETH. @param value the original remote data. */
    public static void originalData(final MemorySegment s, final long o, final long value)
    {
        s.set(Wire.LONG_BE, o + ORIGINAL_DATA_OFFSET, value);
    }

    /**
     * Describes a header for debugging.
     *
     * @param s frame memory.
     * @param o offset of the AtomicAckETH.
     * @return the header's field as text.
     */
    public static String toString(final MemorySegment s, final long o)
    {
        return "AtomicAckETH{original=0x" + Long.toHexString(originalData(s, o)) + "}";
    }
}
