package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Network-byte-order (big-endian), unaligned value layouts shared by the header flyweights, and
 * small unsigned accessors on top of them. Headers sit at 2-byte alignment behind a 14-byte
 * Ethernet header, so every access uses an {@code *_UNALIGNED} layout.
 */
public final class Wire
{
    /** One byte. */
    public static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;
    /** 16 bits, big-endian, unaligned. */
    public static final ValueLayout.OfShort SHORT_BE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    /** 32 bits, big-endian, unaligned. */
    public static final ValueLayout.OfInt INT_BE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    /** 64 bits, big-endian, unaligned. */
    public static final ValueLayout.OfLong LONG_BE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    private Wire()
    {
    }

    /**
     * @param segment memory to read.
     * @param offset  byte offset.
     * @return the unsigned byte at {@code offset}.
     */
    public static int u8(final MemorySegment segment, final long offset)
    {
        return Byte.toUnsignedInt(segment.get(BYTE, offset));
    }

    /**
     * @param segment memory to read.
     * @param offset  byte offset.
     * @return the unsigned big-endian 16-bit value at {@code offset}.
     */
    public static int u16(final MemorySegment segment, final long offset)
    {
        return Short.toUnsignedInt(segment.get(SHORT_BE, offset));
    }

    /**
     * @param segment memory to read.
     * @param offset  byte offset.
     * @return the unsigned big-endian 24-bit value at {@code offset}.
     */
    public static int u24(final MemorySegment segment, final long offset)
    {
        return (u8(segment, offset) << 16) | u16(segment, offset + 1);
    }

    /**
     * @param segment memory to read.
     * @param offset  byte offset.
     * @return the big-endian 32-bit value at {@code offset} (as a signed int: same bits).
     */
    public static int i32(final MemorySegment segment, final long offset)
    {
        return segment.get(INT_BE, offset);
    }

    /**
     * @param segment memory to read.
     * @param offset  byte offset.
     * @return the big-endian 64-bit value at {@code offset}: eight header bytes in one bounds-checked read, their
     * fields taken out with {@link #u8Of(long, int)} and its siblings.
     */
    public static long i64(final MemorySegment segment, final long offset)
    {
        return segment.get(LONG_BE, offset);
    }

    /**
     * A field of eight bytes read at once with {@link #i64}: the field's offset is the one its header names,
     * minus where the read began, so a constant offset folds to a constant shift.
     *
     * @param word       eight bytes read big-endian.
     * @param byteOffset the field's first byte within the eight, 0-7.
     * @return the unsigned byte there.
     */
    public static int u8Of(final long word, final int byteOffset)
    {
        return (int)(word >>> (56 - (byteOffset << 3))) & 0xFF;
    }

    /**
     * @param word       eight bytes read big-endian with {@link #i64}.
     * @param byteOffset the field's first byte within the eight, 0-6.
     * @return the unsigned big-endian 16-bit value there.
     */
    public static int u16Of(final long word, final int byteOffset)
    {
        return (int)(word >>> (48 - (byteOffset << 3))) & 0xFFFF;
    }

    /**
     * @param word       eight bytes read big-endian with {@link #i64}.
     * @param byteOffset the field's first byte within the eight, 0-5.
     * @return the unsigned big-endian 24-bit value there.
     */
    public static int u24Of(final long word, final int byteOffset)
    {
        return (int)(word >>> (40 - (byteOffset << 3))) & 0xFF_FFFF;
    }

    /**
     * @param word       eight bytes read big-endian with {@link #i64}.
     * @param byteOffset the field's first byte within the eight, 0-4.
     * @return the big-endian 32-bit value there (as a signed int: same bits).
     */
    public static int i32Of(final long word, final int byteOffset)
    {
        return (int)(word >>> (32 - (byteOffset << 3)));
    }

    /**
     * @param word       four bytes read big-endian with {@link #i32}.
     * @param byteOffset the field's first byte within the four, 0-3.
     * @return the unsigned byte there.
     */
    public static int u8Of(final int word, final int byteOffset)
    {
        return (word >>> (24 - (byteOffset << 3))) & 0xFF;
    }

    /**
     * @param word       four bytes read big-endian with {@link #i32}.
     * @param byteOffset the field's first byte within the four, 0-2.
     * @return the unsigned big-endian 16-bit value there.
     */
    public static int u16Of(final int word, final int byteOffset)
    {
        return (word >>> (16 - (byteOffset << 3))) & 0xFFFF;
    }

    /**
     * @param word       four bytes read big-endian with {@link #i32}.
     * @param byteOffset the field's first byte within the four, 0-1.
     * @return the unsigned big-endian 24-bit value there.
     */
    public static int u24Of(final int word, final int byteOffset)
    {
        return (word >>> (8 - (byteOffset << 3))) & 0xFF_FFFF;
    }

    /**
     * @param segment memory to write.
     * @param offset  byte offset.
     * @param value   the low 8 bits are written.
     */
    public static void put8(final MemorySegment segment, final long offset, final int value)
    {
        segment.set(BYTE, offset, (byte)value);
    }

    /**
     * @param segment memory to write.
     * @param offset  byte offset.
     * @param value   the low 16 bits are written big-endian.
     */
    public static void put16(final MemorySegment segment, final long offset, final int value)
    {
        segment.set(SHORT_BE, offset, (short)value);
    }

    /**
     * @param segment memory to write.
     * @param offset  byte offset.
     * @param value   the low 24 bits are written big-endian.
     */
    public static void put24(final MemorySegment segment, final long offset, final int value)
    {
        segment.set(BYTE, offset, (byte)(value >>> 16));
        segment.set(SHORT_BE, offset + 1, (short)value);
    }

    /**
     * @param segment memory to write.
     * @param offset  byte offset.
     * @param value   written big-endian.
     */
    public static void put32(final MemorySegment segment, final long offset, final int value)
    {
        segment.set(INT_BE, offset, value);
    }

    /**
     * Formats a MAC address held in the low 48 bits of a long.
     *
     * @param mac the address, first byte on the wire in bits 47..40.
     * @return e.g. "02:00:00:00:00:01".
     */
    public static String macToString(final long mac)
    {
        final StringBuilder sb = new StringBuilder(17);
        for (int shift = 40; shift >= 0; shift -= 8)
        {
            final int b = (int)(mac >>> shift) & 0xFF;
            sb.append(Character.forDigit(b >>> 4, 16)).append(Character.forDigit(b & 0xF, 16));
            if (shift > 0)
            {
                sb.append(':');
            }
        }
        return sb.toString();
    }

    /**
     * Parses what {@link #macToString} writes (also upper-case, or '-' between bytes).
     *
     * @param text six bytes in hex, e.g. "02:00:00:00:00:01".
     * @return the address in the low 48 bits.
     * @throws IllegalArgumentException saying what a MAC address looks like.
     */
    public static long parseMac(final String text)
    {
        final String[] bytes = text.trim().split("[:-]");
        if (bytes.length != 6)
        {
            throw new IllegalArgumentException("'" + text + "' is not a MAC address: write six hex bytes, e.g. 02:00:00:00:00:01");
        }
        long mac = 0;
        for (final String b : bytes)
        {
            final int value;
            try
            {
                value = b.length() == 2 ? Integer.parseInt(b, 16) : -1;
            }
            catch (final NumberFormatException ex)
            {
                throw new IllegalArgumentException("'" + text + "' is not a MAC address: write six hex bytes, e.g. 02:00:00:00:00:01");
            }
            if (value < 0)
            {
                throw new IllegalArgumentException("'" + text + "' is not a MAC address: write six hex bytes, e.g. 02:00:00:00:00:01");
            }
            mac = mac << 8 | value;
        }
        return mac;
    }

    /**
     * Parses a dotted-quad IPv4 address.
     *
     * @param text e.g. "10.0.0.1".
     * @return the address, first byte in bits 31..24.
     * @throws IllegalArgumentException saying what an IPv4 address looks like.
     */
    public static int parseIpv4(final String text)
    {
        return io.spraynic.pmd.InterfaceAddress.parseIpv4(text);
    }

    /**
     * Formats an IPv4 address.
     *
     * @param address the address, first byte on the wire in bits 31..24.
     * @return dotted-quad text, e.g. "10.0.0.1".
     */
    public static String ipv4ToString(final int address)
    {
        return (address >>> 24) + "." + ((address >>> 16) & 0xFF) + "." + ((address >>> 8) & 0xFF) + "." +
            (address & 0xFF);
    }

    /**
     * Formats an IPv6 address per RFC 5952 (lower-case, no leading zeros, the longest run of two or more
     * zero groups, leftmost on a tie, as "::"), as Wireshark shows it.
     *
     * @param high the first 8 bytes on the wire, big-endian.
     * @param low  the last 8 bytes on the wire, big-endian.
     * @return e.g. "fe80::1".
     */
    public static String ipv6ToString(final long high, final long low)
    {
        return io.spraynic.pmd.InterfaceAddress.ipv6Text(high, low);
    }
}
