package io.spraynic.datapath.telemetry;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.ConcurrentCountersManager;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The writing side of a counters file (layout in {@link CountersFileDescriptor}): allocates
 * counters that the datapath updates with ordered writes and any process can read while the NIC
 * runs. Allocation is the control path; updating an {@link AtomicCounter} is the fast path.
 * The file is removed on {@link #close()}.
 */
public final class CountersFile implements AutoCloseable
{

    private final Path path;
    private final MappedByteBuffer mapped;
    private final ConcurrentCountersManager counters;

    private CountersFile(final Path path, final MappedByteBuffer mapped, final ConcurrentCountersManager counters)
    {
        this.path = path;
        this.mapped = mapped;
        this.counters = counters;
    }

    /**
     * Creates {@code <directory>/<name>-<pid>.counters} with room for {@code maxCounters}.
     */
    public static CountersFile create(final Path directory, final String name, final int maxCounters)
    {
        if (maxCounters < 1)
        {
            throw new IllegalArgumentException("a counters file needs room for at least one counter, not " + maxCounters);
        }
        final Path path = directory.resolve(name + "-" + ProcessHandle.current().pid() + CountersFileDescriptor.SUFFIX);
        try
        {
            Files.createDirectories(directory);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot create counters directory " + directory + ": " + ex.getMessage() +
                " (set " + CountersFileDescriptor.DIRECTORY_ENV + " to a writable directory)", ex);
        }
        final String problem = directoryProblem(directory);
        if (null != problem)
        {
            throw new IllegalStateException(problem + " (set " + CountersFileDescriptor.DIRECTORY_ENV +
                " to a directory of this user's)");
        }
        final MappedByteBuffer mapped = mapNew(path, CountersFileDescriptor.fileLength(maxCounters));
        final UnsafeBuffer file = new UnsafeBuffer(mapped);
        final int metadataLength = maxCounters * CountersReader.METADATA_LENGTH;
        final int valuesLength = maxCounters * CountersReader.COUNTER_LENGTH;
        file.putInt(CountersFileDescriptor.MAGIC_OFFSET, CountersFileDescriptor.MAGIC);
        file.putLong(CountersFileDescriptor.PID_OFFSET, ProcessHandle.current().pid());
        file.putLong(CountersFileDescriptor.START_TIME_OFFSET, System.currentTimeMillis());
        file.putInt(CountersFileDescriptor.METADATA_LENGTH_OFFSET, metadataLength);
        file.putInt(CountersFileDescriptor.VALUES_LENGTH_OFFSET, valuesLength);
        final ConcurrentCountersManager counters = new ConcurrentCountersManager(
            new UnsafeBuffer(file, CountersFileDescriptor.HEADER_LENGTH, metadataLength),
            new UnsafeBuffer(file, CountersFileDescriptor.HEADER_LENGTH + metadataLength, valuesLength));
        file.putIntRelease(CountersFileDescriptor.VERSION_OFFSET, CountersFileDescriptor.VERSION);
        return new CountersFile(path, mapped, counters);
    }

    /** @return null when the counters directory is safe to create a file in by name, else why not. */
    static String directoryProblem(final Path directory)
    {
        return OwnedDirectory.problem(directory, "the counters directory");
    }

    /**
     * Creates {@code path} afresh (never through an existing name: O_CREAT|O_EXCL, and a link is never followed) and
     * maps {@code length} zeroed bytes of it. A file left at the name by an earlier process of this pid is removed
     * first (removing a name never touches what a link there points to).
     */
    private static MappedByteBuffer mapNew(final Path path, final int length)
    {
        for (int attempt = 0; ; attempt++)
        {
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS))
            {
                return channel.map(FileChannel.MapMode.READ_WRITE, 0, length); // grows the new file to length, zeroed
            }
            catch (final FileAlreadyExistsException ex)
            {
                if (attempt > 0)
                {
                    throw new IllegalStateException("cannot create counters file " + path + ": it keeps existing", ex);
                }
                try
                {
                    Files.delete(path);
                }
                catch (final IOException deleteFailed)
                {
                    throw new IllegalStateException("cannot create counters file " + path + ": a file of that name " +
                        "exists and cannot be removed: " + deleteFailed.getMessage(), deleteFailed);
                }
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException("cannot create counters file " + path + ": " + ex.getMessage(), ex);
            }
        }
    }

    public Path path()
    {
        return path;
    }

    /**
     * @return the manager that allocates counters in this file.
     */
    public ConcurrentCountersManager counters()
    {
        return counters;
    }

    /**
     * Allocates a counter with a label such as {@code port ring0: rx packets}.
     */
    public AtomicCounter newCounter(final String label)
    {
        return counters.newCounter(label);
    }

    public void close()
    {
        IoUtil.unmap(mapped);
        try
        {
            Files.deleteIfExists(path);
        }
        catch (final IOException ex)
        {
            System.err.println("spraynic: could not remove counters file " + path + ": " + ex.getMessage());
        }
    }
}
