package io.spraynic.datapath.telemetry;

import org.agrona.IoUtil;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.IntPredicate;
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
        // as the writer lays them out (a metadata record per value), within the file: lengths read from a file
        // another process wrote are never trusted further than that
        if (valuesLength <= 0 || valuesLength % CountersReader.COUNTER_LENGTH != 0 ||
            (long)metadataLength != (long)valuesLength / CountersReader.COUNTER_LENGTH * CountersReader.METADATA_LENGTH ||
            CountersFileDescriptor.HEADER_LENGTH + (long)metadataLength + valuesLength > file.capacity())
        {
            IoUtil.unmap(mapped);
            throw new IllegalArgumentException(path + " is not a SprayNIC counters file: its lengths (" + metadataLength +
                " B of metadata, " + valuesLength + " B of values) do not fit its " + file.capacity() + " B");
        }
        this.path = path;
        this.mapped = mapped;
        this.pid = file.getLong(CountersFileDescriptor.PID_OFFSET);
        this.startTimeMillis = file.getLong(CountersFileDescriptor.START_TIME_OFFSET);
        this.reader = new CountersReader(
            new UnsafeBuffer(file, CountersFileDescriptor.HEADER_LENGTH, metadataLength),
            new UnsafeBuffer(file, CountersFileDescriptor.HEADER_LENGTH + metadataLength, valuesLength));
    }

    /**
     * Maps a counters file read-only (a reader never writes it, and so needs no more than read permission), never
     * through a link: a link where a counters file is looked for is another user's doing, not the NIC's.
     *
     * @throws IllegalArgumentException when there is no such regular file, or it is not a counters file.
     */
    public static CountersFileReader open(final Path path)
    {
        if (!Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS) || !Files.isReadable(path))
        {
            throw new IllegalArgumentException("no counters file at " + path +
                (Files.isSymbolicLink(path) ? " (a symbolic link: give the file it points to, if it is yours)" : ""));
        }
        final MappedByteBuffer mapped;
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))
        {
            mapped = channel.map(FileChannel.MapMode.READ_ONLY, 0, channel.size());
        }
        catch (final IOException ex)
        {
            throw new IllegalArgumentException("cannot read counters file " + path + ": " + ex.getMessage(), ex);
        }
        return new CountersFileReader(path, mapped);
    }

    /**
     * @return the newest counters file in {@code directory} whose process is alive, if any: a regular file (not a
     * link), and where the directory lets others create files (sticky, as /tmp) one of this user, root or the
     * directory's owner, so that another user cannot have a file of theirs read as the NIC's.
     */
    public static Optional<Path> findLive(final Path directory)
    {
        if (!Files.isDirectory(directory))
        {
            return Optional.empty();
        }
        final IntPredicate trustedOwner = trustedOwners(directory);
        try (Stream<Path> files = Files.list(directory))
        {
            return files
                .filter(file -> file.getFileName().toString().endsWith(CountersFileDescriptor.SUFFIX))
                .filter(file -> Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS))
                .filter(file -> trustedOwner.test(owner(file)))
                .filter(CountersFileReader::ownerAlive)
                .max(Comparator.comparing(CountersFileReader::modified));
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot list " + directory + ": " + ex.getMessage(), ex);
        }
    }

    private static IntPredicate trustedOwners(final Path directory)
    {
        try
        {
            final int mode = (Integer)Files.getAttribute(directory, "unix:mode");
            if ((mode & OwnedDirectory.GROUP_OR_OTHERS_WRITE) == 0)
            {
                return uid -> true; // only its owner creates files in it
            }
            final int directoryOwner = (Integer)Files.getAttribute(directory, "unix:uid");
            final int self = OwnedDirectory.currentUid();
            return uid -> uid == 0 || uid == self || uid == directoryOwner;
        }
        catch (final IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException ex)
        {
            return uid -> false; // a directory whose owner and mode cannot be read is not trusted
        }
    }

    private static int owner(final Path file)
    {
        try
        {
            return (Integer)Files.getAttribute(file, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        }
        catch (final IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException ex)
        {
            return -1;
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
        // as CountersReader.forEach, but a label's length is checked before anything is allocated for it (Agrona's
        // takes it from the file as it is), and a label cannot carry control characters to a terminal
        final List<Counter> counters = new ArrayList<>();
        final AtomicBuffer metadata = reader.metaDataBuffer();
        for (int id = 0, max = reader.maxCounterId(); id <= max; id++)
        {
            final int state = reader.getCounterState(id);
            if (state == CountersReader.RECORD_UNUSED)
            {
                break;
            }
            if (state == CountersReader.RECORD_ALLOCATED)
            {
                counters.add(new Counter(id, reader.getCounterValue(id), label(metadata, id)));
            }
        }
        return counters;
    }

    private static String label(final AtomicBuffer metadata, final int id)
    {
        final int offset = CountersReader.metaDataOffset(id) + CountersReader.LABEL_OFFSET;
        final int length = metadata.getInt(offset);
        if (length < 0 || length > CountersReader.MAX_LABEL_LENGTH)
        {
            return "(counter " + id + ": a label of " + length + " bytes, which no writer writes)";
        }
        final byte[] bytes = new byte[length];
        metadata.getBytes(offset + Integer.BYTES, bytes);
        final StringBuilder label = new StringBuilder(new String(bytes, StandardCharsets.UTF_8));
        for (int i = 0; i < label.length(); i++)
        {
            final char c = label.charAt(i);
            if (Character.isISOControl(c))
            {
                label.setCharAt(i, '\uFFFD');
            }
        }
        return label.toString();
    }

    public void close()
    {
        IoUtil.unmap(mapped);
    }
}
