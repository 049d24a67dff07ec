package io.spraynic.datapath.wire;

import io.spraynic.datapath.capture.CapturedFrame;
import io.spraynic.datapath.capture.LinkType;
import io.spraynic.datapath.capture.PcapReader;
import io.spraynic.datapath.capture.PcapWriter;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RoceFrameWriterTest
{
    static final long MAC_A = 0x02_00_00_00_00_0AL;
    static final long MAC_B = 0x02_00_00_00_00_0BL;
    static final int V4_A = 0xC0A8010A;
    static final int V4_B = 0xC0A80114;
    static final long V6_A_HIGH = 0xFD00_0000_0000_0000L;
    static final long V6_A_LOW = 0x10L;
    static final long V6_B_HIGH = 0xFD00_0000_0000_0001L;
    static final long V6_B_LOW = 0xABCDL;

    static final int[] STANDARD_OPCODES = {
        Opcode.RC_SEND_FIRST, Opcode.RC_SEND_MIDDLE, Opcode.RC_SEND_LAST, Opcode.RC_SEND_LAST_WITH_IMMEDIATE,
        Opcode.RC_SEND_ONLY, Opcode.RC_SEND_ONLY_WITH_IMMEDIATE, Opcode.RC_RDMA_WRITE_FIRST,
        Opcode.RC_RDMA_WRITE_MIDDLE, Opcode.RC_RDMA_WRITE_LAST, Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE,
        Opcode.RC_RDMA_WRITE_ONLY, Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, Opcode.RC_RDMA_READ_REQUEST,
        Opcode.RC_RDMA_READ_RESPONSE_FIRST, Opcode.RC_RDMA_READ_RESPONSE_MIDDLE, Opcode.RC_RDMA_READ_RESPONSE_LAST,
        Opcode.RC_RDMA_READ_RESPONSE_ONLY, Opcode.RC_ACKNOWLEDGE, Opcode.RC_ATOMIC_ACKNOWLEDGE,
        Opcode.RC_COMPARE_SWAP, Opcode.RC_FETCH_ADD, Opcode.RC_SEND_LAST_WITH_INVALIDATE,
        Opcode.RC_SEND_ONLY_WITH_INVALIDATE, Opcode.UC | Opcode.SEND_ONLY, Opcode.UC | Opcode.RDMA_WRITE_ONLY,
        Opcode.UC | Opcode.RDMA_WRITE_ONLY_WITH_IMMEDIATE, Opcode.UD_SEND_ONLY, Opcode.UD_SEND_ONLY_WITH_IMMEDIATE,
        Opcode.CNP,
    };

    @TempDir
    Path dir;

    /** One frame's intended fields. */
    record Spec(int index, int opcode, int ipVersion, boolean vlan, int ecn, int sourcePort, int psn, int destQp,
        boolean solicited, boolean ackReq, int payloadLength)
    {
        boolean hasPayload()
        {
            return (OpcodeTable.ROCE_V2.entry(opcode) & OpcodeTable.HAS_PAYLOAD) != 0;
        }
    }

    static List<Spec> specs()
    {
        final List<Spec> specs = new ArrayList<>();
        final int[] psns = {0, 1, 0x7FFFFF, 0xFFFFFE, 0xFFFFFF};
        int index = 0;
        for (final int opcode : STANDARD_OPCODES)
        {
            for (int variant = 0; variant < 4; variant++)
            {
                final Spec probe = new Spec(0, opcode, 4, false, 0, 0, 0, 0, false, false, 0);
                final int payload = probe.hasPayload() ? new int[] {0, 1, 2, 3, 7, 1024}[(index + variant) % 6] : 0;
                specs.add(new Spec(index, opcode, variant % 2 == 0 ? 4 : 6, variant >= 2, (index + variant) & 3,
                    0xC000 + index * 7 + variant, psns[(index + variant) % psns.length], 0x10000 + index * 31 + variant,
                    (variant & 1) != 0, variant == 3, payload));
                index++;
            }
        }
        return specs;
    }

    static RoceFrameWriter configure(final RoceFrameWriter writer, final Spec spec)
    {
        writer.ethernet(MAC_A, MAC_B).vlan(spec.vlan() ? EthernetHeader.tci(3, false, 100 + spec.index()) : -1);
        if (spec.ipVersion() == 4)
        {
            writer.ipv4(V4_A, V4_B);
        }
        else
        {
            writer.ipv6(V6_A_HIGH, V6_A_LOW, V6_B_HIGH, V6_B_LOW).flowLabel(0x12345 + spec.index());
        }
        final int opcode = spec.opcode();
        writer.dscp(26).ecn(spec.ecn()).udpSourcePort(spec.sourcePort()).opcode(opcode)
            .solicited(spec.solicited()).migReq(false).pkey(0xFFFF).destQp(spec.destQp()).ackReq(spec.ackReq())
            .psn(spec.psn())
            .reth(0xFFFF_8000_0000_0000L + spec.index(), 0xA0000000 + spec.index(), spec.payloadLength() + 4096)
            .aeth(AckExtendedTransportHeader.syndrome(AckExtendedTransportHeader.KIND_ACK, 31), 0x00ABCD + spec.index())
            .immediate(0xCAFE0000 + spec.index()).ieth(0x1234).deth(0x80010000, 0x20 + spec.index())
            .atomic(0x1000, 0x55, 7, 9).atomicAck(0x42)
            .resv8a(opcode == Opcode.CNP ? BaseTransportHeader.BECN_FLAG : 0);
        return writer;
    }

    static byte[] payload(final int length, final int seed)
    {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)(seed * 17 + i * 31);
        }
        return bytes;
    }

    @Test
    void shouldWriteFramesThatParseBackToTheIntendedFields()
    {
        final RoceFrameWriter writer = new RoceFrameWriter();
        final RoceParser parser = new RoceParser(new ParseCounters());
        final RoceFrame frame = new RoceFrame();
        final MemorySegment buffer = MemorySegment.ofArray(new byte[4096]);
        for (final Spec spec : specs())
        {
            configure(writer, spec);
            final byte[] payload = payload(spec.payloadLength(), spec.index());
            final int length = writer.writeFrame(buffer, 3, MemorySegment.ofArray(payload), 0, payload.length);
            assertEquals(writer.frameLength(payload.length), length, spec.toString());
            // parse from a segment sliced exactly to the frame
            final MemorySegment exact = buffer.asSlice(3, length);
            assertEquals(FrameClass.ROCE, parser.parse(exact, 0, length, frame), () -> spec + " " + frame);
            assertEquals(spec.ipVersion(), frame.ipVersion());
            assertEquals(spec.ecn(), frame.ecn());
            assertEquals(26, frame.dscp());
            assertEquals(spec.vlan() ? 100 + spec.index() : -1, spec.vlan() ? frame.vlanTci() & 0xFFF : frame.vlanTci());
            assertEquals(spec.sourcePort(), frame.udpSourcePort());
            assertEquals(UdpHeader.ROCE_V2_PORT, frame.udpDestinationPort());
            assertEquals(spec.opcode(), frame.opcode());
            assertEquals(spec.solicited(), frame.solicited());
            assertEquals(spec.ackReq(), frame.ackReq());
            assertEquals(spec.psn(), frame.psn());
            assertEquals(spec.destQp(), frame.destQp());
            assertEquals(0xFFFF, frame.pkey());
            assertEquals(0, frame.tver());
            assertEquals((-spec.payloadLength()) & 3, frame.padCount());
            assertEquals(spec.payloadLength(), frame.payloadLength());
            assertArrayEquals(payload, exact.asSlice(frame.payloadOffset(), frame.payloadLength())
                .toArray(ValueLayout.JAVA_BYTE));
            final int entry = OpcodeTable.ROCE_V2.entry(spec.opcode());
            assertEquals((entry & OpcodeTable.HAS_RETH) != 0, frame.hasReth());
            if (frame.hasReth())
            {
                assertEquals(0xFFFF_8000_0000_0000L + spec.index(), frame.rethVirtualAddress());
                assertEquals(0xA0000000 + spec.index(), frame.rethRkey());
                assertEquals(spec.payloadLength() + 4096, frame.rethDmaLength());
            }
            assertEquals((entry & OpcodeTable.HAS_AETH) != 0, frame.hasAeth());
            if (frame.hasAeth())
            {
                assertEquals(0x1F, frame.aethSyndrome());
                assertEquals(0x00ABCD + spec.index(), frame.aethMsn());
            }
            assertEquals((entry & OpcodeTable.HAS_IMMDT) != 0, frame.hasImmediate());
            if (frame.hasImmediate())
            {
                assertEquals(0xCAFE0000 + spec.index(), frame.immediateData());
            }
            if (frame.dethOffset() >= 0)
            {
                assertEquals(0x80010000, DatagramExtendedTransportHeader.qkey(exact, frame.dethOffset()));
                assertEquals(0x20 + spec.index(), DatagramExtendedTransportHeader.sourceQp(exact, frame.dethOffset()));
            }
            if (frame.atomicEthOffset() >= 0)
            {
                assertEquals(7, AtomicExtendedTransportHeader.swapAddData(exact, frame.atomicEthOffset()));
                assertEquals(9, AtomicExtendedTransportHeader.compareData(exact, frame.atomicEthOffset()));
            }
            if (frame.atomicAckEthOffset() >= 0)
            {
                assertEquals(0x42, AtomicAckExtendedTransportHeader.originalData(exact, frame.atomicAckEthOffset()));
            }
            if (frame.iethOffset() >= 0)
            {
                assertEquals(0x1234, InvalidateExtendedTransportHeader.rkey(exact, frame.iethOffset()));
            }
            if (spec.opcode() == Opcode.CNP)
            {
                assertTrue(CongestionNotificationPacket.isReservedZero(exact, frame.cnpOffset()));
                assertEquals(BaseTransportHeader.BECN_FLAG, frame.resv8a());
            }
            assertTrue(frame.icrcValid());
            if (spec.ipVersion() == 4)
            {
                assertTrue(Ipv4Header.isChecksumValid(exact, frame.ipOffset(), 20));
                assertEquals(0, frame.udpChecksum());
                assertEquals(Ipv4Header.FLAG_DONT_FRAGMENT, Ipv4Header.flagsAndFragmentOffset(exact, frame.ipOffset()));
            }
            else
            {
                assertEquals(0x12345 + spec.index(), frame.flowLabel());
                assertEquals(frame.udpChecksum(), UdpHeader.computeIpv6Checksum(exact, frame.ipOffset(),
                    frame.udpOffset(), frame.udpLength()));
            }
            assertTrue(length >= EthernetHeader.MIN_FRAME_LENGTH);
        }
    }

    static Path resource(final String name) throws URISyntaxException
    {
        return Path.of(Objects.requireNonNull(RoceFrameWriterTest.class.getResource("/wire/" + name)).toURI());
    }

    @Test
    void shouldProduceFramesByteIdenticalToScapy() throws Exception
    {
        final List<CapturedFrame> vectors = PcapReader.readAll(resource("roce_vectors.pcap"));
        final RoceFrameWriter writer = new RoceFrameWriter().minimumFrameLength(0).ethernet(MAC_A, MAC_B)
            .ipv4(V4_A, V4_B).ttl(64).ipv4Identification(0x1234);
        final MemorySegment buffer = MemorySegment.ofArray(new byte[2048]);

        // vector 0: RC SEND Only, 3 bytes, PSN 0xFFFFFF, ack request
        writer.udpSourcePort(49152).opcode(Opcode.RC_SEND_ONLY).destQp(0x123).psn(0xFFFFFF).ackReq(true);
        assertFrame(vectors.get(0), writer, buffer, payloadOf(3, 1));

        // vector 1: RC SEND First, 256 bytes, DSCP 26 ECT(0)
        writer.ipv4Identification(0x1234).udpSourcePort(50000).dscp(26).ecn(2).opcode(Opcode.RC_SEND_FIRST)
            .destQp(0xABCDEF).psn(0xFFFFFE).ackReq(false);
        assertFrame(vectors.get(1), writer, buffer, payloadOf(256, 1));

        // vector 3: RDMA WRITE Only with Immediate, 5 bytes, solicited
        writer.ipv4Identification(0x1234).udpSourcePort(49152).dscp(0).ecn(0)
            .opcode(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE).solicited(true).destQp(0x22).psn(1)
            .reth(0x7F00_DEAD_BEEFL, 0xFFFFFFFF, 5).immediate(0xCAFEBABE);
        assertFrame(vectors.get(3), writer, buffer, payloadOf(5, 3));

        // vector 5: Acknowledge
        writer.ipv4Identification(0x1234).opcode(Opcode.RC_ACKNOWLEDGE).solicited(false).destQp(0x44).psn(0xFFFFFF)
            .aeth(0x1F, 0xABCDEF);
        assertFrame(vectors.get(5), writer, buffer, new byte[0]);

        // vector 8: CNP with BECN, CE-marked
        writer.ipv4Identification(0x1234).ecn(3).opcode(Opcode.CNP).destQp(0x77).psn(0)
            .resv8a(BaseTransportHeader.BECN_FLAG);
        assertFrame(vectors.get(8), writer, buffer, new byte[0]);

        // vector 9: VLAN 100 priority 3, RC SEND Middle
        writer.ipv4Identification(0x1234).ecn(0).resv8a(0).vlan(EthernetHeader.tci(3, false, 100))
            .opcode(Opcode.RC_SEND_MIDDLE).destQp(0x88).psn(0x7FFFFF);
        assertFrame(vectors.get(9), writer, buffer, payloadOf(64, 1));

        // vector 12: IPv6, CE, DSCP 26, flow label, 6 bytes: scapy computed the UDP checksum, so do we
        writer.vlan(-1).ipv6(V6_A_HIGH, V6_A_LOW, V6_B_HIGH, V6_B_LOW).dscp(26).ecn(3).flowLabel(0xABCDE)
            .udpSourcePort(61000).opcode(Opcode.RC_SEND_ONLY).destQp(0xBB).psn(0xFFFFFD);
        assertFrame(vectors.get(12), writer, buffer, payloadOf(6, 9));

        // vector 14: IPv6 NAK
        writer.dscp(0).ecn(0).flowLabel(0).udpSourcePort(49152).opcode(Opcode.RC_ACKNOWLEDGE).destQp(0xDD).psn(5)
            .aeth(0x60, 2);
        assertFrame(vectors.get(14), writer, buffer, new byte[0]);
    }

    /** The generator's payload_of(n, seed). */
    static byte[] payloadOf(final int length, final int seed)
    {
        final byte[] bytes = new byte[length];
        for (int i = 0; i < length; i++)
        {
            bytes[i] = (byte)(seed + i * 13);
        }
        return bytes;
    }

    private static void assertFrame(final CapturedFrame expected, final RoceFrameWriter writer,
        final MemorySegment buffer, final byte[] payload)
    {
        final int length = writer.writeFrame(buffer, 0, MemorySegment.ofArray(payload), 0, payload.length);
        assertEquals(java.util.HexFormat.of().formatHex(expected.data()),
            java.util.HexFormat.of().formatHex(buffer.asSlice(0, length).toArray(ValueLayout.JAVA_BYTE)),
            "vector " + expected.index());
    }

    @Test
    void shouldPadShortFramesToEthernetMinimum()
    {
        final RoceFrameWriter writer = new RoceFrameWriter().ethernet(MAC_A, MAC_B).ipv4(V4_A, V4_B)
            .opcode(Opcode.RC_SEND_ONLY);
        final MemorySegment buffer = MemorySegment.ofArray(new byte[128]);
        buffer.fill((byte)0x77);
        assertEquals(60, writer.writeFrame(buffer, 0, 0));
        assertEquals(0, buffer.get(ValueLayout.JAVA_BYTE, 58));
        assertEquals(0, buffer.get(ValueLayout.JAVA_BYTE, 59));
        assertEquals(0x77, buffer.get(ValueLayout.JAVA_BYTE, 60));
        final RoceFrame frame = new RoceFrame();
        assertEquals(FrameClass.ROCE, new RoceParser(new ParseCounters()).parse(buffer, 0, 60, frame));
        assertEquals(0, frame.payloadLength());
        assertEquals(58, writer.minimumFrameLength(0).writeFrame(buffer, 0, 0));
    }

    @Test
    void shouldRejectUnregisteredOpcodeAndPayloadOnOpcodeWithoutPayload()
    {
        final RoceFrameWriter writer = new RoceFrameWriter();
        final MemorySegment buffer = MemorySegment.ofArray(new byte[256]);
        assertThrows(IllegalArgumentException.class, () -> writer.opcode(0x15).writeFrame(buffer, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> writer.opcode(Opcode.RC_ACKNOWLEDGE).writeFrame(buffer, 0, 4));
        assertThrows(IllegalArgumentException.class, () -> writer.opcode(Opcode.RC_SEND_ONLY).writeFrame(buffer, 0, 65_500));
    }

    @Test
    void shouldWriteManufacturerOpcodeAroundCallersHeader()
    {
        final OpcodeTable table = OpcodeTable.ROCE_V2.withManufacturerOpcode(0xC1, 8, true);
        final RoceFrameWriter writer = new RoceFrameWriter(table).ethernet(MAC_A, MAC_B).ipv4(V4_A, V4_B)
            .opcode(0xC1).psn(9);
        final MemorySegment buffer = MemorySegment.ofArray(new byte[256]);
        final int custom = EthernetHeader.LENGTH + Ipv4Header.LENGTH + UdpHeader.LENGTH + BaseTransportHeader.LENGTH;
        assertEquals(custom + 8, writer.payloadOffset());
        buffer.set(Wire.LONG_BE, custom, 0x0123_4567_89AB_CDEFL);
        final int length = writer.writeFrame(buffer, 0, MemorySegment.ofArray(payloadOf(10, 2)), 0, 10);
        final RoceFrame frame = new RoceFrame();
        assertEquals(FrameClass.ROCE, new RoceParser(table, new ParseCounters(), true).parse(buffer, 0, length, frame));
        assertEquals(custom, frame.customHeaderOffset());
        assertEquals(8, frame.customHeaderLength());
        assertEquals(0x0123_4567_89AB_CDEFL, buffer.get(Wire.LONG_BE, frame.customHeaderOffset()));
        assertEquals(10, frame.payloadLength());
        final RoceFrame standard = new RoceFrame();
        assertEquals(FrameClass.MALFORMED, new RoceParser(new ParseCounters()).parse(buffer, 0, length, standard));
        assertEquals(MalformedReason.UNKNOWN_OPCODE, standard.malformedReason());
    }

    @Test
    void shouldWriteFramesThatTsharkDecodesAsIntendedWithoutExpertInfo() throws Exception
    {
        Assumptions.assumeTrue(Tshark.available(), "tshark not installed (apt-get install tshark): writer check skipped");
        final List<Spec> specs = specs();
        final Path capture = dir.resolve("writer.pcap");
        final RoceFrameWriter writer = new RoceFrameWriter();
        final MemorySegment buffer = MemorySegment.ofArray(new byte[4096]);
        try (PcapWriter pcap = PcapWriter.pcap(capture, LinkType.ETHERNET))
        {
            for (final Spec spec : specs)
            {
                configure(writer, spec);
                final byte[] payload = payload(spec.payloadLength(), spec.index());
                final int length = writer.writeFrame(buffer, 0, MemorySegment.ofArray(payload), 0, payload.length);
                pcap.write(buffer, 0, length, 1_700_000_000_000_000_000L + spec.index() * 1_000L);
            }
        }
        final Path config = dir.resolve("wireshark");
        java.nio.file.Files.createDirectories(config);
        final List<Map<String, String>> decoded = Tshark.fields(capture, config);
        assertEquals(specs.size(), decoded.size());
        final RoceParser parser = new RoceParser(new ParseCounters());
        final RoceFrame frame = new RoceFrame();
        for (final Spec spec : specs)
        {
            final Map<String, String> t = decoded.get(spec.index());
            final String where = spec + " " + t;
            assertEquals("", t.get("_ws.expert"), where);
            assertEquals("", t.get("_ws.malformed"), where);
            if (spec.vlan())
            {
                assertEquals(100 + spec.index(), Tshark.number(t.get("vlan.id")), where);
            }
            if (spec.ipVersion() == 4)
            {
                assertEquals("192.168.1.10", t.get("ip.src"), where);
                assertEquals("192.168.1.20", t.get("ip.dst"), where);
                assertEquals(spec.ecn(), Tshark.number(t.get("ip.dsfield.ecn")), where);
                assertEquals("1", t.get("ip.checksum.status"), where); // good
                assertEquals("3", t.get("udp.checksum.status"), where); // not present (zero)
            }
            else
            {
                assertEquals("fd00::10", t.get("ipv6.src"), where);
                assertEquals("fd00:0:0:1::abcd", t.get("ipv6.dst"), where);
                assertEquals(spec.ecn(), Tshark.number(t.get("ipv6.tclass.ecn")), where);
                assertEquals("1", t.get("udp.checksum.status"), where); // good
            }
            assertEquals(spec.sourcePort(), Tshark.number(t.get("udp.srcport")), where);
            assertEquals(4791, Tshark.number(t.get("udp.dstport")), where);
            assertEquals(spec.opcode(), Tshark.number(t.get("infiniband.bth.opcode")), where);
            assertEquals(spec.solicited(), Tshark.bool(t.get("infiniband.bth.se")), where);
            assertFalse(Tshark.bool(t.get("infiniband.bth.m")), where);
            assertEquals((-spec.payloadLength()) & 3, Tshark.number(t.get("infiniband.bth.padcnt")), where);
            assertEquals(0, Tshark.number(t.get("infiniband.bth.tver")), where);
            assertEquals(0xFFFF, Tshark.number(t.get("infiniband.bth.p_key")), where);
            assertEquals(spec.destQp(), Tshark.number(t.get("infiniband.bth.destqp")), where);
            assertEquals(spec.ackReq(), Tshark.bool(t.get("infiniband.bth.a")), where);
            assertEquals(spec.psn(), Tshark.number(t.get("infiniband.bth.psn")), where);
            final int entry = OpcodeTable.ROCE_V2.entry(spec.opcode());
            if ((entry & OpcodeTable.HAS_RETH) != 0)
            {
                assertEquals(0xFFFF_8000_0000_0000L + spec.index(), Tshark.number(t.get("infiniband.reth.va")), where);
                assertEquals(Integer.toUnsignedLong(0xA0000000 + spec.index()),
                    Tshark.number(t.get("infiniband.reth.r_key")), where);
                assertEquals(spec.payloadLength() + 4096, Tshark.number(t.get("infiniband.reth.dmalen")), where);
            }
            else if ((entry & OpcodeTable.HAS_ATOMIC_ETH) == 0)
            {
                // (Wireshark reports the AtomicETH's address under the same field name)
                assertEquals("", t.get("infiniband.reth.va"), where);
            }
            if ((entry & OpcodeTable.HAS_AETH) != 0)
            {
                assertEquals(0x1F, Tshark.number(t.get("infiniband.aeth.syndrome")), where);
                assertEquals(0x00ABCD + spec.index(), Tshark.number(t.get("infiniband.aeth.msn")), where);
            }
            if ((entry & OpcodeTable.HAS_IMMDT) != 0)
            {
                // the ImmDt subtree and its value are both named infiniband.immdt
                assertEquals(String.format("%08x", 0xCAFE0000 + spec.index()), t.get("infiniband.immdt").split(";")[0],
                    where);
            }
        }
        // and the ICRC Wireshark shows is the one we wrote, in wire order (Wireshark 4.0 does not dissect
        // a CNP, opcode 0x81, beyond its BTH, so shows no ICRC for it)
        final List<CapturedFrame> frames = PcapReader.readAll(capture);
        for (final Spec spec : specs)
        {
            final Map<String, String> t = decoded.get(spec.index());
            final byte[] bytes = frames.get(spec.index()).data();
            assertEquals(FrameClass.ROCE, parser.parse(MemorySegment.ofArray(bytes), 0, bytes.length, frame));
            if (spec.opcode() != Opcode.CNP)
            {
                assertEquals(String.format("0x%08x", Icrc.wireOrder(frame.icrcReceived())),
                    t.get("infiniband.invariant.crc"), spec.toString());
            }
        }
    }

    @Test
    void shouldTagOnlyTheNextFrameOverItsBthAndHeaderBeforeTheIcrcS123()
    {
        final MemorySegment buffer = java.lang.foreign.Arena.ofAuto().allocate(512, 64);
        final RoceFrameWriter writer = new RoceFrameWriter(SprayOpcodes.TABLE).ethernet(0x020000000001L, 0x020000000002L)
            .ipv4(0x0A000001, 0x0A000002).opcode(SprayOpcodes.PROBE).destQp(0xB02).psn(0x123456);
        final long bth = EthernetHeader.LENGTH + Ipv4Header.LENGTH + UdpHeader.LENGTH;
        final long prbh = bth + BaseTransportHeader.LENGTH;
        ProbeHeader.path(buffer, prbh, 3);
        ProbeHeader.nextPsn(buffer, prbh, 0x123456);
        final int length = writer.tagNext(11, 22).writeFrame(buffer, 0, 0);
        final int covered = BaseTransportHeader.LENGTH + ProbeHeader.TAG_OFFSET;
        assertEquals(SipHash.hash(11, 22, buffer, bth, covered), ProbeHeader.tag(buffer, prbh));
        final RoceFrame frame = new RoceFrame();
        assertEquals(FrameClass.ROCE, new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), true)
            .parse(buffer, 0, length, frame), "the ICRC covers the tag");

        ProbeHeader.tag(buffer, prbh, 0);
        writer.writeFrame(buffer, 0, 0);
        assertEquals(0, ProbeHeader.tag(buffer, prbh), "single use");
        writer.tagNext(11, 22).clearTag().writeFrame(buffer, 0, 0);
        assertEquals(0, ProbeHeader.tag(buffer, prbh), "cancelled");
        assertThrows(IllegalArgumentException.class,
            () -> new RoceFrameWriter().opcode(Opcode.RC_SEND_ONLY).tagNext(1, 2).writeFrame(buffer, 0, 0),
            "no manufacturer header to carry a tag");
    }
}
