package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the spray extended transport header (SETH), 28 bytes after the BTH of every
 * spray data packet: what its payload is part of and where in it, so that the payload can be
 * placed on arrival in any order, and which receive a receive-consuming message consumes
 * (docs/PROTOCOL.md S4.1, S4.2, S4.5).
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |     path      |     flags     |            stream             |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                    message sequence number                    |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |               byte offset of this packet's payload            |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                    message length in bytes                    |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                 receive sequence number (RSN)                 |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                                                               |
 * +                      message tag (64)                         +
 * |                                                               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 */
public final class SprayExtendedTransportHeader
{
    public static final int PATH_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int STREAM_OFFSET = 2;
    public static final int MSN_OFFSET = 4;
    public static final int MESSAGE_OFFSET_OFFSET = 8;
    public static final int MESSAGE_LENGTH_OFFSET = 12;
    public static final int RSN_OFFSET = 16;
    /** S12.4: the message tag, SipHash-2-4 over the message's invariants, the same in every packet of a message. */
    public static final int MESSAGE_TAG_OFFSET = 20;
    public static final int LENGTH = 28;

    /** Flag: a packet's copy: on the same path with the same PSN (S6.6), or a lost path's on another path (S7.4.1). */
    public static final int FLAG_RETRANSMIT = 1;
    /** Flag: the packet that ends the message (by offset). */
    public static final int FLAG_LAST = 1 << 1;
    /** Flags bits 2-4: the message's attempt number, modulo 8 (S9.3-3): 0 first, +1 for each RNR retry. */
    public static final int ATTEMPT_SHIFT = 2;
    public static final int ATTEMPT_MASK = 0x7;
    /** Half the attempt space: an attempt 1..3 ahead of another is newer, 4..7 ahead is older (S9.3-3). */
    public static final int ATTEMPT_HALF = 4;

    private SprayExtendedTransportHeader()
    {
    }

    /**
     * Issue 13: the receiver reads the header's first 16 bytes in two big-endian reads, {@link #firstWord} (path,
     * flags, stream, MSN) and {@link #secondWord} (message offset and length), and takes the fields out of them with
     * the {@code ...Of} methods below: two bounds-checked reads where the field accessors made six.
     */
    public static long firstWord(final MemorySegment s, final long o)
    {
        return Wire.i64(s, o + PATH_OFFSET);
    }

    /** @return the header's bytes 8-15: message offset and message length (see {@link #firstWord}). */
    public static long secondWord(final MemorySegment s, final long o)
    {
        return Wire.i64(s, o + MESSAGE_OFFSET_OFFSET);
    }

    /** @return {@link #path} of the header whose {@link #firstWord} is {@code first}. */
    public static int pathOf(final long first)
    {
        return Wire.u8Of(first, PATH_OFFSET);
    }

    /** @return {@link #flags} of the header whose {@link #firstWord} is {@code first}. */
    public static int flagsOf(final long first)
    {
        return Wire.u8Of(first, FLAGS_OFFSET);
    }

    /** @return {@link #attempt} of the header whose {@link #firstWord} is {@code first}. */
    public static int attemptOf(final long first)
    {
        return (flagsOf(first) >>> ATTEMPT_SHIFT) & ATTEMPT_MASK;
    }

    /** @return {@link #stream} of the header whose {@link #firstWord} is {@code first}. */
    public static int streamOf(final long first)
    {
        return Wire.u16Of(first, STREAM_OFFSET);
    }

    /** @return {@link #msn} of the header whose {@link #firstWord} is {@code first}. */
    public static int msnOf(final long first)
    {
        return Wire.i32Of(first, MSN_OFFSET);
    }

    /** @return {@link #messageOffset} of the header whose {@link #secondWord} is {@code second}. */
    public static int messageOffsetOf(final long second)
    {
        return Wire.i32Of(second, MESSAGE_OFFSET_OFFSET - MESSAGE_OFFSET_OFFSET);
    }

    /** @return {@link #messageLength} of the header whose {@link #secondWord} is {@code second}. */
    public static int messageLengthOf(final long second)
    {
        return Wire.i32Of(second, MESSAGE_LENGTH_OFFSET - MESSAGE_OFFSET_OFFSET);
    }

    public static int path(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + PATH_OFFSET);
    }

    public static void path(final MemorySegment s, final long o, final int path)
    {
        s.set(Wire.BYTE, o + PATH_OFFSET, (byte)path);
    }

    public static int flags(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + FLAGS_OFFSET);
    }

    public static void flags(final MemorySegment s, final long o, final int flags)
    {
        s.set(Wire.BYTE, o + FLAGS_OFFSET, (byte)flags);
    }

    /** @return the packet's attempt number, 0..7 (S9.3-3). */
    public static int attempt(final MemorySegment s, final long o)
    {
        return (Wire.u8(s, o + FLAGS_OFFSET) >>> ATTEMPT_SHIFT) & ATTEMPT_MASK;
    }

    /** @return the flag bits that carry attempt number {@code attempt} (taken modulo 8). */
    public static int attemptFlags(final int attempt)
    {
        return (attempt & ATTEMPT_MASK) << ATTEMPT_SHIFT;
    }

    /**
     * @return whether attempt {@code attempt} is later than {@code than} in serial arithmetic modulo 8 (1..3 ahead),
     * as a retry's packets are later than those of the attempt it retries (S9.3-3).
     */
    public static boolean isLaterAttempt(final int attempt, final int than)
    {
        final int ahead = (attempt - than) & ATTEMPT_MASK;
        return ahead != 0 && ahead < ATTEMPT_HALF;
    }

    public static int stream(final MemorySegment s, final long o)
    {
        return Short.toUnsignedInt(s.get(Wire.SHORT_BE, o + STREAM_OFFSET));
    }

    public static void stream(final MemorySegment s, final long o, final int stream)
    {
        s.set(Wire.SHORT_BE, o + STREAM_OFFSET, (short)stream);
    }

    public static int msn(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + MSN_OFFSET);
    }

    public static void msn(final MemorySegment s, final long o, final int msn)
    {
        s.set(Wire.INT_BE, o + MSN_OFFSET, msn);
    }

    public static int messageOffset(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + MESSAGE_OFFSET_OFFSET);
    }

    public static void messageOffset(final MemorySegment s, final long o, final int offset)
    {
        s.set(Wire.INT_BE, o + MESSAGE_OFFSET_OFFSET, offset);
    }

    public static int messageLength(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + MESSAGE_LENGTH_OFFSET);
    }

    public static void messageLength(final MemorySegment s, final long o, final int length)
    {
        s.set(Wire.INT_BE, o + MESSAGE_LENGTH_OFFSET, length);
    }

    /**
     * @return the receive sequence number (S4.5): for a SEND, SEND with immediate or WRITE with immediate, how
     * many such messages came before it on its stream; 0 in other packets.
     */
    public static int rsn(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + RSN_OFFSET);
    }

    public static void rsn(final MemorySegment s, final long o, final int rsn)
    {
        s.set(Wire.INT_BE, o + RSN_OFFSET, rsn);
    }

    public static String toString(final MemorySegment s, final long o)
    {
        return "SETH{path=" + path(s, o) + ", flags=0x" + Integer.toHexString(flags(s, o)) + ", attempt=" + attempt(s, o) +
            ", stream=" + stream(s, o) +
            ", msn=" + Integer.toUnsignedString(msn(s, o)) + ", offset=" + Integer.toUnsignedString(messageOffset(s, o)) +
            ", length=" + Integer.toUnsignedString(messageLength(s, o)) + ", rsn=" + Integer.toUnsignedString(rsn(s, o)) +
            '}';
    }

    public static long messageTag(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + MESSAGE_TAG_OFFSET);
    }

    public static void messageTag(final MemorySegment s, final long o, final long tag)
    {
        s.set(Wire.LONG_BE, o + MESSAGE_TAG_OFFSET, tag);
    }

    /**
     * Writes the whole header in four stores (the sender's per-packet path), the same bytes as the field setters.
     *
     * @param s             frame memory.
     * @param o             offset of the header.
     * @param path          path (8 bits).
     * @param flags         {@link #FLAG_RETRANSMIT}, {@link #FLAG_LAST}, {@link #attemptFlags}.
     * @param stream        stream (16 bits).
     * @param msn           message sequence number.
     * @param messageOffset byte offset of this packet's payload in the message.
     * @param messageLength message length in bytes.
     * @param rsn           receive sequence number.
     * @param messageTag    message tag (S12.4).
     */
    public static void write(final MemorySegment s, final long o, final int path, final int flags, final int stream,
        final int msn, final int messageOffset, final int messageLength, final int rsn, final long messageTag)
    {
        s.set(Wire.LONG_BE, o + PATH_OFFSET, (long)(path & 0xFF) << 56 | (long)(flags & 0xFF) << 48 |
            (long)(stream & 0xFFFF) << 32 | (msn & 0xFFFF_FFFFL));
        s.set(Wire.LONG_BE, o + MESSAGE_OFFSET_OFFSET, (long)messageOffset << 32 | (messageLength & 0xFFFF_FFFFL));
        s.set(Wire.INT_BE, o + RSN_OFFSET, rsn);
        s.set(Wire.LONG_BE, o + MESSAGE_TAG_OFFSET, messageTag);
    }
}
