package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the selective acknowledgement header (SACKH), 60 bytes after the BTH of a
 * {@code SPRAY_ACK}: one path's cumulative PSN, a 256-bit bitmap of what arrived above it, the
 * CE marks seen, the packets that arrived twice (S5.1-3: what shows a sender its spurious timeouts, S6.8-1 (c)), the
 * receiver's fair-share rate hint, and how many messages the receiver has refused so far, which makes a lost NACK
 * visible to the sender (docs/PROTOCOL.md S5.1, S9.3).
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |     path      |     flags     |           CE count            |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |  duplicates   |              cumulative PSN (24)              |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                                                               |
 * +             SACK bitmap, 256 bits: bit i = PSN cum + i        +
 * |              (bit 0 = most significant bit of byte 8)         |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                      rate hint (Mb/s)                         |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                         ACK sequence                          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                    refusals (connection)                      |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                                                               |
 * +                tag (64, S12.3; last 8 bytes)                  +
 * |                                                               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 */
public final class SelectiveAckHeader
{
    public static final int PATH_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int CE_COUNT_OFFSET = 2;
    /** S5.1-3: packets of the path received since its last ACK whose PSN had been received already (u8, saturating). */
    public static final int DUPLICATES_OFFSET = 4;
    /** The most {@link #duplicates} can say. */
    public static final int DUPLICATES_MAX = 0xFF;
    public static final int CUMULATIVE_PSN_OFFSET = 4;
    public static final int SACK_OFFSET = 8;
    /** Bits in the SACK bitmap: the most packets a path may have outstanding (S6.3). */
    public static final int SACK_BITS = 256;
    public static final int SACK_LENGTH = SACK_BITS / 8;
    public static final int RATE_HINT_OFFSET = 40;
    public static final int ACK_SEQUENCE_OFFSET = 44;
    public static final int REFUSALS_OFFSET = 48;
    /** S12.3: SipHash-2-4 tag over the BTH and this header up to the tag, with the receiver's key of the direction. */
    public static final int TAG_OFFSET = 52;
    public static final int LENGTH = 60;

    /** Flag: CE-marked packets arrived on the path since its last ACK (S8.1). */
    public static final int FLAG_ECE = 1;

    private SelectiveAckHeader()
    {
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

    public static int ceCount(final MemorySegment s, final long o)
    {
        return Short.toUnsignedInt(s.get(Wire.SHORT_BE, o + CE_COUNT_OFFSET));
    }

    public static void ceCount(final MemorySegment s, final long o, final int count)
    {
        s.set(Wire.SHORT_BE, o + CE_COUNT_OFFSET, (short)Math.min(count, 0xFFFF));
    }

    public static int cumulativePsn(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + CUMULATIVE_PSN_OFFSET) & 0xFF_FFFF;
    }

    /** Writes the cumulative PSN and zero in the byte before it, {@link #duplicates}: write that after this. */
    public static void cumulativePsn(final MemorySegment s, final long o, final int psn)
    {
        s.set(Wire.INT_BE, o + CUMULATIVE_PSN_OFFSET, psn & 0xFF_FFFF);
    }

    /** @return the duplicates the receiver reports (S5.1-3): 0 from a receiver that reports none. */
    public static int duplicates(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + DUPLICATES_OFFSET);
    }

    /** Writes {@code count}, at most {@link #DUPLICATES_MAX}; after {@link #cumulativePsn(MemorySegment, long, int)}. */
    public static void duplicates(final MemorySegment s, final long o, final int count)
    {
        s.set(Wire.BYTE, o + DUPLICATES_OFFSET, (byte)Math.min(count, DUPLICATES_MAX));
    }

    /**
     * @param word 0-3: bits {@code 64 * word} to {@code 64 * word + 63}, bit 0 of the bitmap being the
     *             most significant bit of word 0.
     */
    public static long sackWord(final MemorySegment s, final long o, final int word)
    {
        return s.get(Wire.LONG_BE, o + SACK_OFFSET + word * 8L);
    }

    public static void sackWord(final MemorySegment s, final long o, final int word, final long bits)
    {
        s.set(Wire.LONG_BE, o + SACK_OFFSET + word * 8L, bits);
    }

    /**
     * @return whether bit {@code index} (PSN cumulative + index) is set.
     */
    public static boolean sackBit(final MemorySegment s, final long o, final int index)
    {
        return (sackWord(s, o, index >>> 6) & (Long.MIN_VALUE >>> (index & 63))) != 0;
    }

    public static int rateHintMbps(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + RATE_HINT_OFFSET);
    }

    public static void rateHintMbps(final MemorySegment s, final long o, final int mbps)
    {
        s.set(Wire.INT_BE, o + RATE_HINT_OFFSET, mbps);
    }

    public static int ackSequence(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + ACK_SEQUENCE_OFFSET);
    }

    public static void ackSequence(final MemorySegment s, final long o, final int sequence)
    {
        s.set(Wire.INT_BE, o + ACK_SEQUENCE_OFFSET, sequence);
    }

    /**
     * @return the receiver's count of refusals (S9.3) on this connection when it sent the ACK; serial
     * arithmetic, it wraps.
     */
    public static int refusals(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + REFUSALS_OFFSET);
    }

    public static void refusals(final MemorySegment s, final long o, final int refusals)
    {
        s.set(Wire.INT_BE, o + REFUSALS_OFFSET, refusals);
    }

    public static String toString(final MemorySegment s, final long o)
    {
        return "SACKH{path=" + path(s, o) + ", flags=0x" + Integer.toHexString(flags(s, o)) + ", ce=" + ceCount(s, o) +
            ", duplicates=" + duplicates(s, o) + ", cumulativePsn=" + cumulativePsn(s, o) + ", sack=" +
            String.format("%016x%016x%016x%016x",
            sackWord(s, o, 0), sackWord(s, o, 1), sackWord(s, o, 2), sackWord(s, o, 3)) +
            ", rateHintMbps=" + Integer.toUnsignedString(rateHintMbps(s, o)) + ", ackSequence=" + ackSequence(s, o) +
            ", refusals=" + Integer.toUnsignedString(refusals(s, o)) + '}';
    }

    public static long tag(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + TAG_OFFSET);
    }

    public static void tag(final MemorySegment s, final long o, final long tag)
    {
        s.set(Wire.LONG_BE, o + TAG_OFFSET, tag);
    }
}
