package io.spraynic.datapath.port;

import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.Ipv6Header;
import io.spraynic.datapath.wire.MalformedReason;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.OpcodeTable;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.UdpHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Map;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Both conversions of {@link UdpFrames}, each behaviour once for either IP family ({@link Family}): what differs
 * between IPv4 and IPv6 (header lengths, the variant fields a socket cannot carry, the refusals only one family has)
 * is the family's.
 */
class UdpFramesTest
{
    private static final int A = 0x7F00_0001;
    private static final int B = 0x7F00_0002;
    private static final long MAC_B = 0x0200_7F00_0002L;
    private static final long V6_HIGH = 0xFD00_0001_0000_0000L; // fd00:1::10 and fd00:1::20
    private static final long V6_A = 0x10;
    private static final long V6_B = 0x20;
    private static final int IP = EthernetHeader.LENGTH;
    private static final int PAYLOAD = 300;

    private final Arena arena = Arena.ofAuto();
    private final MemorySegment sent = arena.allocate(4096, 64);
    private final MemorySegment received = arena.allocate(4096, 64);
    private final Icrc icrc = new Icrc();

    /** What differs between the two families; everything else a test says once. */
    enum Family
    {
        IPV4(UdpFrames.HEADERS_LENGTH, UdpFrames.NOT_IPV4_UDP, 0x0200_7F00_0001L)
        {
            RoceFrameWriter writer()
            {
                // identification 4242: what the engine increments and a receiver cannot synthesize
                return new RoceFrameWriter().ethernet(0x0200_0000_00AAL, 0x0200_0000_00BBL).ipv4(A, B)
                    .ipv4Identification(4242);
            }

            int canonicalize(final MemorySegment s, final int length, final boolean fromOurAddress, final int sourcePort,
                final Icrc icrc)
            {
                return UdpFrames.canonicalizeForSend(s, 0, length, fromOurAddress ? A : B, sourcePort, icrc);
            }

            int synthesize(final MemorySegment s, final int payload, final int sourcePort, final int tos)
            {
                return UdpFrames.synthesize(s, 0, payload, MAC_B, A, sourcePort, B, tos);
            }

            int tos(final MemorySegment s)
            {
                return UdpFrames.tos(s, 0);
            }

            int sourcePort(final MemorySegment s)
            {
                return UdpFrames.sourcePort(s, 0);
            }

            void assertAddressesAndCanonicalHeader(final RoceFrame frame, final MemorySegment s, final int payload)
            {
                assertEquals(A, frame.ipv4Source());
                assertEquals(B, frame.ipv4Destination());
                assertEquals(EthernetHeader.ETHER_TYPE_IPV4, EthernetHeader.etherType(s, 0));
                assertEquals(0, Ipv4Header.identification(s, IP));
                assertEquals(64, Ipv4Header.ttl(s, IP));
                assertTrue(Ipv4Header.isChecksumValid(s, IP, Ipv4Header.LENGTH));
                assertEquals(0, UdpHeader.checksum(s, udp()), "no UDP checksum: legal over IPv4, masked by the ICRC");
            }

            Map<String, Consumer<MemorySegment>> ownMalformations()
            {
                return Map.of(
                    "a fragment", s -> Ipv4Header.flagsAndFragmentOffset(s, IP, Ipv4Header.FLAG_MORE_FRAGMENTS),
                    "IPv4 and UDP lengths disagree", s -> Ipv4Header.totalLength(s, IP, Ipv4Header.totalLength(s, IP) + 4));
            }
        },

        IPV6(UdpFrames.IPV6_HEADERS_LENGTH, UdpFrames.NOT_IPV6_UDP, 0x0200_0000_0010L)
        {
            RoceFrameWriter writer()
            {
                // flow label and hop limit: not the receiver's 0 and 64, masked by the ICRC
                return new RoceFrameWriter().ethernet(0x0200_0000_00AAL, 0x0200_0000_00BBL).ipv6(V6_HIGH, V6_A, V6_HIGH, V6_B)
                    .flowLabel(0xABCDE).ttl(3);
            }

            int canonicalize(final MemorySegment s, final int length, final boolean fromOurAddress, final int sourcePort,
                final Icrc icrc)
            {
                return UdpFrames.canonicalizeIpv6ForSend(s, 0, length, V6_HIGH, fromOurAddress ? V6_A : V6_B, sourcePort, icrc);
            }

            int synthesize(final MemorySegment s, final int payload, final int sourcePort, final int trafficClass)
            {
                return UdpFrames.synthesizeIpv6(s, 0, payload, MAC_B, V6_HIGH, V6_A, sourcePort, V6_HIGH, V6_B, trafficClass);
            }

            int tos(final MemorySegment s)
            {
                return UdpFrames.trafficClassIpv6(s, 0);
            }

            int sourcePort(final MemorySegment s)
            {
                return UdpFrames.sourcePortIpv6(s, 0);
            }

            void assertAddressesAndCanonicalHeader(final RoceFrame frame, final MemorySegment s, final int payload)
            {
                assertEquals(V6_HIGH, frame.ipv6SourceHigh());
                assertEquals(V6_A, frame.ipv6SourceLow());
                assertEquals(EthernetHeader.ETHER_TYPE_IPV6, EthernetHeader.etherType(s, 0));
                assertEquals(0, Ipv6Header.flowLabel(s, IP));
                assertEquals(64, Ipv6Header.hopLimit(s, IP));
                assertEquals(Ipv6Header.NEXT_HEADER_UDP, Ipv6Header.nextHeader(s, IP));
                assertEquals(8 + payload, Ipv6Header.payloadLength(s, IP));
                assertEquals(0, UdpHeader.checksum(s, udp()), "verified by the kernel: written only when observed");
            }

            Map<String, Consumer<MemorySegment>> ownMalformations()
            {
                return Map.of(
                    "version 4 under an IPv6 EtherType", s -> s.set(ValueLayout.JAVA_BYTE, IP, (byte)0x45),
                    "IPv6 and UDP lengths disagree", s -> Ipv6Header.payloadLength(s, IP, UdpHeader.length(s, udp()) + 4));
            }
        };

        final int headers;
        final int notIpUdp;
        final long senderMac;

        Family(final int headers, final int notIpUdp, final long senderMac)
        {
            this.headers = headers;
            this.notIpUdp = notIpUdp;
            this.senderMac = senderMac;
        }

        /** @return the engine's writer of frames from A to B, with the variant fields a socket cannot carry. */
        abstract RoceFrameWriter writer();

        abstract int canonicalize(MemorySegment s, int length, boolean fromOurAddress, int sourcePort, Icrc icrc);

        abstract int synthesize(MemorySegment s, int payload, int sourcePort, int tos);

        abstract int tos(MemorySegment s);

        abstract int sourcePort(MemorySegment s);

        abstract void assertAddressesAndCanonicalHeader(RoceFrame frame, MemorySegment s, int payload);

        /** @return ways to spoil a frame only this family has, by what they are. */
        abstract Map<String, Consumer<MemorySegment>> ownMalformations();

        long udp()
        {
            return headers - UdpHeader.LENGTH;
        }

        Family other()
        {
            return this == IPV4 ? IPV6 : IPV4;
        }
    }

    private int writeFrame(final Family family, final MemorySegment into, final int sourcePort, final int ecn)
    {
        final RoceFrameWriter writer = family.writer().ecn(ecn).dscp(26).udpSourcePort(sourcePort)
            .opcode(Opcode.RC_SEND_ONLY).destQp(0x12).psn(77);
        for (int i = 0; i < PAYLOAD; i++)
        {
            into.set(ValueLayout.JAVA_BYTE, writer.payloadOffset() + i, (byte)(i * 7));
        }
        return writer.writeFrame(into, 0, PAYLOAD);
    }

    /** What a receiving port does: the payload lands after the headers, the headers are synthesized around it. */
    private int deliver(final Family family, final int payloadLength, final int sourcePort, final int tos)
    {
        MemorySegment.copy(sent, family.headers, received, family.headers, payloadLength);
        return family.synthesize(received, payloadLength, sourcePort, tos);
    }

    @ParameterizedTest
    @EnumSource(Family.class)
    void shouldSynthesizeHeadersWhoseIcrcMatchesTheCanonicalizedSenderFrame(final Family family)
    {
        final int length = writeFrame(family, sent, 49_157, 2);
        assertEquals(family.headers + 12 + PAYLOAD + 4, length, "the frame a DPDK port carries");
        final int payload = family.canonicalize(sent, length, true, 40_001, icrc);
        assertEquals(12 + PAYLOAD + 4, payload, "BTH, payload and ICRC: what the socket carries");
        assertEquals(40_001, family.sourcePort(sent));
        assertEquals(26 << 2 | 2, family.tos(sent));

        final int tos = family.tos(sent) | 3; // a router marked CE on the way: masked by the ICRC
        final int frameLength = deliver(family, payload, 40_001, tos);
        assertEquals(length, frameLength);

        final RoceFrame frame = new RoceFrame();
        assertEquals(FrameClass.ROCE, new RoceParser(OpcodeTable.ROCE_V2, new ParseCounters(), true)
            .parse(received, 0, frameLength, frame), frame.toString());
        assertTrue(frame.icrcValid(), frame.toString());
        assertEquals(3, frame.ecn());
        assertEquals(26, frame.dscp());
        assertEquals(40_001, frame.udpSourcePort());
        assertEquals(UdpHeader.ROCE_V2_PORT, frame.udpDestinationPort());
        assertEquals(8 + payload, UdpHeader.length(received, family.udp()));
        assertEquals(77, frame.psn());
        assertEquals(MAC_B, EthernetHeader.destinationMac(received, 0));
        assertEquals(family.senderMac, EthernetHeader.sourceMac(received, 0), "02:00 and the sender's (last) 32 bits");
        family.assertAddressesAndCanonicalHeader(frame, received, payload);
        assertEquals(-1, sent.asSlice(family.headers, payload).mismatch(received.asSlice(family.headers, payload)));
    }

    @ParameterizedTest
    @EnumSource(Family.class)
    void shouldFailTheIcrcWhenTheSenderWasNotCanonicalized(final Family family)
    {
        writeFrame(family, sent, 49_157, 0);
        final int payload = UdpHeader.length(sent, family.udp()) - UdpHeader.LENGTH;
        // the socket's source port, not the engine's 49157 the ICRC was computed over (and, IPv4, identification 0)
        final int frameLength = deliver(family, payload, 40_001, 0);

        final RoceFrame frame = new RoceFrame();
        final ParseCounters counters = new ParseCounters();
        assertEquals(FrameClass.MALFORMED, new RoceParser(counters).parse(received, 0, frameLength, frame));
        assertEquals(1, counters.get(ParseCounters.MALFORMED_BASE + MalformedReason.BAD_ICRC.ordinal()),
            "the variant fields a socket cannot carry are covered by the ICRC: why the port rewrites them");
    }

    @ParameterizedTest
    @EnumSource(Family.class)
    void shouldRefuseFramesThatAreNotUdpToRoceOverItsFamilyFromTheBoundAddress(final Family family)
    {
        final int length = writeFrame(family, sent, 49_157, 0);
        final MemorySegment copy = arena.allocate(4096, 64);
        final Map<String, Consumer<MemorySegment>> malformations = new java.util.LinkedHashMap<>(Map.of(
            "not UDP", s -> s.set(ValueLayout.JAVA_BYTE, IP + (family == Family.IPV4 ? 9 : 6), (byte)6),
            "another UDP port", s -> UdpHeader.destinationPort(s, family.udp(), 4792),
            "UDP longer than the frame", s -> UdpHeader.length(s, family.udp(), length)));
        malformations.putAll(family.ownMalformations());
        for (final Map.Entry<String, Consumer<MemorySegment>> malformation : malformations.entrySet())
        {
            MemorySegment.copy(sent, 0, copy, 0, length);
            malformation.getValue().accept(copy);
            assertEquals(family.notIpUdp, family.canonicalize(copy, length, true, 1, icrc), malformation.getKey());
            assertEquals(49_157, family.sourcePort(copy), malformation.getKey() + ": a refused frame is left as it was");
        }

        final int otherLength = writeFrame(family.other(), copy, 49_157, 0);
        assertEquals(family.notIpUdp, family.canonicalize(copy, otherLength, true, 1, icrc), "the other family's frame");
        assertEquals(family.notIpUdp, family.canonicalize(sent, family.headers + UdpFrames.MIN_PAYLOAD_LENGTH - 1, true, 1,
            icrc), "too short for a BTH and ICRC");
        assertEquals(UdpFrames.WRONG_SOURCE, family.canonicalize(sent, length, false, 1, icrc));
        assertEquals(49_157, family.sourcePort(sent), "a refused frame is left as it was");
    }

    @Test
    void shouldWriteTheIpv6UdpChecksumOnlyWhenAskedOnceAndRightOverPseudoHeaderAndPayload()
    {
        final Family family = Family.IPV6;
        final int length = writeFrame(family, sent, 49_157, 2);
        final int payload = family.canonicalize(sent, length, true, 40_001, icrc);
        final int frameLength = deliver(family, payload, 40_001, 0);
        final long udp = family.udp();
        assertEquals(0, UdpHeader.checksum(received, udp), "left out: nothing on the receive path reads it");

        assertTrue(UdpFrames.completeIpv6Checksum(received, 0, frameLength));
        final int checksum = UdpHeader.checksum(received, udp);
        assertNotEquals(0, checksum, "a UDP checksum over IPv6 is mandatory (RFC 8200 8.1)");
        assertEquals(checksum, UdpHeader.computeIpv6Checksum(received, IP, udp, 8 + payload), "and right");
        assertFalse(UdpFrames.completeIpv6Checksum(received, 0, frameLength), "a second tap computes nothing");
        assertEquals(checksum, UdpHeader.checksum(received, udp));

        // a checksum that flips with one payload byte: it covers the payload, not only the headers
        UdpHeader.checksum(received, udp, 0);
        received.set(ValueLayout.JAVA_BYTE, frameLength - 5, (byte)(received.get(ValueLayout.JAVA_BYTE, frameLength - 5) ^ 1));
        assertTrue(UdpFrames.completeIpv6Checksum(received, 0, frameLength));
        assertNotEquals(checksum, UdpHeader.checksum(received, udp));
    }

    @Test
    void shouldLeaveFramesThatAreNotCompleteIpv6UdpWithinTheirLengthAlone()
    {
        final int length = writeFrame(Family.IPV6, sent, 49_157, 0);
        final int payload = Family.IPV6.canonicalize(sent, length, true, 40_001, icrc);
        final int frameLength = deliver(Family.IPV6, payload, 40_001, 0);
        final MemorySegment copy = arena.allocate(4096, 64);
        final Map<String, Consumer<MemorySegment>> spoilt = Map.of(
            "IPv4 EtherType", s -> EthernetHeader.etherType(s, 0, EthernetHeader.ETHER_TYPE_IPV4),
            "not UDP", s -> Ipv6Header.nextHeader(s, IP, 6),
            "UDP longer than the frame", s -> UdpHeader.length(s, Family.IPV6.udp(), frameLength),
            "UDP shorter than its header", s -> UdpHeader.length(s, Family.IPV6.udp(), 7));
        for (final Map.Entry<String, Consumer<MemorySegment>> spoil : spoilt.entrySet())
        {
            MemorySegment.copy(received, 0, copy, 0, frameLength);
            spoil.getValue().accept(copy);
            assertFalse(UdpFrames.completeIpv6Checksum(copy, 0, frameLength), spoil.getKey());
            assertEquals(0, UdpHeader.checksum(copy, Family.IPV6.udp()), spoil.getKey());
        }
        assertFalse(UdpFrames.completeIpv6Checksum(received, 0, UdpFrames.IPV6_HEADERS_LENGTH - 1), "shorter than headers");
        assertFalse(UdpFrames.completeIpv6Checksum(received, 0, frameLength - 1), "the UDP length past the frame's");
    }
}
