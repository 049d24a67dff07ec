package io.spraynic.datapath.capture;

import io.spraynic.datapath.telemetry.OutputFile;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Writes frames to a classic pcap or a pcapng capture file, for packet capture of RX and TX.
 * <p>
 * Frames are copied into a direct staging buffer and written to the file when it fills, on
 * {@link #flush()} and on {@link #close()}: {@link #write} allocates nothing. Classic pcap files have one
 * link type; pcapng files get an Interface Description Block (with {@code if_name} and
 * {@code if_tsresol} = 9, nanoseconds) per {@link #addInterface interface}. Frames longer than the
 * interface's snap length are truncated, keeping their original length. Not thread-safe.
 * <p>
 * Formats: <a href="https://www.ietf.org/archive/id/draft-ietf-opsawg-pcap-04.html">pcap</a>,
 * <a href="https://www.ietf.org/archive/id/draft-ietf-opsawg-pcapng-02.html">pcapng</a>.
 */
public final class PcapWriter implements AutoCloseable
{
    /** The file format to write. */
    public enum Format
    {
        /** Classic pcap, microsecond timestamps (magic 0xA1B2C3D4): readable by every tool. */
        PCAP_MICROS,
        /** Classic pcap, nanosecond timestamps (magic 0xA1B23C4D). */
        PCAP_NANOS,
        /** pcapng with nanosecond timestamps and one Interface Description Block per interface. */
        PCAPNG
    }

    /** Default snap length: large enough for any jumbo frame. */
    public static final int DEFAULT_SNAP_LENGTH = 262_144;

    private static final int MIN_STAGING_CAPACITY = 1 << 20;
    private static final int MAX_INTERFACES = 1024;
    private static final int OPTION_ISB_IFRECV = 4;
    private static final int OPTION_ISB_IFDROP = 5;

    private final FileChannel channel;
    private final Format format;
    private final ValueLayout.OfInt intLayout;
    private final ValueLayout.OfShort shortLayout;
    private final ValueLayout.OfLong longLayout;
    private final ByteBuffer staging;
    private final MemorySegment stagingSegment;
    private final int[] snapLengths = new int[MAX_INTERFACES];
    private int interfaceCount;
    private int used;
    private long framesWritten;
    private boolean closed;

    private PcapWriter(final FileChannel channel, final Format format, final ByteOrder order)
    {
        this.channel = channel;
        this.format = format;
        this.intLayout = ValueLayout.JAVA_INT_UNALIGNED.withOrder(order);
        this.shortLayout = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(order);
        this.longLayout = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(order);
        this.staging = ByteBuffer.allocateDirect(MIN_STAGING_CAPACITY + DEFAULT_SNAP_LENGTH + 64);
        this.stagingSegment = MemorySegment.ofBuffer(staging);
    }

    /**
     * Creates (or truncates) a classic pcap file with microsecond timestamps in native byte order.
     *
     * @param file       the file to write.
     * @param linkType   link type of every frame, e.g. {@link LinkType#ETHERNET}.
     * @return a writer; close it to flush the file.
     * @throws IOException if the file cannot be created.
     */
    public static PcapWriter pcap(final Path file, final int linkType) throws IOException
    {
        return create(file, Format.PCAP_MICROS, ByteOrder.nativeOrder(), linkType, DEFAULT_SNAP_LENGTH);
    }

    /**
     * Creates (or truncates) a pcapng file in native byte order with no interfaces yet:
     * call {@link #addInterface} before writing frames.
     *
     * @param file the file to write.
     * @return a writer; close it to flush the file.
     * @throws IOException if the file cannot be created.
     */
    public static PcapWriter pcapng(final Path file) throws IOException
    {
        return create(file, Format.PCAPNG, ByteOrder.nativeOrder(), -1, DEFAULT_SNAP_LENGTH);
    }

    /**
     * Creates a pcapng file that must not exist yet, like {@link #pcapng}: for a temporary part in a directory others
     * may write into, where a link planted at the name would otherwise have the writer truncate its target.
     *
     * @param file the file to create.
     * @return a writer; close it to flush the file.
     * @throws IOException if the file exists (a link included) or cannot be created.
     */
    public static PcapWriter pcapngNew(final Path file) throws IOException
    {
        return create(FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE), Format.PCAPNG,
            ByteOrder.nativeOrder(), -1, DEFAULT_SNAP_LENGTH);
    }

    /**
     * Creates (or truncates) a capture file.
     *
     * @param file       the file to write.
     * @param format     the file format.
     * @param order      byte order of the file's headers.
     * @param linkType   classic pcap: the file's link type; pcapng: if not negative, the link type of an
     *                   interface 0 (named "if0") added at once.
     * @param snapLength classic pcap: the file's snap length; pcapng: that of interface 0.
     * @return a writer; close it to flush the file.
     * @throws IOException if the file cannot be created.
     */
    public static PcapWriter create(final Path file, final Format format, final ByteOrder order, final int linkType,
        final int snapLength) throws IOException
    {
        if (snapLength <= 0 || snapLength > DEFAULT_SNAP_LENGTH)
        {
            throw new IllegalArgumentException("snap length must be in 1.." + DEFAULT_SNAP_LENGTH + ": " + snapLength);
        }
        return create(OutputFile.openReplacing(file), format, order, linkType, snapLength);
    }

    private static PcapWriter create(final FileChannel channel, final Format format, final ByteOrder order,
        final int linkType, final int snapLength) throws IOException
    {
        final PcapWriter writer = new PcapWriter(channel, format, order);
        try
        {
            if (format == Format.PCAPNG)
            {
                writer.writeSectionHeader();
                if (linkType >= 0)
                {
                    writer.addInterface("if0", linkType, snapLength);
                }
            }
            else
            {
                if (linkType < 0)
                {
                    throw new IllegalArgumentException("classic pcap needs a link type");
                }
                writer.writeClassicHeader(linkType, snapLength);
            }
            return writer;
        }
        catch (final IOException | RuntimeException ex)
        {
            channel.close();
            throw ex;
        }
    }

    /** @return the file format. */
    public Format format()
    {
        return format;
    }

    /** @return number of frames written so far. */
    public long framesWritten()
    {
        return framesWritten;
    }

    /** @return number of interfaces: 1 for classic pcap. */
    public int interfaceCount()
    {
        return interfaceCount;
    }

    /**
     * Adds a pcapng interface (an Interface Description Block with {@code if_name} and nanosecond
     * {@code if_tsresol}).
     *
     * @param name       the interface name, e.g. "port0-rx".
     * @param linkType   the interface's link type, e.g. {@link LinkType#ETHERNET}.
     * @param snapLength the most bytes kept of each frame.
     * @return the interface id to pass to {@link #write(int, MemorySegment, long, int, int, long)}.
     * @throws IOException if flushing to the file fails.
     */
    public int addInterface(final String name, final int linkType, final int snapLength) throws IOException
    {
        return addInterface(name, linkType, snapLength, null);
    }

    /**
     * As {@link #addInterface(String, int, int)}, with an {@code opt_comment} saying what a reader should know of the
     * interface's frames (e.g. that they are a sample); none when null.
     */
    public int addInterface(final String name, final int linkType, final int snapLength, final String comment)
        throws IOException
    {
        ensureOpen();
        if (format != Format.PCAPNG)
        {
            throw new IllegalStateException("classic pcap files have one interface");
        }
        if (interfaceCount == MAX_INTERFACES)
        {
            throw new IllegalStateException("too many interfaces: " + MAX_INTERFACES);
        }
        if (snapLength <= 0 || snapLength > DEFAULT_SNAP_LENGTH)
        {
            throw new IllegalArgumentException("snap length must be in 1.." + DEFAULT_SNAP_LENGTH + ": " + snapLength);
        }
        final byte[] nameBytes = name.getBytes(StandardCharsets.UTF_8);
        if (nameBytes.length > 0xFFFF)
        {
            throw new IllegalArgumentException("interface name too long");
        }
        final byte[] commentBytes = null == comment ? new byte[0] : comment.getBytes(StandardCharsets.UTF_8);
        if (commentBytes.length > 0xFFFF)
        {
            throw new IllegalArgumentException("interface comment too long");
        }
        final int namePadded = (nameBytes.length + 3) & ~3;
        final int commentPadded = (commentBytes.length + 3) & ~3;
        // type, length, linktype+reserved, snaplen, if_name option, [opt_comment,] if_tsresol option, end option, length
        final int blockLength = 4 + 4 + 4 + 4 + (4 + namePadded) + (null == comment ? 0 : 4 + commentPadded) + (4 + 4) +
            4 + 4;
        reserve(blockLength);
        long at = used;
        at = putInt(at, PcapReader.PCAPNG_INTERFACE_DESCRIPTION_BLOCK);
        at = putInt(at, blockLength);
        at = putShort(at, linkType);
        at = putShort(at, 0);
        at = putInt(at, snapLength);
        at = putShort(at, PcapReader.OPTION_IF_NAME);
        at = putShort(at, nameBytes.length);
        MemorySegment.copy(nameBytes, 0, stagingSegment, ValueLayout.JAVA_BYTE, at, nameBytes.length);
        stagingSegment.asSlice(at + nameBytes.length, namePadded - nameBytes.length).fill((byte)0);
        at += namePadded;
        if (null != comment)
        {
            at = putShort(at, PcapReader.OPTION_COMMENT);
            at = putShort(at, commentBytes.length);
            MemorySegment.copy(commentBytes, 0, stagingSegment, ValueLayout.JAVA_BYTE, at, commentBytes.length);
            stagingSegment.asSlice(at + commentBytes.length, commentPadded - commentBytes.length).fill((byte)0);
            at += commentPadded;
        }
        at = putShort(at, PcapReader.OPTION_IF_TSRESOL);
        at = putShort(at, 1);
        at = putInt(at, 0);
        stagingSegment.set(ValueLayout.JAVA_BYTE, at - 4, (byte)9);
        at = putShort(at, PcapReader.OPTION_END);
        at = putShort(at, 0);
        at = putInt(at, blockLength);
        used = (int)at;
        snapLengths[interfaceCount] = snapLength;
        return interfaceCount++;
    }

    /**
     * Writes a whole frame on interface 0.
     *
     * @param frame          memory holding the frame.
     * @param offset         offset of its first byte.
     * @param length         its length.
     * @param timestampNanos its timestamp in nanoseconds since the Unix epoch.
     * @throws IOException if flushing to the file fails.
     */
    public void write(final MemorySegment frame, final long offset, final int length, final long timestampNanos)
        throws IOException
    {
        write(0, frame, offset, length, length, timestampNanos);
    }

    /**
     * Writes a frame, truncated to the interface's snap length.
     *
     * @param interfaceId    0 for classic pcap; an id from {@link #addInterface} for pcapng.
     * @param frame          memory holding the frame.
     * @param offset         offset of its first byte.
     * @param length         number of bytes of the frame available at {@code offset}.
     * @param originalLength length of the frame on the wire (at least {@code length}).
     * @param timestampNanos its timestamp in nanoseconds since the Unix epoch.
     * @throws IOException if flushing to the file fails.
     */
    public void write(final int interfaceId, final MemorySegment frame, final long offset, final int length,
        final int originalLength, final long timestampNanos) throws IOException
    {
        ensureOpen();
        if (interfaceId < 0 || interfaceId >= interfaceCount)
        {
            throw new IllegalArgumentException("no interface " + interfaceId + " (have " + interfaceCount + ")");
        }
        if (length < 0 || originalLength < length)
        {
            throw new IllegalArgumentException("bad lengths: " + length + "/" + originalLength);
        }
        final int captured = Math.min(length, snapLengths[interfaceId]);
        final long seconds = Math.floorDiv(timestampNanos, 1_000_000_000L);
        final long nanos = Math.floorMod(timestampNanos, 1_000_000_000L);
        long at;
        if (format == Format.PCAPNG)
        {
            final int padded = (captured + 3) & ~3;
            final int blockLength = 32 + padded;
            reserve(blockLength);
            at = used;
            at = putInt(at, PcapReader.PCAPNG_ENHANCED_PACKET_BLOCK);
            at = putInt(at, blockLength);
            at = putInt(at, interfaceId);
            at = putInt(at, (int)(timestampNanos >>> 32));
            at = putInt(at, (int)timestampNanos);
            at = putInt(at, captured);
            at = putInt(at, originalLength);
            MemorySegment.copy(frame, offset, stagingSegment, at, captured);
            for (int i = captured; i < padded; i++)
            {
                stagingSegment.set(ValueLayout.JAVA_BYTE, at + i, (byte)0);
            }
            at += padded;
            at = putInt(at, blockLength);
        }
        else
        {
            reserve(PcapReader.PCAP_RECORD_HEADER_LENGTH + captured);
            at = used;
            at = putInt(at, (int)seconds);
            at = putInt(at, (int)(format == Format.PCAP_NANOS ? nanos : nanos / 1_000L));
            at = putInt(at, captured);
            at = putInt(at, originalLength);
            MemorySegment.copy(frame, offset, stagingSegment, at, captured);
            at += captured;
        }
        used = (int)at;
        framesWritten++;
    }

    /**
     * Writes a pcapng Interface Statistics Block for an interface: frames it received ({@code isb_ifrecv}) and those
     * dropped before they reached the capture ({@code isb_ifdrop}), as of {@code timestampNanos}.
     *
     * @throws IOException if flushing to the file fails.
     */
    public void writeInterfaceStatistics(final int interfaceId, final long timestampNanos, final long received,
        final long dropped) throws IOException
    {
        ensureOpen();
        if (format != Format.PCAPNG || interfaceId < 0 || interfaceId >= interfaceCount)
        {
            throw new IllegalArgumentException("no pcapng interface " + interfaceId + " (have " + interfaceCount + ")");
        }
        // type, length, interface, timestamp (2), isb_ifrecv, isb_ifdrop, end option, length
        final int blockLength = 4 + 4 + 4 + 8 + (4 + 8) + (4 + 8) + 4 + 4;
        reserve(blockLength);
        long at = used;
        at = putInt(at, PcapReader.PCAPNG_INTERFACE_STATISTICS_BLOCK);
        at = putInt(at, blockLength);
        at = putInt(at, interfaceId);
        at = putInt(at, (int)(timestampNanos >>> 32));
        at = putInt(at, (int)timestampNanos);
        at = putShort(at, OPTION_ISB_IFRECV);
        at = putShort(at, 8);
        at = putLong(at, received);
        at = putShort(at, OPTION_ISB_IFDROP);
        at = putShort(at, 8);
        at = putLong(at, dropped);
        at = putShort(at, PcapReader.OPTION_END);
        at = putShort(at, 0);
        at = putInt(at, blockLength);
        used = (int)at;
    }

    /**
     * Writes what is staged to the file.
     *
     * @throws IOException if the write fails.
     */
    public void flush() throws IOException
    {
        ensureOpen();
        staging.clear().limit(used);
        while (staging.hasRemaining())
        {
            channel.write(staging);
        }
        staging.clear();
        used = 0;
    }

    /**
     * Flushes and closes the file; closing twice does nothing.
     *
     * @throws IOException if the final write fails.
     */
    @Override
    public void close() throws IOException
    {
        if (closed)
        {
            return;
        }
        try
        {
            flush();
        }
        finally
        {
            closed = true;
            channel.close();
        }
    }

    private void ensureOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("writer is closed");
        }
    }

    private void reserve(final int bytes) throws IOException
    {
        if (used + bytes > staging.capacity())
        {
            flush();
        }
    }

    private long putInt(final long at, final int value)
    {
        stagingSegment.set(intLayout, at, value);
        return at + 4;
    }

    private long putLong(final long at, final long value)
    {
        stagingSegment.set(longLayout, at, value);
        return at + 8;
    }

    private long putShort(final long at, final int value)
    {
        stagingSegment.set(shortLayout, at, (short)value);
        return at + 2;
    }

    private void writeClassicHeader(final int linkType, final int snapLength) throws IOException
    {
        long at = used;
        at = putInt(at, format == Format.PCAP_NANOS ? PcapReader.PCAP_MAGIC_NANOS : PcapReader.PCAP_MAGIC_MICROS);
        at = putShort(at, 2);
        at = putShort(at, 4);
        at = putInt(at, 0);
        at = putInt(at, 0);
        at = putInt(at, snapLength);
        at = putInt(at, linkType);
        used = (int)at;
        snapLengths[0] = snapLength;
        interfaceCount = 1;
        flush();
    }

    private void writeSectionHeader() throws IOException
    {
        final int blockLength = 28;
        long at = used;
        at = putInt(at, PcapReader.PCAPNG_SECTION_HEADER_BLOCK);
        at = putInt(at, blockLength);
        at = putInt(at, PcapReader.PCAPNG_BYTE_ORDER_MAGIC);
        at = putShort(at, 1);
        at = putShort(at, 0);
        at = putInt(at, -1);
        at = putInt(at, -1);
        at = putInt(at, blockLength);
        used = (int)at;
        flush();
    }
}
