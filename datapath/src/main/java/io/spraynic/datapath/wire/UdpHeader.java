package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over a UDP header (RFC 768). RoCEv2 uses destination port {@link #ROCE_V2_PORT} and puts
 * flow entropy for ECMP in the source port.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          Source Port          |       Destination Port        |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |             Length            |           Checksum            |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * @see <a href="https://www.rfc-editor.org/rfc/rfc768">RFC 768</a>,
 * <a href="https://www.rfc-editor.org/rfc/rfc8200#section-8.1">RFC 8200 section 8.1 (checksum over IPv6)</a>
 */
public final class UdpHeader
{
    /** Offset of the source port. */
    public static final int SOURCE_PORT_OFFSET = 0;
    /** Offset of the destination port. */
    public static final int DESTINATION_PORT_OFFSET = 2;
    /** Offset of the length (header and payload). */
    public static final int LENGTH_OFFSET = 4;
    /** Offset of the checksum. */
    public static final int CHECKSUM_OFFSET = 6;
    /** Length of the header. */
    public static final int LENGTH = 8;

    /** IANA-assigned UDP destination port of RoCEv2. */
    public static final int ROCE_V2_PORT = 4791;

    private UdpHeader()
    {
    }

    /** @param s frame memory. @param o offset of the header. @return source port. */
    public static int sourcePort(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + SOURCE_PORT_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param port source port. */
    public static void sourcePort(final MemorySegment s, final long o, final int port)
    {
        Wire.put16(s, o + SOURCE_PORT_OFFSET, port);
    }

    /** @param s frame memory. @param o offset of the header. @return destination port. */
    public static int destinationPort(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + DESTINATION_PORT_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param port destination port. */
    public static void destinationPort(final MemorySegment s, final long o, final int port)
    {
        Wire.put16(s, o + DESTINATION_PORT_OFFSET, port);
    }

    /** @param s frame memory. @param o offset of the header. @return length of header and payload in bytes. */
    public static int length(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + LENGTH_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param length length of header and payload. */
    public static void length(final MemorySegment s, final long o, final int length)
    {
        Wire.put16(s, o + LENGTH_OFFSET, length);
    }

    /** @param s frame memory. @param o offset of the header. @return checksum as on the wire (0 = none over IPv4). */
    public static int checksum(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + CHECKSUM_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param checksum checksum. */
    public static void checksum(final MemorySegment s, final long o, final int checksum)
    {
        Wire.put16(s, o + CHECKSUM_OFFSET, checksum);
    }

    /**
     * Computes the UDP checksum over IPv6 (RFC 8200 section 8.1): the pseudo-header (addresses, upper-layer
     * length, next header 17) plus the UDP header and payload, the checksum field taken as zero; a result
     * of zero is sent as 0xFFFF.
     *
     * @param s          frame memory.
     * @param ipv6Offset offset of the IPv6 header.
     * @param udpOffset  offset of the UDP header.
     * @param udpLength  UDP length (header and payload).
     * @return the value to store in the checksum field.
     */
    public static int computeIpv6Checksum(final MemorySegment s, final long ipv6Offset, final long udpOffset,
        final int udpLength)
    {
        long sum = Ipv6Header.pseudoHeaderSum(s, ipv6Offset, udpOffset, udpLength, Ipv6Header.NEXT_HEADER_UDP);
        sum -= checksum(s, udpOffset);
        final int checksum = Ipv4Header.fold(sum);
        return checksum == 0 ? 0xFFFF : checksum;
    }

    /**
     * Describes a header for debugging.
     *
     * @param s frame memory.
     * @param o offset of the header (at least {@link #LENGTH} bytes).
     * @return the header's fields as text.
     */
    public static String toString(final MemorySegment s, final long o)
    {
        return "UDP{srcPort=" + sourcePort(s, o) + ", dstPort=" + destinationPort(s, o) + ", length=" + length(s, o) +
            ", checksum=0x" + Integer.toHexString(checksum(s, o)) + "}";
    }
}
