package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over an ARP packet for IPv4 over Ethernet (RFC 826), the 28 bytes after an Ethernet header of
 * EtherType {@link #ETHER_TYPE_ARP}:
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |     hardware type (1)         |     protocol type (0x0800)    |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |  hw length (6)| proto len (4) |     operation (1 req, 2 rep)  |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |          sender hardware address (48) ...  | sender IP (32)...
 * |   ... | target hardware address (48)       | target IP (32)   |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * Static accessors at {@code o}, the ARP header's offset; big-endian; no bounds beyond the segment's own.
 */
public final class ArpHeader
{
    public static final int ETHER_TYPE_ARP = 0x0806;
    public static final int HARDWARE_TYPE_OFFSET = 0;
    public static final int PROTOCOL_TYPE_OFFSET = 2;
    public static final int HARDWARE_LENGTH_OFFSET = 4;
    public static final int PROTOCOL_LENGTH_OFFSET = 5;
    public static final int OPERATION_OFFSET = 6;
    public static final int SENDER_MAC_OFFSET = 8;
    public static final int SENDER_IP_OFFSET = 14;
    public static final int TARGET_MAC_OFFSET = 18;
    public static final int TARGET_IP_OFFSET = 24;
    public static final int LENGTH = 28;

    public static final int HARDWARE_TYPE_ETHERNET = 1;
    public static final int OPERATION_REQUEST = 1;
    public static final int OPERATION_REPLY = 2;

    private ArpHeader()
    {
    }

    public static int hardwareType(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + HARDWARE_TYPE_OFFSET);
    }

    public static int protocolType(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + PROTOCOL_TYPE_OFFSET);
    }

    public static int hardwareLength(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + HARDWARE_LENGTH_OFFSET);
    }

    public static int protocolLength(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + PROTOCOL_LENGTH_OFFSET);
    }

    public static int operation(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + OPERATION_OFFSET);
    }

    /** @return the sender's MAC in the low 48 bits. */
    public static long senderMac(final MemorySegment s, final long o)
    {
        return EthernetHeader.mac(s, o + SENDER_MAC_OFFSET);
    }

    public static int senderIp(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + SENDER_IP_OFFSET);
    }

    /** @return the target's MAC in the low 48 bits. */
    public static long targetMac(final MemorySegment s, final long o)
    {
        return EthernetHeader.mac(s, o + TARGET_MAC_OFFSET);
    }

    public static int targetIp(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + TARGET_IP_OFFSET);
    }

    /**
     * Writes a whole IPv4-over-Ethernet ARP packet.
     *
     * @param operation {@link #OPERATION_REQUEST} or {@link #OPERATION_REPLY}.
     */
    public static void write(final MemorySegment s, final long o, final int operation, final long senderMac,
        final int senderIp, final long targetMac, final int targetIp)
    {
        Wire.put16(s, o + HARDWARE_TYPE_OFFSET, HARDWARE_TYPE_ETHERNET);
        Wire.put16(s, o + PROTOCOL_TYPE_OFFSET, EthernetHeader.ETHER_TYPE_IPV4);
        Wire.put8(s, o + HARDWARE_LENGTH_OFFSET, 6);
        Wire.put8(s, o + PROTOCOL_LENGTH_OFFSET, 4);
        Wire.put16(s, o + OPERATION_OFFSET, operation);
        EthernetHeader.mac(s, o + SENDER_MAC_OFFSET, senderMac);
        s.set(Wire.INT_BE, o + SENDER_IP_OFFSET, senderIp);
        EthernetHeader.mac(s, o + TARGET_MAC_OFFSET, targetMac);
        s.set(Wire.INT_BE, o + TARGET_IP_OFFSET, targetIp);
    }

    /** @return the packet's fields for logs and tests. */
    public static String toString(final MemorySegment s, final long o)
    {
        return "ARP op=" + operation(s, o) + " sender=" + Wire.ipv4ToString(senderIp(s, o)) + "/" +
            Wire.macToString(senderMac(s, o)) + " target=" + Wire.ipv4ToString(targetIp(s, o)) + "/" +
            Wire.macToString(targetMac(s, o));
    }
}
