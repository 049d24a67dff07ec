package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * A verbatim copy of main c08e00ad's {@code RoceParser}, kept as the yardstick of {@code RoceParseCpuTime} (issue 13,
 * RESULTS section 57); only its name and its frame's ({@link RoceFrameMainCopy}, main's {@code RoceFrame}) differ.
 * Public and in this package, beside the datapath's classes, because it uses their package-private parts.
 * <p>
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
 * Each header is read in as few wide big-endian reads as cover it (IPv4 in three, which also feed its checksum; UDP
 * in one; BTH in two), each inside a header whose length was checked before it, and its fields are taken out with
 * {@link Wire#u8Of(long, int)} and its siblings: every bounds-checked read costs, the shifts do not
 * (benchmarks/RESULTS.md, section 4c).
 * <p>
 * One instance per thread: it holds an {@link Icrc} with scratch state and the counters it adds to.
 */
public final class RoceParserMainCopy
{
    /** Where the IPv4 header's second eight-byte read begins: TTL, protocol, checksum, source address. */
    private static final int IPV4_SECOND_WORD = Ipv4Header.TTL_OFFSET;

    private final OpcodeTable opcodes;
    private final ParseCounters counters;
    private final boolean verifyIcrc;
    private final Icrc icrc = new Icrc();

    /**
     * A parser of standard RoCEv2 opcodes that verifies the ICRC.
     *
     * @param counters where each parse adds one.
     */
    public RoceParserMainCopy(final ParseCounters counters)
    {
        this(OpcodeTable.ROCE_V2, counters, true);
    }

    /**
     * @param opcodes    the opcodes accepted.
     * @param counters   where each parse adds one.
     * @param verifyIcrc false to skip ICRC computation (when hardware has checked it).
     */
    public RoceParserMainCopy(final OpcodeTable opcodes, final ParseCounters counters, final boolean verifyIcrc)
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
    public FrameClass parse(final MemorySegment s, final long offset, final int length, final RoceFrameMainCopy frame)
    {
        frame.reset(s, offset, length);
        if (length < EthernetHeader.LENGTH)
        {
            return malformed(frame, MalformedReason.TRUNCATED_ETHERNET);
        }
        int etherType = Wire.u16(s, offset + EthernetHeader.ETHER_TYPE_OFFSET);
        long l3 = offset + EthernetHeader.LENGTH;
        if (etherType == EthernetHeader.ETHER_TYPE_VLAN)
        {
            if (length < EthernetHeader.VLAN_LENGTH)
            {
                return malformed(frame, MalformedReason.TRUNCATED_ETHERNET);
            }
            // the tag and the payload's EtherType behind it: one read
            final int tag = Wire.i32(s, offset + EthernetHeader.VLAN_TCI_OFFSET);
            frame.vlanTci = Wire.u16Of(tag, 0);
            etherType = Wire.u16Of(tag, EthernetHeader.VLAN_ETHER_TYPE_OFFSET - EthernetHeader.VLAN_TCI_OFFSET);
            l3 = offset + EthernetHeader.VLAN_LENGTH;
        }
        frame.etherType = etherType;
        return parseIp(s, l3, offset + length, etherType, frame);
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
    public FrameClass parseIpPacket(final MemorySegment s, final long offset, final int length, final RoceFrameMainCopy frame)
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
        final RoceFrameMainCopy frame)
    {
        if (etherType == EthernetHeader.ETHER_TYPE_IPV4)
        {
            return parseIpv4(s, l3, end - l3, frame);
        }
        if (etherType == EthernetHeader.ETHER_TYPE_IPV6)
        {
            return parseIpv6(s, l3, end - l3, frame);
        }
        return notOurs(frame, NotOursReason.NON_IP);
    }

    /**
     * The fixed 20 bytes come in three reads (bytes 0-7, 8-15, 16-19) that also feed the header checksum; only
     * options are read again, four bytes at a time.
     */
    private FrameClass parseIpv4(final MemorySegment s, final long l3, final long available, final RoceFrameMainCopy frame)
    {
        if (available < Ipv4Header.LENGTH)
        {
            return malformed(frame, MalformedReason.TRUNCATED_IP);
        }
        // version/IHL, TOS, total length, identification, flags/fragment offset
        final long first = Wire.i64(s, l3);
        // TTL, protocol, header checksum, source address
        final long second = Wire.i64(s, l3 + IPV4_SECOND_WORD);
        final int destination = Wire.i32(s, l3 + Ipv4Header.DESTINATION_ADDRESS_OFFSET);
        final int versionIhl = Wire.u8Of(first, Ipv4Header.VERSION_IHL_OFFSET);
        if (versionIhl >>> 4 != 4)
        {
            return malformed(frame, MalformedReason.BAD_IP_VERSION);
        }
        final int headerLength = (versionIhl & 0xF) << 2;
        if (headerLength < Ipv4Header.LENGTH)
        {
            return malformed(frame, MalformedReason.BAD_IPV4_HEADER_LENGTH);
        }
        if (available < headerLength)
        {
            return malformed(frame, MalformedReason.TRUNCATED_IP);
        }
        decodeIpv4(frame, l3, headerLength, first, second, destination);
        if (Ipv4Header.fold(ipv4HeaderSum(s, l3, headerLength, first, second, destination)) != 0)
        {
            return malformed(frame, MalformedReason.BAD_IPV4_CHECKSUM);
        }
        final int totalLength = Wire.u16Of(first, Ipv4Header.TOTAL_LENGTH_OFFSET);
        if (totalLength < headerLength)
        {
            return malformed(frame, MalformedReason.BAD_IP_LENGTH);
        }
        if (totalLength > available)
        {
            return malformed(frame, MalformedReason.TRUNCATED_IP);
        }
        if ((Wire.u16Of(first, Ipv4Header.FLAGS_FRAGMENT_OFFSET) &
            (Ipv4Header.FLAG_MORE_FRAGMENTS | Ipv4Header.FRAGMENT_OFFSET_MASK)) != 0)
        {
            return notOurs(frame, NotOursReason.IP_FRAGMENT);
        }
        if (Wire.u8Of(second, Ipv4Header.PROTOCOL_OFFSET - IPV4_SECOND_WORD) != Ipv4Header.PROTOCOL_UDP)
        {
            return notOurs(frame, NotOursReason.NON_UDP);
        }
        return parseUdp(s, l3 + headerLength, totalLength - headerLength, frame);
    }

    private static void decodeIpv4(final RoceFrameMainCopy frame, final long l3, final int headerLength, final long first,
        final long second, final int destination)
    {
        frame.ipOffset = l3;
        frame.ipVersion = 4;
        frame.ipHeaderLength = headerLength;
        final int tos = Wire.u8Of(first, Ipv4Header.TOS_OFFSET);
        frame.dscp = tos >>> 2;
        frame.ecn = tos & 0x3;
        frame.ttl = Wire.u8Of(second, Ipv4Header.TTL_OFFSET - IPV4_SECOND_WORD);
        frame.flowLabel = 0;
        frame.ipv4Source = Wire.i32Of(second, Ipv4Header.SOURCE_ADDRESS_OFFSET - IPV4_SECOND_WORD);
        frame.ipv4Destination = destination;
    }

    /** The header's 32-bit words summed, as {@link Ipv4Header#isChecksumValid} sums them, from the reads made. */
    private static long ipv4HeaderSum(final MemorySegment s, final long l3, final int headerLength, final long first,
        final long second, final int destination)
    {
        long sum = (first >>> 32) + (first & 0xFFFF_FFFFL) + (second >>> 32) + (second & 0xFFFF_FFFFL) +
            Integer.toUnsignedLong(destination);
        for (int option = Ipv4Header.LENGTH; option < headerLength; option += 4)
        {
            sum += Integer.toUnsignedLong(Wire.i32(s, l3 + option));
        }
        return sum;
    }

    private FrameClass parseIpv6(final MemorySegment s, final long l3, final long available, final RoceFrameMainCopy frame)
    {
        if (available < Ipv6Header.LENGTH)
        {
            return malformed(frame, MalformedReason.TRUNCATED_IP);
        }
        // version/traffic class/flow label, payload length, next header, hop limit
        final long first = Wire.i64(s, l3);
        final int versionClassFlow = Wire.i32Of(first, Ipv6Header.VERSION_CLASS_FLOW_OFFSET);
        if (versionClassFlow >>> 28 != 6)
        {
            return malformed(frame, MalformedReason.BAD_IP_VERSION);
        }
        frame.ipOffset = l3;
        frame.ipVersion = 6;
        frame.ipHeaderLength = Ipv6Header.LENGTH;
        final int trafficClass = (versionClassFlow >>> 20) & 0xFF;
        frame.dscp = trafficClass >>> 2;
        frame.ecn = trafficClass & 0x3;
        frame.flowLabel = versionClassFlow & 0xFFFFF;
        frame.ttl = Wire.u8Of(first, Ipv6Header.HOP_LIMIT_OFFSET);
        frame.ipv6SourceHigh = Wire.i64(s, l3 + Ipv6Header.SOURCE_ADDRESS_OFFSET);
        frame.ipv6SourceLow = Wire.i64(s, l3 + Ipv6Header.SOURCE_ADDRESS_OFFSET + 8);
        frame.ipv6DestinationHigh = Wire.i64(s, l3 + Ipv6Header.DESTINATION_ADDRESS_OFFSET);
        frame.ipv6DestinationLow = Wire.i64(s, l3 + Ipv6Header.DESTINATION_ADDRESS_OFFSET + 8);
        final int payloadLength = Wire.u16Of(first, Ipv6Header.PAYLOAD_LENGTH_OFFSET);
        if (payloadLength > available - Ipv6Header.LENGTH)
        {
            return malformed(frame, MalformedReason.TRUNCATED_IP);
        }
        if (Wire.u8Of(first, Ipv6Header.NEXT_HEADER_OFFSET) != Ipv6Header.NEXT_HEADER_UDP)
        {
            return notOurs(frame, NotOursReason.NON_UDP);
        }
        return parseUdp(s, l3 + Ipv6Header.LENGTH, payloadLength, frame);
    }

    private FrameClass parseUdp(final MemorySegment s, final long l4, final int l4Length, final RoceFrameMainCopy frame)
    {
        if (l4Length < UdpHeader.LENGTH)
        {
            return malformed(frame, MalformedReason.TRUNCATED_UDP);
        }
        // the whole UDP header: ports, length, checksum
        final long udp = Wire.i64(s, l4);
        final int destinationPort = Wire.u16Of(udp, UdpHeader.DESTINATION_PORT_OFFSET);
        final int udpLength = Wire.u16Of(udp, UdpHeader.LENGTH_OFFSET);
        frame.udpOffset = l4;
        frame.udpSourcePort = Wire.u16Of(udp, UdpHeader.SOURCE_PORT_OFFSET);
        frame.udpDestinationPort = destinationPort;
        frame.udpLength = udpLength;
        frame.udpChecksum = Wire.u16Of(udp, UdpHeader.CHECKSUM_OFFSET);
        if (destinationPort != UdpHeader.ROCE_V2_PORT)
        {
            return notOurs(frame, NotOursReason.OTHER_UDP_PORT);
        }
        if (udpLength != l4Length)
        {
            return malformed(frame, MalformedReason.BAD_UDP_LENGTH);
        }
        if (udpLength - UdpHeader.LENGTH < BaseTransportHeader.LENGTH + Icrc.LENGTH)
        {
            return malformed(frame, MalformedReason.TRUNCATED_BTH);
        }
        return parseBth(s, l4 + UdpHeader.LENGTH, l4 + udpLength - Icrc.LENGTH, frame);
    }

    private FrameClass parseBth(final MemorySegment s, final long bth, final long icrcOffset, final RoceFrameMainCopy frame)
    {
        // opcode, flags, P_Key, resv8a, destination QP; then the last four bytes: AckReq/resv7, PSN
        decodeBth(frame, bth, Wire.i64(s, bth), Wire.i32(s, bth + BaseTransportHeader.ACK_REQ_OFFSET));
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

    private static void decodeBth(final RoceFrameMainCopy frame, final long bth, final long bthFirst, final int bthLast)
    {
        frame.bthOffset = bth;
        frame.opcode = Wire.u8Of(bthFirst, BaseTransportHeader.OPCODE_OFFSET);
        final int flags = Wire.u8Of(bthFirst, BaseTransportHeader.FLAGS_OFFSET);
        frame.solicited = (flags & BaseTransportHeader.SOLICITED_FLAG) != 0;
        frame.migReq = (flags & BaseTransportHeader.MIG_REQ_FLAG) != 0;
        frame.padCount = (flags >>> 4) & 0x3;
        frame.tver = flags & 0xF;
        frame.pkey = Wire.u16Of(bthFirst, BaseTransportHeader.PKEY_OFFSET);
        frame.resv8a = Wire.u8Of(bthFirst, BaseTransportHeader.RESV8A_OFFSET);
        frame.destQp = Wire.u24Of(bthFirst, BaseTransportHeader.DEST_QP_OFFSET);
        frame.ackReq = (Wire.u8Of(bthLast, 0) & BaseTransportHeader.ACK_REQ_FLAG) != 0;
        frame.psn = Wire.u24Of(bthLast, BaseTransportHeader.PSN_OFFSET - BaseTransportHeader.ACK_REQ_OFFSET);
    }

    private MalformedReason parseTransport(final MemorySegment s, final long bth, final long icrcOffset,
        final RoceFrameMainCopy frame)
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
        walkExtensionHeaders(s, entry, extensions, frame);
        return judgePayload(entry, payload, icrcOffset, frame);
    }

    /** Every header read lies in [extensions, payload), inside the packet: the caller checked that. */
    private static void walkExtensionHeaders(final MemorySegment s, final int entry, final long extensions,
        final RoceFrameMainCopy frame)
    {
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
            frame.rethVirtualAddress = Wire.i64(s, at + RdmaExtendedTransportHeader.VIRTUAL_ADDRESS_OFFSET);
            // R_Key and DMA length: one read
            final long keyAndLength = Wire.i64(s, at + RdmaExtendedTransportHeader.RKEY_OFFSET);
            frame.rethRkey = Wire.i32Of(keyAndLength, 0);
            frame.rethDmaLength = Wire.i32Of(keyAndLength,
                RdmaExtendedTransportHeader.DMA_LENGTH_OFFSET - RdmaExtendedTransportHeader.RKEY_OFFSET);
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
            final int aeth = Wire.i32(s, at);
            frame.aethSyndrome = Wire.u8Of(aeth, AckExtendedTransportHeader.SYNDROME_OFFSET);
            frame.aethMsn = Wire.u24Of(aeth, AckExtendedTransportHeader.MSN_OFFSET);
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
            frame.immediateData = Wire.i32(s, at + ImmediateDataHeader.IMMEDIATE_DATA_OFFSET);
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
    }

    private static MalformedReason judgePayload(final int entry, final long payload, final long icrcOffset,
        final RoceFrameMainCopy frame)
    {
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

    private FrameClass malformed(final RoceFrameMainCopy frame, final MalformedReason reason)
    {
        frame.frameClass = FrameClass.MALFORMED;
        frame.malformedReason = reason;
        counters.increment(ParseCounters.MALFORMED_BASE + reason.ordinal());
        return FrameClass.MALFORMED;
    }

    private FrameClass notOurs(final RoceFrameMainCopy frame, final NotOursReason reason)
    {
        frame.frameClass = FrameClass.NOT_OURS;
        frame.notOursReason = reason;
        counters.increment(ParseCounters.NOT_OURS);
        return FrameClass.NOT_OURS;
    }
}
