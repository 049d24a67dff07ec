package io.spraynic.datapath.port;

import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Ipv6Header;
import io.spraynic.datapath.wire.MalformedReason;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.UdpHeader;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class UdpFramesTest
{
    private static final int A = 0x7F00_0001;
    private static final int B = 0x7F00_0002;
    private static final long MAC_B = 0x0200_7F00_0002L;
    private static final long V6_HIGH = 0xFD00_0001_0000_0000L; // fd00:1::10 and fd00:1::20
    private static final long V6_A = 0x10;
    private static final long V6_B = 0x20;
    private static final int IP = EthernetHeader.LENGTH;
    private static final int UDP6 = IP + Ipv6Header.LENGTH;

    private final Arena arena = Arena.ofAuto();
    private final MemorySegment sent = arena.allocate(4096, 64);
    private final MemorySegment received = arena.allocate(4096, 64);
    private final Icrc icrc = new Icrc();

    private int writeFrame(final int sourcePort, final int ecn, final int identification)
    {
        final RoceFrameWriter writer = new RoceFrameWriter().ethernet(0x0200_0000_00AAL, 0x0200_0000_00BBL).ipv4(A, B)
            .ecn(ecn).dscp(26).ipv4Identification(identification).udpSourcePort(sourcePort)
            .opcode(Opcode.RC_SEND_ONLY).destQp(0x12).psn(77);
        for (int i = 0; i < 300; i++)
        {
            sent.set(java.lang.foreign.ValueLayout.JAVA_BYTE, writer.payloadOffset() + i, (byte)(i * 7));
        }
        return writer.writeFrame(sent, 0, 300);
    }

    /** What a receiving port does: the payload lands after the headers, the headers are synthesized around it. */
    private int deliver(final int payloadLength, final int sourcePort, final int tos)
    {
        MemorySegment.copy(sent, UdpFrames.HEADERS_LENGTH, received, UdpFrames.HEADERS_LENGTH, payloadLength);
        return UdpFrames.synthesize(received, 0, payloadLength, MAC_B, A, sourcePort, B, tos);
    }

    @Test
    void shouldSynthesizeHeadersWhoseIcrcMatchesTheCanonicalizedSenderFrame()
    {
        final int length = writeFrame(49_157, 2, 4242);
        final int payload = UdpFrames.canonicalizeForSend(sent, 0, length, A, 40_001, icrc);
        assertEquals(12 + 300 + 4, payload, "BTH, payload and ICRC: what the socket carries");

        final int tos = UdpFrames.tos(sent, 0) | 3; // a router marked CE on the way: masked by the ICRC
        final int frameLength = deliver(payload, 40_001, tos);

        final RoceFrame frame = new RoceFrame();
        final ParseCounters counters = new ParseCounters();
        assertEquals(FrameClass.ROCE, new RoceParser(io.spraynic.datapath.wire.OpcodeTable.ROCE_V2, counters, true)
            .parse(received, 0, frameLength, frame), frame.toString());
        assertTrue(frame.icrcValid(), frame.toString());
        assertEquals(3, frame.ecn());
        assertEquals(26, frame.dscp());
        assertEquals(A, frame.ipv4Source());
        assertEquals(B, frame.ipv4Destination());
        assertEquals(40_001, frame.udpSourcePort());
        assertEquals(UdpHeader.ROCE_V2_PORT, frame.udpDestinationPort());
        assertEquals(77, frame.psn());
        assertEquals(MAC_B, EthernetHeader.destinationMac(received, 0));
        assertEquals(0x0200_7F00_0001L, EthernetHeader.sourceMac(received, 0), "02:00 and the sender's address");
        assertTrue(Ipv4Header.isChecksumValid(received, EthernetHeader.LENGTH, Ipv4Header.LENGTH));
        assertEquals(-1, sent.asSlice(UdpFrames.HEADERS_LENGTH, payload).mismatch(received.asSlice(UdpFrames.HEADERS_LENGTH, payload)));
    }

    @Test
    void shouldFailTheIcrcWhenTheSenderWasNotCanonicalized()
    {
        writeFrame(49_157, 0, 4242);
        final int payload = UdpHeader.length(sent, 34) - UdpHeader.LENGTH;
        final int frameLength = deliver(payload, 49_157, 0);

        final RoceFrame frame = new RoceFrame();
        final ParseCounters counters = new ParseCounters();
        assertEquals(FrameClass.MALFORMED, new RoceParser(counters).parse(received, 0, frameLength, frame));
        assertEquals(1, counters.get(ParseCounters.MALFORMED_BASE + MalformedReason.BAD_ICRC.ordinal()),
            "the identification 4242 the engine wrote is not what a receiver can synthesize: why the port rewrites it");
    }

    @Test
    void shouldRefuseFramesThatAreNotIpv4UdpToRoce()
    {
        final int length = writeFrame(49_157, 0, 1);
        final MemorySegment copy = arena.allocate(4096, 64);

        MemorySegment.copy(sent, 0, copy, 0, length);
        EthernetHeader.etherType(copy, 0, EthernetHeader.ETHER_TYPE_IPV6);
        assertEquals(UdpFrames.NOT_IPV4_UDP, UdpFrames.canonicalizeForSend(copy, 0, length, A, 1, icrc));

        MemorySegment.copy(sent, 0, copy, 0, length);
        UdpHeader.destinationPort(copy, 34, 4792);
        assertEquals(UdpFrames.NOT_IPV4_UDP, UdpFrames.canonicalizeForSend(copy, 0, length, A, 1, icrc));

        MemorySegment.copy(sent, 0, copy, 0, length);
        UdpHeader.length(copy, 34, length); // longer than the frame
        assertEquals(UdpFrames.NOT_IPV4_UDP, UdpFrames.canonicalizeForSend(copy, 0, length, A, 1, icrc));

        MemorySegment.copy(sent, 0, copy, 0, length);
        Ipv4Header.protocol(copy, 14, 6);
        assertEquals(UdpFrames.NOT_IPV4_UDP, UdpFrames.canonicalizeForSend(copy, 0, length, A, 1, icrc));

        MemorySegment.copy(sent, 0, copy, 0, length);
        Ipv4Header.flagsAndFragmentOffset(copy, 14, Ipv4Header.FLAG_MORE_FRAGMENTS);
        assertEquals(UdpFrames.NOT_IPV4_UDP, UdpFrames.canonicalizeForSend(copy, 0, length, A, 1, icrc));

        assertEquals(UdpFrames.NOT_IPV4_UDP, UdpFrames.canonicalizeForSend(sent, 0, 57, A, 1, icrc));
        assertEquals(UdpFrames.WRONG_SOURCE, UdpFrames.canonicalizeForSend(sent, 0, length, B, 1, icrc));
        assertEquals(49_157, UdpFrames.sourcePort(sent, 0), "a refused frame is left as it was");
    }

    private int writeIpv6Frame(final int sourcePort, final int ecn, final int flowLabel, final int hopLimit)
    {
        final RoceFrameWriter writer = new RoceFrameWriter().ethernet(0x0200_0000_00AAL, 0x0200_0000_00BBL)
            .ipv6(V6_HIGH, V6_A, V6_HIGH, V6_B).ecn(ecn).dscp(26).flowLabel(flowLabel).ttl(hopLimit)
            .udpSourcePort(sourcePort).opcode(Opcode.RC_SEND_ONLY).destQp(0x12).psn(77);
        for (int i = 0; i < 300; i++)
        {
            sent.set(java.lang.foreign.ValueLayout.JAVA_BYTE, writer.payloadOffset() + i, (byte)(i * 7));
        }
        return writer.writeFrame(sent, 0, 300);
    }

    private int deliverIpv6(final int payloadLength, final int sourcePort, final int trafficClass)
    {
        MemorySegment.copy(sent, UdpFrames.IPV6_HEADERS_LENGTH, received, UdpFrames.IPV6_HEADERS_LENGTH, payloadLength);
        return UdpFrames.synthesizeIpv6(received, 0, payloadLength, MAC_B, V6_HIGH, V6_A, sourcePort, V6_HIGH, V6_B,
            trafficClass);
    }

    @Test
    void shouldSynthesizeIpv6HeadersAsAWireCarriesThemWithAnIcrcMatchingTheCanonicalizedSenderFrame()
    {
        final int length = writeIpv6Frame(49_157, 2, 0xABCDE, 3);
        assertEquals(62 + 12 + 300 + 4, length, "Ethernet 14, IPv6 40, UDP 8: the frame a DPDK port carries");
        final int payload = UdpFrames.canonicalizeIpv6ForSend(sent, 0, length, V6_HIGH, V6_A, 40_001, icrc);
        assertEquals(12 + 300 + 4, payload, "BTH, payload and ICRC: what the socket carries");
        assertEquals(40_001, UdpFrames.sourcePortIpv6(sent, 0));
        assertEquals(V6_HIGH, UdpFrames.destinationHighIpv6(sent, 0));
        assertEquals(V6_B, UdpFrames.destinationLowIpv6(sent, 0));
        assertEquals(26 << 2 | 2, UdpFrames.trafficClassIpv6(sent, 0));

        // a router marked CE; the receiver's flow label (0) and hop limit (64) are not the sender's 0xABCDE and 3:
        // the ICRC masks all three
        final int frameLength = deliverIpv6(payload, 40_001, UdpFrames.trafficClassIpv6(sent, 0) | 3);
        assertEquals(length, frameLength);

        final RoceFrame frame = new RoceFrame();
        final ParseCounters counters = new ParseCounters();
        assertEquals(FrameClass.ROCE, new RoceParser(io.spraynic.datapath.wire.OpcodeTable.ROCE_V2, counters, true)
            .parse(received, 0, frameLength, frame), frame.toString());
        assertTrue(frame.icrcValid(), frame.toString());
        assertEquals(3, frame.ecn());
        assertEquals(26, frame.dscp());
        assertEquals(V6_HIGH, frame.ipv6SourceHigh());
        assertEquals(V6_A, frame.ipv6SourceLow());
        assertEquals(40_001, frame.udpSourcePort());
        assertEquals(UdpHeader.ROCE_V2_PORT, frame.udpDestinationPort());
        assertEquals(77, frame.psn());
        assertEquals(EthernetHeader.ETHER_TYPE_IPV6, EthernetHeader.etherType(received, 0));
        assertEquals(MAC_B, EthernetHeader.destinationMac(received, 0));
        assertEquals(0x0200_0000_0010L, EthernetHeader.sourceMac(received, 0), "02:00 and the sender's last 32 bits");
        assertEquals(0, Ipv6Header.flowLabel(received, IP));
        assertEquals(64, Ipv6Header.hopLimit(received, IP));
        assertEquals(Ipv6Header.NEXT_HEADER_UDP, Ipv6Header.nextHeader(received, IP));
        assertEquals(8 + payload, Ipv6Header.payloadLength(received, IP));
        assertEquals(8 + payload, UdpHeader.length(received, UDP6));
        final int checksum = UdpHeader.checksum(received, UDP6);
        assertTrue(checksum != 0, "a UDP checksum over IPv6 is mandatory (RFC 8200 8.1)");
        assertEquals(checksum, UdpHeader.computeIpv6Checksum(received, IP, UDP6, 8 + payload), "and right");
        assertEquals(-1, sent.asSlice(UdpFrames.IPV6_HEADERS_LENGTH, payload)
            .mismatch(received.asSlice(UdpFrames.IPV6_HEADERS_LENGTH, payload)));
    }

    @Test
    void shouldFailTheIpv6IcrcWhenTheSenderWasNotCanonicalized()
    {
        writeIpv6Frame(49_157, 0, 0, 64);
        final int payload = UdpHeader.length(sent, UDP6) - UdpHeader.LENGTH;
        // the socket's source port, not the engine's 49157 the ICRC was computed over
        final int frameLength = deliverIpv6(payload, 40_001, 0);

        final RoceFrame frame = new RoceFrame();
        final ParseCounters counters = new ParseCounters();
        assertEquals(FrameClass.MALFORMED, new RoceParser(counters).parse(received, 0, frameLength, frame));
        assertEquals(1, counters.get(ParseCounters.MALFORMED_BASE + MalformedReason.BAD_ICRC.ordinal()),
            "the UDP source port is covered by the ICRC: why the port rewrites it and recomputes the ICRC");
    }

    @Test
    void shouldRefuseFramesThatAreNotIpv6UdpToRoceFromTheBoundAddress()
    {
        final int length = writeIpv6Frame(49_157, 0, 0, 64);
        final MemorySegment copy = arena.allocate(4096, 64);

        final int ipv4Length = writeFrame(49_157, 0, 1);
        MemorySegment.copy(sent, 0, copy, 0, ipv4Length);
        assertEquals(UdpFrames.NOT_IPV6_UDP, UdpFrames.canonicalizeIpv6ForSend(copy, 0, ipv4Length, V6_HIGH, V6_A, 1, icrc),
            "an IPv4 frame on an IPv6 port");
        writeIpv6Frame(49_157, 0, 0, 64);
        MemorySegment.copy(sent, 0, copy, 0, length);
        assertEquals(UdpFrames.NOT_IPV4_UDP, UdpFrames.canonicalizeForSend(copy, 0, length, A, 1, icrc),
            "an IPv6 frame on an IPv4 port");

        MemorySegment.copy(sent, 0, copy, 0, length);
        Ipv6Header.nextHeader(copy, IP, 0); // a hop-by-hop extension header: not carried
        assertEquals(UdpFrames.NOT_IPV6_UDP, UdpFrames.canonicalizeIpv6ForSend(copy, 0, length, V6_HIGH, V6_A, 1, icrc));

        MemorySegment.copy(sent, 0, copy, 0, length);
        copy.set(java.lang.foreign.ValueLayout.JAVA_BYTE, IP, (byte)0x45); // version 4 under an IPv6 EtherType
        assertEquals(UdpFrames.NOT_IPV6_UDP, UdpFrames.canonicalizeIpv6ForSend(copy, 0, length, V6_HIGH, V6_A, 1, icrc));

        MemorySegment.copy(sent, 0, copy, 0, length);
        UdpHeader.destinationPort(copy, UDP6, 4792);
        assertEquals(UdpFrames.NOT_IPV6_UDP, UdpFrames.canonicalizeIpv6ForSend(copy, 0, length, V6_HIGH, V6_A, 1, icrc));

        MemorySegment.copy(sent, 0, copy, 0, length);
        UdpHeader.length(copy, UDP6, length); // longer than the frame
        assertEquals(UdpFrames.NOT_IPV6_UDP, UdpFrames.canonicalizeIpv6ForSend(copy, 0, length, V6_HIGH, V6_A, 1, icrc));

        MemorySegment.copy(sent, 0, copy, 0, length);
        Ipv6Header.payloadLength(copy, IP, UdpHeader.length(copy, UDP6) + 4); // IPv6 and UDP lengths disagree
        assertEquals(UdpFrames.NOT_IPV6_UDP, UdpFrames.canonicalizeIpv6ForSend(copy, 0, length, V6_HIGH, V6_A, 1, icrc));

        assertEquals(UdpFrames.NOT_IPV6_UDP, UdpFrames.canonicalizeIpv6ForSend(sent, 0, 77, V6_HIGH, V6_A, 1, icrc));
        assertEquals(UdpFrames.WRONG_SOURCE, UdpFrames.canonicalizeIpv6ForSend(sent, 0, length, V6_HIGH, V6_B, 1, icrc));
        assertEquals(UdpFrames.WRONG_SOURCE, UdpFrames.canonicalizeIpv6ForSend(sent, 0, length, 0, V6_A, 1, icrc));
        assertEquals(49_157, UdpFrames.sourcePortIpv6(sent, 0), "a refused frame is left as it was");
    }
}
