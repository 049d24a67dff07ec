package io.spraynic.datapath.nic.ipc;

import org.agrona.concurrent.broadcast.BroadcastBufferDescriptor;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Layout of a NIC's control file, {@code <ipc dir>/nic.ctl}, which client processes map to reach a running NIC
 * (as Aeron's CnC file). All fields little-endian; the NIC writes {@link #VERSION_OFFSET} last, with release
 * semantics, so a client that reads the current version reads a complete header.
 * <pre>
 *   0                   4                   8
 *   +-------------------+-------------------+
 *   | magic             | version           |
 *   +-------------------+-------------------+
 *   | NIC pid                               |  8
 *   | start time (epoch ms)                 | 16
 *   | heartbeat (epoch ms, NIC conductor)   | 24
 *   | client timeout (ms)                   | 32
 *   +-------------------+-------------------+
 *   | to-NIC length     | to-clients length | 40
 *   | mode (0 spray, 1 RoCEv2) | planes     | 48
 *   +-------------------+-------------------+
 *   | IPv4 of planes 0..7 (int each)         | 64
 *   | MAC of planes 0..7 (long each)         | 96
 *   | ... up to HEADER_LENGTH (256)          |
 *   +---------------------------------------+
 *   | to-NIC commands: ManyToOneRingBuffer   | HEADER_LENGTH
 *   +---------------------------------------+
 *   | to-clients responses: broadcast buffer | HEADER_LENGTH + to-NIC length
 *   +---------------------------------------+
 * </pre>
 */
public final class IpcFileDescriptor
{
    /** "SPNI" in ASCII. */
    public static final int MAGIC = 0x53504E49;
    /** Bumped on any change to this layout, the messages, or the connection files. */
    public static final int VERSION = 1;
    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int PID_OFFSET = 8;
    public static final int START_TIME_OFFSET = 16;
    public static final int HEARTBEAT_OFFSET = 24;
    public static final int CLIENT_TIMEOUT_OFFSET = 32;
    public static final int TO_NIC_LENGTH_OFFSET = 40;
    public static final int TO_CLIENTS_LENGTH_OFFSET = 44;
    public static final int MODE_OFFSET = 48;
    public static final int PLANES_OFFSET = 52;
    /** The NIC's IPv4 address on plane p at {@code LOCAL_IPV4_OFFSET + 4 * p}, for peers to connect to. */
    public static final int LOCAL_IPV4_OFFSET = 64;
    /** The NIC's MAC on plane p at {@code LOCAL_MAC_OFFSET + 8 * p}. */
    public static final int LOCAL_MAC_OFFSET = LOCAL_IPV4_OFFSET + 4 * IpcMessages.MAX_PLANES;
    public static final int HEADER_LENGTH = 256;

    /** The control file's name in the IPC directory. */
    public static final String CONTROL_FILE = "nic.ctl";
    /** Capacity of the to-NIC command ring (a power of two). */
    public static final int TO_NIC_CAPACITY = 64 * 1024;
    /** Capacity of the to-clients broadcast (a power of two). */
    public static final int TO_CLIENTS_CAPACITY = 256 * 1024;
    /** A NIC whose heartbeat is older than this is taken for dead. */
    public static final long NIC_LIVENESS_TIMEOUT_MS = 5_000;

    private IpcFileDescriptor()
    {
    }

    /** @return bytes of the to-NIC section. */
    public static int toNicLength()
    {
        return TO_NIC_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH;
    }

    /** @return bytes of the to-clients section. */
    public static int toClientsLength()
    {
        return TO_CLIENTS_CAPACITY + BroadcastBufferDescriptor.TRAILER_LENGTH;
    }

    /** @return bytes of the whole file. */
    public static int fileLength()
    {
        return HEADER_LENGTH + toNicLength() + toClientsLength();
    }

    /**
     * @return the IPC directory a NIC serves and a client looks in when none is given: {@code $SPRAYNIC_IPC_DIR},
     * else {@code /dev/shm/spraynic-<user>} where {@code /dev/shm} exists, else {@code <tmpdir>/spraynic-<user>}.
     */
    public static Path defaultDirectory()
    {
        final String configured = System.getenv("SPRAYNIC_IPC_DIR");
        if (null != configured && !configured.isEmpty())
        {
            return Path.of(configured);
        }
        final String name = "spraynic-" + System.getProperty("user.name", "user");
        final Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) ? shm.resolve(name) : Path.of(System.getProperty("java.io.tmpdir"), name);
    }
}
