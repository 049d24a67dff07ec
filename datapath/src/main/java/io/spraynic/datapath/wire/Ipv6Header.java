package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over an IPv6 fixed header (RFC 8200). Addresses are read and written as two big-endian longs.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |Version| Traffic Class |           Flow Label                  |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |         Payload Length        |  Next Header  |   Hop Limit   |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                   Source Address (16 bytes)                   |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                Destination Address (16 bytes)                 |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * The traffic class holds DSCP (high 6 bits) and ECN (low 2 bits), as IPv4's DS field.
 *
 * @see <a href="https://www.rfc-editor.org/rfc/rfc8200">RFC 8200</a>
 */
public final class Ipv6Header
{
    /** Offset of the 32-bit word holding version, traffic class and flow label. */
    public static final int VERSION_CLASS_FLOW_OFFSET = 0;
    /** Offset of the payload length (bytes after this header). */
    public static final int PAYLOAD_LENGTH_OFFSET = 4;
    /** Offset of the next header. */
    public static final int NEXT_HEADER_OFFSET = 6;
    /** Offset of the hop limit. */
    public static final int HOP_LIMIT_OFFSET = 7;
    /** Offset of the source address. */
    public static final int SOURCE_ADDRESS_OFFSET = 8;
    /** Offset of the destination address. */
    public static final int DESTINATION_ADDRESS_OFFSET = 24;
    /** Length of the fixed header. */
    public static final int LENGTH = 40;

    /** Next-header value of UDP. */
    public static final int NEXT_HEADER_UDP = 17;
    /** Next-header value of ICMPv6. */
    public static final int NEXT_HEADER_ICMPV6 = 58;

    private Ipv6Header()
    {
    }

    /** @param s frame memory. @param o offset of the header. @return version, traffic class and flow label word. */
    public static int versionClassFlow(final MemorySegment s, final long o)
    {
        return Wire.i32(s, o + VERSION_CLASS_FLOW_OFFSET);
    }

    /**
     * Sets version 6, the traffic class and the flow label.
     *
     * @param s            frame memory.
     * @param o            offset of the header.
     * @param trafficClass traffic class (DSCP and ECN).
     * @param flowLabel    20-bit flow label.
     */
    public static void versionClassFlow(final MemorySegment s, final long o, final int trafficClass,
        final int flowLabel)
    {
        Wire.put32(s, o + VERSION_CLASS_FLOW_OFFSET, (6 << 28) | ((trafficClass & 0xFF) << 20) | (flowLabel & 0xFFFFF));
    }

    /** @param s frame memory. @param o offset of the header. @return the version nibble (6 for IPv6). */
    public static int version(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o) >>> 4;
    }

    /** @param s frame memory. @param o offset of the header. @return the traffic class (DSCP and ECN). */
    public static int trafficClass(final MemorySegment s, final long o)
    {
        return (versionClassFlow(s, o) >>> 20) & 0xFF;
    }

    /** @param s frame memory. @param o offset of the header. @return the DSCP (0-63). */
    public static int dscp(final MemorySegment s, final long o)
    {
        return trafficClass(s, o) >>> 2;
    }

    /** @param s frame memory. @param o offset of the header. @return the ECN codepoint (0-3, 3 = CE). */
    public static int ecn(final MemorySegment s, final long o)
    {
        return trafficClass(s, o) & 0x3;
    }

    /** @param s frame memory. @param o offset of the header. @param ecn the ECN codepoint, the rest unchanged. */
    public static void ecn(final MemorySegment s, final long o, final int ecn)
    {
        final int word = versionClassFlow(s, o);
        Wire.put32(s, o, (word & ~(0x3 << 20)) | ((ecn & 0x3) << 20));
    }

    /** @param s frame memory. @param o offset of the header. @return the 20-bit flow label. */
    public static int flowLabel(final MemorySegment s, final long o)
    {
        return versionClassFlow(s, o) & 0xFFFFF;
    }

    /** @param s frame memory. @param o offset of the header. @return payload length in bytes. */
    public static int payloadLength(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + PAYLOAD_LENGTH_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param length payload length in bytes. */
    public static void payloadLength(final MemorySegment s, final long o, final int length)
    {
        Wire.put16(s, o + PAYLOAD_LENGTH_OFFSET, length);
    }

    /** @param s frame memory. @param o offset of the header. @return next header. */
    public static int nextHeader(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + NEXT_HEADER_OFFSET);
    }

    /**
     * Writes a whole header as this NIC sends every IPv6 packet: 40 bytes, no extension header.
     *
     * @param s                frame memory.
     * @param o                offset of the header.
     * @param trafficClass     the DS byte (DSCP and ECN).
     * @param flowLabel        the low 20 bits are used.
     * @param payloadLength    bytes after this header.
     * @param nextHeader       e.g. {@link #NEXT_HEADER_UDP}.
     * @param hopLimit         hop limit.
     * @param sourceHigh       first 8 bytes of the source address.
     * @param sourceLow        last 8 bytes of the source address.
     * @param destinationHigh  first 8 bytes of the destination address.
     * @param destinationLow   last 8 bytes of the destination address.
     */
    public static void write(final MemorySegment s, final long o, final int trafficClass, final int flowLabel,
        final int payloadLength, final int nextHeader, final int hopLimit, final long sourceHigh, final long sourceLow,
        final long destinationHigh, final long destinationLow)
    {
        versionClassFlow(s, o, trafficClass, flowLabel);
        payloadLength(s, o, payloadLength);
        nextHeader(s, o, nextHeader);
        hopLimit(s, o, hopLimit);
        sourceAddress(s, o, sourceHigh, sourceLow);
        destinationAddress(s, o, destinationHigh, destinationLow);
    }

    /** @param s frame memory. @param o offset of the header. @param nextHeader next header. */
    public static void nextHeader(final MemorySegment s, final long o, final int nextHeader)
    {
        Wire.put8(s, o + NEXT_HEADER_OFFSET, nextHeader);
    }

    /** @param s frame memory. @param o offset of the header. @return hop limit. */
    public static int hopLimit(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + HOP_LIMIT_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param hopLimit hop limit. */
    public static void hopLimit(final MemorySegment s, final long o, final int hopLimit)
    {
        Wire.put8(s, o + HOP_LIMIT_OFFSET, hopLimit);
    }

    /** @param s frame memory. @param o offset of the header. @return first 8 bytes of the source address. */
    public static long sourceAddressHigh(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + SOURCE_ADDRESS_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @return last 8 bytes of the source address. */
    public static long sourceAddressLow(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + SOURCE_ADDRESS_OFFSET + 8);
    }

    /** @param s frame memory. @param o offset of the header. @param high first 8 bytes. @param low last 8 bytes. */
    public static void sourceAddress(final MemorySegment s, final long o, final long high, final long low)
    {
        s.set(Wire.LONG_BE, o + SOURCE_ADDRESS_OFFSET, high);
        s.set(Wire.LONG_BE, o + SOURCE_ADDRESS_OFFSET + 8, low);
    }

    /** @param s frame memory. @param o offset of the header. @return first 8 bytes of the destination address. */
    public static long destinationAddressHigh(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + DESTINATION_ADDRESS_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @return last 8 bytes of the destination address. */
    public static long destinationAddressLow(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + DESTINATION_ADDRESS_OFFSET + 8);
    }

    /** @param s frame memory. @param o offset of the header. @param high first 8 bytes. @param low last 8 bytes. */
    public static void destinationAddress(final MemorySegment s, final long o, final long high, final long low)
    {
        s.set(Wire.LONG_BE, o + DESTINATION_ADDRESS_OFFSET, high);
        s.set(Wire.LONG_BE, o + DESTINATION_ADDRESS_OFFSET + 8, low);
    }

    /**
     * The one's-complement sum, not yet folded, of the upper-layer pseudo-header (RFC 8200 section 8.1: both
     * addresses, the upper-layer length, the next header) and the {@code length} bytes of the upper-layer packet
     * at {@code l4} as they stand (checksum field included).
     * <p>
     * Reads eight bytes a step and adds each read's two 32-bit halves, as {@code RoceParser} sums the IPv4
     * header: the sum is the same plain (carry-free) total of 32-bit words as four-byte reads give, so a caller
     * may subtract a 16-bit field from it before {@link Ipv4Header#fold} (at most 65,535 bytes: below 2^46).
     *
     * @param s          frame memory.
     * @param ip         offset of the IPv6 header.
     * @param l4         offset of the upper-layer header.
     * @param length     upper-layer length.
     * @param nextHeader the upper-layer protocol.
     * @return the sum, for {@link Ipv4Header#fold}.
     */
    static long pseudoHeaderSum(final MemorySegment s, final long ip, final long l4, final int length,
        final int nextHeader)
    {
        final long source = ip + SOURCE_ADDRESS_OFFSET;
        long sum = halves(Wire.i64(s, source)) + halves(Wire.i64(s, source + 8)) +
            halves(Wire.i64(s, source + 16)) + halves(Wire.i64(s, source + 24)) + length + nextHeader;
        int i = 0;
        for (; i + 8 <= length; i += 8)
        {
            sum += halves(Wire.i64(s, l4 + i));
        }
        if (i + 4 <= length)
        {
            sum += Integer.toUnsignedLong(Wire.i32(s, l4 + i));
            i += 4;
        }
        if (i + 2 <= length)
        {
            sum += Wire.u16(s, l4 + i);
            i += 2;
        }
        if (i < length)
        {
            sum += Wire.u8(s, l4 + i) << 8; // an odd last byte is padded with a zero byte
        }
        return sum;
    }

    // the two 32-bit halves of a big-endian 64-bit read, added: what two four-byte reads would add
    private static long halves(final long word)
    {
        return (word >>> 32) + (word & 0xFFFF_FFFFL);
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
        return "IPv6{version=" + version(s, o) + ", dscp=" + dscp(s, o) + ", ecn=" + ecn(s, o) +
            ", flowLabel=0x" + Integer.toHexString(flowLabel(s, o)) + ", payloadLength=" + payloadLength(s, o) +
            ", nextHeader=" + nextHeader(s, o) + ", hopLimit=" + hopLimit(s, o) +
            ", src=" + Wire.ipv6ToString(sourceAddressHigh(s, o), sourceAddressLow(s, o)) +
            ", dst=" + Wire.ipv6ToString(destinationAddressHigh(s, o), destinationAddressLow(s, o)) + "}";
    }
}
