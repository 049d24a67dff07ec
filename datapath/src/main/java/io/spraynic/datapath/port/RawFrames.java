package io.spraynic.datapath.port;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Raw test traffic for the port layer: Ethernet frames that carry a sequence number and a
 * pattern derived from it, so a receiver can tell an intact frame from a corrupt, truncated or
 * foreign one without keeping a copy of what was sent. Used by the raw demo, the raw benchmark and
 * the port tests, on every kind of port.
 *
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                destination MAC (6)            |  source MAC   |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |      source MAC (continued)   |   EtherType 0x88B5 (local)    |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |                       sequence (8, big-endian)                |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 *  |      frame length (2)         |   pattern bytes ...           |
 *  +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * Pattern byte {@code i} (counting from the frame start) is {@code (sequence * 31 + i) & 0xFF}.
 */
public final class RawFrames
{
    /** IEEE 802 local experimental EtherType 1: never confused with real traffic. */
    public static final int ETHER_TYPE = 0x88B5;
    public static final int DESTINATION_OFFSET = 0;
    public static final int SOURCE_OFFSET = 6;
    public static final int ETHER_TYPE_OFFSET = 12;
    public static final int SEQUENCE_OFFSET = 14;
    public static final int LENGTH_OFFSET = 22;
    public static final int PATTERN_OFFSET = 24;
    /** Smallest Ethernet frame without its FCS. */
    public static final int MIN_LENGTH = 60;

    /** Locally administered unicast addresses, so frames never leave a test network. */
    public static final long DEFAULT_SOURCE_MAC = 0x02_53_50_00_00_01L;
    public static final long DEFAULT_DESTINATION_MAC = 0x02_53_50_00_00_02L;

    /** Returned by {@link #verify} for a frame that is not ours or not intact. */
    public static final long INVALID = -1;

    private static final ValueLayout.OfLong LONG_BE =
        ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort SHORT_BE =
        ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfInt INT_BE =
        ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private RawFrames()
    {
    }

    /**
     * Writes a frame of {@code length} bytes at {@code offset}.
     */
    public static void write(
        final MemorySegment segment,
        final long offset,
        final int length,
        final long sequence,
        final long sourceMac,
        final long destinationMac)
    {
        if (length < MIN_LENGTH || length > 0xFFFF)
        {
            throw new IllegalArgumentException("raw frame length " + length + " must be between " + MIN_LENGTH + " and 65535");
        }
        writeMac(segment, offset + DESTINATION_OFFSET, destinationMac);
        writeMac(segment, offset + SOURCE_OFFSET, sourceMac);
        segment.set(SHORT_BE, offset + ETHER_TYPE_OFFSET, (short)ETHER_TYPE);
        segment.set(LONG_BE, offset + SEQUENCE_OFFSET, sequence);
        segment.set(SHORT_BE, offset + LENGTH_OFFSET, (short)length);
        final int seed = (int)(sequence * 31);
        long lanes = firstLanes(seed);
        int i = PATTERN_OFFSET;
        for (; i + Long.BYTES <= length; i += Long.BYTES)
        {
            segment.set(LONG_BE, offset + i, lanes);
            lanes = addToEachLane(lanes);
        }
        for (; i < length; i++)
        {
            segment.set(ValueLayout.JAVA_BYTE, offset + i, (byte)(seed + i));
        }
    }

    // The pattern is checked and written eight bytes at a time: eight consecutive pattern bytes
    // form one big-endian long, and the next eight are the same long with 8 added to every byte
    // lane (mod 256, no carry between lanes).
    private static final long LOW_SEVEN_BITS = 0x7F7F_7F7F_7F7F_7F7FL;
    private static final long HIGH_BITS = 0x8080_8080_8080_8080L;
    private static final long EIGHT_PER_LANE = 0x0808_0808_0808_0808L;

    private static long firstLanes(final int seed)
    {
        long lanes = 0;
        for (int k = 0; k < Long.BYTES; k++)
        {
            lanes = (lanes << 8) | ((seed + PATTERN_OFFSET + k) & 0xFF);
        }
        return lanes;
    }

    private static long addToEachLane(final long lanes)
    {
        return ((lanes & LOW_SEVEN_BITS) + EIGHT_PER_LANE) ^ (lanes & HIGH_BITS);
    }

    /**
     * Writes a frame with the default addresses.
     */
    public static void write(final MemorySegment segment, final long offset, final int length, final long sequence)
    {
        write(segment, offset, length, sequence, DEFAULT_SOURCE_MAC, DEFAULT_DESTINATION_MAC);
    }

    /**
     * @return the frame's sequence if it is an intact raw frame of exactly {@code length} bytes,
     * else {@link #INVALID}.
     */
    public static long verify(final MemorySegment segment, final long offset, final int length)
    {
        if (length < MIN_LENGTH ||
            Short.toUnsignedInt(segment.get(SHORT_BE, offset + ETHER_TYPE_OFFSET)) != ETHER_TYPE ||
            Short.toUnsignedInt(segment.get(SHORT_BE, offset + LENGTH_OFFSET)) != length)
        {
            return INVALID;
        }
        final long sequence = segment.get(LONG_BE, offset + SEQUENCE_OFFSET);
        final int seed = (int)(sequence * 31);
        long lanes = firstLanes(seed);
        int i = PATTERN_OFFSET;
        for (; i + Long.BYTES <= length; i += Long.BYTES)
        {
            if (segment.get(LONG_BE, offset + i) != lanes)
            {
                return INVALID;
            }
            lanes = addToEachLane(lanes);
        }
        for (; i < length; i++)
        {
            if (segment.get(ValueLayout.JAVA_BYTE, offset + i) != (byte)(seed + i))
            {
                return INVALID;
            }
        }
        return sequence;
    }

    /**
     * @return the 48-bit MAC address at {@code offset}.
     */
    public static long readMac(final MemorySegment segment, final long offset)
    {
        return (Short.toUnsignedLong(segment.get(SHORT_BE, offset)) << 32) |
            Integer.toUnsignedLong(segment.get(INT_BE, offset + 2));
    }

    private static void writeMac(final MemorySegment segment, final long offset, final long mac)
    {
        segment.set(SHORT_BE, offset, (short)(mac >>> 32));
        segment.set(INT_BE, offset + 2, (int)mac);
    }
}
