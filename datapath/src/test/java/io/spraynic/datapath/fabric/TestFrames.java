package io.spraynic.datapath.fabric;

import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Ipv6Header;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.UdpHeader;
import io.spraynic.datapath.wire.Wire;

import java.lang.foreign.MemorySegment;

/**
 * Writes RoCEv2 frames (RC SEND ONLY) for fabric tests: the PSN carries a sequence number and the
 * destination QP the sender's id, so a receiver can tell frames apart without parsing payloads.
 */
final class TestFrames
{
    static final int IPV4_PAYLOAD_OFFSET = EthernetHeader.LENGTH + Ipv4Header.LENGTH + UdpHeader.LENGTH +
        BaseTransportHeader.LENGTH;

    private final RoceFrameWriter writer = new RoceFrameWriter();
    private final MemorySegment buffer = MemorySegment.ofArray(new byte[16_384]);

    MemorySegment buffer()
    {
        return buffer;
    }

    /**
     * @return the length of the IPv4 frame written at offset 0 of {@link #buffer()}.
     */
    int ipv4(final int source, final int destination, final int udpSourcePort, final int ecn, final int sender,
        final int sequence, final int payloadLength)
    {
        writer.ethernet(0x02_00_00_00_00_01L, 0x02_00_00_00_00_02L).vlan(-1).ipv4(source, destination)
            .udpSourcePort(udpSourcePort).ecn(ecn).opcode(Opcode.RC_SEND_ONLY).destQp(sender).psn(sequence);
        fill(payloadLength, sequence);
        return writer.writeFrame(buffer, 0, payloadLength);
    }

    /**
     * @return the length of the IPv6 frame (addresses IPv4-mapped) written at offset 0 of {@link #buffer()}.
     */
    int ipv6(final int source, final int destination, final int udpSourcePort, final int ecn, final int sender,
        final int sequence, final int payloadLength)
    {
        writer.ethernet(0x02_00_00_00_00_01L, 0x02_00_00_00_00_02L).vlan(-1)
            .ipv6(0, 0xFFFF_0000_0000L | Integer.toUnsignedLong(source), 0,
                0xFFFF_0000_0000L | Integer.toUnsignedLong(destination))
            .udpSourcePort(udpSourcePort).ecn(ecn).opcode(Opcode.RC_SEND_ONLY).destQp(sender).psn(sequence);
        fill(payloadLength, sequence);
        return writer.writeFrame(buffer, 0, payloadLength);
    }

    private void fill(final int payloadLength, final int sequence)
    {
        final long payload = writer.payloadOffset();
        for (int i = 0; i < payloadLength; i++)
        {
            buffer.set(Wire.BYTE, payload + i, (byte)(sequence * 31 + i));
        }
    }

    /**
     * @return the BTH offset of an untagged IPv4 or IPv6 frame.
     */
    static long bthOffset(final MemorySegment s, final long frame)
    {
        final boolean v4 = EthernetHeader.etherType(s, frame) == EthernetHeader.ETHER_TYPE_IPV4;
        return frame + EthernetHeader.LENGTH + (v4 ? Ipv4Header.LENGTH : Ipv6Header.LENGTH) + UdpHeader.LENGTH;
    }

    static int sequence(final MemorySegment s, final long frame)
    {
        return BaseTransportHeader.psn(s, bthOffset(s, frame));
    }

    static int sender(final MemorySegment s, final long frame)
    {
        return BaseTransportHeader.destQp(s, bthOffset(s, frame));
    }

    static int ecn(final MemorySegment s, final long frame)
    {
        final long ip = frame + EthernetHeader.LENGTH;
        return EthernetHeader.etherType(s, frame) == EthernetHeader.ETHER_TYPE_IPV4 ?
            Ipv4Header.ecn(s, ip) : Ipv6Header.ecn(s, ip);
    }

    static int udpSourcePort(final MemorySegment s, final long frame)
    {
        final boolean v4 = EthernetHeader.etherType(s, frame) == EthernetHeader.ETHER_TYPE_IPV4;
        return UdpHeader.sourcePort(s, frame + EthernetHeader.LENGTH + (v4 ? Ipv4Header.LENGTH : Ipv6Header.LENGTH));
    }
}
