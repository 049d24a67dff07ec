package io.spraynic.datapath.capture;

import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.ImmediateDataHeader;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.PlaneAddress;
import io.spraynic.datapath.wire.ProbeHeader;
import io.spraynic.datapath.wire.RdmaExtendedTransportHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.Wire;

import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * The spray headers of a frame as a JSON object for {@code spraynic decode --json}: every field of every
 * header its opcode carries, named as in the byte-offset tables of docs/PROTOCOL.md (S2.5, S3.1-S5.6), read
 * with the flyweights' offsets. A malformed frame shows every field that lies wholly before its ICRC, so a
 * truncated header shows the fields it holds (S3.1); the payload's blocks (HSB, address list) only when the
 * parser accepted the pad and payload length. Integers up to 32 bits are JSON numbers, 64-bit ones unsigned
 * decimal strings, byte strings lower-case hex.
 */
public final class SprayHeaderLayouts
{
    /** The field types of S2.5. */
    public enum Type
    {
        U8, U16, U24, U32, U64, BYTES
    }

    /** One row of a layout table. */
    public record Field(String name, int offset, int size, Type type)
    {
    }

    /** One header: its name in JSON and the spec, its length and its fields in offset order. */
    public record Layout(String name, int length, List<Field> fields)
    {
    }

    public static final Layout SETH = new Layout("seth", SprayExtendedTransportHeader.LENGTH, List.of(
        new Field("path", SprayExtendedTransportHeader.PATH_OFFSET, 1, Type.U8),
        new Field("flags", SprayExtendedTransportHeader.FLAGS_OFFSET, 1, Type.U8),
        new Field("stream", SprayExtendedTransportHeader.STREAM_OFFSET, 2, Type.U16),
        new Field("msn", SprayExtendedTransportHeader.MSN_OFFSET, 4, Type.U32),
        new Field("offset", SprayExtendedTransportHeader.MESSAGE_OFFSET_OFFSET, 4, Type.U32),
        new Field("length", SprayExtendedTransportHeader.MESSAGE_LENGTH_OFFSET, 4, Type.U32),
        new Field("rsn", SprayExtendedTransportHeader.RSN_OFFSET, 4, Type.U32),
        new Field("messageTag", SprayExtendedTransportHeader.MESSAGE_TAG_OFFSET, 8, Type.U64)));

    public static final Layout RETH = new Layout("reth", RdmaExtendedTransportHeader.LENGTH, List.of(
        new Field("va", RdmaExtendedTransportHeader.VIRTUAL_ADDRESS_OFFSET, 8, Type.U64),
        new Field("rkey", RdmaExtendedTransportHeader.RKEY_OFFSET, 4, Type.U32),
        new Field("length", RdmaExtendedTransportHeader.DMA_LENGTH_OFFSET, 4, Type.U32)));

    public static final Layout IMMDT = new Layout("immdt", ImmediateDataHeader.LENGTH, List.of(
        new Field("immediate", ImmediateDataHeader.IMMEDIATE_DATA_OFFSET, 4, Type.U32)));

    // the 24-bit fields sit in the low three bytes of a 32-bit word whose first byte is reserved (S2.5)
    public static final Layout SACKH = new Layout("sackh", SelectiveAckHeader.LENGTH, List.of(
        new Field("path", SelectiveAckHeader.PATH_OFFSET, 1, Type.U8),
        new Field("flags", SelectiveAckHeader.FLAGS_OFFSET, 1, Type.U8),
        new Field("ceCount", SelectiveAckHeader.CE_COUNT_OFFSET, 2, Type.U16),
        new Field("duplicates", SelectiveAckHeader.DUPLICATES_OFFSET, 1, Type.U8),
        new Field("cumulativePsn", SelectiveAckHeader.CUMULATIVE_PSN_OFFSET + 1, 3, Type.U24),
        new Field("sack", SelectiveAckHeader.SACK_OFFSET, SelectiveAckHeader.SACK_LENGTH, Type.BYTES),
        new Field("rateHint", SelectiveAckHeader.RATE_HINT_OFFSET, 4, Type.U32),
        new Field("ackSequence", SelectiveAckHeader.ACK_SEQUENCE_OFFSET, 4, Type.U32),
        new Field("refusals", SelectiveAckHeader.REFUSALS_OFFSET, 4, Type.U32),
        new Field("tag", SelectiveAckHeader.TAG_OFFSET, 8, Type.U64)));

    public static final Layout PRBH = new Layout("prbh", ProbeHeader.LENGTH, List.of(
        new Field("path", ProbeHeader.PATH_OFFSET, 1, Type.U8),
        new Field("flags", ProbeHeader.FLAGS_OFFSET, 1, Type.U8),
        new Field("reserved2", ProbeHeader.FLAGS_OFFSET + 1, 2, Type.U16),
        new Field("reserved4", ProbeHeader.NEXT_PSN_OFFSET, 1, Type.U8),
        new Field("nextPsn", ProbeHeader.NEXT_PSN_OFFSET + 1, 3, Type.U24),
        new Field("tag", ProbeHeader.TAG_OFFSET, 8, Type.U64)));

    public static final Layout NAKH = new Layout("nakh", NegativeAckHeader.LENGTH, List.of(
        new Field("syndrome", NegativeAckHeader.SYNDROME_OFFSET, 1, Type.U8),
        new Field("reason", NegativeAckHeader.REASON_OFFSET, 1, Type.U8),
        new Field("stream", NegativeAckHeader.STREAM_OFFSET, 2, Type.U16),
        new Field("msn", NegativeAckHeader.MSN_OFFSET, 4, Type.U32),
        new Field("rnrTimerMicros", NegativeAckHeader.RNR_TIMER_OFFSET, 4, Type.U32),
        new Field("refusal", NegativeAckHeader.REFUSAL_OFFSET, 4, Type.U32),
        new Field("tag", NegativeAckHeader.TAG_OFFSET, 8, Type.U64)));

    public static final Layout CONH = new Layout("conh", ConnectionHeader.LENGTH, List.of(
        new Field("version", ConnectionHeader.VERSION_OFFSET, 1, Type.U8),
        new Field("flags", ConnectionHeader.FLAGS_OFFSET, 1, Type.U8),
        new Field("paths", ConnectionHeader.PATHS_OFFSET, 1, Type.U8),
        new Field("planes", ConnectionHeader.PLANES_OFFSET, 1, Type.U8),
        new Field("mtu", ConnectionHeader.MTU_OFFSET, 2, Type.U16),
        new Field("streams", ConnectionHeader.STREAMS_OFFSET, 2, Type.U16),
        new Field("reserved8", ConnectionHeader.SENDER_CID_OFFSET, 1, Type.U8),
        new Field("senderCid", ConnectionHeader.SENDER_CID_OFFSET + 1, 3, Type.U24),
        new Field("reserved12", ConnectionHeader.INITIAL_PSN_OFFSET, 1, Type.U8),
        new Field("initialPsn", ConnectionHeader.INITIAL_PSN_OFFSET + 1, 3, Type.U24),
        new Field("ingressMbps", ConnectionHeader.INGRESS_MBPS_OFFSET, 4, Type.U32),
        new Field("token", ConnectionHeader.TOKEN_OFFSET, 8, Type.U64),
        new Field("reason", ConnectionHeader.REASON_OFFSET, 1, Type.U8),
        new Field("reads", ConnectionHeader.READS_OFFSET, 1, Type.U8),
        new Field("window", ConnectionHeader.WINDOW_OFFSET, 2, Type.U16),
        new Field("tag", ConnectionHeader.TAG_OFFSET, 8, Type.U64)));

    public static final Layout HSB = new Layout("hsb", HandshakeBlock.LENGTH, List.of(
        new Field("cookie", HandshakeBlock.COOKIE_OFFSET, HandshakeBlock.COOKIE_LENGTH, Type.BYTES),
        new Field("publicKey", HandshakeBlock.PUBLIC_KEY_OFFSET, HandshakeBlock.PUBLIC_KEY_LENGTH, Type.BYTES),
        new Field("proof", HandshakeBlock.PROOF_OFFSET, HandshakeBlock.PROOF_LENGTH, Type.BYTES)));

    public static final Layout ADDRESS = new Layout("address", PlaneAddress.LENGTH, List.of(
        new Field("flags", PlaneAddress.FLAGS_OFFSET, 1, Type.U8),
        new Field("reserved1", PlaneAddress.FLAGS_OFFSET + 1, 1, Type.U8),
        new Field("mac", PlaneAddress.MAC_OFFSET, 6, Type.BYTES),
        new Field("address", PlaneAddress.ADDRESS_OFFSET, 16, Type.BYTES)));

    /** Every layout, the headers after the BTH first, then the payload's blocks. */
    public static final List<Layout> ALL = List.of(SETH, RETH, IMMDT, SACKH, PRBH, NAKH, CONH, HSB, ADDRESS);

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private SprayHeaderLayouts()
    {
    }

    /**
     * @return the headers after the BTH of a spray opcode, in wire order (S3.1), or null for any other opcode.
     */
    public static List<Layout> headersAfterBth(final int opcode)
    {
        return switch (opcode)
        {
            case SprayOpcodes.WRITE, SprayOpcodes.READ_REQUEST -> List.of(SETH, RETH);
            case SprayOpcodes.WRITE_WITH_IMMEDIATE -> List.of(SETH, RETH, IMMDT);
            case SprayOpcodes.SEND, SprayOpcodes.READ_RESPONSE -> List.of(SETH);
            case SprayOpcodes.SEND_WITH_IMMEDIATE -> List.of(SETH, IMMDT);
            case SprayOpcodes.ACK -> List.of(SACKH);
            case SprayOpcodes.PROBE -> List.of(PRBH);
            case SprayOpcodes.NACK, SprayOpcodes.QUERY -> List.of(NAKH);
            case SprayOpcodes.CONNECT, SprayOpcodes.CONNECT_ACK, SprayOpcodes.CONNECT_RETRY, SprayOpcodes.CONNECT_REJECT,
                 SprayOpcodes.CLOSE, SprayOpcodes.CLOSE_ACK -> List.of(CONH);
            default -> null;
        };
    }

    /** @return whether the opcode's payload starts with a handshake block (S5.6). */
    public static boolean carriesHandshakeBlock(final int opcode)
    {
        return opcode == SprayOpcodes.CONNECT || opcode == SprayOpcodes.CONNECT_ACK || opcode == SprayOpcodes.CONNECT_RETRY;
    }

    /**
     * Offset of a header field in a frame, or -1 when the field does not lie wholly between the BTH and the ICRC.
     *
     * @return the field's offset in the frame's segment, or -1.
     */
    public static long fieldOffset(final RoceFrame frame, final Layout header, final String field)
    {
        final List<Layout> headers = frame != null && frame.hasBth() ? headersAfterBth(frame.opcode()) : null;
        if (null == headers)
        {
            return -1;
        }
        long at = frame.bthOffset() + BaseTransportHeader.LENGTH;
        for (final Layout layout : headers)
        {
            if (layout == header)
            {
                for (final Field f : layout.fields())
                {
                    if (f.name().equals(field))
                    {
                        return at + f.offset() + f.size() <= frame.icrcOffset() ? at + f.offset() : -1;
                    }
                }
                return -1;
            }
            at += layout.length();
        }
        return -1;
    }

    /**
     * Appends the value of the {@code spray} key: null when the frame has no BTH or its opcode is not one of S3.1's.
     */
    public static void appendJson(final StringBuilder sb, final RoceFrame frame)
    {
        final int opcode = frame == null || !frame.hasBth() ? -1 : frame.opcode();
        final List<Layout> headers = opcode < 0 ? null : headersAfterBth(opcode);
        if (null == headers)
        {
            sb.append("null");
            return;
        }
        final MemorySegment s = frame.segment();
        sb.append("{\"name\":\"").append(SprayOpcodes.name(opcode)).append('"');
        long at = frame.bthOffset() + BaseTransportHeader.LENGTH;
        for (final Layout layout : headers)
        {
            sb.append(",\"").append(layout.name()).append("\":");
            appendObject(sb, s, layout, at, frame.icrcOffset());
            at += layout.length();
        }
        if (carriesHandshakeBlock(opcode) && frame.hasPayload())
        {
            final long payload = frame.payloadOffset();
            final long payloadEnd = payload + frame.payloadLength();
            sb.append(",\"hsb\":");
            appendObject(sb, s, HSB, payload, payloadEnd);
            final long conh = frame.bthOffset() + BaseTransportHeader.LENGTH;
            if (opcode == SprayOpcodes.CONNECT && (ConnectionHeader.flags(s, conh) & ConnectionHeader.FLAG_ADDRESSES) != 0)
            {
                final long fit = Math.max(0, (frame.payloadLength() - HandshakeBlock.LENGTH) / PlaneAddress.LENGTH);
                final long entries = Math.min(ConnectionHeader.planes(s, conh), fit);
                sb.append(",\"addresses\":[");
                for (int plane = 0; plane < entries; plane++)
                {
                    sb.append(plane == 0 ? "" : ",");
                    appendObject(sb, s, ADDRESS, PlaneAddress.entry(payload + HandshakeBlock.LENGTH, plane), payloadEnd);
                }
                sb.append(']');
            }
        }
        sb.append('}');
    }

    /**
     * Appends, as text, the spray header fields of a frame the parser stopped before (cut short, TVer or opcode
     * unknown): " seth(path=5 flags=1 ...)" per header, the fields that lie wholly before the ICRC.
     */
    public static void appendReadableText(final StringBuilder sb, final RoceFrame frame)
    {
        final List<Layout> headers = frame != null && frame.hasBth() ? headersAfterBth(frame.opcode()) : null;
        if (null == headers)
        {
            return;
        }
        final int from = sb.length();
        long at = frame.bthOffset() + BaseTransportHeader.LENGTH;
        for (final Layout layout : headers)
        {
            sb.append(' ').append(layout.name());
            appendObject(sb, frame.segment(), layout, at, frame.icrcOffset());
            at += layout.length();
        }
        // the JSON object's punctuation as text: {"path":5,"flags":1} -> (path=5 flags=1)
        for (int i = from; i < sb.length(); i++)
        {
            switch (sb.charAt(i))
            {
                case '{' -> sb.setCharAt(i, '(');
                case '}' -> sb.setCharAt(i, ')');
                case ':' -> sb.setCharAt(i, '=');
                case ',' -> sb.setCharAt(i, ' ');
                case '"' -> sb.deleteCharAt(i--);
                default ->
                {
                }
            }
        }
    }

    // the fields of one header that end at or before `end`, in offset order
    private static void appendObject(final StringBuilder sb, final MemorySegment s, final Layout layout, final long at,
        final long end)
    {
        sb.append('{');
        boolean first = true;
        for (final Field field : layout.fields())
        {
            final long o = at + field.offset();
            if (o + field.size() > end)
            {
                break;
            }
            sb.append(first ? "\"" : ",\"").append(field.name()).append("\":");
            first = false;
            appendValue(sb, s, o, field);
        }
        sb.append('}');
    }

    private static void appendValue(final StringBuilder sb, final MemorySegment s, final long o, final Field field)
    {
        switch (field.type())
        {
            case U8, U16, U24, U32 ->
            {
                long value = 0;
                for (int i = 0; i < field.size(); i++)
                {
                    value = value << 8 | Wire.u8(s, o + i);
                }
                sb.append(value);
            }
            case U64 -> sb.append('"').append(Long.toUnsignedString(s.get(Wire.LONG_BE, o))).append('"');
            case BYTES ->
            {
                sb.append('"');
                for (int i = 0; i < field.size(); i++)
                {
                    final int b = Wire.u8(s, o + i);
                    sb.append(HEX[b >>> 4]).append(HEX[b & 0xF]);
                }
                sb.append('"');
            }
        }
    }
}
