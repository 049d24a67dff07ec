package io.spraynic.datapath.capture;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PcapWriterTest
{
    @TempDir
    Path dir;

    private static MemorySegment frame(final int length, final int seed)
    {
        final byte[] data = new byte[length];
        for (int i = 0; i < length; i++)
        {
            data[i] = (byte)(seed + i * 7);
        }
        return MemorySegment.ofArray(data);
    }

    @ParameterizedTest
    @EnumSource(PcapWriter.Format.class)
    void shouldRoundTripFramesInBothByteOrders(final PcapWriter.Format format) throws IOException
    {
        for (final ByteOrder order : List.of(ByteOrder.BIG_ENDIAN, ByteOrder.LITTLE_ENDIAN))
        {
            final Path file = dir.resolve("rt-" + format + "-" + order + ".cap");
            final MemorySegment buffer = MemorySegment.ofArray(new byte[4096]);
            MemorySegment.copy(frame(61, 3), 0, buffer, 100, 61);
            try (PcapWriter writer = PcapWriter.create(file, format, order, LinkType.ETHERNET, 65535))
            {
                writer.write(buffer, 100, 61, 1_700_000_000_123_456_789L);
                writer.write(0, frame(1514, 9), 0, 1514, 1514, 1_700_000_001_000_000_001L);
                writer.write(0, frame(3, 1), 0, 3, 70, 42L);
                assertEquals(3, writer.framesWritten());
            }
            final long micros = format == PcapWriter.Format.PCAP_MICROS ? 1_000 : 1;
            try (PcapReader reader = PcapReader.open(file))
            {
                assertEquals(format == PcapWriter.Format.PCAPNG ? PcapReader.Format.PCAPNG : PcapReader.Format.PCAP,
                    reader.format());
                assertTrue(reader.next());
                assertArrayEquals(frame(61, 3).toArray(ValueLayout.JAVA_BYTE), reader.frame().toArray(ValueLayout.JAVA_BYTE));
                assertEquals(1_700_000_000_123_456_789L / micros * micros, reader.timestampNanos());
                assertEquals(LinkType.ETHERNET, reader.linkType());
                assertEquals(65535, reader.snapLength());
                assertTrue(reader.next());
                assertArrayEquals(frame(1514, 9).toArray(ValueLayout.JAVA_BYTE), reader.frame().toArray(ValueLayout.JAVA_BYTE));
                assertEquals(1_700_000_001_000_000_001L / micros * micros, reader.timestampNanos());
                assertTrue(reader.next());
                assertEquals(3, reader.capturedLength());
                assertEquals(70, reader.originalLength());
                assertEquals(42L / micros * micros, reader.timestampNanos());
                assertFalse(reader.next());
            }
        }
    }

    @Test
    void shouldNeverWriteThroughALinkPlantedWhereANewFileIsToBe() throws IOException
    {
        final Path target = dir.resolve("someone-elses-file");
        Files.writeString(target, "precious");
        final Path part = dir.resolve("out.pcapng.part0");
        Files.createSymbolicLink(part, target);
        assertThrows(java.nio.file.FileAlreadyExistsException.class, () -> PcapWriter.pcapngNew(part).close());
        assertEquals("precious", Files.readString(target), "not truncated");
        Files.delete(part);
        PcapWriter.pcapngNew(part).close();
        assertTrue(Files.isRegularFile(part, java.nio.file.LinkOption.NOFOLLOW_LINKS));
    }

    /**
     * The output a user names ({@code spraynic capture /tmp/x.pcapng}, {@code --capture}) is replaced, but never
     * through a link planted at the name (before, the link's target was truncated: a file of the user's own) and never
     * when it is not a regular file; a regular file is replaced as before.
     */
    @Test
    void shouldReplaceOnlyARegularFileAndNeverWriteThroughALink() throws Exception
    {
        final Path target = dir.resolve("own-notes");
        Files.writeString(target, "precious");
        final Path output = dir.resolve("x.pcapng");
        Files.createSymbolicLink(output, target);
        final IOException link = assertThrows(IOException.class, () -> PcapWriter.pcapng(output).close());
        assertTrue(link.getMessage().contains("not a regular file"), link.getMessage());
        assertThrows(IOException.class, () -> PcapWriter.pcap(output, LinkType.ETHERNET).close());
        assertEquals("precious", Files.readString(target), "not truncated");
        final Path fifo = dir.resolve("fifo.pcapng");
        assertEquals(0, new ProcessBuilder("mkfifo", fifo.toString()).start().waitFor());
        assertThrows(IOException.class, () -> PcapWriter.pcapng(fifo).close(), "refused, not an open that blocks");
        final Path regular = dir.resolve("old.pcapng");
        Files.writeString(regular, "an older capture, longer than the new file's header block ".repeat(10));
        PcapWriter.pcapng(regular).close();
        try (PcapReader reader = PcapReader.open(regular))
        {
            assertFalse(reader.next(), "replaced: a pcapng file with no frames");
        }
    }

    @Test
    void shouldWriteOneInterfaceDescriptionBlockPerInterfaceAndTruncateToSnapLength() throws IOException
    {
        final Path file = dir.resolve("multi.pcapng");
        try (PcapWriter writer = PcapWriter.pcapng(file))
        {
            final int rx = writer.addInterface("port0-rx", LinkType.ETHERNET, 65535);
            final int tx = writer.addInterface("port0-tx", LinkType.ETHERNET, 64);
            assertEquals(0, rx);
            assertEquals(1, tx);
            writer.write(tx, frame(100, 5), 0, 100, 100, 10L);
            writer.write(rx, frame(10, 6), 0, 10, 10, 20L);
        }
        try (PcapReader reader = PcapReader.open(file))
        {
            assertTrue(reader.next());
            assertEquals(1, reader.interfaceId());
            assertEquals("port0-tx", reader.interfaceName());
            assertEquals(64, reader.capturedLength());
            assertEquals(100, reader.originalLength());
            assertArrayEquals(frame(100, 5).asSlice(0, 64).toArray(ValueLayout.JAVA_BYTE),
                reader.frame().toArray(ValueLayout.JAVA_BYTE));
            assertEquals(10L, reader.timestampNanos());
            assertTrue(reader.next());
            assertEquals(0, reader.interfaceId());
            assertEquals("port0-rx", reader.interfaceName());
            assertEquals(20L, reader.timestampNanos());
            assertFalse(reader.next());
        }
    }

    @Test
    void shouldCarryAnInterfaceCommentWhereOneIsGiven() throws IOException
    {
        final Path file = dir.resolve("comment.pcapng");
        try (PcapWriter writer = PcapWriter.pcapng(file))
        {
            final int sampled = writer.addInterface("port0-rx", LinkType.ETHERNET, 128, "sampled: 1 in 16 frames");
            final int plain = writer.addInterface("port0-tx", LinkType.ETHERNET, 128, null);
            writer.write(sampled, frame(60, 1), 0, 60, 60, 1L);
            writer.write(plain, frame(61, 2), 0, 61, 61, 2L); // an odd length: the option padding must hold
        }
        try (PcapReader reader = PcapReader.open(file))
        {
            assertTrue(reader.next());
            assertEquals("port0-rx", reader.interfaceName());
            assertEquals("sampled: 1 in 16 frames", reader.interfaceComment());
            assertEquals(60, reader.capturedLength());
            assertTrue(reader.next());
            assertEquals("port0-tx", reader.interfaceName());
            assertEquals(null, reader.interfaceComment());
            assertArrayEquals(frame(61, 2).toArray(ValueLayout.JAVA_BYTE), reader.frame().toArray(ValueLayout.JAVA_BYTE));
            assertFalse(reader.next());
        }
    }

    @Test
    void shouldFlushWhenStagingBufferFills() throws IOException
    {
        final Path file = dir.resolve("many.pcap");
        final MemorySegment jumbo = frame(9000, 1);
        try (PcapWriter writer = PcapWriter.pcap(file, LinkType.ETHERNET))
        {
            for (int i = 0; i < 500; i++)
            {
                writer.write(jumbo, 0, 9000, i * 1_000L);
            }
        }
        assertEquals(24 + 500L * (16 + 9000), Files.size(file));
        int count = 0;
        try (PcapReader reader = PcapReader.open(file))
        {
            while (reader.next())
            {
                assertEquals(9000, reader.capturedLength());
                assertEquals(count * 1_000L, reader.timestampNanos());
                count++;
            }
        }
        assertEquals(500, count);
    }

    @Test
    void shouldRejectUnknownInterfaceAndClassicAddInterface() throws IOException
    {
        try (PcapWriter writer = PcapWriter.pcap(dir.resolve("c.pcap"), LinkType.ETHERNET))
        {
            assertThrows(IllegalStateException.class, () -> writer.addInterface("x", LinkType.ETHERNET, 100));
            assertThrows(IllegalArgumentException.class, () -> writer.write(1, frame(4, 0), 0, 4, 4, 0));
        }
        try (PcapWriter writer = PcapWriter.pcapng(dir.resolve("n.pcapng")))
        {
            assertThrows(IllegalArgumentException.class, () -> writer.write(0, frame(4, 0), 0, 4, 4, 0));
        }
    }
}
