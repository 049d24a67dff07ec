package io.spraynic.datapath.telemetry;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.ConcurrentCountersManager;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;

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
        final MappedByteBuffer mapped = IoUtil.mapNewFile(path.toFile(), CountersFileDescriptor.fileLength(maxCounters));
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
