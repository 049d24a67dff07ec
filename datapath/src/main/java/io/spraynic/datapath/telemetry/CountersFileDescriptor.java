package io.spraynic.datapath.telemetry;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Layout of a SprayNIC counters file: a memory-mapped file through which a running NIC publishes
 * its counters (Agrona {@code CountersManager} buffers), so that another process
 * ({@code spraynic stat}) reads them live, as {@code ethtool -S} reads a hardware NIC.
 * <pre>
 *   0                   1                   2                   3
 *   0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 *  +---------------------------------------------------------------+
 *  |                      magic 'SPNC' (0x53504E43)                 |
 *  +---------------------------------------------------------------+
 *  |             version (written last: 0 until ready)            |
 *  +---------------------------------------------------------------+
 *  |                          pid (64 bits)                        |
 *  +---------------------------------------------------------------+
 *  |                   start time, epoch ms (64 bits)              |
 *  +---------------------------------------------------------------+
 *  |                    metadata buffer length                     |
 *  +---------------------------------------------------------------+
 *  |                     values buffer length                      |
 *  +---------------------------------------------------------------+
 *  |              ... zero up to HEADER_LENGTH (128) ...           |
 *  +---------------------------------------------------------------+
 *  |        metadata buffer (CountersReader.METADATA_LENGTH each)  |
 *  +---------------------------------------------------------------+
 *  |         values buffer (CountersReader.COUNTER_LENGTH each)    |
 *  +---------------------------------------------------------------+
 * </pre>
 * All fields are in native byte order (a counters file is read on the machine that wrote it).
 * Readiness is signalled by the ordered write of {@link #VERSION} after everything else.
 */
public final class CountersFileDescriptor
{
    public static final int MAGIC = 0x53504E43;
    public static final int VERSION = 1;
    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int PID_OFFSET = 8;
    public static final int START_TIME_OFFSET = 16;
    public static final int METADATA_LENGTH_OFFSET = 24;
    public static final int VALUES_LENGTH_OFFSET = 28;
    public static final int HEADER_LENGTH = 128;
    /** File name suffix; files are named {@code <name>-<pid>.counters}. */
    public static final String SUFFIX = ".counters";
    /** Environment variable naming the directory counters files live in. */
    public static final String DIRECTORY_ENV = "SPRAYNIC_RUN_DIR";

    private CountersFileDescriptor()
    {
    }

    /**
     * @return the directory counters files are written to and searched in: {@code $SPRAYNIC_RUN_DIR},
     * else {@code /dev/shm/spraynic} where {@code /dev/shm} exists, else {@code <tmpdir>/spraynic}.
     */
    public static Path defaultDirectory()
    {
        final String configured = System.getenv(DIRECTORY_ENV);
        if (null != configured && !configured.isEmpty())
        {
            return Path.of(configured);
        }
        final Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) ? shm.resolve("spraynic") : Path.of(System.getProperty("java.io.tmpdir"), "spraynic");
    }

    /**
     * @return file length for room for {@code counters} counters.
     */
    public static int fileLength(final int counters)
    {
        return HEADER_LENGTH + counters * (CountersReader.METADATA_LENGTH + CountersReader.COUNTER_LENGTH);
    }

    static int metadataOffset()
    {
        return HEADER_LENGTH;
    }

    static int valuesOffset(final AtomicBuffer file)
    {
        return HEADER_LENGTH + file.getInt(METADATA_LENGTH_OFFSET);
    }
}
