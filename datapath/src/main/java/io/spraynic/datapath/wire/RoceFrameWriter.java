package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Builds RoCEv2 frames in place: Ethernet (optional 802.1Q tag), IPv4 or IPv6, UDP, BTH, the extension
 * headers of the opcode, pad bytes and ICRC, around a payload already in the buffer or copied in.
 * <p>
 * Set the path once ({@link #ethernet}, {@link #ipv4}/{@link #ipv6}, {@link #udpSourcePort}...), then per
 * packet the BTH and extension-header fields ({@link #opcode}, {@link #psn}, {@link #reth}...) and call
 * {@link #writeFrame}. Setters return {@code this}; nothing allocates. The path's Ethernet and IP bytes are kept
 * as a template and copied in whole words; setting a path field to the value it has costs nothing, changing one
 * rebuilds the template at the next frame. Writes:
 * <ul>
 *     <li>IPv4: DF set, an incrementing identification, the header checksum;</li>
 *     <li>UDP: destination port 4791, length; checksum 0 over IPv4 (RoCEv2 annex A17.4.3 and RFC 768);
 *     over IPv6 the real checksum unless turned off with {@link #ipv6UdpChecksum(boolean)} (RFC 8200
 *     forbids a zero UDP checksum over IPv6, and Wireshark flags it; RoCEv2 receivers ignore it);</li>
 *     <li>BTH: pad count to align the payload to 4 bytes, TVer 0, resv8a and resv7 zero;</li>
 *     <li>zeroed pad bytes, then the ICRC; frames shorter than {@link #minimumFrameLength} (60 by default,
 *     the Ethernet minimum without FCS) are padded with zeros after the IP packet.</li>
 * </ul>
 * Not thread-safe: one writer per sending thread.
 */
public final class RoceFrameWriter
{
    // the longest Ethernet + IP part of a header template: tagged Ethernet and IPv6
    private static final int TEMPLATE_CAPACITY = EthernetHeader.VLAN_LENGTH + Ipv6Header.LENGTH;
    private static final int IPV4_VERSION_IHL = 0x45;
    private static final int IPV6_VERSION = 6;

    private final OpcodeTable opcodes;
    private final Icrc icrc = new Icrc();
    private RoceFrameTemplate template; // made on first use: most writers never use one

    // The Ethernet and IP bytes that stay the same from frame to frame of a path (MACs, VLAN tag, EtherType; IPv4
    // flags, TTL, protocol and addresses; IPv6 next header, hop limit and addresses), stored in whole big-endian
    // words and copied in a few wide stores per frame; the fields that change (IP version word with the traffic
    // class and length, identification, IPv4 checksum) are patched after the copy (issue 13: the writer cost more
    // than the protocol work per 64 B packet). Rebuilt only when a setter changes a byte it holds.
    private final MemorySegment templateBytes = MemorySegment.ofArray(new byte[TEMPLATE_CAPACITY + Long.BYTES]);
    private final long[] templateWords = new long[(TEMPLATE_CAPACITY + Long.BYTES - 1) / Long.BYTES];
    private int templateLength;
    private boolean templateStale = true;
    // one's complement sum of the template's IPv4 header with TOS, total length, identification and checksum 0:
    // the checksum of a frame is this plus its own three fields, folded (RFC 1071, updated as RFC 1624 allows)
    private long ipv4TemplateSum;

    private long sourceMac;
    private long destinationMac;
    private int vlanTci = -1;
    private int ipVersion = 4;
    private int ipv4Source;
    private int ipv4Destination;
    private long ipv6SourceHigh;
    private long ipv6SourceLow;
    private long ipv6DestinationHigh;
    private long ipv6DestinationLow;
    private int dscp;
    private int ecn;
    private int ttl = 64;
    private int flowLabel;
    private int ipv4Identification;
    private boolean ipv6UdpChecksum = true;
    private int udpSourcePort = 0xC000;
    private int minimumFrameLength = EthernetHeader.MIN_FRAME_LENGTH;

    private int opcode = Opcode.RC_SEND_ONLY;
    private boolean solicited;
    private boolean migReq;
    private int pkey = BaseTransportHeader.DEFAULT_PKEY;
    private int resv8a;
    private int destQp;
    private boolean ackReq;
    private int psn;
    private long rethVirtualAddress;
    private int rethRkey;
    private int rethDmaLength;
    private int aethSyndrome;
    private int aethMsn;
    private int immediateData;
    private int iethRkey;
    private int dethQkey;
    private int dethSourceQp;
    private long atomicVirtualAddress;
    private int atomicRkey;
    private long atomicSwapAdd;
    private long atomicCompare;
    private long atomicAckOriginal;
    private boolean tagNext;
    private long tagKey0;
    private long tagKey1;

    /**
     * A writer of the standard RoCEv2 opcodes.
     */
    public RoceFrameWriter()
    {
        this(OpcodeTable.ROCE_V2);
    }

    /**
     * @param opcodes the opcodes this writer may write (manufacturer opcodes: the caller fills in their
     *                own header, like the payload, before {@link #writeFrame}).
     */
    public RoceFrameWriter(final OpcodeTable opcodes)
    {
        this.opcodes = opcodes;
    }

    /**
     * @param source      source MAC in the low 48 bits.
     * @param destination destination MAC in the low 48 bits.
     * @return this.
     */
    public RoceFrameWriter ethernet(final long source, final long destination)
    {
        templateStale |= source != sourceMac || destination != destinationMac;
        sourceMac = source;
        destinationMac = destination;
        return this;
    }

    /**
     * @param tci 802.1Q tag control information (see {@link EthernetHeader#tci}), or -1 for untagged frames.
     * @return this.
     */
    public RoceFrameWriter vlan(final int tci)
    {
        final int newTci = tci < 0 ? -1 : tci & 0xFFFF;
        templateStale |= newTci != vlanTci;
        vlanTci = newTci;
        return this;
    }

    /**
     * @param source      IPv4 source address.
     * @param destination IPv4 destination address.
     * @return this.
     */
    public RoceFrameWriter ipv4(final int source, final int destination)
    {
        templateStale |= ipVersion != 4 || source != ipv4Source || destination != ipv4Destination;
        ipVersion = 4;
        ipv4Source = source;
        ipv4Destination = destination;
        return this;
    }

    /**
     * @param sourceHigh      first 8 bytes of the IPv6 source address.
     * @param sourceLow       last 8 bytes of the IPv6 source address.
     * @param destinationHigh first 8 bytes of the IPv6 destination address.
     * @param destinationLow  last 8 bytes of the IPv6 destination address.
     * @return this.
     */
    public RoceFrameWriter ipv6(final long sourceHigh, final long sourceLow, final long destinationHigh,
        final long destinationLow)
    {
        templateStale |= ipVersion != 6 || sourceHigh != ipv6SourceHigh || sourceLow != ipv6SourceLow ||
            destinationHigh != ipv6DestinationHigh || destinationLow != ipv6DestinationLow;
        ipVersion = 6;
        ipv6SourceHigh = sourceHigh;
        ipv6SourceLow = sourceLow;
        ipv6DestinationHigh = destinationHigh;
        ipv6DestinationLow = destinationLow;
        return this;
    }

    /** @param dscp DSCP (0-63). @return this. */
    public RoceFrameWriter dscp(final int dscp)
    {
        this.dscp = dscp & 0x3F;
        return this;
    }

    /** @param ecn ECN codepoint (0-3; RoCEv2 senders use 1 or 2, ECT). @return this. */
    public RoceFrameWriter ecn(final int ecn)
    {
        this.ecn = ecn & 0x3;
        return this;
    }

    /** @param ttl IPv4 TTL or IPv6 hop limit. @return this. */
    public RoceFrameWriter ttl(final int ttl)
    {
        templateStale |= (ttl & 0xFF) != this.ttl;
        this.ttl = ttl & 0xFF;
        return this;
    }

    /** @param flowLabel IPv6 flow label (20 bits). @return this. */
    public RoceFrameWriter flowLabel(final int flowLabel)
    {
        this.flowLabel = flowLabel & 0xFFFFF;
        return this;
    }

    /** @param identification IPv4 identification of the next frame (then incremented per frame). @return this. */
    public RoceFrameWriter ipv4Identification(final int identification)
    {
        this.ipv4Identification = identification & 0xFFFF;
        return this;
    }

    /** @param enabled whether to compute the UDP checksum over IPv6 (default true). @return this. */
    public RoceFrameWriter ipv6UdpChecksum(final boolean enabled)
    {
        this.ipv6UdpChecksum = enabled;
        return this;
    }

    /** @param port UDP source port: the flow (or path) entropy for ECMP. @return this. */
    public RoceFrameWriter udpSourcePort(final int port)
    {
        this.udpSourcePort = port & 0xFFFF;
        return this;
    }

    /** @param length frames shorter than this are zero-padded to it (0 to never pad). @return this. */
    public RoceFrameWriter minimumFrameLength(final int length)
    {
        this.minimumFrameLength = length;
        return this;
    }

    /** @param opcode BTH opcode, registered in this writer's table. @return this. */
    public RoceFrameWriter opcode(final int opcode)
    {
        this.opcode = opcode & 0xFF;
        return this;
    }

    /** @param solicited BTH solicited-event bit. @return this. */
    public RoceFrameWriter solicited(final boolean solicited)
    {
        this.solicited = solicited;
        return this;
    }

    /** @param migReq BTH migration-request bit. @return this. */
    public RoceFrameWriter migReq(final boolean migReq)
    {
        this.migReq = migReq;
        return this;
    }

    /** @param pkey BTH partition key. @return this. */
    public RoceFrameWriter pkey(final int pkey)
    {
        this.pkey = pkey & 0xFFFF;
        return this;
    }

    /** @param resv8a BTH byte 4 (e.g. {@link BaseTransportHeader#BECN_FLAG} in a CNP). @return this. */
    public RoceFrameWriter resv8a(final int resv8a)
    {
        this.resv8a = resv8a & 0xFF;
        return this;
    }

    /** @param destQp BTH destination QP (24 bits). @return this. */
    public RoceFrameWriter destQp(final int destQp)
    {
        this.destQp = destQp & BaseTransportHeader.QP_MASK;
        return this;
    }

    /** @param ackReq BTH ack-request bit. @return this. */
    public RoceFrameWriter ackReq(final boolean ackReq)
    {
        this.ackReq = ackReq;
        return this;
    }

    /** @param psn BTH packet sequence number (24 bits). @return this. */
    public RoceFrameWriter psn(final int psn)
    {
        this.psn = psn & BaseTransportHeader.PSN_MASK;
        return this;
    }

    /**
     * @param virtualAddress RETH virtual address.
     * @param rkey           RETH remote key.
     * @param dmaLength      RETH DMA length.
     * @return this.
     */
    public RoceFrameWriter reth(final long virtualAddress, final int rkey, final int dmaLength)
    {
        rethVirtualAddress = virtualAddress;
        rethRkey = rkey;
        rethDmaLength = dmaLength;
        return this;
    }

    /**
     * @param syndrome AETH syndrome.
     * @param msn      AETH message sequence number (24 bits).
     * @return this.
     */
    public RoceFrameWriter aeth(final int syndrome, final int msn)
    {
        aethSyndrome = syndrome & 0xFF;
        aethMsn = msn & 0xFF_FFFF;
        return this;
    }

    /** @param immediateData ImmDt value. @return this. */
    public RoceFrameWriter immediate(final int immediateData)
    {
        this.immediateData = immediateData;
        return this;
    }

    /** @param rkey IETH remote key to invalidate. @return this. */
    public RoceFrameWriter ieth(final int rkey)
    {
        this.iethRkey = rkey;
        return this;
    }

    /**
     * @param qkey     DETH queue key.
     * @param sourceQp DETH source QP.
     * @return this.
     */
    public RoceFrameWriter deth(final int qkey, final int sourceQp)
    {
        dethQkey = qkey;
        dethSourceQp = sourceQp & 0xFF_FFFF;
        return this;
    }

    /**
     * @param virtualAddress AtomicETH virtual address.
     * @param rkey           AtomicETH remote key.
     * @param swapAdd        swap (CmpSwap) or add (FetchAdd) data.
     * @param compare        compare data.
     * @return this.
     */
    public RoceFrameWriter atomic(final long virtualAddress, final int rkey, final long swapAdd, final long compare)
    {
        atomicVirtualAddress = virtualAddress;
        atomicRkey = rkey;
        atomicSwapAdd = swapAdd;
        atomicCompare = compare;
        return this;
    }

    /** @param originalData AtomicAckETH original remote data. @return this. */
    public RoceFrameWriter atomicAck(final long originalData)
    {
        atomicAckOriginal = originalData;
        return this;
    }

    /**
     * @return this writer's {@link RoceFrameTemplate} (one per writer, made on the first call, sharing the writer's
     * ICRC engine): the headers of the flow that last captured it, for frames written without the setters.
     */
    public RoceFrameTemplate template()
    {
        if (null == template)
        {
            template = new RoceFrameTemplate(this, icrc);
        }
        return template;
    }

    boolean ipv6UdpChecksumEnabled()
    {
        return ipv6UdpChecksum;
    }

    int minimumFrameLength()
    {
        return minimumFrameLength;
    }

    /** @return length of Ethernet and IP headers for the current settings. */
    private int l2l3Length()
    {
        return (vlanTci >= 0 ? EthernetHeader.VLAN_LENGTH : EthernetHeader.LENGTH) +
            (ipVersion == 4 ? Ipv4Header.LENGTH : Ipv6Header.LENGTH);
    }

    /**
     * Makes the next {@link #writeFrame} (and only it) authenticate the frame (docs/PROTOCOL.md S12.3): the last
     * 8 bytes of the manufacturer opcode's own header get the SipHash-2-4 tag, with this key, of the bytes from
     * the BTH's first byte to the tag's first, computed once the BTH is written and before the ICRC. Single
     * use, so that a writer shared by several senders never tags a frame that was not meant to be.
     *
     * @return this.
     */
    public RoceFrameWriter tagNext(final long key0, final long key1)
    {
        this.tagNext = true;
        this.tagKey0 = key0;
        this.tagKey1 = key1;
        return this;
    }

    /** Cancels a {@link #tagNext} whose frame was not written (no room in the output). @return this. */
    public RoceFrameWriter clearTag()
    {
        this.tagNext = false;
        return this;
    }

    /**
     * @return offset, from the frame start, where the payload goes for the current settings and opcode.
     */
    public int payloadOffset()
    {
        return l2l3Length() + UdpHeader.LENGTH + BaseTransportHeader.LENGTH +
            opcodes.extensionHeadersLength(opcode);
    }

    /**
     * @param payloadLength payload bytes.
     * @return the length {@link #writeFrame} will return for this payload.
     */
    public int frameLength(final int payloadLength)
    {
        final int length = payloadOffset() + payloadLength + ((-payloadLength) & 3) + Icrc.LENGTH;
        return Math.max(length, minimumFrameLength);
    }

    /**
     * Copies a payload into place, then writes the frame around it.
     *
     * @param buffer        memory to write the frame in.
     * @param offset        offset of the frame's first byte.
     * @param payload       memory holding the payload.
     * @param payloadOffset offset of the payload in {@code payload}.
     * @param payloadLength payload bytes.
     * @return the frame length.
     */
    public int writeFrame(final MemorySegment buffer, final long offset, final MemorySegment payload,
        final long payloadOffset, final int payloadLength)
    {
        MemorySegment.copy(payload, payloadOffset, buffer, offset + payloadOffset(), payloadLength);
        return writeFrame(buffer, offset, payloadLength);
    }

    /**
     * Writes the frame around a payload that is already at {@code offset + payloadOffset()} (and, for a
     * manufacturer opcode, its own header just after the BTH).
     *
     * @param buffer        memory to write the frame in.
     * @param offset        offset of the frame's first byte.
     * @param payloadLength payload bytes (0 for opcodes without payload).
     * @return the frame length, at least {@link #minimumFrameLength(int)}.
     * @throws IllegalArgumentException if the opcode is not registered, carries no payload but one is given,
     *                                  or the packet would exceed 65,535 bytes.
     */
    public int writeFrame(final MemorySegment buffer, final long offset, final int payloadLength)
    {
        final int entry = opcodes.entry(opcode);
        if ((entry & OpcodeTable.REGISTERED) == 0)
        {
            throw new IllegalArgumentException("opcode not registered: 0x" + Integer.toHexString(opcode));
        }
        if (payloadLength < 0 || (payloadLength > 0 && (entry & OpcodeTable.HAS_PAYLOAD) == 0))
        {
            throw new IllegalArgumentException("opcode 0x" + Integer.toHexString(opcode) + " cannot carry " +
                payloadLength + " payload bytes");
        }
        final boolean tagged = tagNext;
        tagNext = false;
        final int customLength = (entry >>> OpcodeTable.CUSTOM_LENGTH_SHIFT) & OpcodeTable.CUSTOM_LENGTH_MASK;
        if (tagged && customLength < SipHash.TAG_LENGTH)
        {
            throw new IllegalArgumentException("opcode 0x" + Integer.toHexString(opcode) + " has no header to carry a tag");
        }
        final int padCount = (-payloadLength) & 3;
        final int extensionsLength = OpcodeTable.extensionHeadersLengthOf(entry);
        final int udpLength = UdpHeader.LENGTH + BaseTransportHeader.LENGTH + extensionsLength + payloadLength +
            padCount + Icrc.LENGTH;
        if (udpLength + (ipVersion == 4 ? Ipv4Header.LENGTH : 0) > 0xFFFF)
        {
            throw new IllegalArgumentException("payload too large for one IP packet: " + payloadLength);
        }

        // Ethernet and IP from the path's template, then the fields of this frame
        if (templateStale)
        {
            rebuildTemplate();
        }
        copyTemplate(buffer, offset);
        final int trafficClass = (dscp << 2) | ecn;
        final long ip = offset + templateLength - (ipVersion == 4 ? Ipv4Header.LENGTH : Ipv6Header.LENGTH);
        final int ipHeaderLength;
        if (ipVersion == 4)
        {
            ipHeaderLength = Ipv4Header.LENGTH;
            final int totalLength = Ipv4Header.LENGTH + udpLength;
            Wire.put32(buffer, ip + Ipv4Header.VERSION_IHL_OFFSET,
                IPV4_VERSION_IHL << 24 | trafficClass << 16 | totalLength);
            Wire.put16(buffer, ip + Ipv4Header.IDENTIFICATION_OFFSET, ipv4Identification);
            Wire.put16(buffer, ip + Ipv4Header.CHECKSUM_OFFSET,
                Ipv4Header.fold(ipv4TemplateSum + trafficClass + totalLength + ipv4Identification));
            ipv4Identification = (ipv4Identification + 1) & 0xFFFF;
        }
        else
        {
            ipHeaderLength = Ipv6Header.LENGTH;
            Wire.put32(buffer, ip + Ipv6Header.VERSION_CLASS_FLOW_OFFSET,
                IPV6_VERSION << 28 | trafficClass << 20 | flowLabel);
            Wire.put16(buffer, ip + Ipv6Header.PAYLOAD_LENGTH_OFFSET, udpLength);
        }

        // UDP: ports, length, checksum 0 (over IPv6 computed last) in one store
        final long udp = ip + ipHeaderLength;
        buffer.set(Wire.LONG_BE, udp + UdpHeader.SOURCE_PORT_OFFSET, (long)udpSourcePort << 48 |
            (long)UdpHeader.ROCE_V2_PORT << 32 | (long)udpLength << 16);

        // BTH in three stores, then the extension headers
        final long bth = udp + UdpHeader.LENGTH;
        writeBth(buffer, bth, padCount);
        long at = bth + BaseTransportHeader.LENGTH + customLength;
        if (tagged)
        {
            final int covered = BaseTransportHeader.LENGTH + customLength - SipHash.TAG_LENGTH;
            buffer.set(Wire.LONG_BE, bth + covered, SipHash.hash(tagKey0, tagKey1, buffer, bth, covered));
        }
        if ((entry & OpcodeTable.HAS_DETH) != 0)
        {
            DatagramExtendedTransportHeader.qkey(buffer, at, dethQkey);
            DatagramExtendedTransportHeader.sourceQp(buffer, at, dethSourceQp);
            at += DatagramExtendedTransportHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_RETH) != 0)
        {
            RdmaExtendedTransportHeader.virtualAddress(buffer, at, rethVirtualAddress);
            RdmaExtendedTransportHeader.rkey(buffer, at, rethRkey);
            RdmaExtendedTransportHeader.dmaLength(buffer, at, rethDmaLength);
            at += RdmaExtendedTransportHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_ATOMIC_ETH) != 0)
        {
            AtomicExtendedTransportHeader.virtualAddress(buffer, at, atomicVirtualAddress);
            AtomicExtendedTransportHeader.rkey(buffer, at, atomicRkey);
            AtomicExtendedTransportHeader.swapAddData(buffer, at, atomicSwapAdd);
            AtomicExtendedTransportHeader.compareData(buffer, at, atomicCompare);
            at += AtomicExtendedTransportHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_AETH) != 0)
        {
            AckExtendedTransportHeader.syndrome(buffer, at, aethSyndrome);
            AckExtendedTransportHeader.msn(buffer, at, aethMsn);
            at += AckExtendedTransportHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_ATOMIC_ACK_ETH) != 0)
        {
            AtomicAckExtendedTransportHeader.originalData(buffer, at, atomicAckOriginal);
            at += AtomicAckExtendedTransportHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_IMMDT) != 0)
        {
            ImmediateDataHeader.immediateData(buffer, at, immediateData);
            at += ImmediateDataHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_IETH) != 0)
        {
            InvalidateExtendedTransportHeader.rkey(buffer, at, iethRkey);
            at += InvalidateExtendedTransportHeader.LENGTH;
        }
        if ((entry & OpcodeTable.HAS_CNP_BODY) != 0)
        {
            CongestionNotificationPacket.clearReserved(buffer, at);
            at += CongestionNotificationPacket.LENGTH;
        }

        return finish(buffer, offset, at + payloadLength, padCount, icrc, ip, ipVersion, ipHeaderLength, udp, udpLength,
            ipv6UdpChecksum, minimumFrameLength);
    }

    /**
     * A frame's tail, after its payload at {@code padOffset}: the pad, the ICRC, the UDP checksum over IPv6 (when
     * kept) and zeros up to the Ethernet minimum ({@link RoceFrameTemplate} ends its frames here too).
     *
     * @return the frame's length from {@code offset}.
     */
    static int finish(
        final MemorySegment buffer, final long offset, final long padOffset, final int padCount, final Icrc icrc,
        final long ip, final int ipVersion, final int ipHeaderLength, final long udp, final int udpLength,
        final boolean ipv6UdpChecksum, final int minimumFrameLength)
    {
        for (int i = 0; i < padCount; i++)
        {
            Wire.put8(buffer, padOffset + i, 0);
        }
        final long icrcOffset = padOffset + padCount;
        Icrc.write(buffer, icrcOffset, icrc.compute(buffer, ip, ipVersion, ipHeaderLength, icrcOffset));
        if (ipVersion == 6 && ipv6UdpChecksum)
        {
            UdpHeader.checksum(buffer, udp, UdpHeader.computeIpv6Checksum(buffer, ip, udp, udpLength));
        }
        final int length = (int)(icrcOffset + Icrc.LENGTH - offset);
        if (length < minimumFrameLength)
        {
            for (long i = offset + length, end = offset + minimumFrameLength; i < end; i++)
            {
                Wire.put8(buffer, i, 0);
            }
            return minimumFrameLength;
        }
        return length;
    }

    // BTH: opcode, flags (SE, M, pad count, TVer 0), P_Key; resv8a, destination QP; AckReq, resv7 0, PSN
    private void writeBth(final MemorySegment buffer, final long bth, final int padCount)
    {
        final int flags = (solicited ? BaseTransportHeader.SOLICITED_FLAG : 0) |
            (migReq ? BaseTransportHeader.MIG_REQ_FLAG : 0) | (padCount << 4);
        Wire.put32(buffer, bth + BaseTransportHeader.OPCODE_OFFSET, opcode << 24 | flags << 16 | pkey);
        Wire.put32(buffer, bth + BaseTransportHeader.RESV8A_OFFSET, resv8a << 24 | destQp);
        Wire.put32(buffer, bth + BaseTransportHeader.ACK_REQ_OFFSET,
            (ackReq ? BaseTransportHeader.ACK_REQ_FLAG << 24 : 0) | psn);
    }

    // Writes the path's Ethernet and IP headers the field-by-field way, once, into the template; the per-frame
    // fields are left 0 there and patched by writeFrame.
    private void rebuildTemplate()
    {
        final MemorySegment template = templateBytes;
        template.fill((byte)0);
        final int etherType = ipVersion == 4 ? EthernetHeader.ETHER_TYPE_IPV4 : EthernetHeader.ETHER_TYPE_IPV6;
        EthernetHeader.destinationMac(template, 0, destinationMac);
        EthernetHeader.sourceMac(template, 0, sourceMac);
        final int ip;
        if (vlanTci >= 0)
        {
            EthernetHeader.etherType(template, 0, EthernetHeader.ETHER_TYPE_VLAN);
            EthernetHeader.vlanTci(template, 0, vlanTci);
            EthernetHeader.vlanEtherType(template, 0, etherType);
            ip = EthernetHeader.VLAN_LENGTH;
        }
        else
        {
            EthernetHeader.etherType(template, 0, etherType);
            ip = EthernetHeader.LENGTH;
        }
        if (ipVersion == 4)
        {
            Ipv4Header.write(template, ip, 0, 0, 0, ttl, Ipv4Header.PROTOCOL_UDP, ipv4Source, ipv4Destination);
            Wire.put16(template, ip + Ipv4Header.CHECKSUM_OFFSET, 0);
            ipv4TemplateSum = ~Ipv4Header.computeChecksum(template, ip, Ipv4Header.LENGTH) & 0xFFFF;
            templateLength = ip + Ipv4Header.LENGTH;
        }
        else
        {
            Ipv6Header.write(template, ip, 0, 0, 0, Ipv6Header.NEXT_HEADER_UDP, ttl, ipv6SourceHigh, ipv6SourceLow,
                ipv6DestinationHigh, ipv6DestinationLow);
            templateLength = ip + Ipv6Header.LENGTH;
        }
        for (int word = 0; word < templateWords.length; word++)
        {
            templateWords[word] = template.get(Wire.LONG_BE, (long)word * Long.BYTES);
        }
        templateStale = false;
    }

    // whole words, then the 2-6 bytes left (every template length is 2 mod 4) from the next word's high bytes
    private void copyTemplate(final MemorySegment buffer, final long offset)
    {
        final long[] words = templateWords;
        final int whole = templateLength >>> 3;
        for (int word = 0; word < whole; word++)
        {
            buffer.set(Wire.LONG_BE, offset + ((long)word << 3), words[word]);
        }
        final long rest = words[whole];
        long at = offset + ((long)whole << 3);
        int shift = 48;
        if ((templateLength & 4) != 0)
        {
            Wire.put32(buffer, at, (int)(rest >>> 32));
            at += 4;
            shift = 16;
        }
        Wire.put16(buffer, at, (int)(rest >>> shift));
    }
}
