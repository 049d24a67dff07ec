package io.spraynic.datapath.wire;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every flyweight field round-trips, at an odd offset (unaligned), and lands on the wire big-endian where
 * the spec puts it.
 */
class HeaderFlyweightsTest
{
    private static final long AT = 3;

    private final MemorySegment s = MemorySegment.ofArray(new byte[256]);

    private String hex(final long offset, final int length)
    {
        return HexFormat.of().formatHex(s.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void shouldRoundTripEthernetHeaderWithVlanTag()
    {
        EthernetHeader.destinationMac(s, AT, 0x0102_0304_0506L);
        EthernetHeader.sourceMac(s, AT, 0xA1A2_A3A4_A5A6L);
        EthernetHeader.etherType(s, AT, EthernetHeader.ETHER_TYPE_VLAN);
        EthernetHeader.vlanTci(s, AT, EthernetHeader.tci(5, true, 0xABC));
        EthernetHeader.vlanEtherType(s, AT, EthernetHeader.ETHER_TYPE_IPV6);
        assertEquals(0x0102_0304_0506L, EthernetHeader.destinationMac(s, AT));
        assertEquals(0xA1A2_A3A4_A5A6L, EthernetHeader.sourceMac(s, AT));
        assertEquals(EthernetHeader.ETHER_TYPE_VLAN, EthernetHeader.etherType(s, AT));
        final int tci = EthernetHeader.vlanTci(s, AT);
        assertEquals(0xABC, EthernetHeader.vlanId(tci));
        assertEquals(5, EthernetHeader.vlanPriority(tci));
        assertEquals(EthernetHeader.ETHER_TYPE_IPV6, EthernetHeader.vlanEtherType(s, AT));
        assertEquals("010203040506a1a2a3a4a5a68100babc86dd", hex(AT, EthernetHeader.VLAN_LENGTH));
        assertEquals("Ethernet{dst=01:02:03:04:05:06, src=a1:a2:a3:a4:a5:a6, vlan=2748/pcp=5, type=0x86dd}",
            EthernetHeader.toString(s, AT));
    }

    @Test
    void shouldFindTheEthernetHeaderLengthAndPayloadTypeOfTaggedAndUntaggedFrames()
    {
        EthernetHeader.etherType(s, AT, EthernetHeader.ETHER_TYPE_IPV4);
        assertEquals(EthernetHeader.LENGTH, EthernetHeader.headerLength(s, AT, EthernetHeader.LENGTH));
        assertEquals(EthernetHeader.ETHER_TYPE_IPV4, EthernetHeader.payloadEtherType(s, AT, EthernetHeader.LENGTH));
        assertEquals(0, EthernetHeader.headerLength(s, AT, EthernetHeader.LENGTH - 1), "truncated");

        EthernetHeader.etherType(s, AT, EthernetHeader.ETHER_TYPE_VLAN);
        EthernetHeader.vlanEtherType(s, AT, EthernetHeader.ETHER_TYPE_IPV6);
        assertEquals(EthernetHeader.VLAN_LENGTH, EthernetHeader.headerLength(s, AT, EthernetHeader.VLAN_LENGTH));
        assertEquals(EthernetHeader.ETHER_TYPE_IPV6, EthernetHeader.payloadEtherType(s, AT, EthernetHeader.VLAN_LENGTH));
        assertEquals(0, EthernetHeader.headerLength(s, AT, EthernetHeader.VLAN_LENGTH - 1), "a tag cut short");
    }

    @Test
    void shouldRoundTripIpv4HeaderAndChecksum()
    {
        Ipv4Header.versionAndHeaderLength(s, AT, 24);
        Ipv4Header.tos(s, AT, (46 << 2) | 1);
        Ipv4Header.ecn(s, AT, 3);
        Ipv4Header.totalLength(s, AT, 0x1234);
        Ipv4Header.identification(s, AT, 0xBEEF);
        Ipv4Header.flagsAndFragmentOffset(s, AT, Ipv4Header.FLAG_DONT_FRAGMENT);
        Ipv4Header.ttl(s, AT, 63);
        Ipv4Header.protocol(s, AT, Ipv4Header.PROTOCOL_UDP);
        Ipv4Header.sourceAddress(s, AT, 0x0A000001);
        Ipv4Header.destinationAddress(s, AT, 0xC0A80102);
        s.set(Wire.INT_BE, AT + 20, 0x01010100); // NOP NOP NOP EOL
        Ipv4Header.updateChecksum(s, AT, 24);
        assertEquals(4, Ipv4Header.version(s, AT));
        assertEquals(24, Ipv4Header.headerLength(s, AT));
        assertEquals(46, Ipv4Header.dscp(s, AT));
        assertEquals(3, Ipv4Header.ecn(s, AT));
        assertEquals(0x1234, Ipv4Header.totalLength(s, AT));
        assertEquals(0xBEEF, Ipv4Header.identification(s, AT));
        assertFalse(Ipv4Header.isFragment(s, AT));
        assertEquals(63, Ipv4Header.ttl(s, AT));
        assertEquals(17, Ipv4Header.protocol(s, AT));
        assertEquals(0x0A000001, Ipv4Header.sourceAddress(s, AT));
        assertEquals(0xC0A80102, Ipv4Header.destinationAddress(s, AT));
        assertTrue(Ipv4Header.isChecksumValid(s, AT, 24));
        assertEquals(Ipv4Header.checksum(s, AT), Ipv4Header.computeChecksum(s, AT, 24));
        Ipv4Header.ttl(s, AT, 62);
        assertFalse(Ipv4Header.isChecksumValid(s, AT, 24));
        Ipv4Header.flagsAndFragmentOffset(s, AT, Ipv4Header.FLAG_MORE_FRAGMENTS);
        assertTrue(Ipv4Header.isFragment(s, AT));
        Ipv4Header.flagsAndFragmentOffset(s, AT, 0x0001);
        assertTrue(Ipv4Header.isFragment(s, AT));
    }

    @Test
    void shouldWriteAWholeIpv4HeaderAsTheWellKnownExample()
    {
        // the same header as below, written whole over bytes that hold garbage: every field set, checksum b861
        s.fill((byte)0xA5);
        Ipv4Header.write(s, AT, 0, 0x73, 0x1_0000, 0x40, Ipv4Header.PROTOCOL_UDP, 0xC0A80001, 0xC0A800C7);
        assertEquals("45000073000040004011b861c0a80001c0a800c7", hex(AT, Ipv4Header.LENGTH));
        assertEquals("a5", hex(AT + Ipv4Header.LENGTH, 1), "nothing written past the header");
        assertEquals("a5", hex(AT - 1, 1));
    }

    @Test
    void shouldComputeIpv4ChecksumOfRfc1071Example()
    {
        // a well-known header: 4500 0073 0000 4000 4011 [b861] c0a8 0001 c0a8 00c7
        final byte[] header = HexFormat.of().parseHex("450000730000400040110000c0a80001c0a800c7");
        final MemorySegment h = MemorySegment.ofArray(header);
        assertEquals(0xB861, Ipv4Header.computeChecksum(h, 0, 20));
        Ipv4Header.updateChecksum(h, 0, 20);
        assertEquals("45000073000040004011b861c0a80001c0a800c7", HexFormat.of().formatHex(header));
        assertTrue(Ipv4Header.isChecksumValid(h, 0, 20));
    }

    @Test
    void shouldRoundTripIpv6Header()
    {
        Ipv6Header.versionClassFlow(s, AT, (26 << 2) | 2, 0xFEDCB);
        Ipv6Header.ecn(s, AT, 3);
        Ipv6Header.payloadLength(s, AT, 1500);
        Ipv6Header.nextHeader(s, AT, Ipv6Header.NEXT_HEADER_UDP);
        Ipv6Header.hopLimit(s, AT, 255);
        Ipv6Header.sourceAddress(s, AT, 0xFE80_0000_0000_0000L, 0x0000_0000_0000_0001L);
        Ipv6Header.destinationAddress(s, AT, 0x2001_0DB8_0000_0000L, 0x0000_0000_0001_0000L);
        assertEquals(6, Ipv6Header.version(s, AT));
        assertEquals((26 << 2) | 3, Ipv6Header.trafficClass(s, AT));
        assertEquals(26, Ipv6Header.dscp(s, AT));
        assertEquals(3, Ipv6Header.ecn(s, AT));
        assertEquals(0xFEDCB, Ipv6Header.flowLabel(s, AT));
        assertEquals(1500, Ipv6Header.payloadLength(s, AT));
        assertEquals(17, Ipv6Header.nextHeader(s, AT));
        assertEquals(255, Ipv6Header.hopLimit(s, AT));
        assertEquals(0xFE80_0000_0000_0000L, Ipv6Header.sourceAddressHigh(s, AT));
        assertEquals(1L, Ipv6Header.sourceAddressLow(s, AT));
        assertEquals(0x2001_0DB8_0000_0000L, Ipv6Header.destinationAddressHigh(s, AT));
        assertEquals(0x0000_0000_0001_0000L, Ipv6Header.destinationAddressLow(s, AT));
        assertEquals("66bfedcb05dc11ff", hex(AT, 8));
        assertEquals("IPv6{version=6, dscp=26, ecn=3, flowLabel=0xfedcb, payloadLength=1500, nextHeader=17, " +
            "hopLimit=255, src=fe80::1, dst=2001:db8::1:0}", Ipv6Header.toString(s, AT));
    }

    @Test
    void shouldWriteAWholeIpv6HeaderAsTheFieldsDo()
    {
        Ipv6Header.versionClassFlow(s, AT, (26 << 2) | 2, 0xFEDCB);
        Ipv6Header.payloadLength(s, AT, 1500);
        Ipv6Header.nextHeader(s, AT, Ipv6Header.NEXT_HEADER_UDP);
        Ipv6Header.hopLimit(s, AT, 64);
        Ipv6Header.sourceAddress(s, AT, 0xFE80_0000_0000_0000L, 1L);
        Ipv6Header.destinationAddress(s, AT, 0x2001_0DB8_0000_0000L, 0x1_0000L);
        final String byFields = hex(AT, Ipv6Header.LENGTH);
        s.asSlice(AT, Ipv6Header.LENGTH).fill((byte)0x5A); // whatever was there before
        Ipv6Header.write(s, AT, (26 << 2) | 2, 0xFEDCB, 1500, Ipv6Header.NEXT_HEADER_UDP, 64, 0xFE80_0000_0000_0000L, 1L,
            0x2001_0DB8_0000_0000L, 0x1_0000L);
        assertEquals(byFields, hex(AT, Ipv6Header.LENGTH));
    }

    @Test
    void shouldFormatAddresses()
    {
        assertEquals("::", Wire.ipv6ToString(0, 0));
        assertEquals("::1", Wire.ipv6ToString(0, 1));
        assertEquals("1::", Wire.ipv6ToString(0x0001_0000_0000_0000L, 0));
        assertEquals("2001:db8:0:1:1:1:1:1", Wire.ipv6ToString(0x2001_0DB8_0000_0001L, 0x0001_0001_0001_0001L));
        assertEquals("2001:0:0:1::1", Wire.ipv6ToString(0x2001_0000_0000_0001L, 0x0000_0000_0000_0001L));
        assertEquals("fd00:0:0:1::abcd", Wire.ipv6ToString(0xFD00_0000_0000_0001L, 0xABCDL));
        assertEquals("192.168.1.255", Wire.ipv4ToString(0xC0A801FF));
        assertEquals("02:00:00:00:00:0a", Wire.macToString(0x02_00_00_00_00_0AL));
    }

    @Test
    void shouldRoundTripUdpHeader()
    {
        UdpHeader.sourcePort(s, AT, 0xFFFF);
        UdpHeader.destinationPort(s, AT, UdpHeader.ROCE_V2_PORT);
        UdpHeader.length(s, AT, 0x0400);
        UdpHeader.checksum(s, AT, 0xABCD);
        assertEquals(0xFFFF, UdpHeader.sourcePort(s, AT));
        assertEquals(4791, UdpHeader.destinationPort(s, AT));
        assertEquals(0x0400, UdpHeader.length(s, AT));
        assertEquals(0xABCD, UdpHeader.checksum(s, AT));
        assertEquals("ffff12b70400abcd", hex(AT, UdpHeader.LENGTH));
    }

    @Test
    void shouldRoundTripBaseTransportHeader()
    {
        BaseTransportHeader.write(s, AT, Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, true, true, 3, 0x8001, 0xABCDEF,
            true, 0xFFFFFF);
        assertEquals("0bf08001" + "00abcdef" + "80ffffff", hex(AT, BaseTransportHeader.LENGTH));
        assertEquals(0x0B, BaseTransportHeader.opcode(s, AT));
        assertTrue(BaseTransportHeader.solicited(s, AT));
        assertTrue(BaseTransportHeader.migReq(s, AT));
        assertEquals(3, BaseTransportHeader.padCount(s, AT));
        assertEquals(0, BaseTransportHeader.tver(s, AT));
        assertEquals(0x8001, BaseTransportHeader.pkey(s, AT));
        assertEquals(0, BaseTransportHeader.resv8a(s, AT));
        assertEquals(0xABCDEF, BaseTransportHeader.destQp(s, AT));
        assertTrue(BaseTransportHeader.ackReq(s, AT));
        assertEquals(0, BaseTransportHeader.resv7(s, AT));
        assertEquals(0xFFFFFF, BaseTransportHeader.psn(s, AT));

        BaseTransportHeader.opcode(s, AT, Opcode.CNP);
        BaseTransportHeader.flags(s, AT, false, false, 0, 15);
        BaseTransportHeader.pkey(s, AT, 0xFFFF);
        BaseTransportHeader.resv8a(s, AT, BaseTransportHeader.BECN_FLAG);
        BaseTransportHeader.destQp(s, AT, 1);
        BaseTransportHeader.ackReq(s, AT, false);
        BaseTransportHeader.psn(s, AT, 0x123456);
        assertEquals("810fffff" + "40000001" + "00123456", hex(AT, BaseTransportHeader.LENGTH));
        assertEquals(15, BaseTransportHeader.tver(s, AT));
        assertEquals(0x40, BaseTransportHeader.resv8a(s, AT));
        assertEquals(1, BaseTransportHeader.destQp(s, AT));
        assertEquals("BTH{opcode=CNP(0x81), se=false, m=false, pad=0, tver=15, pkey=0xffff, resv8a=0x40, " +
            "destQp=0x1, ackReq=false, psn=1193046}", BaseTransportHeader.toString(s, AT));
    }

    @Test
    void shouldRoundTripExtensionHeaders()
    {
        RdmaExtendedTransportHeader.virtualAddress(s, AT, 0xFFFF_8000_1234_5678L);
        RdmaExtendedTransportHeader.rkey(s, AT, 0xDEADBEEF);
        RdmaExtendedTransportHeader.dmaLength(s, AT, 0x8000_0000);
        assertEquals(0xFFFF_8000_1234_5678L, RdmaExtendedTransportHeader.virtualAddress(s, AT));
        assertEquals(0xDEADBEEF, RdmaExtendedTransportHeader.rkey(s, AT));
        assertEquals(0x8000_0000, RdmaExtendedTransportHeader.dmaLength(s, AT));
        assertEquals("ffff800012345678deadbeef80000000", hex(AT, RdmaExtendedTransportHeader.LENGTH));
        assertEquals("RETH{va=0xffff800012345678, rkey=0xdeadbeef, dmaLength=2147483648}",
            RdmaExtendedTransportHeader.toString(s, AT));

        AckExtendedTransportHeader.syndrome(s, AT,
            AckExtendedTransportHeader.syndrome(AckExtendedTransportHeader.KIND_NAK,
                AckExtendedTransportHeader.NAK_REMOTE_ACCESS_ERROR));
        AckExtendedTransportHeader.msn(s, AT, 0xFEDCBA);
        assertEquals(0x62, AckExtendedTransportHeader.syndrome(s, AT));
        assertEquals(AckExtendedTransportHeader.KIND_NAK, AckExtendedTransportHeader.kind(0x62));
        assertEquals(2, AckExtendedTransportHeader.value(0x62));
        assertEquals(0xFEDCBA, AckExtendedTransportHeader.msn(s, AT));
        assertEquals("62fedcba", hex(AT, AckExtendedTransportHeader.LENGTH));
        assertEquals("AETH{syndrome=0x62 (NAK code=2), msn=16702650}", AckExtendedTransportHeader.toString(s, AT));

        ImmediateDataHeader.immediateData(s, AT, 0xCAFEBABE);
        assertEquals(0xCAFEBABE, ImmediateDataHeader.immediateData(s, AT));
        assertEquals("cafebabe", hex(AT, ImmediateDataHeader.LENGTH));

        InvalidateExtendedTransportHeader.rkey(s, AT, 0x01020304);
        assertEquals(0x01020304, InvalidateExtendedTransportHeader.rkey(s, AT));
        assertEquals("01020304", hex(AT, InvalidateExtendedTransportHeader.LENGTH));

        DatagramExtendedTransportHeader.qkey(s, AT, 0x80010000);
        s.set(ValueLayout.JAVA_BYTE, AT + 4, (byte)0x55);
        DatagramExtendedTransportHeader.sourceQp(s, AT, 0xABCDEF);
        assertEquals(0x80010000, DatagramExtendedTransportHeader.qkey(s, AT));
        assertEquals(0xABCDEF, DatagramExtendedTransportHeader.sourceQp(s, AT));
        assertEquals("8001000000abcdef", hex(AT, DatagramExtendedTransportHeader.LENGTH));

        AtomicExtendedTransportHeader.virtualAddress(s, AT, 0x1000);
        AtomicExtendedTransportHeader.rkey(s, AT, 0x55);
        AtomicExtendedTransportHeader.swapAddData(s, AT, -1L);
        AtomicExtendedTransportHeader.compareData(s, AT, 0x0102030405060708L);
        assertEquals(0x1000, AtomicExtendedTransportHeader.virtualAddress(s, AT));
        assertEquals(0x55, AtomicExtendedTransportHeader.rkey(s, AT));
        assertEquals(-1L, AtomicExtendedTransportHeader.swapAddData(s, AT));
        assertEquals(0x0102030405060708L, AtomicExtendedTransportHeader.compareData(s, AT));
        assertEquals("0000000000001000" + "00000055" + "ffffffffffffffff" + "0102030405060708",
            hex(AT, AtomicExtendedTransportHeader.LENGTH));

        AtomicAckExtendedTransportHeader.originalData(s, AT, 0x1122334455667788L);
        assertEquals(0x1122334455667788L, AtomicAckExtendedTransportHeader.originalData(s, AT));

        s.asSlice(AT, 16).fill((byte)1);
        assertFalse(CongestionNotificationPacket.isReservedZero(s, AT));
        CongestionNotificationPacket.clearReserved(s, AT);
        assertTrue(CongestionNotificationPacket.isReservedZero(s, AT));
    }

    @Test
    void shouldDescribeOpcodeTable()
    {
        final OpcodeTable t = OpcodeTable.ROCE_V2;
        assertEquals(16, t.extensionHeadersLength(Opcode.RC_RDMA_WRITE_FIRST));
        assertEquals(20, t.extensionHeadersLength(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE));
        assertEquals(4, t.extensionHeadersLength(Opcode.RC_ACKNOWLEDGE));
        assertEquals(12, t.extensionHeadersLength(Opcode.RC_ATOMIC_ACKNOWLEDGE));
        assertEquals(28, t.extensionHeadersLength(Opcode.RC_FETCH_ADD));
        assertEquals(12, t.extensionHeadersLength(Opcode.UD_SEND_ONLY_WITH_IMMEDIATE));
        assertEquals(16, t.extensionHeadersLength(Opcode.CNP));
        assertEquals(0, t.extensionHeadersLength(Opcode.RC_SEND_MIDDLE));
        assertFalse(t.isRegistered(0x15));
        assertFalse(t.isRegistered(Opcode.RD | Opcode.SEND_ONLY));
        assertFalse(t.isRegistered(0xC0));
        assertTrue(t.withManufacturerOpcode(0xC0, 16, true).isRegistered(0xC0));
        assertEquals(16, t.withManufacturerOpcode(0xC0, 16, true).extensionHeadersLength(0xC0));
        assertFalse(t.isRegistered(0xC0), "tables are immutable");
        int registered = 0;
        for (int op = 0; op < 256; op++)
        {
            registered += t.isRegistered(op) ? 1 : 0;
        }
        assertEquals(23 + 12 + 2 + 1, registered);
        assertEquals("RC_SEND_ONLY", Opcode.name(Opcode.RC_SEND_ONLY));
        assertEquals("UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", Opcode.name(Opcode.UC | Opcode.RDMA_WRITE_ONLY_WITH_IMMEDIATE));
        assertEquals("UD_SEND_ONLY_WITH_IMMEDIATE", Opcode.name(Opcode.UD_SEND_ONLY_WITH_IMMEDIATE));
        assertEquals("CNP", Opcode.name(0x81));
        assertEquals("MANUFACTURER_0xc5", Opcode.name(0xC5));
        assertEquals("UNKNOWN_0x80", Opcode.name(0x80));
    }
}
