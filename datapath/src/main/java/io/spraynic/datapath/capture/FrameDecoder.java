package io.spraynic.datapath.capture;

import io.spraynic.datapath.wire.AckExtendedTransportHeader;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.PlaneAddress;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.ImmediateDataHeader;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.ProbeHeader;
import io.spraynic.datapath.wire.RdmaExtendedTransportHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.Wire;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;

/**
 * Decodes captured frames with our {@link RoceParser} and renders each as one line of text or one JSON
 * object: the engine of {@code spraynic decode FILE.pcap [--json]}.
 * <p>
 * The JSON object has exactly these keys, in this order, {@code null} where the parser did not reach or
 * the packet does not carry the field: {@code frame} (0-based index), {@code valid}, {@code error}
 * (a {@link io.spraynic.datapath.wire.MalformedReason} name, {@code "NOT_OURS"}, or
 * {@code "UNSUPPORTED_LINK_TYPE"}; null when valid), {@code ipVersion}, {@code srcIp}, {@code dstIp},
 * {@code ecn}, {@code udpSrcPort}, {@code udpDstPort}, {@code opcode}, {@code solicited}, {@code migReq},
 * {@code padCount}, {@code tver}, {@code pkey}, {@code destQp}, {@code ackReq}, {@code psn}, {@code rethVa}
 * (unsigned decimal string), {@code rethRkey}, {@code rethLength}, {@code aethSyndrome}, {@code aethMsn},
 * {@code immediate} (unsigned), {@code payloadLength} (data bytes without pad and ICRC), {@code icrc}
 * (the four ICRC bytes in wire order, 8 lower-case hex digits, as Wireshark shows them),
 * {@code icrcValid}, {@code spray} (null, or every field of the spray headers: {@link SprayHeaderLayouts}).
 * RETH and immediate keys are also filled from a spray opcode's RETH and ImmDt. Numbers are decimal; IPv6
 * addresses are in RFC 5952 form. A malformed frame shows every field the parser read and every spray
 * header field before its ICRC.
 */
public final class FrameDecoder
{
    /** The {@code error} of frames that are not RoCEv2. */
    public static final String NOT_OURS = "NOT_OURS";
    /** The {@code error} of frames of a link type we do not parse. */
    public static final String UNSUPPORTED_LINK_TYPE = "UNSUPPORTED_LINK_TYPE";

    private final ParseCounters counters;
    private final RoceParser parser;
    private final RoceFrame frame = new RoceFrame();

    /**
     * A decoder with its own parser (RoCEv2 and spray opcodes, ICRC verified) and counters.
     */
    public FrameDecoder()
    {
        this(new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), true));
    }

    /**
     * @param parser the parser to decode with; its counters are the decoder's.
     */
    public FrameDecoder(final RoceParser parser)
    {
        this.parser = parser;
        this.counters = parser.counters();
    }

    /** @return the parser's counters. */
    public ParseCounters counters()
    {
        return counters;
    }

    /**
     * Parses one frame.
     *
     * @param segment  memory holding the frame.
     * @param offset   offset of its first byte.
     * @param length   its captured length.
     * @param linkType its link type: {@link LinkType#ETHERNET} or {@link LinkType#RAW}.
     * @return the parse result (reused by the next call), or null for other link types.
     */
    public RoceFrame parse(final MemorySegment segment, final long offset, final int length, final int linkType)
    {
        if (linkType == LinkType.ETHERNET)
        {
            parser.parse(segment, offset, length, frame);
            return frame;
        }
        if (linkType == LinkType.RAW)
        {
            parser.parseIpPacket(segment, offset, length, frame);
            return frame;
        }
        return null;
    }

    /**
     * Decodes every frame of a pcap or pcapng file and prints one line per frame.
     *
     * @param file a pcap or pcapng file.
     * @param json true for one JSON object per line, false for text.
     * @param out  where the lines go.
     * @return the counts.
     * @throws IOException if the file cannot be read or is not a well-formed capture file.
     */
    public static DecodeSummary decode(final Path file, final boolean json, final PrintStream out) throws IOException
    {
        final FrameDecoder decoder = new FrameDecoder();
        final StringBuilder line = new StringBuilder(512);
        long frames = 0;
        long unsupported = 0;
        try (PcapReader reader = PcapReader.open(file))
        {
            while (reader.next())
            {
                final RoceFrame parsed = decoder.parse(reader.data(), reader.frameOffset(), reader.capturedLength(),
                    reader.linkType());
                if (parsed == null)
                {
                    unsupported++;
                }
                line.setLength(0);
                if (json)
                {
                    appendJson(line, reader.frameIndex(), parsed);
                }
                else
                {
                    appendText(line, reader.frameIndex(), parsed);
                }
                out.println(line);
                frames++;
            }
        }
        final ParseCounters counters = decoder.counters();
        return new DecodeSummary(frames, counters.get(ParseCounters.ROCE), counters.get(ParseCounters.NOT_OURS),
            counters.malformed(), unsupported, counters);
    }

    /**
     * @param frame a parse result, or null for an unsupported link type.
     * @return the {@code error} value: null when valid.
     */
    public static String error(final RoceFrame frame)
    {
        if (frame == null)
        {
            return UNSUPPORTED_LINK_TYPE;
        }
        return switch (frame.frameClass())
        {
            case ROCE -> null;
            case NOT_OURS -> NOT_OURS;
            case MALFORMED -> frame.malformedReason().name();
        };
    }

    /**
     * @param frame a parse result.
     * @return the source IP address as text, or null.
     */
    public static String sourceIp(final RoceFrame frame)
    {
        if (frame == null || !frame.hasIp())
        {
            return null;
        }
        return frame.ipVersion() == 4 ? Wire.ipv4ToString(frame.ipv4Source()) :
            Wire.ipv6ToString(frame.ipv6SourceHigh(), frame.ipv6SourceLow());
    }

    /**
     * @param frame a parse result.
     * @return the destination IP address as text, or null.
     */
    public static String destinationIp(final RoceFrame frame)
    {
        if (frame == null || !frame.hasIp())
        {
            return null;
        }
        return frame.ipVersion() == 4 ? Wire.ipv4ToString(frame.ipv4Destination()) :
            Wire.ipv6ToString(frame.ipv6DestinationHigh(), frame.ipv6DestinationLow());
    }

    /**
     * Appends the JSON object of one frame (no newline).
     *
     * @param sb    where to append.
     * @param index 0-based frame index.
     * @param frame the parse result, or null for an unsupported link type.
     */
    public static void appendJson(final StringBuilder sb, final long index, final RoceFrame frame)
    {
        final boolean ip = frame != null && frame.hasIp();
        final boolean udp = frame != null && frame.hasUdp();
        final boolean bth = frame != null && frame.hasBth();
        final boolean reth = frame != null && frame.hasReth();
        final boolean aeth = frame != null && frame.hasAeth();
        sb.append('{');
        sb.append("\"frame\":").append(index);
        sb.append(",\"valid\":").append(frame != null && frame.frameClass() == FrameClass.ROCE);
        sb.append(",\"error\":");
        string(sb, error(frame));
        sb.append(",\"ipVersion\":");
        number(sb, ip, ip ? frame.ipVersion() : 0);
        sb.append(",\"srcIp\":");
        string(sb, sourceIp(frame));
        sb.append(",\"dstIp\":");
        string(sb, destinationIp(frame));
        sb.append(",\"ecn\":");
        number(sb, ip, ip ? frame.ecn() : 0);
        sb.append(",\"udpSrcPort\":");
        number(sb, udp, udp ? frame.udpSourcePort() : 0);
        sb.append(",\"udpDstPort\":");
        number(sb, udp, udp ? frame.udpDestinationPort() : 0);
        sb.append(",\"opcode\":");
        number(sb, bth, bth ? frame.opcode() : 0);
        sb.append(",\"solicited\":");
        bool(sb, bth, bth && frame.solicited());
        sb.append(",\"migReq\":");
        bool(sb, bth, bth && frame.migReq());
        sb.append(",\"padCount\":");
        number(sb, bth, bth ? frame.padCount() : 0);
        sb.append(",\"tver\":");
        number(sb, bth, bth ? frame.tver() : 0);
        sb.append(",\"pkey\":");
        number(sb, bth, bth ? frame.pkey() : 0);
        sb.append(",\"destQp\":");
        number(sb, bth, bth ? frame.destQp() : 0);
        sb.append(",\"ackReq\":");
        bool(sb, bth, bth && frame.ackReq());
        sb.append(",\"psn\":");
        number(sb, bth, bth ? frame.psn() : 0);
        // a spray opcode's RETH and ImmDt follow its SETH (S3.1, S3.3): the parser knows them only as its custom header
        final long sprayVa = SprayHeaderLayouts.fieldOffset(frame, SprayHeaderLayouts.RETH, "va");
        final long sprayRkey = SprayHeaderLayouts.fieldOffset(frame, SprayHeaderLayouts.RETH, "rkey");
        final long sprayLength = SprayHeaderLayouts.fieldOffset(frame, SprayHeaderLayouts.RETH, "length");
        sb.append(",\"rethVa\":");
        string(sb, reth ? Long.toUnsignedString(frame.rethVirtualAddress()) :
            sprayVa >= 0 ? Long.toUnsignedString(RdmaExtendedTransportHeader.virtualAddress(frame.segment(), sprayVa)) : null);
        sb.append(",\"rethRkey\":");
        u32(sb, reth, frame == null ? 0 : frame.rethRkey(), frame, sprayRkey);
        sb.append(",\"rethLength\":");
        u32(sb, reth, frame == null ? 0 : frame.rethDmaLength(), frame, sprayLength);
        sb.append(",\"aethSyndrome\":");
        number(sb, aeth, aeth ? frame.aethSyndrome() : 0);
        sb.append(",\"aethMsn\":");
        number(sb, aeth, aeth ? frame.aethMsn() : 0);
        final boolean immediate = frame != null && frame.hasImmediate();
        sb.append(",\"immediate\":");
        u32(sb, immediate, immediate ? frame.immediateData() : 0, frame,
            SprayHeaderLayouts.fieldOffset(frame, SprayHeaderLayouts.IMMDT, "immediate"));
        final boolean payload = frame != null && frame.hasPayload();
        sb.append(",\"payloadLength\":");
        number(sb, payload, payload ? frame.payloadLength() : 0);
        final boolean icrc = frame != null && frame.hasIcrc();
        sb.append(",\"icrc\":");
        string(sb, icrc ? hex8(Icrc.wireOrder(frame.icrcReceived())) : null);
        sb.append(",\"icrcValid\":");
        bool(sb, icrc && frame.icrcChecked(), icrc && frame.icrcValid());
        sb.append(",\"spray\":");
        SprayHeaderLayouts.appendJson(sb, frame);
        sb.append('}');
    }

    /**
     * Appends the human-readable line of one frame (no newline), e.g.
     * {@code #0 RoCEv2 IPv4 10.0.0.1:49152 > 10.0.0.2:4791 ecn=0 RC_SEND_ONLY qp=0x000123 psn=7 pad=1 len=3 icrc=9ab26762 ok}.
     *
     * @param sb    where to append.
     * @param index 0-based frame index.
     * @param frame the parse result, or null for an unsupported link type.
     */
    public static void appendText(final StringBuilder sb, final long index, final RoceFrame frame)
    {
        sb.append('#').append(index).append(' ');
        if (frame == null)
        {
            sb.append(UNSUPPORTED_LINK_TYPE);
            return;
        }
        switch (frame.frameClass())
        {
            case ROCE -> sb.append("RoCEv2");
            case NOT_OURS -> sb.append("NOT_OURS ").append(frame.notOursReason());
            case MALFORMED -> sb.append("MALFORMED ").append(frame.malformedReason());
        }
        if (frame.vlanTci() >= 0)
        {
            sb.append(" vlan=").append(frame.vlanTci() & 0xFFF).append('/').append(frame.vlanTci() >>> 13);
        }
        if (frame.hasIp())
        {
            sb.append(frame.ipVersion() == 4 ? " IPv4 " : " IPv6 ").append(sourceIp(frame));
            if (frame.hasUdp())
            {
                sb.append(':').append(frame.udpSourcePort());
            }
            sb.append(" > ").append(destinationIp(frame));
            if (frame.hasUdp())
            {
                sb.append(':').append(frame.udpDestinationPort());
            }
            sb.append(" dscp=").append(frame.dscp()).append(" ecn=").append(frame.ecn());
        }
        else if (frame.etherType() >= 0)
        {
            sb.append(String.format(" ethertype=0x%04x", frame.etherType()));
        }
        if (frame.hasBth())
        {
            final String sprayName = SprayOpcodes.name(frame.opcode());
            sb.append(' ').append(null != sprayName ? sprayName : Opcode.name(frame.opcode()))
                .append(String.format(" qp=0x%06x", frame.destQp()))
                .append(" psn=").append(frame.psn());
            if (frame.solicited())
            {
                sb.append(" se");
            }
            if (frame.migReq())
            {
                sb.append(" m");
            }
            if (frame.ackReq())
            {
                sb.append(" ack-req");
            }
            sb.append(" pad=").append(frame.padCount());
            if (frame.tver() != 0)
            {
                sb.append(" tver=").append(frame.tver());
            }
            sb.append(String.format(" pkey=0x%04x", frame.pkey()));
        }
        if (frame.hasReth())
        {
            sb.append(String.format(" reth(va=0x%x rkey=0x%08x len=%d)", frame.rethVirtualAddress(), frame.rethRkey(),
                Integer.toUnsignedLong(frame.rethDmaLength())));
        }
        if (frame.hasAeth())
        {
            final int syndrome = frame.aethSyndrome();
            final String kind = switch (AckExtendedTransportHeader.kind(syndrome))
            {
                case AckExtendedTransportHeader.KIND_ACK -> "ack";
                case AckExtendedTransportHeader.KIND_RNR_NAK -> "rnr-nak";
                case AckExtendedTransportHeader.KIND_NAK -> "nak";
                default -> "reserved";
            };
            sb.append(String.format(" aeth(%s/%d msn=%d)", kind, AckExtendedTransportHeader.value(syndrome),
                frame.aethMsn()));
        }
        if (frame.hasImmediate())
        {
            sb.append(String.format(" imm=0x%08x", frame.immediateData()));
        }
        if (frame.hasBth() && frame.customHeaderOffset() < 0)
        {
            SprayHeaderLayouts.appendReadableText(sb, frame); // the parser stopped before the headers: what they hold
        }
        else
        {
            appendSprayHeaders(sb, frame);
        }
        if (frame.hasPayload())
        {
            sb.append(" len=").append(frame.payloadLength());
        }
        if (frame.hasIcrc())
        {
            sb.append(" icrc=").append(hex8(Icrc.wireOrder(frame.icrcReceived())));
            if (frame.icrcChecked())
            {
                sb.append(frame.icrcValid() ? " ok" : " BAD (expected " + hex8(Icrc.wireOrder(frame.icrcComputed())) +
                    ")");
            }
        }
    }

    // docs/PROTOCOL.md S4.1 and S5.1: the spray headers that sit where RoCEv2 puts its extension headers.
    private static void appendSprayHeaders(final StringBuilder sb, final RoceFrame frame)
    {
        final int opcode = frame.opcode();
        if (!frame.hasBth() || null == SprayOpcodes.name(opcode) || frame.customHeaderOffset() < 0)
        {
            return;
        }
        final MemorySegment s = frame.segment();
        final long header = frame.customHeaderOffset();
        if (SprayOpcodes.isData(opcode) && frame.customHeaderLength() >= SprayExtendedTransportHeader.LENGTH)
        {
            final int flags = SprayExtendedTransportHeader.flags(s, header);
            final int attempt = SprayExtendedTransportHeader.attempt(s, header);
            sb.append(" seth(path=").append(SprayExtendedTransportHeader.path(s, header))
                .append(" stream=").append(SprayExtendedTransportHeader.stream(s, header))
                .append(" msn=").append(Integer.toUnsignedString(SprayExtendedTransportHeader.msn(s, header)))
                .append(" offset=").append(Integer.toUnsignedString(SprayExtendedTransportHeader.messageOffset(s, header)))
                .append(" length=").append(Integer.toUnsignedString(SprayExtendedTransportHeader.messageLength(s, header)))
                .append(opcode == SprayOpcodes.SEND || opcode == SprayOpcodes.SEND_WITH_IMMEDIATE ||
                    opcode == SprayOpcodes.WRITE_WITH_IMMEDIATE ?
                    " rsn=" + Integer.toUnsignedString(SprayExtendedTransportHeader.rsn(s, header)) : "")
                .append((flags & SprayExtendedTransportHeader.FLAG_RETRANSMIT) != 0 ? " retransmit" : "")
                .append((flags & SprayExtendedTransportHeader.FLAG_LAST) != 0 ? " last" : "")
                .append(attempt != 0 ? " attempt=" + attempt : "") // S9.3-3: an RNR retry's packets
                .append(')');
            if (frame.customHeaderLength() >= SprayExtendedTransportHeader.LENGTH + RdmaExtendedTransportHeader.LENGTH &&
                (opcode == SprayOpcodes.WRITE || opcode == SprayOpcodes.WRITE_WITH_IMMEDIATE || opcode == SprayOpcodes.READ_REQUEST))
            {
                final long reth = header + SprayExtendedTransportHeader.LENGTH;
                sb.append(String.format(" reth(va=0x%x rkey=0x%08x len=%d)",
                    RdmaExtendedTransportHeader.virtualAddress(s, reth), RdmaExtendedTransportHeader.rkey(s, reth),
                    Integer.toUnsignedLong(RdmaExtendedTransportHeader.dmaLength(s, reth))));
            }
            final long immediate = SprayHeaderLayouts.fieldOffset(frame, SprayHeaderLayouts.IMMDT, "immediate");
            if (immediate >= 0)
            {
                sb.append(String.format(" imm=0x%08x", ImmediateDataHeader.immediateData(s, immediate)));
            }
        }
        else if (opcode == SprayOpcodes.PROBE && frame.customHeaderLength() >= ProbeHeader.LENGTH)
        {
            sb.append(" probe(path=").append(ProbeHeader.path(s, header))
                .append(" nextPsn=").append(ProbeHeader.nextPsn(s, header))
                .append((ProbeHeader.flags(s, header) & ProbeHeader.FLAG_RESYNC) != 0 ? " resync" : "")
                .append(')');
        }
        else if (opcode == SprayOpcodes.ACK && frame.customHeaderLength() >= SelectiveAckHeader.LENGTH)
        {
            int received = 0;
            for (int word = 0; word < SelectiveAckHeader.SACK_BITS / Long.SIZE; word++)
            {
                received += Long.bitCount(SelectiveAckHeader.sackWord(s, header, word));
            }
            sb.append(" sack(path=").append(SelectiveAckHeader.path(s, header))
                .append(" cumulative=").append(SelectiveAckHeader.cumulativePsn(s, header))
                .append(" above=").append(received)
                .append(" ce=").append(SelectiveAckHeader.ceCount(s, header))
                .append(" rateHintMbps=").append(Integer.toUnsignedString(SelectiveAckHeader.rateHintMbps(s, header)))
                .append(" refusals=").append(Integer.toUnsignedString(SelectiveAckHeader.refusals(s, header)))
                .append(')');
        }
        else if ((opcode == SprayOpcodes.NACK || opcode == SprayOpcodes.QUERY) &&
            frame.customHeaderLength() >= NegativeAckHeader.LENGTH)
        {
            sb.append(opcode == SprayOpcodes.NACK ? " nack(syndrome=" : " query(syndrome=")
                .append(NegativeAckHeader.syndromeName(NegativeAckHeader.syndrome(s, header)));
            if (NegativeAckHeader.syndrome(s, header) == NegativeAckHeader.SYNDROME_RNR)
            {
                sb.append(" reason=").append(NegativeAckHeader.reasonName(NegativeAckHeader.reason(s, header)));
            }
            sb.append(" stream=").append(NegativeAckHeader.stream(s, header))
                .append(" msn=").append(Integer.toUnsignedString(NegativeAckHeader.msn(s, header)))
                .append(" rnrTimerMicros=").append(Integer.toUnsignedString(NegativeAckHeader.rnrTimerMicros(s, header)))
                .append(" refusal=").append(Integer.toUnsignedString(NegativeAckHeader.refusal(s, header)))
                .append(')');
        }
        else if ((opcode >= SprayOpcodes.CONNECT && opcode <= SprayOpcodes.CLOSE_ACK ||
            opcode == SprayOpcodes.CONNECT_RETRY || opcode == SprayOpcodes.CONNECT_REJECT) &&
            frame.customHeaderLength() >= ConnectionHeader.LENGTH)
        {
            sb.append(" conh(version=").append(ConnectionHeader.version(s, header))
                .append(" senderCid=").append(ConnectionHeader.senderCid(s, header))
                .append(" paths=").append(ConnectionHeader.paths(s, header))
                .append(" planes=").append(ConnectionHeader.planes(s, header))
                .append(" mtu=").append(ConnectionHeader.mtu(s, header))
                .append(" streams=").append(ConnectionHeader.streams(s, header))
                .append(" initialPsn=").append(ConnectionHeader.initialPsn(s, header))
                .append(" token=0x").append(Long.toHexString(ConnectionHeader.token(s, header)));
            if (opcode == SprayOpcodes.CONNECT_REJECT)
            {
                sb.append(" reason=").append(ConnectionHeader.reason(s, header));
            }
            if (opcode == SprayOpcodes.CONNECT || opcode == SprayOpcodes.CONNECT_ACK)
            {
                // S10.2: the limits advertised; 0 means none (the defaults)
                sb.append(" window=").append(ConnectionHeader.window(s, header))
                    .append(" reads=").append(ConnectionHeader.reads(s, header));
            }
            final int planes = ConnectionHeader.planes(s, header);
            // S5.5: in a CONNECT the address list follows the handshake block (S5.6)
            final long list = frame.payloadOffset() + HandshakeBlock.LENGTH;
            if (opcode == SprayOpcodes.CONNECT && (ConnectionHeader.flags(s, header) & ConnectionHeader.FLAG_ADDRESSES) != 0 &&
                frame.payloadLength() >= HandshakeBlock.LENGTH + planes * PlaneAddress.LENGTH)
            {
                sb.append(" addresses=[");
                for (int plane = 0; plane < planes; plane++)
                {
                    sb.append(plane == 0 ? "" : ", ").append(PlaneAddress.toString(s, PlaneAddress.entry(list, plane)));
                }
                sb.append(']');
            }
            sb.append(')');
        }
    }

    private static String hex8(final int value)
    {
        final String hex = Integer.toHexString(value);
        return "00000000".substring(hex.length()) + hex;
    }

    private static void number(final StringBuilder sb, final boolean present, final long value)
    {
        if (present)
        {
            sb.append(value);
        }
        else
        {
            sb.append("null");
        }
    }

    // an unsigned 32-bit value: the parser's when it has one, else the spray header's field at sprayOffset (-1: none)
    private static void u32(final StringBuilder sb, final boolean parsed, final int value, final RoceFrame frame,
        final long sprayOffset)
    {
        if (parsed)
        {
            sb.append(Integer.toUnsignedLong(value));
        }
        else if (sprayOffset >= 0)
        {
            sb.append(Integer.toUnsignedLong(frame.segment().get(Wire.INT_BE, sprayOffset)));
        }
        else
        {
            sb.append("null");
        }
    }

    private static void bool(final StringBuilder sb, final boolean present, final boolean value)
    {
        if (present)
        {
            sb.append(value);
        }
        else
        {
            sb.append("null");
        }
    }

    /**
     * Appends a JSON string literal (or null), escaping quotes, backslashes, control characters and,
     * as Python's json module does by default, every non-ASCII character.
     */
    static void string(final StringBuilder sb, final String value)
    {
        if (value == null)
        {
            sb.append("null");
            return;
        }
        sb.append('"');
        for (int i = 0; i < value.length(); i++)
        {
            final char c = value.charAt(i);
            switch (c)
            {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                case '\b' -> sb.append("\\b");
                case '\f' -> sb.append("\\f");
                default ->
                {
                    if (c < 0x20 || c > 0x7F)
                    {
                        sb.append(String.format("\\u%04x", (int)c));
                    }
                    else
                    {
                        sb.append(c);
                    }
                }
            }
        }
        sb.append('"');
    }
}
