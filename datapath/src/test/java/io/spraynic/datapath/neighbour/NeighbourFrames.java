package io.spraynic.datapath.neighbour;

import io.spraynic.datapath.wire.ArpHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.IcmpHeader;
import io.spraynic.datapath.wire.Icmpv6Header;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Ipv6Header;
import io.spraynic.datapath.wire.Wire;

import java.lang.foreign.MemorySegment;

/**
 * ARP packets and ICMP echo requests, and their IPv6 counterparts (neighbour solicitations and advertisements,
 * ICMPv6 echo requests), as a host on the link sends them, for the neighbour tests.
 */
public final class NeighbourFrames
{
    private NeighbourFrames()
    {
    }

    /** @return a 60-byte frame: a request to broadcast, a reply to {@code replyTo}. */
    public static MemorySegment arp(final int operation, final long senderMac, final int senderIp, final long targetMac,
        final int targetIp, final long replyTo)
    {
        final MemorySegment s = MemorySegment.ofArray(new byte[60]);
        EthernetHeader.destinationMac(s, 0, operation == ArpHeader.OPERATION_REPLY ? replyTo : NeighbourAgent.BROADCAST_MAC);
        EthernetHeader.sourceMac(s, 0, senderMac);
        EthernetHeader.etherType(s, 0, ArpHeader.ETHER_TYPE_ARP);
        ArpHeader.write(s, 14, operation, senderMac, senderIp, targetMac, targetIp);
        return s;
    }

    /** @return an echo request of {@code data} bytes 0, 1, 2...; identifier as given, sequence 7. */
    public static MemorySegment echo(final long destinationMac, final long sourceMac, final int source,
        final int destination, final int identifier, final int data)
    {
        final MemorySegment s = MemorySegment.ofArray(new byte[14 + 20 + 8 + data]);
        EthernetHeader.destinationMac(s, 0, destinationMac);
        EthernetHeader.sourceMac(s, 0, sourceMac);
        EthernetHeader.etherType(s, 0, EthernetHeader.ETHER_TYPE_IPV4);
        Ipv4Header.versionAndHeaderLength(s, 14, 20);
        Ipv4Header.totalLength(s, 14, 20 + 8 + data);
        Ipv4Header.ttl(s, 14, 64);
        Ipv4Header.protocol(s, 14, IcmpHeader.PROTOCOL_ICMP);
        Ipv4Header.sourceAddress(s, 14, source);
        Ipv4Header.destinationAddress(s, 14, destination);
        Ipv4Header.updateChecksum(s, 14, 20);
        IcmpHeader.type(s, 34, IcmpHeader.TYPE_ECHO_REQUEST);
        Wire.put16(s, 34 + IcmpHeader.IDENTIFIER_OFFSET, identifier);
        Wire.put16(s, 34 + IcmpHeader.SEQUENCE_OFFSET, 7);
        for (int i = 0; i < data; i++)
        {
            s.set(Wire.BYTE, 42 + i, (byte)i);
        }
        IcmpHeader.checksum(s, 34, IcmpHeader.internetChecksum(s, 34, 8 + data));
        return s;
    }

    /** @return an 8-byte link-layer address option. */
    public static byte[] linkLayerOption(final int type, final long mac)
    {
        final byte[] option = new byte[8];
        Icmpv6Header.linkLayerOption(MemorySegment.ofArray(option), 0, type, mac);
        return option;
    }

    /**
     * @return an NS or NA frame from {@code source} to {@code destination} (128-bit pairs), hop limit 255, about
     * {@code target}, with the given whole options after it, its checksum right.
     */
    public static byte[] neighbourMessage(final int type, final long destinationMac, final long sourceMac,
        final long[] source, final long[] destination, final int flags, final long[] target, final byte[]... options)
    {
        int optionsLength = 0;
        for (final byte[] option : options)
        {
            optionsLength += option.length;
        }
        final int icmpLength = Icmpv6Header.NEIGHBOUR_LENGTH + optionsLength;
        final byte[] frame = new byte[14 + 40 + icmpLength];
        final MemorySegment s = ipv6(frame, destinationMac, sourceMac, source, destination, icmpLength, 255);
        IcmpHeader.type(s, 54, type);
        Icmpv6Header.flags(s, 54, flags);
        Icmpv6Header.target(s, 54, target[0], target[1]);
        int at = 54 + Icmpv6Header.NEIGHBOUR_LENGTH;
        for (final byte[] option : options)
        {
            System.arraycopy(option, 0, frame, at, option.length);
            at += option.length;
        }
        fixChecksum(frame);
        return frame;
    }

    /** @return an ICMPv6 echo request of {@code data} bytes 0, 1, 2..., identifier 0x1234, sequence 7. */
    public static byte[] echo6(final long destinationMac, final long sourceMac, final long[] source,
        final long[] destination, final int data)
    {
        final byte[] frame = new byte[14 + 40 + 8 + data];
        final MemorySegment s = ipv6(frame, destinationMac, sourceMac, source, destination, 8 + data, 64);
        IcmpHeader.type(s, 54, Icmpv6Header.TYPE_ECHO_REQUEST);
        Wire.put16(s, 54 + Icmpv6Header.IDENTIFIER_OFFSET, 0x1234);
        Wire.put16(s, 54 + Icmpv6Header.SEQUENCE_OFFSET, 7);
        for (int i = 0; i < data; i++)
        {
            frame[62 + i] = (byte)i;
        }
        fixChecksum(frame);
        return frame;
    }

    /** Sets the ICMPv6 checksum of an untagged IPv6 frame right, after a test changed a field. */
    public static byte[] fixChecksum(final byte[] frame)
    {
        final MemorySegment s = MemorySegment.ofArray(frame);
        final int icmpLength = Ipv6Header.payloadLength(s, 14);
        IcmpHeader.checksum(s, 54, 0);
        IcmpHeader.checksum(s, 54, Icmpv6Header.computeChecksum(s, 14, 54, icmpLength));
        return frame;
    }

    private static MemorySegment ipv6(final byte[] frame, final long destinationMac, final long sourceMac,
        final long[] source, final long[] destination, final int payloadLength, final int hopLimit)
    {
        final MemorySegment s = MemorySegment.ofArray(frame);
        EthernetHeader.destinationMac(s, 0, destinationMac);
        EthernetHeader.sourceMac(s, 0, sourceMac);
        EthernetHeader.etherType(s, 0, EthernetHeader.ETHER_TYPE_IPV6);
        Ipv6Header.versionClassFlow(s, 14, 0, 0);
        Ipv6Header.payloadLength(s, 14, payloadLength);
        Ipv6Header.nextHeader(s, 14, Ipv6Header.NEXT_HEADER_ICMPV6);
        Ipv6Header.hopLimit(s, 14, hopLimit);
        Ipv6Header.sourceAddress(s, 14, source[0], source[1]);
        Ipv6Header.destinationAddress(s, 14, destination[0], destination[1]);
        return s;
    }
}
