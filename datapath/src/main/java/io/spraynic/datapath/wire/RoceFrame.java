package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * The reusable result of {@link RoceParser#parse}: header offsets (absolute, in the parsed segment) and
 * decoded fields as primitives. One instance per parsing thread, overwritten by each parse.
 * <p>
 * Fields are filled as far as parsing got: a frame malformed at the UDP layer still has its IP fields.
 * Offsets are -1 and {@link #ipVersion()} is 0 where a header was not reached (or not present); the
 * {@code has*} methods say which groups are valid. For {@link FrameClass#ROCE} every header the opcode
 * carries is set, as are {@link #payloadOffset()}, {@link #payloadLength()} and the ICRC fields.
 */
public final class RoceFrame
{
    MemorySegment segment;
    long frameOffset;
    int frameLength;
    FrameClass frameClass;
    MalformedReason malformedReason;
    NotOursReason notOursReason;

    int vlanTci;
    int etherType;

    long ipOffset;
    int ipVersion;
    int ipHeaderLength;
    int trafficClass; // IPv4 TOS or IPv6 traffic class: DSCP and ECN, split on demand
    int ttl;
    int flowLabel;
    int ipv4Source;
    int ipv4Destination;
    long ipv6SourceHigh;
    long ipv6SourceLow;
    long ipv6DestinationHigh;
    long ipv6DestinationLow;

    long udpOffset;
    long udpHeader; // the whole UDP header as read, its fields taken out on demand

    long bthOffset;
    long bthHead; // BTH bytes 0-7 as read: opcode, flags, P_Key, resv8a, destination QP
    int bthTail; // BTH bytes 8-11 as read: AckReq, resv7, PSN

    long dethOffset;
    long rethOffset;
    long atomicEthOffset;
    long aethOffset;
    long atomicAckEthOffset;
    long immDtOffset;
    long iethOffset;
    long cnpOffset;
    long customHeaderOffset;
    int customHeaderLength;

    long rethVirtualAddress;
    int rethRkey;
    int rethDmaLength;
    int aeth; // the AETH as read: syndrome, MSN
    int immediateData;

    long payloadOffset;
    int payloadLength;

    long icrcOffset;
    int icrcReceived;
    int icrcComputed;
    boolean icrcChecked;

    /*
     * How far a parse got: a parse that stops marks every group from its level on absent (clearFrom), and one that
     * succeeds writes every field itself, so no parse stores a field twice (a full reset before each parse was ~2-3 ns
     * of the header walk's ~21, benchmarks/RESULTS.md section 50a).
     */
    static final int FROM_ETHERNET = 0;
    static final int FROM_IP = 1;
    static final int FROM_UDP = 2;
    static final int FROM_BTH = 3;
    static final int FROM_EXTENSIONS = 4;
    static final int FROM_PAYLOAD = 5;
    static final int NOTHING = 6;

    void begin(final MemorySegment segment, final long offset, final int length)
    {
        this.segment = segment;
        frameOffset = offset;
        frameLength = length;
    }

    /** @param level the first group the parse did not write: it and every later one read as absent. */
    void clearFrom(final int level)
    {
        switch (level)
        {
            case FROM_ETHERNET:
                vlanTci = -1;
                etherType = -1;
                // fall through
            case FROM_IP:
                ipOffset = -1;
                ipVersion = 0;
                ipHeaderLength = 0;
                // fall through
            case FROM_UDP:
                udpOffset = -1;
                // fall through
            case FROM_BTH:
                bthOffset = -1;
                icrcOffset = -1;
                icrcChecked = false;
                // fall through
            case FROM_EXTENSIONS:
                noExtensionHeaders();
                // fall through
            case FROM_PAYLOAD:
                payloadOffset = -1;
                payloadLength = -1;
                break;
            default:
                break;
        }
    }

    void noExtensionHeaders()
    {
        dethOffset = -1;
        rethOffset = -1;
        atomicEthOffset = -1;
        aethOffset = -1;
        atomicAckEthOffset = -1;
        immDtOffset = -1;
        iethOffset = -1;
        cnpOffset = -1;
        customHeaderOffset = -1;
        customHeaderLength = 0;
    }

    /** @return the segment last parsed (the frame's memory). */
    public MemorySegment segment()
    {
        return segment;
    }

    /** @return offset of the frame's first byte in {@link #segment()}. */
    public long frameOffset()
    {
        return frameOffset;
    }

    /** @return length of the frame as given to the parser (may include Ethernet padding). */
    public int frameLength()
    {
        return frameLength;
    }

    /** @return the parse outcome. */
    public FrameClass frameClass()
    {
        return frameClass;
    }

    /** @return why the frame is malformed, or null. */
    public MalformedReason malformedReason()
    {
        return malformedReason;
    }

    /** @return why the frame is not ours, or null. */
    public NotOursReason notOursReason()
    {
        return notOursReason;
    }

    /** @return true if the frame is a well-formed RoCEv2 packet. */
    public boolean isRoce()
    {
        return frameClass == FrameClass.ROCE;
    }

    /** @return the 802.1Q tag control information, or -1 if untagged. */
    public int vlanTci()
    {
        return vlanTci;
    }

    /** @return the EtherType of the payload (after any VLAN tag), or -1 if not reached. */
    public int etherType()
    {
        return etherType;
    }

    /** @return true if the IP fields are set (the IP header was within the frame). */
    public boolean hasIp()
    {
        return ipVersion != 0;
    }

    /** @return offset of the IP header, or -1. */
    public long ipOffset()
    {
        return ipOffset;
    }

    /** @return 4 or 6, or 0 if no IP header was decoded. */
    public int ipVersion()
    {
        return ipVersion;
    }

    /** @return IP header length in bytes (IPv4 with options, 40 for IPv6). */
    public int ipHeaderLength()
    {
        return ipHeaderLength;
    }

    /** @return the DSCP. */
    public int dscp()
    {
        return trafficClass >>> 2;
    }

    /** @return the ECN codepoint (3 = congestion experienced). */
    public int ecn()
    {
        return trafficClass & 0x3;
    }

    /** @return IPv4 TTL or IPv6 hop limit. */
    public int ttl()
    {
        return ttl;
    }

    /** @return the IPv6 flow label (0 for IPv4). */
    public int flowLabel()
    {
        return flowLabel;
    }

    /** @return the IPv4 source address. */
    public int ipv4Source()
    {
        return ipv4Source;
    }

    /** @return the IPv4 destination address. */
    public int ipv4Destination()
    {
        return ipv4Destination;
    }

    /** @return first 8 bytes of the IPv6 source address. */
    public long ipv6SourceHigh()
    {
        return ipv6SourceHigh;
    }

    /** @return last 8 bytes of the IPv6 source address. */
    public long ipv6SourceLow()
    {
        return ipv6SourceLow;
    }

    /** @return first 8 bytes of the IPv6 destination address. */
    public long ipv6DestinationHigh()
    {
        return ipv6DestinationHigh;
    }

    /** @return last 8 bytes of the IPv6 destination address. */
    public long ipv6DestinationLow()
    {
        return ipv6DestinationLow;
    }

    /** @return true if the UDP fields are set. */
    public boolean hasUdp()
    {
        return udpOffset >= 0;
    }

    /** @return offset of the UDP header, or -1. */
    public long udpOffset()
    {
        return udpOffset;
    }

    /** @return UDP source port (the flow entropy in RoCEv2). */
    public int udpSourcePort()
    {
        return Wire.u16Of(udpHeader, UdpHeader.SOURCE_PORT_OFFSET);
    }

    /** @return UDP destination port. */
    public int udpDestinationPort()
    {
        return Wire.u16Of(udpHeader, UdpHeader.DESTINATION_PORT_OFFSET);
    }

    /** @return UDP length field. */
    public int udpLength()
    {
        return Wire.u16Of(udpHeader, UdpHeader.LENGTH_OFFSET);
    }

    /** @return UDP checksum field. */
    public int udpChecksum()
    {
        return Wire.u16Of(udpHeader, UdpHeader.CHECKSUM_OFFSET);
    }

    /** @return true if the BTH fields are set. */
    public boolean hasBth()
    {
        return bthOffset >= 0;
    }

    /** @return offset of the BTH, or -1. */
    public long bthOffset()
    {
        return bthOffset;
    }

    private int bthFlags()
    {
        return Wire.u8Of(bthHead, BaseTransportHeader.FLAGS_OFFSET);
    }

    /** @return the opcode. */
    public int opcode()
    {
        return Wire.u8Of(bthHead, BaseTransportHeader.OPCODE_OFFSET);
    }

    /** @return the solicited-event bit. */
    public boolean solicited()
    {
        return (bthFlags() & BaseTransportHeader.SOLICITED_FLAG) != 0;
    }

    /** @return the migration-request bit. */
    public boolean migReq()
    {
        return (bthFlags() & BaseTransportHeader.MIG_REQ_FLAG) != 0;
    }

    /** @return the pad count. */
    public int padCount()
    {
        return (bthFlags() >>> 4) & 0x3;
    }

    /** @return the transport header version. */
    public int tver()
    {
        return bthFlags() & 0xF;
    }

    /** @return the partition key. */
    public int pkey()
    {
        return Wire.u16Of(bthHead, BaseTransportHeader.PKEY_OFFSET);
    }

    /** @return BTH byte 4 (FECN/BECN in InfiniBand). */
    public int resv8a()
    {
        return Wire.u8Of(bthHead, BaseTransportHeader.RESV8A_OFFSET);
    }

    /** @return the 24-bit destination QP. */
    public int destQp()
    {
        return Wire.u24Of(bthHead, BaseTransportHeader.DEST_QP_OFFSET);
    }

    /** @return the ack-request bit. */
    public boolean ackReq()
    {
        return (Wire.u8Of(bthTail, 0) & BaseTransportHeader.ACK_REQ_FLAG) != 0;
    }

    /** @return the 24-bit PSN. */
    public int psn()
    {
        return Wire.u24Of(bthTail, BaseTransportHeader.PSN_OFFSET - BaseTransportHeader.ACK_REQ_OFFSET);
    }

    /** @return offset of the DETH, or -1. */
    public long dethOffset()
    {
        return dethOffset;
    }

    /** @return offset of the RETH, or -1. */
    public long rethOffset()
    {
        return rethOffset;
    }

    /** @return offset of the AtomicETH, or -1. */
    public long atomicEthOffset()
    {
        return atomicEthOffset;
    }

    /** @return offset of the AETH, or -1. */
    public long aethOffset()
    {
        return aethOffset;
    }

    /** @return offset of the AtomicAckETH, or -1. */
    public long atomicAckEthOffset()
    {
        return atomicAckEthOffset;
    }

    /** @return offset of the ImmDt, or -1. */
    public long immDtOffset()
    {
        return immDtOffset;
    }

    /** @return offset of the IETH, or -1. */
    public long iethOffset()
    {
        return iethOffset;
    }

    /** @return offset of a CNP's 16 reserved bytes, or -1. */
    public long cnpOffset()
    {
        return cnpOffset;
    }

    /** @return offset of a manufacturer opcode's own header, or -1. */
    public long customHeaderOffset()
    {
        return customHeaderOffset;
    }

    /** @return length of a manufacturer opcode's own header. */
    public int customHeaderLength()
    {
        return customHeaderLength;
    }

    /** @return true if a RETH was decoded. */
    public boolean hasReth()
    {
        return rethOffset >= 0;
    }

    /** @return RETH virtual address (unsigned). */
    public long rethVirtualAddress()
    {
        return rethVirtualAddress;
    }

    /** @return RETH remote key (unsigned). */
    public int rethRkey()
    {
        return rethRkey;
    }

    /** @return RETH DMA length (unsigned). */
    public int rethDmaLength()
    {
        return rethDmaLength;
    }

    /** @return true if an AETH was decoded. */
    public boolean hasAeth()
    {
        return aethOffset >= 0;
    }

    /** @return AETH syndrome. */
    public int aethSyndrome()
    {
        return Wire.u8Of(aeth, AckExtendedTransportHeader.SYNDROME_OFFSET);
    }

    /** @return AETH message sequence number. */
    public int aethMsn()
    {
        return Wire.u24Of(aeth, AckExtendedTransportHeader.MSN_OFFSET);
    }

    /** @return true if an ImmDt was decoded. */
    public boolean hasImmediate()
    {
        return immDtOffset >= 0;
    }

    /** @return the immediate data. */
    public int immediateData()
    {
        return immediateData;
    }

    /** @return true if payload offset and length are set. */
    public boolean hasPayload()
    {
        return payloadLength >= 0;
    }

    /** @return offset of the payload (after all extension headers), or -1. */
    public long payloadOffset()
    {
        return payloadOffset;
    }

    /** @return payload length without pad bytes and ICRC, or -1. */
    public int payloadLength()
    {
        return payloadLength;
    }

    /** @return true if the ICRC bytes are within the frame ({@link #icrcReceived()} is set). */
    public boolean hasIcrc()
    {
        return icrcOffset >= 0;
    }

    /** @return offset of the ICRC, or -1. */
    public long icrcOffset()
    {
        return icrcOffset;
    }

    /** @return the ICRC as received (CRC value; {@link Icrc#wireOrder} gives the wire bytes). */
    public int icrcReceived()
    {
        return icrcReceived;
    }

    /** @return the ICRC computed over the frame, if {@link #icrcChecked()}. */
    public int icrcComputed()
    {
        return icrcComputed;
    }

    /** @return true if the ICRC was verified (then {@link #icrcValid()} is meaningful). */
    public boolean icrcChecked()
    {
        return icrcChecked;
    }

    /** @return true if the ICRC was verified and matched. */
    public boolean icrcValid()
    {
        return icrcChecked && icrcReceived == icrcComputed;
    }

    /** @return a description of the outcome and the decoded headers, for debugging. */
    @Override
    public String toString()
    {
        final StringBuilder sb = new StringBuilder("RoceFrame{").append(frameClass);
        if (malformedReason != null)
        {
            sb.append(' ').append(malformedReason);
        }
        if (notOursReason != null)
        {
            sb.append(' ').append(notOursReason);
        }
        if (hasIp())
        {
            sb.append(", ").append(ipVersion == 4 ? Ipv4Header.toString(segment, ipOffset) :
                Ipv6Header.toString(segment, ipOffset));
        }
        if (hasUdp())
        {
            sb.append(", ").append(UdpHeader.toString(segment, udpOffset));
        }
        if (hasBth())
        {
            sb.append(", ").append(BaseTransportHeader.toString(segment, bthOffset));
        }
        if (dethOffset >= 0)
        {
            sb.append(", ").append(DatagramExtendedTransportHeader.toString(segment, dethOffset));
        }
        if (hasReth())
        {
            sb.append(", ").append(RdmaExtendedTransportHeader.toString(segment, rethOffset));
        }
        if (atomicEthOffset >= 0)
        {
            sb.append(", ").append(AtomicExtendedTransportHeader.toString(segment, atomicEthOffset));
        }
        if (hasAeth())
        {
            sb.append(", ").append(AckExtendedTransportHeader.toString(segment, aethOffset));
        }
        if (atomicAckEthOffset >= 0)
        {
            sb.append(", ").append(AtomicAckExtendedTransportHeader.toString(segment, atomicAckEthOffset));
        }
        if (hasImmediate())
        {
            sb.append(", ").append(ImmediateDataHeader.toString(segment, immDtOffset));
        }
        if (iethOffset >= 0)
        {
            sb.append(", ").append(InvalidateExtendedTransportHeader.toString(segment, iethOffset));
        }
        if (cnpOffset >= 0)
        {
            sb.append(", ").append(CongestionNotificationPacket.toString(segment, cnpOffset));
        }
        if (hasPayload())
        {
            sb.append(", payload=").append(payloadLength).append("B@").append(payloadOffset);
        }
        if (hasIcrc())
        {
            sb.append(String.format(", icrc=%08x", Icrc.wireOrder(icrcReceived)));
            if (icrcChecked)
            {
                sb.append(icrcValid() ? " ok" : String.format(" (computed %08x)", Icrc.wireOrder(icrcComputed)));
            }
        }
        return sb.append('}').toString();
    }
}
