package io.spraynic.datapath.telemetry;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.MappedByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The reader as a hostile file meets it: a file another process wrote, or planted where the NIC's is looked for.
 */
class CountersFileReaderTest
{
    @Test
    void shouldNeverAllocateALabelLengthNoWriterWritesNorPassControlCharactersOn(@TempDir final Path dir)
    {
        try (CountersFile file = CountersFile.create(dir, "unit", 8))
        {
            final AtomicCounter huge = file.newCounter("port ring0: rx packets");
            file.newCounter("port ring0: \u001b[2J\u001b[Htx packets");
            final MappedByteBuffer mapped = IoUtil.mapExistingFile(file.path().toFile(), "test");
            try
            {
                // before: Agrona's reader allocated what the file said (OutOfMemoryError, or a negative size)
                new UnsafeBuffer(mapped).putInt(CountersFileDescriptor.HEADER_LENGTH +
                    CountersReader.metaDataOffset(huge.id()) + CountersReader.LABEL_OFFSET, Integer.MAX_VALUE);
            }
            finally
            {
                IoUtil.unmap(mapped);
            }
            try (CountersFileReader reader = CountersFileReader.open(file.path()))
            {
                final List<CountersFileReader.Counter> counters = reader.read();
                assertEquals(2, counters.size());
                assertEquals("(counter 0: a label of 2147483647 bytes, which no writer writes)", counters.get(0).label());
                assertEquals("port ring0: \uFFFD[2J\uFFFD[Htx packets", counters.get(1).label(),
                    "no escape sequence reaches a terminal through spraynic stat");
            }
        }
    }

    @Test
    void shouldRefuseLengthsThatDoNotFitTheFile(@TempDir final Path dir) throws Exception
    {
        final Path copy = dir.resolve("copy.counters");
        try (CountersFile file = CountersFile.create(dir, "unit", 8))
        {
            Files.copy(file.path(), copy);
        }
        final MappedByteBuffer mapped = IoUtil.mapExistingFile(copy.toFile(), "test");
        try
        {
            new UnsafeBuffer(mapped).putInt(CountersFileDescriptor.VALUES_LENGTH_OFFSET, 1 << 30);
        }
        finally
        {
            IoUtil.unmap(mapped);
        }
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> CountersFileReader.open(copy).close());
        assertTrue(refused.getMessage().contains("is not a SprayNIC counters file: its lengths (4096 B of metadata, " +
            "1073741824 B of values) do not fit"), refused.getMessage());
    }

    @Test
    void shouldNeitherFollowALinkNorTakeAnotherUsersFileInADirectoryOthersMayWriteInto(@TempDir final Path dir)
        throws Exception
    {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")), "SKIPPED: chown needs root (CI is root)");
        final Path sticky = Files.createDirectory(dir.resolve("sticky"));
        assertEquals(0, new ProcessBuilder("chmod", "1777", sticky.toString()).start().waitFor());
        try (CountersFile file = CountersFile.create(sticky, "nic", 8))
        {
            file.newCounter("health: ready").setRelease(1);
            // another user's file, newer, named for a process that is always alive (pid 1): before, the reader took it
            final Path planted = sticky.resolve("nic-1" + CountersFileDescriptor.SUFFIX);
            Files.copy(file.path(), planted);
            assertEquals(0, new ProcessBuilder("chown", "65534:65534", planted.toString()).start().waitFor());
            Files.setLastModifiedTime(planted, FileTime.fromMillis(System.currentTimeMillis() + 3_600_000));
            // and a link, newer still, at a name of the same kind
            final Path link = sticky.resolve("link-1" + CountersFileDescriptor.SUFFIX);
            Files.createSymbolicLink(link, planted);
            assertEquals(Optional.of(file.path()), CountersFileReader.findLive(sticky));
            final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
                () -> CountersFileReader.open(link).close());
            assertTrue(refused.getMessage().contains("(a symbolic link"), refused.getMessage());

            // in a directory only its owner writes into, its files are the owner's to trust
            final Path own = Files.createDirectory(dir.resolve("own"));
            Files.copy(planted, own.resolve(planted.getFileName()), java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
            assertEquals(0, new ProcessBuilder("chown", "65534:65534", own.resolve(planted.getFileName()).toString())
                .start().waitFor());
            assertEquals(Optional.of(own.resolve(planted.getFileName())), CountersFileReader.findLive(own));
        }
    }
}
