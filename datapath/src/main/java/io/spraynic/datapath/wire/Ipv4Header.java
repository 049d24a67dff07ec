package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over an IPv4 header (RFC 791), with options, DSCP/ECN (RFC 2474, RFC 3168) and the header checksum.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |Version|  IHL  |    DSCP   |ECN|          Total Length         |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |         Identification        |Flags|      Fragment Offset    |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |  Time to Live |    Protocol   |         Header Checksum       |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                       Source Address                          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                    Destination Address                        |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                    Options (IHL > 5)                          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 *
 * @see <a href="https://www.rfc-editor.org/rfc/rfc791">RFC 791</a>,
 * <a href="https://www.rfc-editor.org/rfc/rfc3168">RFC 3168 (ECN)</a>,
 * <a href="https://www.rfc-editor.org/rfc/rfc1071">RFC 1071 (checksum)</a>
 */
public final class Ipv4Header
{
    /** Offset of version (high nibble) and IHL (low nibble, in 32-bit words). */
    public static final int VERSION_IHL_OFFSET = 0;
    /** Offset of the DS field: DSCP (high 6 bits) and ECN (low 2 bits), the former TOS. */
    public static final int TOS_OFFSET = 1;
    /** Offset of the total length of the datagram, header included. */
    public static final int TOTAL_LENGTH_OFFSET = 2;
    /** Offset of the identification. */
    public static final int IDENTIFICATION_OFFSET = 4;
    /** Offset of flags (3 bits) and fragment offset (13 bits, in 8-byte units). */
    public static final int FLAGS_FRAGMENT_OFFSET = 6;
    /** Offset of the time to live. */
    public static final int TTL_OFFSET = 8;
    /** Offset of the payload protocol number. */
    public static final int PROTOCOL_OFFSET = 9;
    /** Offset of the header checksum. */
    public static final int CHECKSUM_OFFSET = 10;
    /** Offset of the source address. */
    public static final int SOURCE_ADDRESS_OFFSET = 12;
    /** Offset of the destination address. */
    public static final int DESTINATION_ADDRESS_OFFSET = 16;
    /** Length of a header without options. */
    public static final int LENGTH = 20;
    /** Length of a header with the most options (IHL 15). */
    public static final int MAX_LENGTH = 60;

    /** Protocol number of UDP. */
    public static final int PROTOCOL_UDP = 17;
    /** Don't-fragment flag in the flags/fragment-offset field. */
    public static final int FLAG_DONT_FRAGMENT = 0x4000;
    /** More-fragments flag in the flags/fragment-offset field. */
    public static final int FLAG_MORE_FRAGMENTS = 0x2000;
    /** Fragment offset mask in the flags/fragment-offset field. */
    public static final int FRAGMENT_OFFSET_MASK = 0x1FFF;

    private Ipv4Header()
    {
    }

    /** @param s frame memory. @param o offset of the header. @return the version nibble (4 for IPv4). */
    public static int version(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + VERSION_IHL_OFFSET) >>> 4;
    }

    /** @param s frame memory. @param o offset of the header. @return header length in bytes (IHL * 4). */
    public static int headerLength(final MemorySegment s, final long o)
    {
        return (Wire.u8(s, o + VERSION_IHL_OFFSET) & 0xF) << 2;
    }

    /**
     * Sets version 4 and the IHL.
     *
     * @param s            frame memory.
     * @param o            offset of the header.
     * @param headerLength header length in bytes: a multiple of 4 from 20 to 60.
     */
    public static void versionAndHeaderLength(final MemorySegment s, final long o, final int headerLength)
    {
        Wire.put8(s, o + VERSION_IHL_OFFSET, 0x40 | ((headerLength >>> 2) & 0xF));
    }

    /** @param s frame memory. @param o offset of the header. @return the DS byte (DSCP and ECN). */
    public static int tos(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + TOS_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param tos the DS byte (DSCP and ECN). */
    public static void tos(final MemorySegment s, final long o, final int tos)
    {
        Wire.put8(s, o + TOS_OFFSET, tos);
    }

    /** @param s frame memory. @param o offset of the header. @return the DSCP (0-63). */
    public static int dscp(final MemorySegment s, final long o)
    {
        return tos(s, o) >>> 2;
    }

    /** @param s frame memory. @param o offset of the header. @return the ECN codepoint (0-3, 3 = CE). */
    public static int ecn(final MemorySegment s, final long o)
    {
        return tos(s, o) & 0x3;
    }

    /** @param s frame memory. @param o offset of the header. @param ecn the ECN codepoint (0-3), DSCP unchanged. */
    public static void ecn(final MemorySegment s, final long o, final int ecn)
    {
        tos(s, o, (tos(s, o) & 0xFC) | (ecn & 0x3));
    }

    /** @param s frame memory. @param o offset of the header. @return total length in bytes. */
    public static int totalLength(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + TOTAL_LENGTH_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param length total length in bytes. */
    public static void totalLength(final MemorySegment s, final long o, final int length)
    {
        Wire.put16(s, o + TOTAL_LENGTH_OFFSET, length);
    }

    /** @param s frame memory. @param o offset of the header. @return the identification. */
    public static int identification(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + IDENTIFICATION_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param id the identification. */
    public static void identification(final MemorySegment s, final long o, final int id)
    {
        Wire.put16(s, o + IDENTIFICATION_OFFSET, id);
    }

    /** @param s frame memory. @param o offset of the header. @return flags and fragment offset, as on the wire. */
    public static int flagsAndFragmentOffset(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + FLAGS_FRAGMENT_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param value flags and fragment offset. */
    public static void flagsAndFragmentOffset(final MemorySegment s, final long o, final int value)
    {
        Wire.put16(s, o + FLAGS_FRAGMENT_OFFSET, value);
    }

    /**
     * @param s frame memory.
     * @param o offset of the header.
     * @return true if the datagram is a fragment: more-fragments set or a non-zero fragment offset.
     */
    public static boolean isFragment(final MemorySegment s, final long o)
    {
        return (flagsAndFragmentOffset(s, o) & (FLAG_MORE_FRAGMENTS | FRAGMENT_OFFSET_MASK)) != 0;
    }

    /** @param s frame memory. @param o offset of the header. @return time to live. */
    public static int ttl(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + TTL_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param ttl time to live. */
    public static void ttl(final MemorySegment s, final long o, final int ttl)
    {
        Wire.put8(s, o + TTL_OFFSET, ttl);
    }

    /** @param s frame memory. @param o offset of the header. @return payload protocol number. */
    public static int protocol(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + PROTOCOL_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param protocol payload protocol number. */
    public static void protocol(final MemorySegment s, final long o, final int protocol)
    {
        Wire.put8(s, o + PROTOCOL_OFFSET, protocol);
    }

    /** @param s frame memory. @param o offset of the header. @return the header checksum as on the wire. */
    public static int checksum(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + CHECKSUM_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param checksum the header checksum. */
    public static void checksum(final MemorySegment s, final long o, final int checksum)
    {
        Wire.put16(s, o + CHECKSUM_OFFSET, checksum);
    }

    /** @param s frame memory. @param o offset of the header. @return source address, first byte in bits 31..24. */
    public static int sourceAddress(final MemorySegment s, final long o)
    {
        return Wire.i32(s, o + SOURCE_ADDRESS_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param address source address. */
    public static void sourceAddress(final MemorySegment s, final long o, final int address)
    {
        Wire.put32(s, o + SOURCE_ADDRESS_OFFSET, address);
    }

    /** @param s frame memory. @param o offset of the header. @return destination address. */
    public static int destinationAddress(final MemorySegment s, final long o)
    {
        return Wire.i32(s, o + DESTINATION_ADDRESS_OFFSET);
    }

    /** @param s frame memory. @param o offset of the header. @param address destination address. */
    public static void destinationAddress(final MemorySegment s, final long o, final int address)
    {
        Wire.put32(s, o + DESTINATION_ADDRESS_OFFSET, address);
    }

    /**
     * Writes a whole header as this NIC sends every IPv4 packet: 20 bytes (no options), Don't Fragment set, its
     * checksum computed last.
     *
     * @param s              frame memory.
     * @param o              offset of the header.
     * @param tos            the DS byte (DSCP and ECN).
     * @param totalLength    the header and its payload, in bytes.
     * @param identification the low 16 bits are used.
     * @param ttl            time to live.
     * @param protocol       e.g. {@link #PROTOCOL_UDP}.
     * @param source         source address.
     * @param destination    destination address.
     */
    public static void write(final MemorySegment s, final long o, final int tos, final int totalLength,
        final int identification, final int ttl, final int protocol, final int source, final int destination)
    {
        versionAndHeaderLength(s, o, LENGTH);
        tos(s, o, tos);
        totalLength(s, o, totalLength);
        identification(s, o, identification & 0xFFFF);
        flagsAndFragmentOffset(s, o, FLAG_DONT_FRAGMENT);
        ttl(s, o, ttl);
        protocol(s, o, protocol);
        sourceAddress(s, o, source);
        destinationAddress(s, o, destination);
        updateChecksum(s, o, LENGTH);
    }

    /**
     * Computes the header checksum (RFC 1071) over {@code headerLength} bytes with the checksum field
     * taken as zero, whatever it holds.
     *
     * @param s            frame memory.
     * @param o            offset of the header.
     * @param headerLength header length in bytes (a multiple of 4).
     * @return the value to store in the checksum field.
     */
    public static int computeChecksum(final MemorySegment s, final long o, final int headerLength)
    {
        long sum = 0;
        for (int i = 0; i < headerLength; i += 4)
        {
            sum += Integer.toUnsignedLong(Wire.i32(s, o + i));
        }
        sum -= checksum(s, o);
        return fold(sum);
    }

    /**
     * Verifies the header checksum: the one's-complement sum of the whole header, checksum included, is 0xFFFF.
     *
     * @param s            frame memory.
     * @param o            offset of the header.
     * @param headerLength header length in bytes (a multiple of 4).
     * @return true if the checksum is right.
     */
    public static boolean isChecksumValid(final MemorySegment s, final long o, final int headerLength)
    {
        long sum = 0;
        for (int i = 0; i < headerLength; i += 4)
        {
            sum += Integer.toUnsignedLong(Wire.i32(s, o + i));
        }
        return fold(sum) == 0;
    }

    /**
     * Computes and stores the header checksum.
     *
     * @param s            frame memory.
     * @param o            offset of the header.
     * @param headerLength header length in bytes.
     */
    public static void updateChecksum(final MemorySegment s, final long o, final int headerLength)
    {
        checksum(s, o, 0);
        checksum(s, o, computeChecksum(s, o, headerLength));
    }

    /**
     * Folds a sum of 32-bit words into 16 bits of one's-complement sum and complements it.
     */
    static int fold(final long sum)
    {
        long folded = (sum & 0xFFFF_FFFFL) + (sum >>> 32);
        folded = (folded & 0xFFFF) + (folded >>> 16);
        folded = (folded & 0xFFFF) + (folded >>> 16);
        folded = (folded & 0xFFFF) + (folded >>> 16);
        return (int)(~folded & 0xFFFF);
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
        return "IPv4{version=" + version(s, o) + ", ihl=" + headerLength(s, o) + ", dscp=" + dscp(s, o) +
            ", ecn=" + ecn(s, o) + ", totalLength=" + totalLength(s, o) + ", id=" + identification(s, o) +
            ", flagsFrag=0x" + Integer.toHexString(flagsAndFragmentOffset(s, o)) + ", ttl=" + ttl(s, o) +
            ", protocol=" + protocol(s, o) + ", checksum=0x" + Integer.toHexString(checksum(s, o)) +
            ", src=" + Wire.ipv4ToString(sourceAddress(s, o)) + ", dst=" + Wire.ipv4ToString(destinationAddress(s, o)) +
            "}";
    }
}
