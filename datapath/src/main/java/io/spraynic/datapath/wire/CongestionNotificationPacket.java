package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the body of a RoCEv2 Congestion Notification Packet (CNP): a BTH with opcode
 * {@link Opcode#CNP} (0x81), then 16 reserved bytes, then the ICRC.
 * <p>
 * Per the RoCEv2 annex (A17.9.3), the BTH of a CNP carries the destination QP of the flow that saw
 * congestion, PSN 0, pad count 0, SE/M/A 0; the reserved bytes are sent as zero and ignored on receipt.
 * Implementations commonly set BECN (bit 6 of BTH byte 4), which the ICRC masks.
 *
 * @see <a href="https://www.infinibandta.org/ibta-specification/">InfiniBand Architecture Specification
 * Volume 1, Annex A17 (RoCEv2), section A17.9.3</a>
 */
public final class CongestionNotificationPacket
{
    /** Offset, after the BTH, of the 16 reserved bytes. */
    public static final int RESERVED_OFFSET = 0;
    /** Length of the reserved body between BTH and ICRC. */
    public static final int LENGTH = 16;

    private CongestionNotificationPacket()
    {
    }

    /**
     * @param s frame memory.
     * @param o offset of the CNP body (just after the BTH).
     * @return true if all 16 reserved bytes are zero.
     */
    public static boolean isReservedZero(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + RESERVED_OFFSET) == 0 && s.get(Wire.LONG_BE, o + RESERVED_OFFSET + 8) == 0;
    }

    /**
     * Zeroes the reserved bytes.
     *
     * @param s frame memory.
     * @param o offset of the CNP body (just after the BTH).
     */
    public static void clearReserved(final MemorySegment s, final long o)
    {
        s.set(Wire.LONG_BE, o + RESERVED_OFFSET, 0L);
        s.set(Wire.LONG_BE, o + RESERVED_OFFSET + 8, 0L);
    }

    /**
     * Describes a CNP body for debugging.
     *
     * @param s frame memory.
     * @param o offset of the CNP body.
     * @return e.g. "CNP{reserved=0x0000...}".
     */
    public static String toString(final MemorySegment s, final long o)
    {
        return "CNP{reserved=0x" + String.format("%016x%016x", s.get(Wire.LONG_BE, o),
            s.get(Wire.LONG_BE, o + 8)) + "}";
    }
}
