package io.spraynic.datapath.wire;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RoceParserTest
{
    private static final int ETH = EthernetHeader.LENGTH;
    private static final int UDP4 = ETH + Ipv4Header.LENGTH;
    private static final int BTH4 = UDP4 + UdpHeader.LENGTH;

    private final ParseCounters counters = new ParseCounters();
    private final RoceParser parser = new RoceParser(counters);
    private final RoceFrame frame = new RoceFrame();
    private final RoceFrameWriter writer = new RoceFrameWriter().minimumFrameLength(0);
    private final Icrc icrc = new Icrc();
    private byte[] bytes;
    private MemorySegment s;
    private int length;

    @BeforeEach
    void setUp()
    {
        writer.ethernet(RoceFrameWriterTest.MAC_A, RoceFrameWriterTest.MAC_B)
            .ipv4(RoceFrameWriterTest.V4_A, RoceFrameWriterTest.V4_B).udpSourcePort(50001)
            .opcode(Opcode.RC_SEND_ONLY).destQp(0x42).psn(100);
        write(16);
    }

    private void write(final int payloadLength)
    {
        bytes = new byte[2048];
        s = MemorySegment.ofArray(bytes);
        length = writer.writeFrame(s, 0, MemorySegment.ofArray(RoceFrameWriterTest.payloadOf(payloadLength, 1)), 0,
            payloadLength);
    }

    private FrameClass parse()
    {
        return parse(length);
    }

    private FrameClass parse(final int frameLength)
    {
        final long before = counters.total();
        final MemorySegment exact = MemorySegment.ofArray(java.util.Arrays.copyOf(bytes, frameLength));
        final FrameClass result = parser.parse(exact, 0, frameLength, frame);
        assertEquals(before + 1, counters.total(), "exactly one counter per frame");
        return result;
    }

    private void fixIpv4Checksum()
    {
        Ipv4Header.updateChecksum(s, ETH, Ipv4Header.headerLength(s, ETH));
    }

    private void fixIcrc(final int ipVersion, final int ipHeaderLength)
    {
        final long ip = ETH;
        final long udp = ip + ipHeaderLength;
        final long icrcOffset = udp + UdpHeader.length(s, udp) - 4;
        Icrc.write(s, icrcOffset, icrc.compute(s, ip, ipVersion, ipHeaderLength, icrcOffset));
    }

    private void assertMalformed(final MalformedReason reason)
    {
        final long before = counters.get(reason);
        assertEquals(FrameClass.MALFORMED, parse(), () -> frame.toString());
        assertEquals(reason, frame.malformedReason(), () -> frame.toString());
        assertNull(frame.notOursReason());
        assertEquals(before + 1, counters.get(reason));
    }

    private void assertNotOurs(final NotOursReason reason)
    {
        final long before = counters.get(ParseCounters.NOT_OURS);
        assertEquals(FrameClass.NOT_OURS, parse(), () -> frame.toString());
        assertEquals(reason, frame.notOursReason());
        assertNull(frame.malformedReason());
        assertEquals(before + 1, counters.get(ParseCounters.NOT_OURS));
    }

    @Test
    void shouldParseWellFormedFrame()
    {
        assertEquals(FrameClass.ROCE, parse());
        assertTrue(frame.isRoce());
        assertEquals(ETH, frame.ipOffset());
        assertEquals(UDP4, frame.udpOffset());
        assertEquals(BTH4, frame.bthOffset());
        assertEquals(BTH4 + 12, frame.payloadOffset());
        assertEquals(16, frame.payloadLength());
        assertEquals(BTH4 + 12 + 16, frame.icrcOffset());
        assertEquals(0x42, frame.destQp());
        assertEquals(100, frame.psn());
        assertEquals(50001, frame.udpSourcePort());
        assertTrue(frame.icrcValid());
        assertEquals(1, counters.get(ParseCounters.ROCE));
        assertEquals("ParseCounters{roce=1}", counters.toString());
    }

    @Test
    void shouldIgnoreEthernetPaddingAfterIpPacket()
    {
        bytes[length] = 0x55;
        bytes[length + 1] = 0x66;
        assertEquals(FrameClass.ROCE, parse(length + 2));
        assertEquals(16, frame.payloadLength());
    }

    @Test
    void shouldParseVlanTaggedFrameAndRejectStackedTags()
    {
        writer.vlan(EthernetHeader.tci(3, false, 100));
        write(5);
        assertEquals(FrameClass.ROCE, parse());
        assertEquals(100, EthernetHeader.vlanId(frame.vlanTci()));
        assertEquals(EthernetHeader.VLAN_LENGTH, frame.ipOffset());
        assertEquals(5, frame.payloadLength());
        assertEquals(3, frame.padCount());
        EthernetHeader.vlanEtherType(s, 0, EthernetHeader.ETHER_TYPE_VLAN);
        assertNotOurs(NotOursReason.NON_IP);
        EthernetHeader.etherType(s, 0, EthernetHeader.ETHER_TYPE_QINQ);
        assertNotOurs(NotOursReason.NON_IP);
        EthernetHeader.etherType(s, 0, EthernetHeader.ETHER_TYPE_VLAN);
        length = 17;
        assertMalformed(MalformedReason.TRUNCATED_ETHERNET);
    }

    @Test
    void shouldClassifyEthernetLayer()
    {
        length = 13;
        assertMalformed(MalformedReason.TRUNCATED_ETHERNET);
        length = 0;
        assertMalformed(MalformedReason.TRUNCATED_ETHERNET);
        write(16);
        EthernetHeader.etherType(s, 0, EthernetHeader.ETHER_TYPE_ROCE_V1);
        assertNotOurs(NotOursReason.NON_IP);
        EthernetHeader.etherType(s, 0, 0x0806);
        assertNotOurs(NotOursReason.NON_IP);
    }

    @Test
    void shouldClassifyIpv4Layer()
    {
        length = ETH + 19;
        assertMalformed(MalformedReason.TRUNCATED_IP);
        write(16);
        bytes[ETH] = 0x65;
        assertMalformed(MalformedReason.BAD_IP_VERSION);
        bytes[ETH] = 0x44;
        assertMalformed(MalformedReason.BAD_IPV4_HEADER_LENGTH);
        bytes[ETH] = 0x4F; // 60-byte header in a frame that has fewer bytes after Ethernet
        length = ETH + 40;
        assertMalformed(MalformedReason.TRUNCATED_IP);
        write(16);
        Ipv4Header.ttl(s, ETH, 1);
        assertMalformed(MalformedReason.BAD_IPV4_CHECKSUM);
        assertTrue(frame.hasIp());
        assertEquals(RoceFrameWriterTest.V4_A, frame.ipv4Source());
        assertFalse(frame.hasUdp());
        fixIpv4Checksum();
        Ipv4Header.totalLength(s, ETH, 19);
        fixIpv4Checksum();
        assertMalformed(MalformedReason.BAD_IP_LENGTH);
        Ipv4Header.totalLength(s, ETH, length - ETH + 1);
        fixIpv4Checksum();
        assertMalformed(MalformedReason.TRUNCATED_IP);
        Ipv4Header.totalLength(s, ETH, length - ETH);
        Ipv4Header.flagsAndFragmentOffset(s, ETH, 0x0010);
        fixIpv4Checksum();
        assertNotOurs(NotOursReason.IP_FRAGMENT);
        Ipv4Header.flagsAndFragmentOffset(s, ETH, Ipv4Header.FLAG_MORE_FRAGMENTS);
        fixIpv4Checksum();
        assertNotOurs(NotOursReason.IP_FRAGMENT);
        Ipv4Header.flagsAndFragmentOffset(s, ETH, 0);
        Ipv4Header.protocol(s, ETH, 6);
        fixIpv4Checksum();
        assertNotOurs(NotOursReason.NON_UDP);
    }

    @Test
    void shouldParseIpv4Options()
    {
        insertIpv4Options();
        assertEquals(FrameClass.ROCE, parse(), () -> frame.toString());
        assertEquals(28, frame.ipHeaderLength());
        assertEquals(UDP4 + 8, frame.udpOffset());
        assertEquals(16, frame.payloadLength());
    }

    @Test
    void shouldCountIpv4OptionsInTheHeaderChecksum()
    {
        insertIpv4Options();
        assertEquals(FrameClass.ROCE, parse(), () -> frame.toString());

        // a changed option byte in the last option word, the checksum left alone
        bytes[UDP4 + 7] = 0;
        assertMalformed(MalformedReason.BAD_IPV4_CHECKSUM);
        // an IHL pointing past the packet's end
        bytes[UDP4 + 7] = 1;
        bytes[ETH] = 0x4F;
        assertEquals(FrameClass.MALFORMED, parse(ETH + 59));
        assertEquals(MalformedReason.TRUNCATED_IP, frame.malformedReason());
    }

    /** Rebuilds the frame with 8 bytes of options (two NOP words) between IPv4 and UDP, checksum and ICRC fixed. */
    private void insertIpv4Options()
    {
        final byte[] withOptions = new byte[length + 8];
        System.arraycopy(bytes, 0, withOptions, 0, UDP4);
        System.arraycopy(bytes, UDP4, withOptions, UDP4 + 8, length - UDP4);
        java.util.Arrays.fill(withOptions, UDP4, UDP4 + 8, (byte)1);
        bytes = java.util.Arrays.copyOf(withOptions, 2048);
        s = MemorySegment.ofArray(bytes);
        length += 8;
        bytes[ETH] = 0x47;
        Ipv4Header.totalLength(s, ETH, length - ETH);
        fixIpv4Checksum();
        fixIcrc(4, 28);
    }

    @Test
    void shouldClassifyIpv6Layer()
    {
        writer.ipv6(RoceFrameWriterTest.V6_A_HIGH, RoceFrameWriterTest.V6_A_LOW, RoceFrameWriterTest.V6_B_HIGH,
            RoceFrameWriterTest.V6_B_LOW).ecn(3).flowLabel(0xFFFFF);
        write(9);
        assertEquals(FrameClass.ROCE, parse());
        assertEquals(6, frame.ipVersion());
        assertEquals(3, frame.ecn());
        assertEquals(0xFFFFF, frame.flowLabel());
        assertEquals(RoceFrameWriterTest.V6_B_LOW, frame.ipv6DestinationLow());
        assertEquals(9, frame.payloadLength());
        length = ETH + 39;
        assertMalformed(MalformedReason.TRUNCATED_IP);
        write(9);
        bytes[ETH] = 0x46;
        assertMalformed(MalformedReason.BAD_IP_VERSION);
        write(9);
        Ipv6Header.payloadLength(s, ETH, length - ETH - 40 + 1);
        assertMalformed(MalformedReason.TRUNCATED_IP);
        Ipv6Header.payloadLength(s, ETH, length - ETH - 40);
        Ipv6Header.nextHeader(s, ETH, 0); // hop-by-hop options
        assertNotOurs(NotOursReason.NON_UDP);
    }

    @Test
    void shouldClassifyUdpLayer()
    {
        Ipv4Header.totalLength(s, ETH, 24);
        fixIpv4Checksum();
        assertMalformed(MalformedReason.TRUNCATED_UDP);
        write(16);
        UdpHeader.destinationPort(s, UDP4, 4792);
        assertNotOurs(NotOursReason.OTHER_UDP_PORT);
        assertEquals(4792, frame.udpDestinationPort());
        UdpHeader.destinationPort(s, UDP4, 4791);
        UdpHeader.length(s, UDP4, UdpHeader.length(s, UDP4) - 4);
        assertMalformed(MalformedReason.BAD_UDP_LENGTH);
        assertTrue(frame.hasUdp());
        assertFalse(frame.hasBth());
        // UDP payload of 15 bytes: BTH and ICRC need 16
        write(0);
        final int udpLength = UdpHeader.LENGTH + 15;
        UdpHeader.length(s, UDP4, udpLength);
        Ipv4Header.totalLength(s, ETH, Ipv4Header.LENGTH + udpLength);
        fixIpv4Checksum();
        assertMalformed(MalformedReason.TRUNCATED_BTH);
    }

    @Test
    void shouldClassifyTransportLayer()
    {
        BaseTransportHeader.flags(s, BTH4, false, false, 0, 1);
        fixIcrc(4, 20);
        assertMalformed(MalformedReason.BAD_TVER);
        assertEquals(1, frame.tver());

        write(16);
        BaseTransportHeader.opcode(s, BTH4, 0x15);
        fixIcrc(4, 20);
        assertMalformed(MalformedReason.UNKNOWN_OPCODE);
        BaseTransportHeader.opcode(s, BTH4, 0xC3);
        fixIcrc(4, 20);
        assertMalformed(MalformedReason.UNKNOWN_OPCODE);
        assertEquals(0xC3, frame.opcode());

        // RDMA WRITE Only needs a 16-byte RETH: 16 bytes of payload fit, 12 do not
        write(12);
        BaseTransportHeader.opcode(s, BTH4, Opcode.RC_RDMA_WRITE_ONLY);
        fixIcrc(4, 20);
        assertMalformed(MalformedReason.TRUNCATED_EXTENSION_HEADER);
        write(16);
        BaseTransportHeader.opcode(s, BTH4, Opcode.RC_RDMA_WRITE_ONLY);
        fixIcrc(4, 20);
        assertEquals(FrameClass.ROCE, parse());
        assertEquals(0, frame.payloadLength());
        assertTrue(frame.hasReth());

        // pad count larger than the payload
        write(0);
        BaseTransportHeader.flags(s, BTH4, false, false, 3, 0);
        fixIcrc(4, 20);
        assertMalformed(MalformedReason.BAD_PAD_COUNT);
        // pad count on an opcode without payload
        writer.opcode(Opcode.RC_ACKNOWLEDGE).aeth(0x1F, 7);
        write(0);
        BaseTransportHeader.flags(s, BTH4, false, false, 1, 0);
        fixIcrc(4, 20);
        assertMalformed(MalformedReason.BAD_PAD_COUNT);
        // payload on an opcode without payload
        writer.opcode(Opcode.RC_SEND_ONLY);
        write(8);
        BaseTransportHeader.opcode(s, BTH4, Opcode.RC_ACKNOWLEDGE);
        fixIcrc(4, 20);
        assertMalformed(MalformedReason.BAD_PAYLOAD_LENGTH);
        assertTrue(frame.hasAeth());
    }

    @Test
    void shouldRejectPayloadNotMultipleOfFour()
    {
        // 18 bytes between BTH and ICRC: take 2 bytes off the end and shorten every length
        write(20);
        final int shorter = length - 2;
        System.arraycopy(bytes, length - 4, bytes, shorter - 4, 4);
        UdpHeader.length(s, UDP4, UdpHeader.length(s, UDP4) - 2);
        Ipv4Header.totalLength(s, ETH, Ipv4Header.totalLength(s, ETH) - 2);
        fixIpv4Checksum();
        length = shorter;
        fixIcrc(4, 20);
        assertMalformed(MalformedReason.BAD_PAYLOAD_LENGTH);
    }

    @Test
    void shouldReportBadIcrcAheadOfOtherTransportErrors()
    {
        bytes[BTH4 + 12 + 3] ^= 0x10;
        assertMalformed(MalformedReason.BAD_ICRC);
        assertFalse(frame.icrcValid());
        assertTrue(frame.icrcChecked());
        assertEquals(16, frame.payloadLength());
        write(16);
        BaseTransportHeader.opcode(s, BTH4, 0x15); // corrupted opcode, stale ICRC
        assertMalformed(MalformedReason.BAD_ICRC);
        assertEquals(0x15, frame.opcode());
    }

    @Test
    void shouldAcceptAnyIcrcWhenVerificationIsOff()
    {
        final RoceParser trusting = new RoceParser(OpcodeTable.ROCE_V2, counters, false);
        bytes[BTH4 + 12 + 3] ^= 0x10;
        assertEquals(FrameClass.ROCE, trusting.parse(s, 0, length, frame));
        assertFalse(frame.icrcChecked());
        assertFalse(frame.icrcValid());
        assertTrue(frame.hasIcrc());
    }

    @Test
    void shouldParseRawIpPackets()
    {
        final MemorySegment ip = MemorySegment.ofArray(java.util.Arrays.copyOfRange(bytes, ETH, length));
        assertEquals(FrameClass.ROCE, parser.parseIpPacket(ip, 0, (int)ip.byteSize(), frame));
        assertEquals(0, frame.ipOffset());
        assertEquals(16, frame.payloadLength());
        writer.ipv6(1, 2, 3, 4);
        write(3);
        final MemorySegment ip6 = MemorySegment.ofArray(java.util.Arrays.copyOfRange(bytes, ETH, length));
        assertEquals(FrameClass.ROCE, parser.parseIpPacket(ip6, 0, (int)ip6.byteSize(), frame));
        assertEquals(6, frame.ipVersion());
        assertEquals(FrameClass.MALFORMED, parser.parseIpPacket(ip6, 0, 0, frame));
        assertEquals(MalformedReason.TRUNCATED_IP, frame.malformedReason());
    }

    @Test
    void shouldLabelCounters()
    {
        assertEquals("roce", ParseCounters.label(ParseCounters.ROCE));
        assertEquals("not_ours", ParseCounters.label(ParseCounters.NOT_OURS));
        assertEquals("malformed_bad_icrc", ParseCounters.label(ParseCounters.slot(MalformedReason.BAD_ICRC)));
        assertEquals(2 + MalformedReason.values().length, ParseCounters.SLOT_COUNT);
        counters.increment(ParseCounters.slot(MalformedReason.BAD_TVER));
        assertEquals(1, counters.malformed());
        assertEquals(1, counters.total());
        counters.reset();
        assertEquals(0, counters.total());
    }

    @Test
    void shouldDescribeFrame()
    {
        parse();
        final String text = frame.toString();
        assertTrue(text.startsWith("RoceFrame{ROCE, IPv4{version=4, ihl=20"), text);
        assertTrue(text.contains("BTH{opcode=RC_SEND_ONLY(0x4)"), text);
        assertTrue(text.contains("payload=16B@54"), text);
        assertTrue(text.endsWith(" ok}"), text);
    }
}
