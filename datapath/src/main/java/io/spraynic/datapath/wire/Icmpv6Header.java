package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the ICMPv6 messages a NIC speaks (RFC 4443, RFC 4861): echo request and reply, neighbour
 * solicitation (NS) and advertisement (NA) with their link-layer address options.
 * <pre>
 * every message:   | type (8) | code (8) |         checksum (16)         |
 * echo:            |      identifier (16)  |       sequence (16)        |  data...
 * NS / NA:         | R S O  reserved (NA flags; NS all reserved) (32)    |
 *                  |                 target address (128)                |
 *                  | options: | type (8) | length in 8-byte units (8) | ... |
 * link-layer opt:  | 1 (source) or 2 (target) | 1 | MAC (48) |
 * </pre>
 * Type, code and checksum sit as in ICMP for IPv4: read and write them with {@link IcmpHeader}'s accessors. The
 * checksum covers the IPv6 pseudo-header (RFC 8200 8.1, next header 58) and the whole message. Static
 * accessors at {@code o}, the ICMPv6 header's offset; big-endian; no bounds beyond the segment's own: callers
 * check lengths first ({@link #linkLayerOption} checks every option against the message's end).
 *
 * @see <a href="https://www.rfc-editor.org/rfc/rfc4861#section-4.3">RFC 4861 4.3-4.4, 4.6.1</a>
 */
public final class Icmpv6Header
{
    public static final int IDENTIFIER_OFFSET = 4;
    public static final int SEQUENCE_OFFSET = 6;
    /** An echo message's header (type to sequence). */
    public static final int ECHO_LENGTH = 8;
    public static final int FLAGS_OFFSET = 4;
    public static final int TARGET_OFFSET = 8;
    public static final int OPTIONS_OFFSET = 24;
    /** An NS or NA without options. */
    public static final int NEIGHBOUR_LENGTH = 24;
    /** A link-layer address option for Ethernet: type, length 1, six bytes of MAC. */
    public static final int LINK_LAYER_OPTION_LENGTH = 8;

    public static final int TYPE_ECHO_REQUEST = 128;
    public static final int TYPE_ECHO_REPLY = 129;
    public static final int TYPE_NEIGHBOUR_SOLICITATION = 135;
    public static final int TYPE_NEIGHBOUR_ADVERTISEMENT = 136;

    /** NA flag: the sender is a router. */
    public static final int FLAG_ROUTER = 0x8000_0000;
    /** NA flag: sent in answer to an NS. */
    public static final int FLAG_SOLICITED = 0x4000_0000;
    /** NA flag: the link-layer address replaces a cached one. */
    public static final int FLAG_OVERRIDE = 0x2000_0000;

    public static final int OPTION_SOURCE_LINK_LAYER = 1;
    public static final int OPTION_TARGET_LINK_LAYER = 2;
    /** {@link #linkLayerOption}: no option of that type. */
    public static final long NO_OPTION = -1;
    /** {@link #linkLayerOption}: an option of length 0, one past the message's end, or a link-layer one not 8 bytes. */
    public static final long BAD_OPTIONS = -2;

    /** ND messages are sent, and accepted, only with this hop limit: proof they did not cross a router. */
    public static final int ND_HOP_LIMIT = 255;

    private Icmpv6Header()
    {
    }

    /** @return an NA's flags word ({@link #FLAG_ROUTER}, {@link #FLAG_SOLICITED}, {@link #FLAG_OVERRIDE}). */
    public static int flags(final MemorySegment s, final long o)
    {
        return Wire.i32(s, o + FLAGS_OFFSET);
    }

    public static void flags(final MemorySegment s, final long o, final int flags)
    {
        Wire.put32(s, o + FLAGS_OFFSET, flags);
    }

    /** @return the first 8 bytes of an NS's or NA's target address. */
    public static long targetHigh(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + TARGET_OFFSET);
    }

    /** @return the last 8 bytes of an NS's or NA's target address. */
    public static long targetLow(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + TARGET_OFFSET + 8);
    }

    public static void target(final MemorySegment s, final long o, final long high, final long low)
    {
        s.set(Wire.LONG_BE, o + TARGET_OFFSET, high);
        s.set(Wire.LONG_BE, o + TARGET_OFFSET + 8, low);
    }

    /** Writes a link-layer address option of {@code type} at {@code o} (8 bytes). */
    public static void linkLayerOption(final MemorySegment s, final long o, final int type, final long mac)
    {
        Wire.put8(s, o, type);
        Wire.put8(s, o + 1, 1);
        EthernetHeader.mac(s, o + 2, mac);
    }

    /**
     * Walks an NS's or NA's options (RFC 4861 4.6): every option must have a length above 0 and end inside the
     * message, else the whole message is invalid (7.1.1, 7.1.2); unknown options are skipped; a link-layer
     * address option must be 8 bytes (Ethernet); of several of one type the first counts.
     *
     * @param s      frame memory.
     * @param o      offset of the ICMPv6 header.
     * @param length the ICMPv6 message's length ({@link #NEIGHBOUR_LENGTH} or more).
     * @param type   {@link #OPTION_SOURCE_LINK_LAYER} or {@link #OPTION_TARGET_LINK_LAYER}.
     * @return the MAC, {@link #NO_OPTION}, or {@link #BAD_OPTIONS}.
     */
    public static long linkLayerOption(final MemorySegment s, final long o, final int length, final int type)
    {
        long found = NO_OPTION;
        int at = OPTIONS_OFFSET;
        while (at < length)
        {
            if (length - at < 2)
            {
                return BAD_OPTIONS;
            }
            final int optionType = Wire.u8(s, o + at);
            final int optionBytes = Wire.u8(s, o + at + 1) * 8;
            if (optionBytes == 0 || optionBytes > length - at)
            {
                return BAD_OPTIONS;
            }
            if (optionType == type && found == NO_OPTION)
            {
                if (optionBytes != LINK_LAYER_OPTION_LENGTH)
                {
                    return BAD_OPTIONS;
                }
                found = EthernetHeader.mac(s, o + at + 2);
            }
            at += optionBytes;
        }
        return found;
    }

    /**
     * @param s      frame memory.
     * @param ip     offset of the IPv6 header.
     * @param o      offset of the ICMPv6 header.
     * @param length the ICMPv6 message's length.
     * @return the checksum to store: over the pseudo-header and the message, its checksum field taken as zero.
     */
    public static int computeChecksum(final MemorySegment s, final long ip, final long o, final int length)
    {
        final long sum = Ipv6Header.pseudoHeaderSum(s, ip, o, length, Ipv6Header.NEXT_HEADER_ICMPV6) -
            IcmpHeader.checksum(s, o);
        return Ipv4Header.fold(sum);
    }

    /** @return true when the message's checksum is right (pseudo-header and message sum to zero). */
    public static boolean isChecksumValid(final MemorySegment s, final long ip, final long o, final int length)
    {
        return Ipv4Header.fold(Ipv6Header.pseudoHeaderSum(s, ip, o, length, Ipv6Header.NEXT_HEADER_ICMPV6)) == 0;
    }

    /** The first 8 bytes of every solicited-node multicast address, ff02::1:ffXX:XXXX (RFC 4291 2.7.1). */
    public static final long SOLICITED_NODE_HIGH = 0xFF02_0000_0000_0000L;

    /** @return the last 8 bytes of the solicited-node multicast address of an address ending in {@code low}. */
    public static long solicitedNodeLow(final long low)
    {
        return 0x0000_0001_FF00_0000L | (low & 0xFF_FFFFL);
    }

    /** @return the Ethernet multicast MAC of an IPv6 multicast address ending in {@code low}: 33:33 and its last 32 bits (RFC 2464). */
    public static long multicastMac(final long low)
    {
        return 0x3333_0000_0000L | (low & 0xFFFF_FFFFL);
    }

    /** The all-nodes address ff02::1, first 8 bytes. */
    public static final long ALL_NODES_HIGH = 0xFF02_0000_0000_0000L;
    /** The all-nodes address ff02::1, last 8 bytes. */
    public static final long ALL_NODES_LOW = 1;
}
