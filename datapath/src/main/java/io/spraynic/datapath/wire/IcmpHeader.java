package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the ICMP header (RFC 792) of an echo request or reply (type, code and checksum also of every ICMPv6
 * message, RFC 4443, which {@link Icmpv6Header} reads with these): type, code, checksum over the whole
 * ICMP message, identifier and sequence number, then the data the reply must echo unchanged.
 * <pre>
 * | type (8) | code (8) |  checksum (16)  |
 * |    identifier (16)  | sequence (16)   |
 * </pre>
 */
public final class IcmpHeader
{
    public static final int PROTOCOL_ICMP = 1;
    public static final int TYPE_OFFSET = 0;
    public static final int CODE_OFFSET = 1;
    public static final int CHECKSUM_OFFSET = 2;
    public static final int IDENTIFIER_OFFSET = 4;
    public static final int SEQUENCE_OFFSET = 6;
    public static final int LENGTH = 8;

    public static final int TYPE_ECHO_REPLY = 0;
    public static final int TYPE_ECHO_REQUEST = 8;

    private IcmpHeader()
    {
    }

    public static int type(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + TYPE_OFFSET);
    }

    public static void type(final MemorySegment s, final long o, final int type)
    {
        Wire.put8(s, o + TYPE_OFFSET, type);
    }

    public static int code(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + CODE_OFFSET);
    }

    public static void code(final MemorySegment s, final long o, final int code)
    {
        Wire.put8(s, o + CODE_OFFSET, code);
    }

    public static int checksum(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + CHECKSUM_OFFSET);
    }

    public static void checksum(final MemorySegment s, final long o, final int checksum)
    {
        Wire.put16(s, o + CHECKSUM_OFFSET, checksum);
    }

    public static int identifier(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + IDENTIFIER_OFFSET);
    }

    public static int sequence(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + SEQUENCE_OFFSET);
    }

    /**
     * The Internet checksum (RFC 1071) of {@code length} bytes: stored in a message whose checksum field held 0,
     * the message then sums to zero; over a whole message with its checksum, 0 means valid.
     */
    public static int internetChecksum(final MemorySegment s, final long o, final int length)
    {
        long sum = 0;
        int i = 0;
        for (; i + 1 < length; i += 2)
        {
            sum += Wire.u16(s, o + i);
        }
        if (i < length)
        {
            sum += Wire.u8(s, o + i) << 8; // an odd last byte is padded with a zero byte
        }
        return Ipv4Header.fold(sum);
    }
}
