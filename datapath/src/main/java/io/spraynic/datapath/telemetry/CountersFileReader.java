package io.spraynic.datapath.telemetry;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * The reading side of a counters file, for another process: maps the file and reads the live
 * counters through Agrona's {@link CountersReader}.
 */
public final class CountersFileReader implements AutoCloseable
{
    /**
     * One counter as read at one moment.
     */
    public record Counter(int id, long value, String label)
    {
    }

    private final Path path;
    private final MappedByteBuffer mapped;
    private final long pid;
    private final long startTimeMillis;
    private final CountersReader reader;

    private CountersFileReader(final Path path, final MappedByteBuffer mapped)
    {
        final UnsafeBuffer file = new UnsafeBuffer(mapped);
        if (file.capacity() < CountersFileDescriptor.HEADER_LENGTH ||
            file.getInt(CountersFileDescriptor.MAGIC_OFFSET) != CountersFileDescriptor.MAGIC)
        {
            IoUtil.unmap(mapped);
            throw new IllegalArgumentException(path + " is not a SprayNIC counters file");
        }
        final int version = file.getIntAcquire(CountersFileDescriptor.VERSION_OFFSET);
        if (version != CountersFileDescriptor.VERSION)
        {
            IoUtil.unmap(mapped);
            throw new IllegalArgumentException(path + " has counters file version " + version + ", this reader reads " +
                CountersFileDescriptor.VERSION + (version == 0 ? " (it is still being created: retry)" : ""));
        }
        final int metadataLength = file.getInt(CountersFileDescriptor.METADATA_LENGTH_OFFSET);
        final int valuesLength = file.getInt(CountersFileDescriptor.VALUES_LENGTH_OFFSET);
        this.path = path;
        this.mapped = mapped;
        this.pid = file.getLong(CountersFileDescriptor.PID_OFFSET);
        this.startTimeMillis = file.getLong(CountersFileDescriptor.START_TIME_OFFSET);
        this.reader = new CountersReader(
            new UnsafeBuffer(file, CountersFileDescriptor.HEADER_LENGTH, metadataLength),
            new UnsafeBuffer(file, CountersFileDescriptor.HEADER_LENGTH + metadataLength, valuesLength));
    }

    public static CountersFileReader open(final Path path)
    {
        if (!Files.isReadable(path))
        {
            throw new IllegalArgumentException("no counters file at " + path);
        }
        return new CountersFileReader(path, IoUtil.mapExistingFile(path.toFile(), "counters"));
    }

    /**
     * @return the newest counters file in {@code directory} whose process is alive, if any.
     */
    public static Optional<Path> findLive(final Path directory)
    {
        if (!Files.isDirectory(directory))
        {
            return Optional.empty();
        }
        try (Stream<Path> files = Files.list(directory))
        {
            return files
                .filter(file -> file.getFileName().toString().endsWith(CountersFileDescriptor.SUFFIX))
                .filter(CountersFileReader::ownerAlive)
                .max(Comparator.comparing(CountersFileReader::modified));
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot list " + directory + ": " + ex.getMessage(), ex);
        }
    }

    private static boolean ownerAlive(final Path file)
    {
        final String name = file.getFileName().toString();
        final int dash = name.lastIndexOf('-');
        try
        {
            final long pid = Long.parseLong(name.substring(dash + 1, name.length() - CountersFileDescriptor.SUFFIX.length()));
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        }
        catch (final RuntimeException ex)
        {
            return false;
        }
    }

    private static long modified(final Path file)
    {
        try
        {
            return Files.getLastModifiedTime(file).toMillis();
        }
        catch (final IOException ex)
        {
            return 0;
        }
    }

    public Path path()
    {
        return path;
    }

    public long pid()
    {
        return pid;
    }

    public long startTimeMillis()
    {
        return startTimeMillis;
    }

    /**
     * @return every allocated counter, in id order.
     */
    public List<Counter> read()
    {
        final List<Counter> counters = new ArrayList<>();
        reader.forEach((value, id, label) -> counters.add(new Counter(id, value, label)));
        return counters;
    }

    public void close()
    {
        IoUtil.unmap(mapped);
    }
}
