package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over an Ethernet II MAC header, optionally with one IEEE 802.1Q VLAN tag.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                  Destination MAC (6 bytes)                    |
 * +                               +-------------------------------+
 * |                               |                               |
 * +-------------------------------+                               +
 * |                    Source MAC (6 bytes)                       |
 * +-------------------------------+-------------------------------+
 * |   EtherType (or TPID 0x8100)  |  802.1Q only: PCP|DEI|VID     |
 * +-------------------------------+-------------------------------+
 * |  802.1Q only: inner EtherType |
 * +-------------------------------+
 * </pre>
 * The frame check sequence is not part of the frames we see (DPDK strips it).
 *
 * @see <a href="https://standards.ieee.org/ieee/802.3/10422/">IEEE 802.3</a> and
 * <a href="https://standards.ieee.org/ieee/802.1Q/10323/">IEEE 802.1Q</a>
 */
public final class EthernetHeader
{
    /** Offset of the destination MAC address. */
    public static final int DESTINATION_MAC_OFFSET = 0;
    /** Offset of the source MAC address. */
    public static final int SOURCE_MAC_OFFSET = 6;
    /** Offset of the EtherType, or of the TPID of a VLAN tag. */
    public static final int ETHER_TYPE_OFFSET = 12;
    /** Length of an untagged header. */
    public static final int LENGTH = 14;

    /** Offset of the VLAN tag control information (PCP 3 bits, DEI 1 bit, VID 12 bits) in a tagged header. */
    public static final int VLAN_TCI_OFFSET = 14;
    /** Offset of the EtherType of the payload in a tagged header. */
    public static final int VLAN_ETHER_TYPE_OFFSET = 16;
    /** Length of a header with one 802.1Q tag. */
    public static final int VLAN_LENGTH = 18;

    /** Shortest Ethernet frame without FCS: shorter frames are padded with zeros to this length. */
    public static final int MIN_FRAME_LENGTH = 60;

    /** EtherType of IPv4. */
    public static final int ETHER_TYPE_IPV4 = 0x0800;
    /** EtherType of IPv6. */
    public static final int ETHER_TYPE_IPV6 = 0x86DD;
    /** EtherType (TPID) of an IEEE 802.1Q VLAN tag. */
    public static final int ETHER_TYPE_VLAN = 0x8100;
    /** EtherType (TPID) of an IEEE 802.1ad service tag (QinQ outer tag). */
    public static final int ETHER_TYPE_QINQ = 0x88A8;
    /** EtherType of RoCE v1 (InfiniBand GRH directly over Ethernet), which we do not speak. */
    public static final int ETHER_TYPE_ROCE_V1 = 0x8915;

    private EthernetHeader()
    {
    }

    // a MAC anywhere in a packet: 6 bytes, network order (also in CONNECT's address list, S5.5)
    static long mac(final MemorySegment segment, final long offset)
    {
        return ((long)Wire.u16(segment, offset) << 32) | Integer.toUnsignedLong(Wire.i32(segment, offset + 2));
    }

    static void mac(final MemorySegment segment, final long offset, final long mac)
    {
        Wire.put16(segment, offset, (int)(mac >>> 32));
        Wire.put32(segment, offset + 2, (int)mac);
    }

    /**
     * @param segment frame memory.
     * @param offset  offset of the header.
     * @return destination MAC in the low 48 bits.
     */
    public static long destinationMac(final MemorySegment segment, final long offset)
    {
        return mac(segment, offset + DESTINATION_MAC_OFFSET);
    }

    /**
     * @param segment frame memory.
     * @param offset  offset of the header.
     * @param mac     destination MAC in the low 48 bits.
     */
    public static void destinationMac(final MemorySegment segment, final long offset, final long mac)
    {
        mac(segment, offset + DESTINATION_MAC_OFFSET, mac);
    }

    /**
     * @param segment frame memory.
     * @param offset  offset of the header.
     * @return source MAC in the low 48 bits.
     */
    public static long sourceMac(final MemorySegment segment, final long offset)
    {
        return mac(segment, offset + SOURCE_MAC_OFFSET);
    }

    /**
     * @param segment frame memory.
     * @param offset  offset of the header.
     * @param mac     source MAC in the low 48 bits.
     */
    public static void sourceMac(final MemorySegment segment, final long offset, final long mac)
    {
        mac(segment, offset + SOURCE_MAC_OFFSET, mac);
    }

    /**
     * @param segment frame memory.
     * @param offset  offset of the header.
     * @return the EtherType at offset 12: the payload's type, or {@link #ETHER_TYPE_VLAN} for a tagged frame.
     */
    public static int etherType(final MemorySegment segment, final long offset)
    {
        return Wire.u16(segment, offset + ETHER_TYPE_OFFSET);
    }

    /**
     * @param segment   frame memory.
     * @param offset    offset of the header.
     * @param etherType EtherType (or TPID) at offset 12.
     */
    public static void etherType(final MemorySegment segment, final long offset, final int etherType)
    {
        Wire.put16(segment, offset + ETHER_TYPE_OFFSET, etherType);
    }

    /**
     * @param segment frame memory.
     * @param offset  offset of a tagged header.
     * @return the 16-bit tag control information.
     */
    public static int vlanTci(final MemorySegment segment, final long offset)
    {
        return Wire.u16(segment, offset + VLAN_TCI_OFFSET);
    }

    /**
     * @param segment frame memory.
     * @param offset  offset of a tagged header.
     * @param tci     the 16-bit tag control information.
     */
    public static void vlanTci(final MemorySegment segment, final long offset, final int tci)
    {
        Wire.put16(segment, offset + VLAN_TCI_OFFSET, tci);
    }

    /**
     * @param segment frame memory.
     * @param offset  offset of a tagged header.
     * @return the payload's EtherType.
     */
    public static int vlanEtherType(final MemorySegment segment, final long offset)
    {
        return Wire.u16(segment, offset + VLAN_ETHER_TYPE_OFFSET);
    }

    /**
     * @param segment frame memory.
     * @param offset  offset of the frame's first byte.
     * @param length  frame bytes.
     * @return bytes of the frame's Ethernet header: {@link #LENGTH}, {@link #VLAN_LENGTH} for a tagged frame, or 0 for
     * a frame too short to hold its header (malformed).
     */
    public static int headerLength(final MemorySegment segment, final long offset, final int length)
    {
        if (length < LENGTH)
        {
            return 0;
        }
        if (etherType(segment, offset) != ETHER_TYPE_VLAN)
        {
            return LENGTH;
        }
        return length < VLAN_LENGTH ? 0 : VLAN_LENGTH;
    }

    /**
     * @param segment      frame memory.
     * @param offset       offset of the frame's first byte.
     * @param headerLength the frame's {@link #headerLength}, not 0.
     * @return the payload's EtherType, behind the tag of a tagged frame.
     */
    public static int payloadEtherType(final MemorySegment segment, final long offset, final int headerLength)
    {
        return headerLength == VLAN_LENGTH ? vlanEtherType(segment, offset) : etherType(segment, offset);
    }

    /**
     * @param segment   frame memory.
     * @param offset    offset of a tagged header.
     * @param etherType the payload's EtherType.
     */
    public static void vlanEtherType(final MemorySegment segment, final long offset, final int etherType)
    {
        Wire.put16(segment, offset + VLAN_ETHER_TYPE_OFFSET, etherType);
    }

    /**
     * @param tci tag control information.
     * @return its 12-bit VLAN id.
     */
    public static int vlanId(final int tci)
    {
        return tci & 0x0FFF;
    }

    /**
     * @param tci tag control information.
     * @return its 3-bit priority code point.
     */
    public static int vlanPriority(final int tci)
    {
        return tci >>> 13;
    }

    /**
     * @param priority 3-bit priority code point.
     * @param dei      drop eligible indicator.
     * @param vlanId   12-bit VLAN id.
     * @return the tag control information.
     */
    public static int tci(final int priority, final boolean dei, final int vlanId)
    {
        return ((priority & 0x7) << 13) | (dei ? 0x1000 : 0) | (vlanId & 0x0FFF);
    }

    /**
     * Describes a header for debugging.
     *
     * @param segment frame memory.
     * @param offset  offset of the header (at least {@link #LENGTH} bytes, {@link #VLAN_LENGTH} if tagged).
     * @return e.g. "Ethernet{dst=..., src=..., vlan=100/pcp=3, type=0x0800}".
     */
    public static String toString(final MemorySegment segment, final long offset)
    {
        final int type = etherType(segment, offset);
        final StringBuilder sb = new StringBuilder("Ethernet{dst=")
            .append(Wire.macToString(destinationMac(segment, offset)))
            .append(", src=").append(Wire.macToString(sourceMac(segment, offset)));
        if (type == ETHER_TYPE_VLAN && segment.byteSize() - offset >= VLAN_LENGTH)
        {
            final int tci = vlanTci(segment, offset);
            sb.append(", vlan=").append(vlanId(tci)).append("/pcp=").append(vlanPriority(tci))
                .append(", type=0x").append(String.format("%04x", vlanEtherType(segment, offset)));
        }
        else
        {
            sb.append(", type=0x").append(String.format("%04x", type));
        }
        return sb.append('}').toString();
    }

    /** @return whether {@code mac} names one station: not zero, not a group address (multicast or broadcast). */
    public static boolean isUnicast(final long mac)
    {
        return mac != 0 && (mac & 0x0100_0000_0000L) == 0;
    }
}
