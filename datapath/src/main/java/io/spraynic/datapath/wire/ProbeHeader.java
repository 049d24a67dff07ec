package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the probe header (PRBH), 16 bytes after the BTH of a {@code SPRAY_PROBE}: the path
 * probed and the next PSN the sender uses on it (docs/PROTOCOL.md S5.2, S6.7, S7.5).
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |     path      |     flags     |           reserved            |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |   reserved    |                  next PSN (24)                |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                                                               |
 * +                tag (64, S12.3; last 8 bytes)                  +
 * |                                                               |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 */
public final class ProbeHeader
{
    public static final int PATH_OFFSET = 0;
    public static final int FLAGS_OFFSET = 1;
    public static final int NEXT_PSN_OFFSET = 4;
    /** S12.3: SipHash-2-4 tag over the BTH and this header up to the tag. */
    public static final int TAG_OFFSET = 8;
    public static final int LENGTH = 16;

    /** Flag: the receiver resets the path's receive state to expect {@code nextPsn} (S7.5). */
    public static final int FLAG_RESYNC = 1;

    private ProbeHeader()
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
        s.set(Wire.SHORT_BE, o + FLAGS_OFFSET + 1, (short)0);
    }

    public static int nextPsn(final MemorySegment s, final long o)
    {
        return s.get(Wire.INT_BE, o + NEXT_PSN_OFFSET) & 0xFF_FFFF;
    }

    public static void nextPsn(final MemorySegment s, final long o, final int psn)
    {
        s.set(Wire.INT_BE, o + NEXT_PSN_OFFSET, psn & 0xFF_FFFF);
    }

    public static String toString(final MemorySegment s, final long o)
    {
        return "PRBH{path=" + path(s, o) + ", flags=0x" + Integer.toHexString(flags(s, o)) + ", nextPsn=" +
            nextPsn(s, o) + '}';
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
