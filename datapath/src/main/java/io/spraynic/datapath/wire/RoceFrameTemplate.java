package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * The headers of one flow's frames, Ethernet to BTH, taken once from a {@link RoceFrameWriter}'s settings and
 * then written per frame in a few wide stores, with only what changes from frame to frame patched: the IP and UDP
 * lengths, the IPv4 checksum, the UDP source port, the BTH's opcode, SE bit, pad count, AckReq bit and PSN. Then
 * pad, ICRC, the UDP checksum over IPv6 (when the writer computes it) and the Ethernet minimum, as the writer
 * does. A frame written here is byte for byte the frame the writer writes with the same settings
 * ({@code RoceFrameTemplateTest}); what it saves is the writer's per-frame setter calls, opcode-table lookups and
 * checks (issue 13: a spray data packet set twelve fields of its plane's writer to the values they already had).
 * <p>
 * One template per writer ({@link RoceFrameWriter#template()}), shared by the writer's flows the way the writer's
 * own Ethernet/IP template is: {@link #capture} records which flow it holds (a number naming the flow and a key, e.g.
 * the next hop's MAC), and a flow checks {@link #heldBy} before each frame and captures again when it does not hold
 * it. Numbers, not references: a template keeps no closed connection alive.
 * The template copies the writer's settings at capture, not later changes: capture again after changing any of
 * them. Extension headers and payload are the caller's to write, at {@link #headerLength()} from the frame's start;
 * the caller keeps the frame within one IP packet (no check here: no exception on the per-packet path).
 * Allocation-free after construction; not thread-safe (one per writer, one writer per sending thread).
 */
public final class RoceFrameTemplate
{
    // the longest header it holds: tagged Ethernet, IPv6, UDP, BTH (78 bytes)
    private static final int CAPACITY = EthernetHeader.VLAN_LENGTH + Ipv6Header.LENGTH + UdpHeader.LENGTH +
        BaseTransportHeader.LENGTH;
    private static final int SCRATCH_LENGTH = 512;
    // what BTH byte 1 keeps of the capture: MigReq (SE, pad count and TVer are per frame: TVer 0)
    private static final int BTH_FIXED_MASK = BaseTransportHeader.MIG_REQ_FLAG << 16 | 0xFFFF;
    private static final long NO_FLOW = Long.MIN_VALUE;

    private final RoceFrameWriter writer;
    private final Icrc icrc;
    private final MemorySegment scratch = MemorySegment.ofArray(new byte[SCRATCH_LENGTH]);
    private final long[] words = new long[(CAPACITY + Long.BYTES - 1) / Long.BYTES + 1];
    private int headerLength;
    private int ipOffset;
    private int ipVersion;
    private int ipHeaderLength;
    private long ipv4Sum; // the IPv4 header's 16-bit words but total length and checksum: fold(sum + length)
    private int bthFixed; // BTH word 0 without opcode, SE, pad count
    private boolean ipv6UdpChecksum;
    private int minimumFrameLength;
    private long ownerFlow = NO_FLOW;
    private long ownerKey;

    RoceFrameTemplate(final RoceFrameWriter writer, final Icrc icrc)
    {
        this.writer = writer;
        this.icrc = icrc;
    }

    /**
     * @param flow the flow's number given to {@link #capture}.
     * @param key  the key given to {@link #capture}.
     * @return whether this template holds that flow's headers.
     */
    public boolean heldBy(final long flow, final long key)
    {
        return ownerFlow == flow && ownerKey == key && flow != NO_FLOW;
    }

    /** Forgets the flow it holds: the next {@link #heldBy} is false for every flow. */
    public void release()
    {
        ownerFlow = NO_FLOW;
    }

    /**
     * Takes the writer's current settings (addresses, VLAN, DSCP and ECN, TTL, flow label, IPv4 identification,
     * P_Key, MigReq, resv8a, destination QP, the UDP checksum choice over IPv6, the minimum frame length) as the
     * headers of {@code flow}'s frames, by writing a header-only frame through the writer: whatever the writer
     * writes, the template writes. The writer's opcode must be registered and no tag pending ({@link
     * RoceFrameWriter#tagNext}). Control path: once per flow that takes over the writer.
     *
     * @param flow a number naming the flow, unique among the writer's flows ({@link Long#MIN_VALUE} names none).
     * @param key  a value of the flow's that changes its headers (0 if none).
     */
    public void capture(final long flow, final long key)
    {
        writer.writeFrame(scratch, 0, 0);
        final boolean tagged = Wire.u16(scratch, EthernetHeader.ETHER_TYPE_OFFSET) == EthernetHeader.ETHER_TYPE_VLAN;
        ipOffset = tagged ? EthernetHeader.VLAN_LENGTH : EthernetHeader.LENGTH;
        ipVersion = Wire.u8(scratch, ipOffset) >>> 4;
        ipHeaderLength = ipVersion == 4 ? Ipv4Header.LENGTH : Ipv6Header.LENGTH;
        headerLength = ipOffset + ipHeaderLength + UdpHeader.LENGTH + BaseTransportHeader.LENGTH;
        long sum = 0;
        if (ipVersion == 4)
        {
            for (int at = 0; at < Ipv4Header.LENGTH; at += 2)
            {
                if (at != Ipv4Header.TOTAL_LENGTH_OFFSET && at != Ipv4Header.CHECKSUM_OFFSET)
                {
                    sum += Wire.u16(scratch, ipOffset + at);
                }
            }
        }
        ipv4Sum = sum;
        bthFixed = Wire.i32(scratch, headerLength - BaseTransportHeader.LENGTH) & BTH_FIXED_MASK;
        ipv6UdpChecksum = writer.ipv6UdpChecksumEnabled();
        minimumFrameLength = writer.minimumFrameLength();
        for (int word = 0; word < words.length; word++)
        {
            words[word] = scratch.get(Wire.LONG_BE, (long)word * Long.BYTES);
        }
        ownerFlow = flow;
        ownerKey = key;
    }

    /** @return offset, from the frame's start, of the first byte after the BTH: the extension headers go there. */
    public int headerLength()
    {
        return headerLength;
    }

    /**
     * @param extensionsLength bytes of extension headers after the BTH.
     * @param payloadLength    payload bytes after them.
     * @return the length {@link #write} returns for them.
     */
    public int frameLength(final int extensionsLength, final int payloadLength)
    {
        return Math.max(headerLength + extensionsLength + payloadLength + ((-payloadLength) & 3) + Icrc.LENGTH,
            minimumFrameLength);
    }

    /**
     * Writes the frame around extension headers and payload the caller already wrote at {@code offset +
     * headerLength()}: the captured headers with this frame's fields, pad, ICRC, the UDP checksum over IPv6,
     * zeros to the minimum frame length.
     *
     * @return the frame length, {@link #frameLength}.
     */
    public int write(
        final MemorySegment buffer, final long offset, final int sourcePort, final int opcode, final boolean solicited,
        final boolean ackReq, final int psn, final int extensionsLength, final int payloadLength)
    {
        final int padCount = (-payloadLength) & 3;
        final int udpLength = UdpHeader.LENGTH + BaseTransportHeader.LENGTH + extensionsLength + payloadLength +
            padCount + Icrc.LENGTH;
        copyHeader(buffer, offset);
        final long ip = offset + ipOffset;
        if (ipVersion == 4)
        {
            final int totalLength = Ipv4Header.LENGTH + udpLength;
            Wire.put16(buffer, ip + Ipv4Header.TOTAL_LENGTH_OFFSET, totalLength);
            Wire.put16(buffer, ip + Ipv4Header.CHECKSUM_OFFSET, Ipv4Header.fold(ipv4Sum + totalLength));
        }
        else
        {
            Wire.put16(buffer, ip + Ipv6Header.PAYLOAD_LENGTH_OFFSET, udpLength);
        }
        final long udp = ip + ipHeaderLength;
        buffer.set(Wire.LONG_BE, udp + UdpHeader.SOURCE_PORT_OFFSET, (long)(sourcePort & 0xFFFF) << 48 |
            (long)UdpHeader.ROCE_V2_PORT << 32 | (long)udpLength << 16);
        final long bth = udp + UdpHeader.LENGTH;
        Wire.put32(buffer, bth + BaseTransportHeader.OPCODE_OFFSET, (opcode & 0xFF) << 24 |
            (solicited ? BaseTransportHeader.SOLICITED_FLAG << 16 : 0) | padCount << 20 | bthFixed);
        Wire.put32(buffer, bth + BaseTransportHeader.ACK_REQ_OFFSET,
            (ackReq ? BaseTransportHeader.ACK_REQ_FLAG << 24 : 0) | psn & BaseTransportHeader.PSN_MASK);

        return RoceFrameWriter.finish(buffer, offset, bth + BaseTransportHeader.LENGTH + extensionsLength + payloadLength,
            padCount, icrc, ip, ipVersion, ipHeaderLength, udp, udpLength, ipv6UdpChecksum, minimumFrameLength);
    }

    // whole words, then the 2 or 6 bytes left (every header length is 2 mod 4) from the next word's high bytes:
    // nothing past the BTH is touched
    private void copyHeader(final MemorySegment buffer, final long offset)
    {
        final long[] header = words;
        final int whole = headerLength >>> 3;
        for (int word = 0; word < whole; word++)
        {
            buffer.set(Wire.LONG_BE, offset + ((long)word << 3), header[word]);
        }
        final long rest = header[whole];
        long at = offset + ((long)whole << 3);
        int shift = 48;
        if ((headerLength & 4) != 0)
        {
            Wire.put32(buffer, at, (int)(rest >>> 32));
            at += 4;
            shift = 16;
        }
        Wire.put16(buffer, at, (int)(rest >>> shift));
    }
}
