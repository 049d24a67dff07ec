package io.spraynic.datapath.capture;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads the frames of a classic pcap or a pcapng capture file one at a time, without copying them.
 * <p>
 * Supported:
 * <ul>
 *     <li>classic pcap (<a href="https://www.ietf.org/archive/id/draft-ietf-opsawg-pcap-04.html">
 *     draft-ietf-opsawg-pcap</a>): both byte orders, microsecond ({@code 0xA1B2C3D4}) and nanosecond
 *     ({@code 0xA1B23C4D}) timestamps, the FCS-length bits of the link-type field;</li>
 *     <li>pcapng (<a href="https://www.ietf.org/archive/id/draft-ietf-opsawg-pcapng-02.html">
 *     draft-ietf-opsawg-pcapng</a>): several sections, each in its own byte order; Section Header,
 *     Interface Description ({@code if_tsresol}, {@code if_tsoffset}, {@code if_fcslen}), Enhanced
 *     Packet, Simple Packet and the obsolete Packet block; every other block type is skipped.</li>
 * </ul>
 * The file is memory-mapped; {@link #frame()} is a slice of the mapping that stays valid until
 * {@link #close()}. Usage:
 * <pre>{@code
 * try (PcapReader reader = PcapReader.open(path))
 * {
 *     while (reader.next())
 *     {
 *         parse(reader.frame(), reader.timestampNanos());
 *     }
 * }
 * }</pre>
 * A reader is not thread-safe. Errors in the file raise {@link PcapFormatException} with the byte offset.
 */
public final class PcapReader implements AutoCloseable
{
    /** Classic pcap magic for microsecond timestamps, as read in the file's own byte order. */
    public static final int PCAP_MAGIC_MICROS = 0xA1B2C3D4;
    /** Classic pcap magic for nanosecond timestamps, as read in the file's own byte order. */
    public static final int PCAP_MAGIC_NANOS = 0xA1B23C4D;
    /** Length of the classic pcap file header. */
    public static final int PCAP_FILE_HEADER_LENGTH = 24;
    /** Length of a classic pcap record header. */
    public static final int PCAP_RECORD_HEADER_LENGTH = 16;

    /** pcapng Section Header Block type (a palindrome, the same in both byte orders). */
    public static final int PCAPNG_SECTION_HEADER_BLOCK = 0x0A0D0D0A;
    /** pcapng Interface Description Block type. */
    public static final int PCAPNG_INTERFACE_DESCRIPTION_BLOCK = 0x00000001;
    /** pcapng obsolete Packet Block type. */
    public static final int PCAPNG_PACKET_BLOCK = 0x00000002;
    /** pcapng Simple Packet Block type. */
    public static final int PCAPNG_SIMPLE_PACKET_BLOCK = 0x00000003;
    /** pcapng Interface Statistics Block type (read past: frames are what a reader wants). */
    public static final int PCAPNG_INTERFACE_STATISTICS_BLOCK = 0x00000005;
    /** pcapng Enhanced Packet Block type. */
    public static final int PCAPNG_ENHANCED_PACKET_BLOCK = 0x00000006;
    /** pcapng byte-order magic, as read in the section's own byte order. */
    public static final int PCAPNG_BYTE_ORDER_MAGIC = 0x1A2B3C4D;

    static final int OPTION_END = 0;
    static final int OPTION_COMMENT = 1;
    static final int OPTION_IF_NAME = 2;
    static final int OPTION_IF_TSRESOL = 9;
    static final int OPTION_IF_FCSLEN = 13;
    static final int OPTION_IF_TSOFFSET = 14;

    /** The container format of a capture file. */
    public enum Format
    {
        /** Classic libpcap format. */
        PCAP,
        /** pcap next generation. */
        PCAPNG
    }

    private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfInt INT_BE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfShort SHORT_LE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort SHORT_BE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);
    private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG_BE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** A frame larger than this is taken as a sign of a corrupt file, not a frame. */
    static final int MAX_FRAME_LENGTH = 256 * 1024 * 1024;

    private final Arena arena;
    private final MemorySegment data;
    private final Format format;

    private ValueLayout.OfInt intLayout;
    private ValueLayout.OfShort shortLayout;
    private ValueLayout.OfLong longLayout;
    private long position;

    // classic pcap
    private boolean nanosecondTimestamps;
    private int classicLinkType;
    private int classicSnapLength;
    private int classicFcsLength;

    // pcapng: interfaces of the current section
    private final List<Interface> interfaces = new ArrayList<>();

    // current frame
    private long frameIndex = -1;
    private long frameOffset;
    private int capturedLength;
    private int originalLength;
    private long timestampNanos;
    private int interfaceId;
    private MemorySegment frame;

    private record Interface(int linkType, int snapLength, int fcsLength, boolean binaryResolution,
        int resolutionExponent, long offsetSeconds, String name, String comment)
    {
    }

    private PcapReader(final Arena arena, final MemorySegment data) throws PcapFormatException
    {
        this.arena = arena;
        this.data = data;
        if (data.byteSize() < 12)
        {
            throw new PcapFormatException("file too short for a capture header: " + data.byteSize() + " bytes");
        }
        final int magicBe = data.get(INT_BE, 0);
        final int magicLe = data.get(INT_LE, 0);
        if (magicBe == PCAPNG_SECTION_HEADER_BLOCK)
        {
            format = Format.PCAPNG;
            readSectionHeader(0);
        }
        else if (magicBe == PCAP_MAGIC_MICROS || magicBe == PCAP_MAGIC_NANOS)
        {
            format = Format.PCAP;
            useOrder(ByteOrder.BIG_ENDIAN);
            readClassicHeader(magicBe);
        }
        else if (magicLe == PCAP_MAGIC_MICROS || magicLe == PCAP_MAGIC_NANOS)
        {
            format = Format.PCAP;
            useOrder(ByteOrder.LITTLE_ENDIAN);
            readClassicHeader(magicLe);
        }
        else
        {
            throw new PcapFormatException(String.format("not a pcap or pcapng file: magic 0x%08x", magicBe));
        }
    }

    /**
     * Maps a capture file and reads its header.
     *
     * @param file a pcap or pcapng file.
     * @return a reader positioned before the first frame; close it to unmap the file.
     * @throws IOException if the file cannot be read or is not a capture file.
     */
    public static PcapReader open(final Path file) throws IOException
    {
        final Arena arena = Arena.ofShared();
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            final MemorySegment mapped = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size(), arena);
            return new PcapReader(arena, mapped);
        }
        catch (final IOException | RuntimeException ex)
        {
            arena.close();
            throw ex;
        }
    }

    /**
     * Reads a capture held in memory. The reader does not own the memory: {@link #close()} leaves it alone.
     *
     * @param data the whole capture file.
     * @return a reader positioned before the first frame.
     * @throws PcapFormatException if the data does not start with a capture header.
     */
    public static PcapReader of(final MemorySegment data) throws PcapFormatException
    {
        return new PcapReader(null, data);
    }

    /**
     * Reads every frame into a list of copies: a convenience for tests and tools, not for large files.
     *
     * @param file a pcap or pcapng file.
     * @return the frames in file order.
     * @throws IOException if the file cannot be read or is malformed.
     */
    public static List<CapturedFrame> readAll(final Path file) throws IOException
    {
        try (PcapReader reader = open(file))
        {
            final List<CapturedFrame> frames = new ArrayList<>();
            while (reader.next())
            {
                frames.add(new CapturedFrame(reader.frameIndex(), reader.frame().toArray(ValueLayout.JAVA_BYTE),
                    reader.originalLength(), reader.timestampNanos(), reader.interfaceId(), reader.linkType()));
            }
            return frames;
        }
    }

    /**
     * Advances to the next frame.
     *
     * @return true if there is one, false at the end of the file.
     * @throws PcapFormatException if the next record or block is malformed.
     */
    public boolean next() throws PcapFormatException
    {
        return format == Format.PCAP ? nextClassic() : nextPcapng();
    }

    /** @return the container format. */
    public Format format()
    {
        return format;
    }

    /** @return the whole capture, as mapped. */
    public MemorySegment data()
    {
        return data;
    }

    /** @return 0-based index of the current frame in the file. */
    public long frameIndex()
    {
        return frameIndex;
    }

    /** @return the current frame's captured bytes: a slice of {@link #data()} of {@link #capturedLength()} bytes. */
    public MemorySegment frame()
    {
        return frame;
    }

    /** @return byte offset of the current frame's first byte within {@link #data()}. */
    public long frameOffset()
    {
        return frameOffset;
    }

    /** @return number of bytes of the current frame present in the file. */
    public int capturedLength()
    {
        return capturedLength;
    }

    /** @return length of the current frame on the wire, which is more than captured if the capture truncated it. */
    public int originalLength()
    {
        return originalLength;
    }

    /** @return the current frame's timestamp in nanoseconds since the Unix epoch (0 for a pcapng Simple Packet Block). */
    public long timestampNanos()
    {
        return timestampNanos;
    }

    /** @return pcapng interface id of the current frame; always 0 for classic pcap. */
    public int interfaceId()
    {
        return interfaceId;
    }

    /** @return link type of the current frame (of the file for classic pcap), e.g. {@link LinkType#ETHERNET}. */
    public int linkType()
    {
        return format == Format.PCAP ? classicLinkType : interfaces.get(interfaceId).linkType();
    }

    /** @return snap length of the current frame's interface (of the file for classic pcap). */
    public int snapLength()
    {
        return format == Format.PCAP ? classicSnapLength : interfaces.get(interfaceId).snapLength();
    }

    /**
     * @return number of FCS bytes at the end of each frame of the current frame's interface, 0 if none;
     * from the classic header's FCS bits or the pcapng {@code if_fcslen} option.
     */
    public int fcsLength()
    {
        return format == Format.PCAP ? classicFcsLength : interfaces.get(interfaceId).fcsLength();
    }

    /** @return the {@code if_name} of the current frame's pcapng interface, or null if none. */
    public String interfaceName()
    {
        return format == Format.PCAP ? null : interfaces.get(interfaceId).name();
    }

    /** @return the {@code opt_comment} of the current frame's pcapng interface (the last, if several), or null if none. */
    public String interfaceComment()
    {
        return format == Format.PCAP ? null : interfaces.get(interfaceId).comment();
    }

    /** @return true if the classic pcap file has nanosecond timestamps (pcapng: per interface). */
    public boolean nanosecondTimestamps()
    {
        return nanosecondTimestamps;
    }

    @Override
    public void close()
    {
        if (arena != null)
        {
            arena.close();
        }
    }

    private void useOrder(final ByteOrder order)
    {
        final boolean little = order == ByteOrder.LITTLE_ENDIAN;
        intLayout = little ? INT_LE : INT_BE;
        shortLayout = little ? SHORT_LE : SHORT_BE;
        longLayout = little ? LONG_LE : LONG_BE;
    }

    private int u16(final long offset)
    {
        return Short.toUnsignedInt(data.get(shortLayout, offset));
    }

    private long u32(final long offset)
    {
        return Integer.toUnsignedLong(data.get(intLayout, offset));
    }

    // ---------------------------------------------------------------- classic pcap

    private void readClassicHeader(final int magic) throws PcapFormatException
    {
        if (data.byteSize() < PCAP_FILE_HEADER_LENGTH)
        {
            throw new PcapFormatException("file too short for a pcap header: " + data.byteSize() + " bytes");
        }
        nanosecondTimestamps = magic == PCAP_MAGIC_NANOS;
        final int major = u16(4);
        if (major != 2)
        {
            throw new PcapFormatException("unsupported pcap version " + major + "." + u16(6));
        }
        classicSnapLength = (int)u32(16);
        final int network = (int)u32(20);
        classicLinkType = network & 0xFFFF;
        // bit 28 is the F bit: bits 29-31 then hold the FCS length in 16-bit words
        classicFcsLength = (network & 0x1000_0000) != 0 ? ((network >>> 29) & 0x7) * 2 : 0;
        position = PCAP_FILE_HEADER_LENGTH;
    }

    private boolean nextClassic() throws PcapFormatException
    {
        final long size = data.byteSize();
        if (position >= size)
        {
            return false;
        }
        if (size - position < PCAP_RECORD_HEADER_LENGTH)
        {
            throw new PcapFormatException("truncated record header at offset " + position);
        }
        final long seconds = u32(position);
        final long fraction = u32(position + 4);
        final long captured = u32(position + 8);
        final long original = u32(position + 12);
        if (captured > MAX_FRAME_LENGTH || captured > size - position - PCAP_RECORD_HEADER_LENGTH)
        {
            throw new PcapFormatException("record at offset " + position + " claims " + captured +
                " captured bytes, past the end of the file");
        }
        setFrame(position + PCAP_RECORD_HEADER_LENGTH, (int)captured, (int)Math.min(original, Integer.MAX_VALUE),
            seconds * 1_000_000_000L + (nanosecondTimestamps ? fraction : fraction * 1_000L), 0);
        position += PCAP_RECORD_HEADER_LENGTH + captured;
        return true;
    }

    // ---------------------------------------------------------------- pcapng

    private void readSectionHeader(final long offset) throws PcapFormatException
    {
        if (data.byteSize() - offset < 28)
        {
            throw new PcapFormatException("truncated section header block at offset " + offset);
        }
        final int bomBe = data.get(INT_BE, offset + 8);
        if (bomBe == PCAPNG_BYTE_ORDER_MAGIC)
        {
            useOrder(ByteOrder.BIG_ENDIAN);
        }
        else if (Integer.reverseBytes(bomBe) == PCAPNG_BYTE_ORDER_MAGIC)
        {
            useOrder(ByteOrder.LITTLE_ENDIAN);
        }
        else
        {
            throw new PcapFormatException(String.format("bad pcapng byte-order magic 0x%08x at offset %d", bomBe,
                offset + 8));
        }
        final int major = u16(offset + 12);
        if (major != 1)
        {
            throw new PcapFormatException("unsupported pcapng version " + major + "." + u16(offset + 14));
        }
        interfaces.clear();
        position = offset + checkedBlockLength(offset);
    }

    private long checkedBlockLength(final long offset) throws PcapFormatException
    {
        final long remaining = data.byteSize() - offset;
        if (remaining < 12)
        {
            throw new PcapFormatException("truncated block at offset " + offset);
        }
        final long length = u32(offset + 4);
        if (length < 12 || (length & 3) != 0 || length > remaining)
        {
            throw new PcapFormatException("bad block total length " + length + " at offset " + offset);
        }
        if (u32(offset + length - 4) != length)
        {
            throw new PcapFormatException("block at offset " + offset + " has trailing length " +
                u32(offset + length - 4) + " != " + length);
        }
        return length;
    }

    private boolean nextPcapng() throws PcapFormatException
    {
        while (position < data.byteSize())
        {
            final long block = position;
            if (data.byteSize() - block >= 4 && data.get(INT_BE, block) == PCAPNG_SECTION_HEADER_BLOCK)
            {
                readSectionHeader(block);
                continue;
            }
            final long length = checkedBlockLength(block);
            final long type = u32(block);
            position = block + length;
            if (type == PCAPNG_INTERFACE_DESCRIPTION_BLOCK)
            {
                readInterface(block, length);
            }
            else if (type == PCAPNG_ENHANCED_PACKET_BLOCK)
            {
                requireBody(block, length, 20);
                final int id = (int)u32(block + 8);
                final long timestamp = (u32(block + 12) << 32) | u32(block + 16);
                final long captured = u32(block + 20);
                final long original = u32(block + 24);
                packet(block, length, 28, id, timestamp, captured, original);
                return true;
            }
            else if (type == PCAPNG_SIMPLE_PACKET_BLOCK)
            {
                requireBody(block, length, 4);
                if (interfaces.isEmpty())
                {
                    throw new PcapFormatException("simple packet block at offset " + block + " before any interface");
                }
                final long original = u32(block + 8);
                // the snap length is a u32 (one of 2^31 or more read as a negative int); a frame is at most
                // MAX_FRAME_LENGTH, as in every other record, so the int casts below cannot wrap
                final long snap = Integer.toUnsignedLong(interfaces.getFirst().snapLength());
                long captured = Math.min(Math.min(original, length - 16), MAX_FRAME_LENGTH);
                if (snap != 0)
                {
                    captured = Math.min(captured, snap);
                }
                setFrame(block + 12, (int)captured, (int)Math.min(original, Integer.MAX_VALUE), 0, 0);
                return true;
            }
            else if (type == PCAPNG_PACKET_BLOCK)
            {
                requireBody(block, length, 20);
                final int id = u16(block + 8);
                final long timestamp = (u32(block + 12) << 32) | u32(block + 16);
                final long captured = u32(block + 20);
                final long original = u32(block + 24);
                packet(block, length, 28, id, timestamp, captured, original);
                return true;
            }
            // any other block type: skip
        }
        return false;
    }

    private static void requireBody(final long block, final long length, final int bodyLength)
        throws PcapFormatException
    {
        if (length < 12 + bodyLength)
        {
            throw new PcapFormatException("block at offset " + block + " too short: " + length + " bytes");
        }
    }

    private void packet(final long block, final long length, final int dataOffset, final int id,
        final long timestamp, final long captured, final long original) throws PcapFormatException
    {
        if (id < 0 || id >= interfaces.size())
        {
            throw new PcapFormatException("packet block at offset " + block + " refers to interface " +
                Integer.toUnsignedString(id) + " of " + interfaces.size());
        }
        if (captured > MAX_FRAME_LENGTH || captured > length - dataOffset - 4)
        {
            throw new PcapFormatException("packet block at offset " + block + " claims " + captured +
                " captured bytes in a block of " + length);
        }
        setFrame(block + dataOffset, (int)captured, (int)Math.min(original, Integer.MAX_VALUE),
            toNanos(interfaces.get(id), timestamp), id);
    }

    private void readInterface(final long block, final long length) throws PcapFormatException
    {
        requireBody(block, length, 8);
        final int linkType = u16(block + 8);
        final int snapLength = (int)u32(block + 12);
        boolean binary = false;
        int exponent = 6;
        long offsetSeconds = 0;
        int fcsLength = 0;
        String name = null;
        String comment = null;
        long option = block + 16;
        final long end = block + length - 4;
        while (option + 4 <= end)
        {
            final int code = u16(option);
            final int optionLength = u16(option + 2);
            final long value = option + 4;
            if (code == OPTION_END)
            {
                break;
            }
            if (value + optionLength > end)
            {
                throw new PcapFormatException("interface option " + code + " at offset " + option +
                    " runs past its block");
            }
            if (code == OPTION_IF_TSRESOL && optionLength >= 1)
            {
                final int resolution = Byte.toUnsignedInt(data.get(ValueLayout.JAVA_BYTE, value));
                binary = (resolution & 0x80) != 0;
                exponent = resolution & 0x7F;
            }
            else if (code == OPTION_IF_TSOFFSET && optionLength >= 8)
            {
                offsetSeconds = data.get(longLayout, value);
            }
            else if (code == OPTION_IF_FCSLEN && optionLength >= 1)
            {
                fcsLength = Byte.toUnsignedInt(data.get(ValueLayout.JAVA_BYTE, value));
            }
            else if (code == OPTION_IF_NAME)
            {
                name = string(value, optionLength);
            }
            else if (code == OPTION_COMMENT)
            {
                comment = string(value, optionLength);
            }
            option = value + ((optionLength + 3) & ~3);
        }
        interfaces.add(new Interface(linkType, snapLength, fcsLength, binary, exponent, offsetSeconds, name, comment));
    }

    /** @return the UTF-8 option value at {@code value}, without trailing NULs. */
    private String string(final long value, final int length)
    {
        final byte[] bytes = data.asSlice(value, length).toArray(ValueLayout.JAVA_BYTE);
        int n = bytes.length;
        while (n > 0 && bytes[n - 1] == 0)
        {
            n--;
        }
        return new String(bytes, 0, n, java.nio.charset.StandardCharsets.UTF_8);
    }

    /**
     * Converts a pcapng timestamp in units of the interface's resolution to nanoseconds since the epoch.
     */
    static long toNanos(final boolean binaryResolution, final int exponent, final long offsetSeconds,
        final long timestamp)
    {
        final long nanos;
        if (binaryResolution)
        {
            // units of 2^-exponent seconds: (ts >> e) seconds plus the fraction scaled to nanoseconds
            if (exponent == 0)
            {
                nanos = timestamp * 1_000_000_000L;
            }
            else if (exponent >= 64)
            {
                nanos = 0;
            }
            else
            {
                final long seconds = timestamp >>> exponent;
                final long fraction = timestamp & ((1L << exponent) - 1);
                // fraction * 1e9 / 2^e without overflow: 128-bit product
                final long high = Math.unsignedMultiplyHigh(fraction, 1_000_000_000L);
                final long low = fraction * 1_000_000_000L;
                final long fractionNanos = (low >>> exponent) | (high << (64 - exponent));
                nanos = seconds * 1_000_000_000L + fractionNanos;
            }
        }
        else if (exponent <= 9)
        {
            long scale = 1;
            for (int i = exponent; i < 9; i++)
            {
                scale *= 10;
            }
            nanos = timestamp * scale;
        }
        else
        {
            if (exponent - 9 > 18)
            {
                nanos = 0;
            }
            else
            {
                long scale = 1;
                for (int i = 9; i < exponent; i++)
                {
                    scale *= 10;
                }
                nanos = Long.divideUnsigned(timestamp, scale);
            }
        }
        return nanos + offsetSeconds * 1_000_000_000L;
    }

    private static long toNanos(final Interface iface, final long timestamp)
    {
        return toNanos(iface.binaryResolution(), iface.resolutionExponent(), iface.offsetSeconds(), timestamp);
    }

    private void setFrame(final long offset, final int captured, final int original, final long nanos, final int id)
    {
        frameIndex++;
        frameOffset = offset;
        capturedLength = captured;
        originalLength = original;
        timestampNanos = nanos;
        interfaceId = id;
        frame = data.asSlice(offset, captured);
    }
}
