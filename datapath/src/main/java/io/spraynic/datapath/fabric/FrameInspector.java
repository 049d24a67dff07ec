package io.spraynic.datapath.fabric;

import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Ipv6Header;
import io.spraynic.datapath.wire.UdpHeader;
import io.spraynic.datapath.wire.Wire;

import java.lang.foreign.MemorySegment;

/**
 * What a switch needs from a frame, and nothing more: the destination to route on and the flow fields
 * to hash for ECMP (source and destination address, protocol, UDP ports). It reads Ethernet (one
 * optional 802.1Q tag), IPv4 or IPv6 and the UDP ports, in place; it checks only what routing relies
 * on (lengths and versions), not checksums or the transport above. It never reads outside
 * {@code [offset, offset + length)} and never throws on a bad frame: it says {@link #MALFORMED}.
 * <p>
 * IPv6 frames route on the last 32 bits of their destination address (hosts' IPv6 addresses are the
 * IPv4-mapped form of their IPv4 ones). Non-IP frames have no address: they hash on the MAC addresses
 * and EtherType, and only a switch's default route can take them.
 * <p>
 * One instance per thread (it holds the last frame's fields).
 */
public final class FrameInspector
{
    /** The frame cannot be routed: truncated, or an IP header inconsistent with the frame. */
    public static final int MALFORMED = -1;
    /** Not IPv4 or IPv6. */
    public static final int NOT_IP = 0;
    /** An IPv4 packet. */
    public static final int IPV4 = 4;
    /** An IPv6 packet. */
    public static final int IPV6 = 6;

    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private int frameKind;
    private int routeAddress;
    private long sourceHigh;
    private long sourceLow;
    private long destinationHigh;
    private long destinationLow;
    private int protocol;
    private int sourcePort;
    private int destinationPort;

    /**
     * Reads a frame's routing and flow fields.
     *
     * @return {@link #IPV4}, {@link #IPV6}, {@link #NOT_IP} or {@link #MALFORMED}.
     */
    public int inspect(final MemorySegment s, final long offset, final int length)
    {
        sourceHigh = 0;
        sourceLow = 0;
        destinationHigh = 0;
        destinationLow = 0;
        protocol = 0;
        sourcePort = 0;
        destinationPort = 0;
        routeAddress = 0;
        frameKind = classify(s, offset, length);
        return frameKind;
    }

    private int classify(final MemorySegment s, final long offset, final int length)
    {
        final int l2 = EthernetHeader.headerLength(s, offset, length);
        if (l2 == 0)
        {
            return MALFORMED;
        }
        final int etherType = EthernetHeader.payloadEtherType(s, offset, l2);
        final long l3 = offset + l2;
        final long end = offset + length;
        if (etherType == EthernetHeader.ETHER_TYPE_IPV4)
        {
            return inspectIpv4(s, l3, end);
        }
        if (etherType == EthernetHeader.ETHER_TYPE_IPV6)
        {
            return inspectIpv6(s, l3, end);
        }
        sourceHigh = EthernetHeader.sourceMac(s, offset);
        destinationHigh = EthernetHeader.destinationMac(s, offset);
        protocol = etherType;
        return NOT_IP;
    }

    private int inspectIpv4(final MemorySegment s, final long l3, final long end)
    {
        if (end - l3 < Ipv4Header.LENGTH || Ipv4Header.version(s, l3) != 4)
        {
            return MALFORMED;
        }
        final int headerLength = Ipv4Header.headerLength(s, l3);
        final int totalLength = Ipv4Header.totalLength(s, l3);
        if (headerLength < Ipv4Header.LENGTH || totalLength < headerLength || l3 + totalLength > end)
        {
            return MALFORMED;
        }
        routeAddress = Ipv4Header.destinationAddress(s, l3);
        sourceLow = Integer.toUnsignedLong(Ipv4Header.sourceAddress(s, l3));
        destinationLow = Integer.toUnsignedLong(routeAddress);
        protocol = Ipv4Header.protocol(s, l3);
        // only the first fragment carries the UDP header; later ones hash on addresses alone
        if (protocol == Ipv4Header.PROTOCOL_UDP && totalLength - headerLength >= UdpHeader.LENGTH &&
            (Ipv4Header.flagsAndFragmentOffset(s, l3) & Ipv4Header.FRAGMENT_OFFSET_MASK) == 0)
        {
            final long udp = l3 + headerLength;
            sourcePort = UdpHeader.sourcePort(s, udp);
            destinationPort = UdpHeader.destinationPort(s, udp);
        }
        return IPV4;
    }

    private int inspectIpv6(final MemorySegment s, final long l3, final long end)
    {
        if (end - l3 < Ipv6Header.LENGTH || Ipv6Header.version(s, l3) != 6 ||
            l3 + Ipv6Header.LENGTH + Ipv6Header.payloadLength(s, l3) > end)
        {
            return MALFORMED;
        }
        sourceHigh = Ipv6Header.sourceAddressHigh(s, l3);
        sourceLow = Ipv6Header.sourceAddressLow(s, l3);
        destinationHigh = Ipv6Header.destinationAddressHigh(s, l3);
        destinationLow = Ipv6Header.destinationAddressLow(s, l3);
        routeAddress = (int)destinationLow;
        protocol = Ipv6Header.nextHeader(s, l3);
        if (protocol == Ipv6Header.NEXT_HEADER_UDP && Ipv6Header.payloadLength(s, l3) >= UdpHeader.LENGTH)
        {
            final long udp = l3 + Ipv6Header.LENGTH;
            sourcePort = UdpHeader.sourcePort(s, udp);
            destinationPort = UdpHeader.destinationPort(s, udp);
        }
        return IPV6;
    }

    /**
     * @return what the last {@link #inspect} found.
     */
    public int frameKind()
    {
        return frameKind;
    }

    /**
     * @return the IPv4 destination (for IPv6, the last 32 bits of the destination) of the last frame.
     */
    public int routeAddress()
    {
        return routeAddress;
    }

    /**
     * @return the IP protocol / next header (the EtherType for non-IP frames) of the last frame.
     */
    public int protocol()
    {
        return protocol;
    }

    /**
     * @return the UDP source port of the last frame, or 0 if it had none.
     */
    public int sourcePort()
    {
        return sourcePort;
    }

    /**
     * @return the UDP destination port of the last frame, or 0 if it had none.
     */
    public int destinationPort()
    {
        return destinationPort;
    }

    /**
     * A seeded hash of the last frame's flow: (source, destination, protocol, source port, destination
     * port), as a switch's ECMP hash. Different seeds give independent choices, as switches with
     * different hash seeds do (which avoids hash polarisation between tiers).
     */
    public long flowHash(final long seed)
    {
        long h = seed;
        h = mix(h, sourceHigh);
        h = mix(h, sourceLow);
        h = mix(h, destinationHigh);
        h = mix(h, destinationLow);
        h = mix(h, ((long)protocol << 32) | ((long)sourcePort << 16) | destinationPort);
        return finish(h);
    }

    private static long mix(final long h, final long value)
    {
        return Long.rotateLeft((h ^ value) * GOLDEN, 31);
    }

    /** The MurmurHash3 64-bit finaliser ({@link io.spraynic.datapath.transport.HashMix}). */
    static long finish(final long value)
    {
        return io.spraynic.datapath.transport.HashMix.finish(value);
    }

    /**
     * Marks an ECN-capable IP packet Congestion Experienced (ECN = 0b11), as a switch does above its
     * marking threshold. ECT(0) and ECT(1) packets are marked; Not-ECT and already-CE packets, non-IP
     * and malformed frames are left alone. The IPv4 header checksum is updated incrementally (RFC 1624),
     * so a header that was valid stays valid (and a corrupt one stays corrupt). RoCEv2's ICRC masks the
     * DS field / traffic class, so it stays valid too.
     *
     * @return true if the packet was marked.
     */
    public static boolean markCongestionExperienced(final MemorySegment s, final long offset, final int length)
    {
        final int l2 = EthernetHeader.headerLength(s, offset, length);
        if (l2 == 0)
        {
            return false;
        }
        final int etherType = EthernetHeader.payloadEtherType(s, offset, l2);
        final long l3 = offset + l2;
        final long available = offset + length - l3;
        if (etherType == EthernetHeader.ETHER_TYPE_IPV4)
        {
            if (available < Ipv4Header.LENGTH || Ipv4Header.version(s, l3) != 4)
            {
                return false;
            }
            final int firstWord = Wire.u16(s, l3);
            final int ecn = firstWord & 0x3;
            if (ecn == 0 || ecn == 0x3)
            {
                return false;
            }
            final int markedWord = firstWord | 0x3;
            Wire.put16(s, l3, markedWord);
            // RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m')
            final long sum = (~Ipv4Header.checksum(s, l3) & 0xFFFF) + (~firstWord & 0xFFFF) + markedWord;
            Ipv4Header.checksum(s, l3, ~foldCarries(sum) & 0xFFFF);
            return true;
        }
        if (etherType == EthernetHeader.ETHER_TYPE_IPV6)
        {
            if (available < Ipv6Header.LENGTH || Ipv6Header.version(s, l3) != 6)
            {
                return false;
            }
            final int ecn = Ipv6Header.ecn(s, l3);
            if (ecn == 0 || ecn == 0x3)
            {
                return false;
            }
            Ipv6Header.ecn(s, l3, 0x3);
            return true;
        }
        return false;
    }

    private static int foldCarries(final long sum)
    {
        long folded = (sum & 0xFFFF) + (sum >>> 16);
        folded = (folded & 0xFFFF) + (folded >>> 16);
        return (int)folded;
    }

    public String toString()
    {
        return "FrameInspector{kind=" + frameKind + ", route=" + Wire.ipv4ToString(routeAddress) + ", protocol=" +
            protocol + ", ports=" + sourcePort + "->" + destinationPort + '}';
    }
}
