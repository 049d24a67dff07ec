package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Classifies frames as RoCEv2, not ours, or malformed with a reason, in place and without allocating.
 * <p>
 * Ethernet (one optional 802.1Q tag) → IPv4 (options, header checksum, total length, no fragments) or
 * IPv6 (next header UDP) → UDP (destination port 4791, length = IP payload length) → BTH (TVer 0, opcode
 * registered in the {@link OpcodeTable}) → extension headers → payload, pad and ICRC. The IP length, not
 * the frame length, bounds the packet, so Ethernet padding after a short packet is ignored.
 * <p>
 * Once the BTH is present, every field is decoded before judging, and a wrong ICRC outranks the other
 * transport-layer reasons (a frame corrupted in flight is reported as {@link MalformedReason#BAD_ICRC},
 * not as the unknown opcode the corruption produced). The parser never reads outside
 * {@code [offset, offset + length)}. The UDP checksum is not verified: RoCEv2 receivers rely on the ICRC.
 * <p>
 * One instance per thread: it holds an {@link Icrc} with scratch state and the counters it adds to.
 */
public final class RoceParser
{
    private final OpcodeTable opcodes;
    private final ParseCounters counters;
    private final boolean verifyIcrc;
    private final Icrc icrc = new Icrc();

    /**
     * A parser of standard RoCEv2 opcodes that verifies the ICRC.
     *
     * @param counters where each parse adds one.
     */
    public RoceParser(final ParseCounters counters)
    {
        this(OpcodeTable.ROCE_V2, counters, true);
    }

    /**
     * @param opcodes    the opcodes accepted.
     * @param counters   where each parse adds one.
     * @param verifyIcrc false to skip ICRC computation (when hardware has checked it).
     */
    public RoceParser(final OpcodeTable opcodes, final ParseCounters counters, final boolean verifyIcrc)
    {
        this.opcodes = opcodes;
        this.counters = counters;
        this.verifyIcrc = verifyIcrc;
    }

    /** @return the counters this parser adds to. */
    public ParseCounters counters()
    {
        return counters;
    }

    /** @return the opcodes accepted. */
    public OpcodeTable opcodes()
    {
        return opcodes;
    }

    /**
     * Parses an Ethernet frame.
     *
     * @param s      memory holding the frame.
     * @param offset offset of the frame's first byte (the destination MAC).
     * @param length frame length without FCS.
     * @param frame  the result, overwritten.
     * @return the outcome, also in {@code frame.frameClass()}.
     */
    public FrameClass parse(final MemorySegment s, final long offset, final int length, final RoceFrame frame)
    {
        frame.reset(s, offset, length);
        final long end = offset + length;
        final int l2 = EthernetHeader.headerLength(s, offset, length);
        if (l2 == 0)
        {
            return malformed(frame, MalformedReason.TRUNCATED_ETHERNET);
        }
        if (l2 == EthernetHeader.VLAN_LENGTH)
        {
            frame.vlanTci = EthernetHeader.vlanTci(s, offset);
        }
        final int etherType = EthernetHeader.payloadEtherType(s, offset, l2);
        frame.etherType = etherType;
        return parseIp(s, offset + l2, end, etherType, frame);
    }

    /**
     * Parses a bare IP packet (pcap link type RAW): the version nibble selects IPv4 or IPv6.
     *
     * @param s      memory holding the packet.
     * @param offset offset of the IP header.
     * @param length packet length.
     * @param frame  the result, overwritten.
     * @return the outcome, also in {@code frame.frameClass()}.
     */
    public FrameClass parseIpPacket(final MemorySegment s, final long offset, final int length, final RoceFrame frame)
    {
        frame.reset(s, offset, length);
        if (length < 1)
        {
            return malformed(frame, MalformedReason.TRUNCATED_IP);
        }
        final int version = Wire.u8(s, offset) >>> 4;
        final int etherType = version == 6 ? EthernetHeader.ETHER_TYPE_IPV6 : EthernetHeader.ETHER_TYPE_IPV4;
        frame.etherType = etherType;
        return parseIp(s, offset, offset + length, etherType, frame);
    }

    private FrameClass parseIp(final MemorySegment s, final long l3, final long end, final int etherType,
        final RoceFrame frame)
    {
        final long available = end - l3;
        final long l4;
        final int l4Length;
        if (etherType == EthernetHeader.ETHER_TYPE_IPV4)
        {
            if (available < Ipv4Header.LENGTH)
            {
                return malformed(frame, MalformedReason.TRUNCATED_IP);
            }
            if (Ipv4Header.version(s, l3) != 4)
            {
                return malformed(frame, MalformedReason.BAD_IP_VERSION);
            }
            final int headerLength = Ipv4Header.headerLength(s, l3);
            if (headerLength < Ipv4Header.LENGTH)
            {
                return malformed(frame, MalformedReason.BAD_IPV4_HEADER_LENGTH);
            }
            if (available < headerLength)
            {
                return malformed(frame, MalformedReason.TRUNCATED_IP);
            }
            frame.ipOffset = l3;
            frame.ipVersion = 4;
            frame.ipHeaderLength = headerLength;
            final int tos = Ipv4Header.tos(s, l3);
            frame.dscp = tos >>> 2;
            frame.ecn = tos & 0x3;
            frame.ttl = Ipv4Header.ttl(s, l3);
            frame.flowLabel = 0;
            frame.ipv4Source = Ipv4Header.sourceAddress(s, l3);
            frame.ipv4Destination = Ipv4Header.destinationAddress(s, l3);
            if (!Ipv4Header.isChecksumValid(s, l3, headerLength))
            {
                return malformed(frame, MalformedReason.BAD_IPV4_CHECKSUM);
            }
            final int totalLength = Ipv4Header.totalLength(s, l3);
            if (totalLength < headerLength)
            {
                return malformed(frame, MalformedReason.BAD_IP_LENGTH);
            }
            if (totalLength > available)
            {
                return malformed(frame, MalformedReason.TRUNCATED_IP);
            }
            if (Ipv4Header.isFragment(s, l3))
            {
                return notOurs(frame, NotOursReason.IP_FRAGMENT);
            }
            if (Ipv4Header.protocol(s, l3) != Ipv4Header.PROTOCOL_UDP)
            {
                return notOurs(frame, NotOursReason.NON_UDP);
            }
            l4 = l3 + headerLength;
            l4Length = totalLength - headerLength;
        }
        else if (etherType == EthernetHeader.ETHER_TYPE_IPV6)
        {
            if (available < Ipv6Header.LENGTH)
            {
                return malformed(frame, MalformedReason.TRUNCATED_IP);
            }
            if (Ipv6Header.version(s, l3) != 6)
            {
                return malformed(frame, MalformedReason.BAD_IP_VERSION);
            }
            frame.ipOffset = l3;
            frame.ipVersion = 6;
            frame.ipHeaderLength = Ipv6Header.LENGTH;
            final int word = Ipv6Header.versionClassFlow(s, l3);
            final int trafficClass = (word >>> 20) & 0xFF;
            frame.dscp = trafficClass >>> 2;
            frame.ecn = trafficClass & 0x3;
            frame.flowLabel = word & 0xFFFFF;
            frame.ttl = Ipv6Header.hopLimit(s, l3);
            frame.ipv6SourceHigh = Ipv6Header.sourceAddressHigh(s, l3);
            frame.ipv6SourceLow = Ipv6Header.sourceAddressLow(s, l3);
            frame.ipv6DestinationHigh = Ipv6Header.destinationAddressHigh(s, l3);
            frame.ipv6DestinationLow = Ipv6Header.destinationAddressLow(s, l3);
            final int payloadLength = Ipv6Header.payloadLength(s, l3);
            if (payloadLength > available - Ipv6Header.LENGTH)
            {
                return malformed(frame, MalformedReason.TRUNCATED_IP);
            }
            if (Ipv6Header.nextHeader(s, l3) != Ipv6Header.NEXT_HEADER_UDP)
            {
                return notOurs(frame, NotOursReason.NON_UDP);
            }
            l4 = l3 + Ipv6Header.LENGTH;
            l4Length = payloadLength;
        }
        else
        {
            return notOurs(frame, NotOursReason.NON_IP);
        }
        return parseUdp(s, l4, l4Length, frame);
    }

    private FrameClass parseUdp(final MemorySegment s, final long l4, final int l4Length, final RoceFrame frame)
    {
        if (l4Length < UdpHeader.LENGTH)
        {
            return malformed(frame, MalformedReason.TRUNCATED_UDP);
        }
        frame.udpOffset = l4;
        frame.udpSourcePort = UdpHeader.sourcePort(s, l4);
        frame.udpDestinationPort = UdpHeader.destinationPort(s, l4);
        frame.udpLength = UdpHeader.length(s, l4);
        frame.udpChecksum = UdpHeader.checksum(s, l4);
        if (frame.udpDestinationPort != UdpHeader.ROCE_V2_PORT)
        {
            return notOurs(frame, NotOursReason.OTHER_UDP_PORT);
        }
        if (frame.udpLength != l4Length)
        {
            return malformed(frame, MalformedReason.BAD_UDP_LENGTH);
        }
        final int udpPayloadLength = frame.udpLength - UdpHeader.LENGTH;
        if (udpPayloadLength < BaseTransportHeader.LENGTH + Icrc.LENGTH)
        {
            return malformed(frame, MalformedReason.TRUNCATED_BTH);
        }
        final long bth = l4 + UdpHeader.LENGTH;
        frame.bthOffset = bth;
        frame.opcode = BaseTransportHeader.opcode(s, bth);
        final int flags = BaseTransportHeader.flags(s, bth);
        frame.solicited = (flags & BaseTransportHeader.SOLICITED_FLAG) != 0;
        frame.migReq = (flags & BaseTransportHeader.MIG_REQ_FLAG) != 0;
        frame.padCount = (flags >>> 4) & 0x3;
        frame.tver = flags & 0xF;
        frame.pkey = BaseTransportHeader.pkey(s, bth);
        frame.resv8a = BaseTransportHeader.resv8a(s, bth);
        frame.destQp = BaseTransportHeader.destQp(s, bth);
        frame.ackReq = BaseTransportHeader.ackReq(s, bth);
        frame.psn = BaseTransportHeader.psn(s, bth);

        final long icrcOffset = l4 + frame.udpLength - Icrc.LENGTH;
        frame.icrcOffset = icrcOffset;
        frame.icrcReceived = Icrc.read(s, icrcOffset);
        if (verifyIcrc)
        {
            frame.icrcComputed = icrc.compute(s, frame.ipOffset, frame.ipVersion, frame.ipHeaderLength, icrcOffset);
            frame.icrcChecked = true;
        }
        final MalformedReason transportError = parseTransport(s, bth, icrcOffset, frame);
        if (verifyIcrc && frame.icrcComputed != frame.icrcReceived)
        {
            return malformed(frame, MalformedReason.BAD_ICRC);
        }
        if (transportError != null)
        {
            return malformed(frame, transportError);
        }
        frame.frameClass = FrameClass.ROCE;
        counters.increment(ParseCounters.ROCE);
        return FrameClass.ROCE;
    }

    private MalformedReason parseTransport(final MemorySegment s, final long bth, final long icrcOffset,
        final RoceFrame frame)
    {
        if (frame.tver != 0)
        {
            return MalformedReason.BAD_TVER;
        }
        final int entry = opcodes.entry(frame.opcode);
        if ((entry & OpcodeTable.REGISTERED) == 0)
        {
            return MalformedReason.UNKNOWN_OPCODE;
        }
        final long extensions = bth + BaseTransportHeader.LENGTH;
        final int extensionsLength = OpcodeTable.extensionHeadersLengthOf(entry);
        final long payload = extensions + extensionsLength;
        if (payload > icrcOffset)
        {
            return MalformedReason.TRUNCATED_EXTENSION_HEADER;
        }
        long at = extensions;
        final int customLength = (entry >>> OpcodeTable.CUSTOM_LENGTH_SHIFT) & OpcodeTable.CUSTOM_LENGTH_MASK;
        if (customLength != 0)
        {
            frame.customHeaderOffset = at;
            frame.customHeaderLength = customLength;
            at += customLength;
        }
        if ((entry & OpcodeTable.HAS_DETH) != 0)
        {
            frame.dethOffset = at;
            at += DatagramExtendedTransportHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_RETH) != 0)
        {
            frame.rethOffset = at;
            frame.rethVirtualAddress = RdmaExtendedTransportHeader.virtualAddress(s, at);
            frame.rethRkey = RdmaExtendedTransportHeader.rkey(s, at);
            frame.rethDmaLength = RdmaExtendedTransportHeader.dmaLength(s, at);
            at += RdmaExtendedTransportHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_ATOMIC_ETH) != 0)
        {
            frame.atomicEthOffset = at;
            at += AtomicExtendedTransportHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_AETH) != 0)
        {
            frame.aethOffset = at;
            frame.aethSyndrome = AckExtendedTransportHeader.syndrome(s, at);
            frame.aethMsn = AckExtendedTransportHeader.msn(s, at);
            at += AckExtendedTransportHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_ATOMIC_ACK_ETH) != 0)
        {
            frame.atomicAckEthOffset = at;
            at += AtomicAckExtendedTransportHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_IMMDT) != 0)
        {
            frame.immDtOffset = at;
            frame.immediateData = ImmediateDataHeader.immediateData(s, at);
            at += ImmediateDataHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_IETH) != 0)
        {
            frame.iethOffset = at;
            at += InvalidateExtendedTransportHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_CNP_BODY) != 0)
        {
            frame.cnpOffset = at;
        }
        final int paddedLength = (int)(icrcOffset - payload);
        if ((entry & OpcodeTable.HAS_PAYLOAD) == 0)
        {
            if (frame.padCount != 0)
            {
                return MalformedReason.BAD_PAD_COUNT;
            }
            if (paddedLength != 0)
            {
                return MalformedReason.BAD_PAYLOAD_LENGTH;
            }
        }
        else
        {
            if (frame.padCount > paddedLength)
            {
                return MalformedReason.BAD_PAD_COUNT;
            }
            if ((paddedLength & 3) != 0)
            {
                return MalformedReason.BAD_PAYLOAD_LENGTH;
            }
        }
        frame.payloadOffset = payload;
        frame.payloadLength = paddedLength - frame.padCount;
        return null;
    }

    private FrameClass malformed(final RoceFrame frame, final MalformedReason reason)
    {
        frame.frameClass = FrameClass.MALFORMED;
        frame.malformedReason = reason;
        counters.increment(ParseCounters.MALFORMED_BASE + reason.ordinal());
        return FrameClass.MALFORMED;
    }

    private FrameClass notOurs(final RoceFrame frame, final NotOursReason reason)
    {
        frame.frameClass = FrameClass.NOT_OURS;
        frame.notOursReason = reason;
        counters.increment(ParseCounters.NOT_OURS);
        return FrameClass.NOT_OURS;
    }
}
