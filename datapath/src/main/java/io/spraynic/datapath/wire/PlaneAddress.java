package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over one entry of the address list a {@code SPRAY_CONNECT} carries as its payload
 * (docs/PROTOCOL.md S5.5, flag {@link ConnectionHeader#FLAG_ADDRESSES}): the initiator's address on one
 * plane, entries in plane order, so that the responder reaches every plane without an address plan of its
 * own. 24 bytes:
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |     flags     |   reserved    |                               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+           MAC (48)            +
 * |                                                               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                                                               |
 * +        address (128): IPv6, or IPv4 in the first 4 bytes      +
 * |                    and zeros in the rest                      |
 * +                                                               +
 * |                                                               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 */
public final class PlaneAddress
{
    public static final int FLAGS_OFFSET = 0;
    public static final int MAC_OFFSET = 2;
    public static final int ADDRESS_OFFSET = 8;
    public static final int LENGTH = 24;

    /** Flag: the address is IPv6. */
    public static final int FLAG_IPV6 = 1;

    private PlaneAddress()
    {
    }

    /** @return offset of plane {@code plane}'s entry in a list starting at {@code listOffset}. */
    public static long entry(final long listOffset, final int plane)
    {
        return listOffset + (long)plane * LENGTH;
    }

    /** Writes an IPv4 entry. */
    public static void writeIpv4(final MemorySegment s, final long o, final int ipv4, final long mac)
    {
        s.set(Wire.BYTE, o + FLAGS_OFFSET, (byte)0);
        s.set(Wire.BYTE, o + FLAGS_OFFSET + 1, (byte)0);
        EthernetHeader.mac(s, o + MAC_OFFSET, mac);
        s.set(Wire.INT_BE, o + ADDRESS_OFFSET, ipv4);
        s.set(Wire.INT_BE, o + ADDRESS_OFFSET + 4, 0);
        s.set(Wire.LONG_BE, o + ADDRESS_OFFSET + 8, 0L);
    }

    /** Writes an IPv6 entry. */
    public static void writeIpv6(final MemorySegment s, final long o, final long high, final long low, final long mac)
    {
        s.set(Wire.BYTE, o + FLAGS_OFFSET, (byte)FLAG_IPV6);
        s.set(Wire.BYTE, o + FLAGS_OFFSET + 1, (byte)0);
        EthernetHeader.mac(s, o + MAC_OFFSET, mac);
        s.set(Wire.LONG_BE, o + ADDRESS_OFFSET, high);
        s.set(Wire.LONG_BE, o + ADDRESS_OFFSET + 8, low);
    }

    public static boolean isIpv6(final MemorySegment s, final long o)
    {
        return (Wire.u8(s, o + FLAGS_OFFSET) & FLAG_IPV6) != 0;
    }

    /** @return the MAC in the low 48 bits. */
    public static long mac(final MemorySegment s, final long o)
    {
        return EthernetHeader.mac(s, o + MAC_OFFSET);
    }

    public static int ipv4(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + ADDRESS_OFFSET);
    }

    public static long ipv6High(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + ADDRESS_OFFSET);
    }

    public static long ipv6Low(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + ADDRESS_OFFSET + 8);
    }

    /** @return the entry for logs and {@code spraynic decode}. */
    public static String toString(final MemorySegment s, final long o)
    {
        final String address = isIpv6(s, o) ? Wire.ipv6ToString(ipv6High(s, o), ipv6Low(s, o)) : Wire.ipv4ToString(ipv4(s, o));
        return address + "/" + Wire.macToString(mac(s, o));
    }
}
