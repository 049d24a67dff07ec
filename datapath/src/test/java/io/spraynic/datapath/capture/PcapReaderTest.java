package io.spraynic.datapath.capture;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PcapReaderTest
{
    private static final byte[] FRAME_A = bytes(0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66);
    private static final byte[] FRAME_B = bytes(0xAA, 0xBB, 0xCC, 0xDD, 0xEE);

    @TempDir
    Path dir;

    private static byte[] bytes(final int... values)
    {
        final byte[] out = new byte[values.length];
        for (int i = 0; i < values.length; i++)
        {
            out[i] = (byte)values[i];
        }
        return out;
    }

    private static ByteBuffer buffer(final ByteOrder order)
    {
        return ByteBuffer.allocate(4096).order(order);
    }

    private static MemorySegment segment(final ByteBuffer buffer)
    {
        final byte[] out = new byte[buffer.position()];
        buffer.flip().get(out);
        return MemorySegment.ofArray(out);
    }

    private static void classicHeader(final ByteBuffer b, final int magic, final int network)
    {
        b.putInt(magic).putShort((short)2).putShort((short)4).putInt(0).putInt(0).putInt(65535).putInt(network);
    }

    private static void classicRecord(final ByteBuffer b, final int seconds, final int fraction, final byte[] frame,
        final int originalLength)
    {
        b.putInt(seconds).putInt(fraction).putInt(frame.length).putInt(originalLength).put(frame);
    }

    @ParameterizedTest
    @EnumSource(ByteOrderName.class)
    void shouldReadClassicMicrosecondPcapInEitherByteOrder(final ByteOrderName orderName) throws IOException
    {
        final ByteBuffer b = buffer(orderName.order);
        classicHeader(b, PcapReader.PCAP_MAGIC_MICROS, LinkType.ETHERNET);
        classicRecord(b, 1_700_000_000, 123_456, FRAME_A, 60);
        classicRecord(b, 1_700_000_001, 999_999, FRAME_B, FRAME_B.length);

        final PcapReader reader = PcapReader.of(segment(b));
        assertEquals(PcapReader.Format.PCAP, reader.format());
        assertFalse(reader.nanosecondTimestamps());
        assertTrue(reader.next());
        assertEquals(0, reader.frameIndex());
        assertArrayEquals(FRAME_A, reader.frame().toArray(ValueLayout.JAVA_BYTE));
        assertEquals(FRAME_A.length, reader.capturedLength());
        assertEquals(60, reader.originalLength());
        assertEquals(1_700_000_000_123_456_000L, reader.timestampNanos());
        assertEquals(LinkType.ETHERNET, reader.linkType());
        assertEquals(65535, reader.snapLength());
        assertEquals(0, reader.interfaceId());
        assertEquals(40, reader.frameOffset());
        assertTrue(reader.next());
        assertEquals(1, reader.frameIndex());
        assertArrayEquals(FRAME_B, reader.frame().toArray(ValueLayout.JAVA_BYTE));
        assertEquals(1_700_000_001_999_999_000L, reader.timestampNanos());
        assertFalse(reader.next());
        assertFalse(reader.next());
    }

    enum ByteOrderName
    {
        BIG_ENDIAN(ByteOrder.BIG_ENDIAN), LITTLE_ENDIAN(ByteOrder.LITTLE_ENDIAN);

        final ByteOrder order;

        ByteOrderName(final ByteOrder order)
        {
            this.order = order;
        }
    }

    @ParameterizedTest
    @EnumSource(ByteOrderName.class)
    void shouldReadClassicNanosecondPcapWithFcsBits(final ByteOrderName orderName) throws IOException
    {
        final ByteBuffer b = buffer(orderName.order);
        // F bit set, FCS length 2 x 16-bit words
        classicHeader(b, PcapReader.PCAP_MAGIC_NANOS, LinkType.ETHERNET | 0x1000_0000 | (2 << 29));
        classicRecord(b, 5, 999_999_999, FRAME_A, FRAME_A.length);

        final PcapReader reader = PcapReader.of(segment(b));
        assertTrue(reader.nanosecondTimestamps());
        assertTrue(reader.next());
        assertEquals(5_999_999_999L, reader.timestampNanos());
        assertEquals(LinkType.ETHERNET, reader.linkType());
        assertEquals(4, reader.fcsLength());
        assertFalse(reader.next());
    }

    @Test
    void shouldRejectBadMagic()
    {
        final ByteBuffer b = buffer(ByteOrder.BIG_ENDIAN);
        b.putInt(0x12345678).putLong(0).putLong(0).putInt(0);
        final PcapFormatException ex = assertThrows(PcapFormatException.class, () -> PcapReader.of(segment(b)));
        assertEquals("not a pcap or pcapng file: magic 0x12345678", ex.getMessage());
    }

    @Test
    void shouldRejectRecordRunningPastEndOfFile() throws IOException
    {
        final ByteBuffer b = buffer(ByteOrder.LITTLE_ENDIAN);
        classicHeader(b, PcapReader.PCAP_MAGIC_MICROS, LinkType.ETHERNET);
        b.putInt(0).putInt(0).putInt(100).putInt(100).put(FRAME_A);
        final PcapReader reader = PcapReader.of(segment(b));
        final PcapFormatException ex = assertThrows(PcapFormatException.class, reader::next);
        assertEquals("record at offset 24 claims 100 captured bytes, past the end of the file", ex.getMessage());
    }

    @Test
    void shouldRejectTruncatedRecordHeader() throws IOException
    {
        final ByteBuffer b = buffer(ByteOrder.LITTLE_ENDIAN);
        classicHeader(b, PcapReader.PCAP_MAGIC_MICROS, LinkType.ETHERNET);
        b.putInt(0).putInt(0);
        final PcapReader reader = PcapReader.of(segment(b));
        assertThrows(PcapFormatException.class, reader::next);
    }

    private static void shb(final ByteBuffer b)
    {
        b.putInt(PcapReader.PCAPNG_SECTION_HEADER_BLOCK).putInt(28).putInt(PcapReader.PCAPNG_BYTE_ORDER_MAGIC)
            .putShort((short)1).putShort((short)0).putLong(-1).putInt(28);
    }

    private static void idb(final ByteBuffer b, final int linkType, final int snapLength, final int tsresol,
        final long tsoffset, final String name)
    {
        final byte[] nameBytes = name == null ? new byte[0] : name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        final int namePadded = (nameBytes.length + 3) & ~3;
        int length = 20;
        if (tsresol >= 0)
        {
            length += 8;
        }
        if (tsoffset != 0)
        {
            length += 12;
        }
        if (name != null)
        {
            length += 4 + namePadded;
        }
        length += 4; // end of options
        b.putInt(PcapReader.PCAPNG_INTERFACE_DESCRIPTION_BLOCK).putInt(length).putShort((short)linkType)
            .putShort((short)0).putInt(snapLength);
        if (name != null)
        {
            b.putShort((short)2).putShort((short)nameBytes.length).put(nameBytes).put(new byte[namePadded - nameBytes.length]);
        }
        if (tsresol >= 0)
        {
            b.putShort((short)9).putShort((short)1).put((byte)tsresol).put(new byte[3]);
        }
        if (tsoffset != 0)
        {
            b.putShort((short)14).putShort((short)8).putLong(tsoffset);
        }
        b.putInt(0).putInt(length);
    }

    private static void epb(final ByteBuffer b, final int interfaceId, final long timestamp, final byte[] frame,
        final int originalLength)
    {
        final int padded = (frame.length + 3) & ~3;
        final int length = 32 + padded;
        b.putInt(PcapReader.PCAPNG_ENHANCED_PACKET_BLOCK).putInt(length).putInt(interfaceId)
            .putInt((int)(timestamp >>> 32)).putInt((int)timestamp).putInt(frame.length).putInt(originalLength)
            .put(frame).put(new byte[padded - frame.length]).putInt(length);
    }

    private static void spb(final ByteBuffer b, final byte[] frame)
    {
        final int padded = (frame.length + 3) & ~3;
        final int length = 16 + padded;
        b.putInt(PcapReader.PCAPNG_SIMPLE_PACKET_BLOCK).putInt(length).putInt(frame.length).put(frame)
            .put(new byte[padded - frame.length]).putInt(length);
    }

    @ParameterizedTest
    @EnumSource(ByteOrderName.class)
    void shouldReadPcapngEnhancedAndSimplePacketBlocksSkippingUnknownBlocks(final ByteOrderName orderName)
        throws IOException
    {
        final ByteBuffer b = buffer(orderName.order);
        shb(b);
        idb(b, LinkType.ETHERNET, 9000, -1, 0, "eth0");
        idb(b, LinkType.RAW, 0, 9, 10, null);
        // a custom block (type 0x00000BAD) the reader must skip
        b.putInt(0xBAD).putInt(16).putInt(0xCAFEBABE).putInt(16);
        epb(b, 0, 1_700_000_000_000_001L, FRAME_A, 64);
        epb(b, 1, 1_234_567_890L, FRAME_B, FRAME_B.length);
        spb(b, FRAME_B);

        final PcapReader reader = PcapReader.of(segment(b));
        assertEquals(PcapReader.Format.PCAPNG, reader.format());
        assertTrue(reader.next());
        assertEquals(0, reader.frameIndex());
        assertEquals(0, reader.interfaceId());
        assertEquals("eth0", reader.interfaceName());
        assertEquals(LinkType.ETHERNET, reader.linkType());
        assertEquals(9000, reader.snapLength());
        assertArrayEquals(FRAME_A, reader.frame().toArray(ValueLayout.JAVA_BYTE));
        assertEquals(64, reader.originalLength());
        // default resolution: microseconds
        assertEquals(1_700_000_000_000_001_000L, reader.timestampNanos());

        assertTrue(reader.next());
        assertEquals(1, reader.interfaceId());
        assertNull(reader.interfaceName());
        assertEquals(LinkType.RAW, reader.linkType());
        // nanoseconds plus 10 s offset
        assertEquals(11_234_567_890L, reader.timestampNanos());
        assertArrayEquals(FRAME_B, reader.frame().toArray(ValueLayout.JAVA_BYTE));

        assertTrue(reader.next());
        assertEquals(2, reader.frameIndex());
        assertEquals(0, reader.interfaceId());
        assertArrayEquals(FRAME_B, reader.frame().toArray(ValueLayout.JAVA_BYTE));
        assertEquals(0, reader.timestampNanos());
        assertFalse(reader.next());
    }

    @Test
    void shouldReadSeveralSectionsInDifferentByteOrders() throws IOException
    {
        final ByteBuffer big = buffer(ByteOrder.BIG_ENDIAN);
        shb(big);
        idb(big, LinkType.ETHERNET, 0, 6, 0, null);
        epb(big, 0, 7, FRAME_A, FRAME_A.length);
        final ByteBuffer little = buffer(ByteOrder.LITTLE_ENDIAN);
        shb(little);
        idb(little, LinkType.RAW, 0, 3, 0, null);
        epb(little, 0, 9, FRAME_B, FRAME_B.length);
        final ByteBuffer both = ByteBuffer.allocate(big.position() + little.position());
        both.put(big.flip()).put(little.flip());

        final PcapReader reader = PcapReader.of(MemorySegment.ofArray(both.array()));
        assertTrue(reader.next());
        assertEquals(LinkType.ETHERNET, reader.linkType());
        assertEquals(7_000L, reader.timestampNanos());
        assertArrayEquals(FRAME_A, reader.frame().toArray(ValueLayout.JAVA_BYTE));
        assertTrue(reader.next());
        assertEquals(LinkType.RAW, reader.linkType());
        assertEquals(9_000_000L, reader.timestampNanos());
        assertArrayEquals(FRAME_B, reader.frame().toArray(ValueLayout.JAVA_BYTE));
        assertFalse(reader.next());
    }

    @Test
    void shouldConvertBinaryTimestampResolution()
    {
        // 2^-10 s units: 1.5 s = 1536 units
        assertEquals(1_500_000_000L, PcapReader.toNanos(true, 10, 0, 1536));
        // 2^-32 s units: 2.25 s
        assertEquals(2_250_000_000L, PcapReader.toNanos(true, 32, 0, (2L << 32) | (1L << 30)));
        // 10^-12 s units (picoseconds)
        assertEquals(1_000_000_001L, PcapReader.toNanos(false, 12, 0, 1_000_000_001_000L));
        assertEquals(3_000_000_000L, PcapReader.toNanos(false, 0, 0, 3));
    }

    @Test
    void shouldReadASimplePacketBlockOfAnInterfaceWhoseSnapLengthIsAboveTwoToThe31() throws IOException
    {
        // a u32 snap length of 2^31 or more once read as a negative int: the simple block's frame came out of
        // next() as an IndexOutOfBoundsException rather than the frame (or a PcapFormatException)
        final ByteBuffer b = buffer(ByteOrder.LITTLE_ENDIAN);
        shb(b);
        idb(b, LinkType.ETHERNET, 0xFFFF_FFFF, -1, 0, null);
        spb(b, FRAME_B);
        final PcapReader reader = PcapReader.of(segment(b));
        assertTrue(reader.next());
        assertArrayEquals(FRAME_B, reader.frame().toArray(ValueLayout.JAVA_BYTE));
        assertFalse(reader.next());
    }

    @Test
    void shouldRejectPacketOnUndescribedInterface() throws IOException
    {
        final ByteBuffer b = buffer(ByteOrder.LITTLE_ENDIAN);
        shb(b);
        idb(b, LinkType.ETHERNET, 0, -1, 0, null);
        epb(b, 3, 0, FRAME_A, FRAME_A.length);
        final PcapReader reader = PcapReader.of(segment(b));
        final PcapFormatException ex = assertThrows(PcapFormatException.class, reader::next);
        assertEquals("packet block at offset 52 refers to interface 3 of 1", ex.getMessage());
    }

    @Test
    void shouldRejectBlockWithMismatchedTrailingLength() throws IOException
    {
        final ByteBuffer b = buffer(ByteOrder.LITTLE_ENDIAN);
        shb(b);
        b.putInt(PcapReader.PCAPNG_INTERFACE_DESCRIPTION_BLOCK).putInt(20).putShort((short)1).putShort((short)0)
            .putInt(0).putInt(24);
        final PcapReader reader = PcapReader.of(segment(b));
        assertThrows(PcapFormatException.class, reader::next);
    }

    @Test
    void shouldMapFileAndReadAll() throws IOException
    {
        final Path file = dir.resolve("two.pcap");
        final ByteBuffer b = buffer(ByteOrder.LITTLE_ENDIAN);
        classicHeader(b, PcapReader.PCAP_MAGIC_MICROS, LinkType.ETHERNET);
        classicRecord(b, 1, 2, FRAME_A, FRAME_A.length);
        classicRecord(b, 3, 4, FRAME_B, FRAME_B.length);
        Files.write(file, segment(b).toArray(ValueLayout.JAVA_BYTE));

        final List<CapturedFrame> frames = PcapReader.readAll(file);
        assertEquals(List.of(
            new CapturedFrame(0, FRAME_A, FRAME_A.length, 1_000_002_000L, 0, LinkType.ETHERNET),
            new CapturedFrame(1, FRAME_B, FRAME_B.length, 3_000_004_000L, 0, LinkType.ETHERNET)), frames);
    }

    @Test
    void shouldRejectEmptyFile() throws IOException
    {
        final Path file = dir.resolve("empty.pcap");
        Files.write(file, new byte[0]);
        assertThrows(PcapFormatException.class, () -> PcapReader.open(file));
    }
}
