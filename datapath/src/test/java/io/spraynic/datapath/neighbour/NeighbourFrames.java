package io.spraynic.datapath.neighbour;

import io.spraynic.datapath.wire.ArpHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.IcmpHeader;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Wire;

import java.lang.foreign.MemorySegment;

/** ARP packets and ICMP echo requests as a host on the link sends them, for the neighbour tests. */
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
}
