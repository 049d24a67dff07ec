package io.spraynic.datapath.wire;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The writer's header template (Ethernet and IP copied from a per-path template, the changing fields patched, the
 * IPv4 checksum from a precomputed sum): one writer kept across thousands of frames whose settings change at random
 * between frames writes, byte for byte, the headers the field-by-field flyweights write for the same settings.
 */
class RoceFrameWriterTemplateTest
{
    private static final int[] OPCODES = {
        Opcode.RC_SEND_ONLY, Opcode.RC_RDMA_WRITE_ONLY, Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, Opcode.RC_ACKNOWLEDGE,
        Opcode.RC_RDMA_READ_REQUEST, Opcode.UD_SEND_ONLY, Opcode.CNP,
    };
    private static final int OFFSET = 5;

    private final SplittableRandom random = new SplittableRandom(1624);

    // the settings of the next frame, changed at random between frames
    private long sourceMac = 0x02_00_00_00_00_0AL;
    private long destinationMac = 0x02_00_00_00_00_0BL;
    private int vlanTci = -1;
    private int ipVersion = 4;
    private int ipv4Source = 0xC0A8010A;
    private int ipv4Destination = 0xC0A80114;
    private final long[] ipv6 = {0xFD00_0000_0000_0000L, 0x10L, 0xFD00_0000_0000_0001L, 0xABCDL};
    private int dscp;
    private int ecn;
    private int ttl = 64;
    private int flowLabel;
    private int identification;
    private boolean ipv6UdpChecksum = true;
    private int sourcePort = 0xC000;
    private int opcode = Opcode.RC_SEND_ONLY;
    private boolean solicited;
    private boolean migReq;
    private int pkey = BaseTransportHeader.DEFAULT_PKEY;
    private int resv8a;
    private int destQp;
    private boolean ackReq;
    private int psn;

    @Test
    void aWriterKeptAcrossChangingSettingsWritesTheHeadersOfTheFieldByFieldFlyweights()
    {
        final RoceFrameWriter writer = new RoceFrameWriter();
        final MemorySegment written = MemorySegment.ofArray(new byte[2048]);
        final MemorySegment expected = MemorySegment.ofArray(new byte[2048]);
        int templateChanges = 0;
        for (int frame = 0; frame < 5_000; frame++)
        {
            templateChanges += changeSomeSettings();
            apply(writer);
            final boolean hasPayload = (OpcodeTable.ROCE_V2.entry(opcode) & OpcodeTable.HAS_PAYLOAD) != 0;
            final int payloadLength = hasPayload ? random.nextInt(0, 200) : 0;
            fillWithNoise(written);
            final int length = writer.writeFrame(written, OFFSET, payloadLength);
            assertEquals(writer.frameLength(payloadLength), length);

            final int udpLength = writeReferenceHeaders(expected, payloadLength);
            final int l2 = vlanTci >= 0 ? EthernetHeader.VLAN_LENGTH : EthernetHeader.LENGTH;
            final int ipLength = ipVersion == 4 ? Ipv4Header.LENGTH : Ipv6Header.LENGTH;
            final int udp = OFFSET + l2 + ipLength;
            final int headersEnd = udp + UdpHeader.LENGTH + BaseTransportHeader.LENGTH;
            final int frameNumber = frame;
            final boolean udpChecksumComputed = ipVersion == 6 && ipv6UdpChecksum;
            if (udpChecksumComputed)
            {
                // computed over the whole datagram after the ICRC; the reference left 0 there
                Wire.put16(written, udp + UdpHeader.CHECKSUM_OFFSET, 0);
            }
            assertArrayEquals(bytes(expected, OFFSET, headersEnd), bytes(written, OFFSET, headersEnd),
                () -> "frame " + frameNumber + ": ipVersion " + ipVersion + ", vlan " + vlanTci + ", opcode " + opcode);
            if (ipVersion == 4)
            {
                assertTrue(Ipv4Header.isChecksumValid(written, OFFSET + l2, Ipv4Header.LENGTH));
                identification = (identification + 1) & 0xFFFF;
            }
            assertEquals(UdpHeader.LENGTH + BaseTransportHeader.LENGTH +
                OpcodeTable.ROCE_V2.extensionHeadersLength(opcode) + payloadLength + ((-payloadLength) & 3) +
                Icrc.LENGTH, udpLength);
        }
        assertTrue(templateChanges > 1_000, "the template's fields changed " + templateChanges + " times");
    }

    @Test
    void theIpv4ChecksumMatchesAFullComputationForEveryIdentificationAndTrafficClass()
    {
        final RoceFrameWriter writer = new RoceFrameWriter().ethernet(1, 2).ipv4(0xFFFF_FFFF, 0xFFFF_FFFE).ttl(255)
            .opcode(Opcode.RC_SEND_ONLY);
        final MemorySegment buffer = MemorySegment.ofArray(new byte[256]);
        for (int identification = 0; identification <= 0xFFFF; identification += 7)
        {
            final int trafficClass = identification & 0xFF;
            writer.ipv4Identification(identification).dscp(trafficClass >>> 2).ecn(trafficClass & 3);
            writer.writeFrame(buffer, 0, identification & 63);
            final long ip = EthernetHeader.LENGTH;
            assertEquals(Ipv4Header.computeChecksum(buffer, ip, Ipv4Header.LENGTH), Ipv4Header.checksum(buffer, ip),
                "identification " + identification);
        }
    }

    // a few settings change before each frame; returns how many of them were template fields
    private int changeSomeSettings()
    {
        int templateFields = 0;
        final int changes = random.nextInt(0, 4);
        for (int change = 0; change < changes; change++)
        {
            switch (random.nextInt(0, 22))
            {
                case 0 -> { sourceMac = random.nextLong() & 0xFFFF_FFFF_FFFFL; templateFields++; }
                case 1 -> { destinationMac = random.nextLong() & 0xFFFF_FFFF_FFFFL; templateFields++; }
                case 2 -> { vlanTci = random.nextBoolean() ? -1 : random.nextInt(0, 0x10000); templateFields++; }
                case 3 -> { ipVersion = random.nextBoolean() ? 4 : 6; templateFields++; }
                case 4 -> { ipv4Source = random.nextInt(); templateFields++; }
                case 5 -> { ipv4Destination = random.nextInt(); templateFields++; }
                case 6 -> { ipv6[random.nextInt(0, 4)] = random.nextLong(); templateFields++; }
                case 7 -> { ttl = random.nextInt(0, 256); templateFields++; }
                case 8 -> dscp = random.nextInt(0, 64);
                case 9 -> ecn = random.nextInt(0, 4);
                case 10 -> flowLabel = random.nextInt(0, 1 << 20);
                case 11 -> identification = random.nextInt(0, 0x10000);
                case 12 -> ipv6UdpChecksum = random.nextBoolean();
                case 13 -> sourcePort = random.nextInt(0, 0x10000);
                case 14 -> opcode = OPCODES[random.nextInt(0, OPCODES.length)];
                case 15 -> solicited = random.nextBoolean();
                case 16 -> migReq = random.nextBoolean();
                case 17 -> pkey = random.nextInt(0, 0x10000);
                case 18 -> resv8a = random.nextInt(0, 256);
                case 19 -> destQp = random.nextInt(0, 1 << 24);
                case 20 -> ackReq = random.nextBoolean();
                default -> psn = random.nextInt(0, 1 << 24);
            }
        }
        return templateFields;
    }

    // every setting given every frame, as the spray frame builder does: unchanged values must not cost a rebuild,
    // changed ones must reach the frame
    private void apply(final RoceFrameWriter writer)
    {
        writer.ethernet(sourceMac, destinationMac).vlan(vlanTci);
        if (ipVersion == 4)
        {
            writer.ipv4(ipv4Source, ipv4Destination).ipv4Identification(identification);
        }
        else
        {
            writer.ipv6(ipv6[0], ipv6[1], ipv6[2], ipv6[3]).ipv6UdpChecksum(ipv6UdpChecksum);
        }
        writer.dscp(dscp).ecn(ecn).ttl(ttl).flowLabel(flowLabel).udpSourcePort(sourcePort).opcode(opcode)
            .solicited(solicited).migReq(migReq).pkey(pkey).resv8a(resv8a).destQp(destQp).ackReq(ackReq).psn(psn);
    }

    // Ethernet, IP, UDP and BTH written field by field with the flyweights (the writer's way before the template)
    private int writeReferenceHeaders(final MemorySegment buffer, final int payloadLength)
    {
        fillWithNoise(buffer);
        final int padCount = (-payloadLength) & 3;
        final int udpLength = UdpHeader.LENGTH + BaseTransportHeader.LENGTH +
            OpcodeTable.ROCE_V2.extensionHeadersLength(opcode) + payloadLength + padCount + Icrc.LENGTH;
        EthernetHeader.destinationMac(buffer, OFFSET, destinationMac);
        EthernetHeader.sourceMac(buffer, OFFSET, sourceMac);
        final int etherType = ipVersion == 4 ? EthernetHeader.ETHER_TYPE_IPV4 : EthernetHeader.ETHER_TYPE_IPV6;
        final long ip;
        if (vlanTci >= 0)
        {
            EthernetHeader.etherType(buffer, OFFSET, EthernetHeader.ETHER_TYPE_VLAN);
            EthernetHeader.vlanTci(buffer, OFFSET, vlanTci);
            EthernetHeader.vlanEtherType(buffer, OFFSET, etherType);
            ip = OFFSET + EthernetHeader.VLAN_LENGTH;
        }
        else
        {
            EthernetHeader.etherType(buffer, OFFSET, etherType);
            ip = OFFSET + EthernetHeader.LENGTH;
        }
        final long udp;
        if (ipVersion == 4)
        {
            Ipv4Header.write(buffer, ip, (dscp << 2) | ecn, Ipv4Header.LENGTH + udpLength, identification, ttl,
                Ipv4Header.PROTOCOL_UDP, ipv4Source, ipv4Destination);
            udp = ip + Ipv4Header.LENGTH;
        }
        else
        {
            Ipv6Header.write(buffer, ip, (dscp << 2) | ecn, flowLabel, udpLength, Ipv6Header.NEXT_HEADER_UDP, ttl,
                ipv6[0], ipv6[1], ipv6[2], ipv6[3]);
            udp = ip + Ipv6Header.LENGTH;
        }
        UdpHeader.sourcePort(buffer, udp, sourcePort);
        UdpHeader.destinationPort(buffer, udp, UdpHeader.ROCE_V2_PORT);
        UdpHeader.length(buffer, udp, udpLength);
        UdpHeader.checksum(buffer, udp, 0);
        final long bth = udp + UdpHeader.LENGTH;
        BaseTransportHeader.write(buffer, bth, opcode, solicited, migReq, padCount, pkey, destQp, ackReq, psn);
        BaseTransportHeader.resv8a(buffer, bth, resv8a);
        return udpLength;
    }

    private void fillWithNoise(final MemorySegment buffer)
    {
        for (long at = 0; at + Long.BYTES <= buffer.byteSize(); at += Long.BYTES)
        {
            buffer.set(ValueLayout.JAVA_LONG_UNALIGNED, at, random.nextLong());
        }
    }

    private static byte[] bytes(final MemorySegment segment, final int from, final int to)
    {
        return Arrays.copyOfRange(segment.toArray(ValueLayout.JAVA_BYTE), from, to);
    }
}
