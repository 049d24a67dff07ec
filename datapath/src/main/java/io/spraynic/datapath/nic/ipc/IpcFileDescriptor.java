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
 *   | mode (0 spray, 1 RoCEv2, 2 capture only) | planes | 48
 *   | command ring epoch| (unused)          | 56
 *   +-------------------+-------------------+
 *   | IPv4 of planes 0..7 (int each)         | 64
 *   | ... up to HEADER_LENGTH (256)          |
 *   +---------------------------------------+
 *   | to-NIC commands: ManyToOneRingBuffer   | HEADER_LENGTH
 *   +---------------------------------------+
 *   | to-clients refusals: broadcast buffer  | HEADER_LENGTH + to-NIC length
 *   +---------------------------------------+
 * </pre>
 * Every process that maps this file can write all of it: the NIC validates each command record before use, resets
 * the command ring when its records are corrupt and then bumps the command ring epoch, so a client waiting for an
 * answer to a command that was lost with the ring fails its call at once instead of waiting for ever. Answers that
 * carry keys, addresses or a token go to each client's own answer file ({@code client-<random>}, mode 0600), never
 * to the broadcast.
 */
public final class IpcFileDescriptor
{
    /** "SPNI" in ASCII. */
    public static final int MAGIC = 0x53504E49;
    /** Bumped on any change to this layout, the messages, or the connection files. */
    public static final int VERSION = 7;
    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int PID_OFFSET = 8;
    public static final int START_TIME_OFFSET = 16;
    public static final int HEARTBEAT_OFFSET = 24;
    public static final int CLIENT_TIMEOUT_OFFSET = 32;
    public static final int TO_NIC_LENGTH_OFFSET = 40;
    public static final int TO_CLIENTS_LENGTH_OFFSET = 44;
    public static final int MODE_OFFSET = 48;
    /** The mode of a NIC that serves live capture only (classify mode): not a {@code NicConnection.Kind}. */
    public static final int MODE_CAPTURE_ONLY = 2;
    public static final int PLANES_OFFSET = 52;
    /** Bumped (release) by the NIC each time it resets a corrupt command ring: commands in flight were lost. */
    public static final int COMMAND_RING_EPOCH_OFFSET = 56;
    /** The NIC's IPv4 address on plane p at {@code LOCAL_IPV4_OFFSET + 4 * p}, for peers to connect to. */
    public static final int LOCAL_IPV4_OFFSET = 64;
    /**
     * Since version 6: the NIC's IPv6 address on plane p at {@code LOCAL_IPV6_OFFSET + 16 * p}, 16 bytes in network
     * order; all 0 on a plane without one (then {@code LOCAL_IPV4_OFFSET}'s is the address).
     */
    public static final int LOCAL_IPV6_OFFSET = LOCAL_IPV4_OFFSET + 4 * IpcMessages.MAX_PLANES;
    public static final int HEADER_LENGTH = 256;

    /**
     * The announcement's name in the IPC directory: since version 5 a plain file of {@link #HEADER_LENGTH} bytes (the
     * header as the NIC started, heartbeat 0) that the NIC writes once and never maps, so that a client of any version
     * reads the NIC's version before it asks for anything; the control memory itself is a sealed memfd sent on HELLO.
     */
    public static final String CONTROL_FILE = "nic.ctl";
    /** Capacity of the to-NIC command ring (a power of two). */
    public static final int TO_NIC_CAPACITY = 64 * 1024;
    /** Capacity of the to-clients broadcast (a power of two). */
    public static final int TO_CLIENTS_CAPACITY = 64 * 1024;
    /** Prefix of a version-4 client's answer file: a NIC that starts removes any a dead one left. */
    static final String OLD_ANSWER_FILE_PREFIX = "client-";
    /** Capacity of a client's answer ring (a power of two): far more than the answers of one command at a time. */
    public static final int ANSWER_RING_CAPACITY = 64 * 1024;
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

    /** @return bytes of a client's answer memory: one ring, the NIC produces, the client consumes. */
    public static int answerFileLength()
    {
        return ANSWER_RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH;
    }

    /** @return bytes of the control memory (header, command ring, broadcast). */
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
