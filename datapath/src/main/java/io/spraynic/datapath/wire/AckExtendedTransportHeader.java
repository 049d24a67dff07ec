package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the ACK Extended Transport Header (AETH), 4 bytes, in Acknowledge, Atomic Acknowledge and
 * RDMA READ Response First/Last/Only packets.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   Syndrome    |              Message Sequence Number          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * Syndrome: bit 7 reserved, bits 6-5 the kind ({@link #KIND_ACK}, {@link #KIND_RNR_NAK},
 * {@link #KIND_NAK}), bits 4-0 the credit count (ACK), RNR timer (RNR NAK) or NAK code (NAK).
 *
 * @see <a href="https://www.infinibandta.org/ibta-specification/">InfiniBand Architecture Specification
 * Volume 1, section 9.3.5 (AETH) and table 44</a>
 */
public final class AckExtendedTransportHeader
{
    /** Offset of the syndrome. */
    public static final int SYNDROME_OFFSET = 0;
    /** Offset of the 24-bit message sequence number. */
    public static final int MSN_OFFSET = 1;
    /** Length of the header. */
    public static final int LENGTH = 4;

    /** Syndrome kind: ACK, low 5 bits are the credit count. */
    public static final int KIND_ACK = 0;
    /** Syndrome kind: RNR NAK, low 5 bits are the RNR timer. */
    public static final int KIND_RNR_NAK = 1;
    /** Syndrome kind: reserved. */
    public static final int KIND_RESERVED = 2;
    /** Syndrome kind: NAK, low 5 bits are the NAK code. */
    public static final int KIND_NAK = 3;

    /** NAK code: PSN sequence error. */
    public static final int NAK_PSN_SEQUENCE_ERROR = 0;
    /** NAK code: invalid request. */
    public static final int NAK_INVALID_REQUEST = 1;
    /** NAK code: remote access error. */
    public static final int NAK_REMOTE_ACCESS_ERROR = 2;
    /** NAK code: remote operational error. */
    public static final int NAK_REMOTE_OPERATIONAL_ERROR = 3;
    /** NAK code: invalid RD request. */
    public static final int NAK_INVALID_RD_REQUEST = 4;

    /** Credit count meaning "end-to-end flow control not in use". */
    public static final int CREDITS_INVALID = 0x1F;

    private AckExtendedTransportHeader()
    {
    }

    /** @param s frame memory. @param o offset of the AETH. @return the syndrome byte. */
    public static int syndrome(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + SYNDROME_OFFSET);
    }

    /** @param s frame memory. @param o offset of the AETH. @param syndrome the syndrome byte. */
    public static void syndrome(final MemorySegment s, final long o, final int syndrome)
    {
        Wire.put8(s, o + SYNDROME_OFFSET, syndrome);
    }

    /** @param s frame memory. @param o offset of the AETH. @return the 24-bit message sequence number. */
    public static int msn(final MemorySegment s, final long o)
    {
        return Wire.u24(s, o + MSN_OFFSET);
    }

    /** @param s frame memory. @param o offset of the AETH. @param msn the 24-bit message sequence number. */
    public static void msn(final MemorySegment s, final long o, final int msn)
    {
        Wire.put24(s, o + MSN_OFFSET, msn);
    }

    /** @param syndrome a syndrome byte. @return its kind, e.g. {@link #KIND_NAK}. */
    public static int kind(final int syndrome)
    {
        return (syndrome >>> 5) & 0x3;
    }

    /** @param syndrome a syndrome byte. @return its low 5 bits: credit count, RNR timer or NAK code. */
    public static int value(final int syndrome)
    {
        return syndrome & 0x1F;
    }

    /** @param kind syndrome kind. @param value credit count, RNR timer or NAK code. @return the syndrome byte. */
    public static int syndrome(final int kind, final int value)
    {
        return ((kind & 0x3) << 5) | (value & 0x1F);
    }

    /**
     * Describes a header for debugging.
     *
     * @param s frame memory.
     * @param o offset of the AETH.
     * @return the header's fields as text.
     */
    public static String toString(final MemorySegment s, final long o)
    {
        final int syndrome = syndrome(s, o);
        final String kind = switch (kind(syndrome))
        {
            case KIND_ACK -> "ACK credits=";
            case KIND_RNR_NAK -> "RNR_NAK timer=";
            case KIND_NAK -> "NAK code=";
            default -> "RESERVED value=";
        };
        return "AETH{syndrome=0x" + Integer.toHexString(syndrome) + " (" + kind + value(syndrome) + "), msn=" +
            msn(s, o) + "}";
    }
}
