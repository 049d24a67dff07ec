package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The shared-memory rings of one connection a client holds through the NIC: sealed memory the NIC makes
 * ({@link SealedMemory}) and hands the client as a descriptor on OPEN_MEMORY, which both processes map. The client posts work requests into the request ring (it produces; the worker that owns the
 * connection consumes, reading the records in place, see {@link ClientRequestRing}); that worker copies the
 * connection's completions into the send and receive completion rings (it produces, the client consumes). Each ring is an Agrona
 * {@link OneToOneRingBuffer}: one thread at a time on each side, as with a {@code NicConnection}.
 * <pre>
 *   0        magic (int) | version (int)
 *   8        connection id (long)
 *   16       request ring length (int) | completion ring length (int)
 *   64       request ring          (REQUEST_RING_CAPACITY + trailer)
 *   ...      send completion ring  (COMPLETION_RING_CAPACITY + trailer)
 *   ...      receive completion ring
 * </pre>
 * A work request record ({@link #SEND_REQUEST} or {@link #RECEIVE_REQUEST}) holds, little-endian, the fields
 * at the {@code WR_*} offsets; a completion record ({@link #COMPLETION}) those at the {@code WC_*} offsets.
 */
public final class ConnectionRings implements AutoCloseable
{
    public static final int MAGIC = 0x53504352;
    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int CONNECTION_ID_OFFSET = 8;
    public static final int REQUEST_RING_LENGTH_OFFSET = 16;
    public static final int COMPLETION_RING_LENGTH_OFFSET = 20;
    public static final int HEADER_LENGTH = 64;

    /**
     * Bytes of the request ring: 1,170 requests of 56 B each (an 8 B record header and the 48 B body, already a
     * multiple of the 8 B alignment).
     */
    public static final int REQUEST_RING_CAPACITY = 64 * 1024;
    /** Bytes of each completion ring: 4096 completions of 32 B, the NIC's default completion queue depth. */
    public static final int COMPLETION_RING_CAPACITY = 128 * 1024;

    /** Record type: a send request. */
    public static final int SEND_REQUEST = 1;
    /** Record type: a receive request. */
    public static final int RECEIVE_REQUEST = 2;
    /** Record type: a completion. */
    public static final int COMPLETION = 3;

    public static final int WR_ID_OFFSET = 0;
    public static final int WR_LOCAL_ADDRESS_OFFSET = 8;
    public static final int WR_REMOTE_ADDRESS_OFFSET = 16;
    public static final int WR_LKEY_OFFSET = 24;
    public static final int WR_LENGTH_OFFSET = 28;
    public static final int WR_RKEY_OFFSET = 32;
    public static final int WR_IMMEDIATE_OFFSET = 36;
    public static final int WR_STREAM_OFFSET = 40;
    public static final int WR_OPCODE_OFFSET = 44;
    public static final int WR_FLAGS_OFFSET = 45;
    public static final int WR_LENGTH = 48;
    /** Flag bit: the send asks for a completion. */
    public static final byte FLAG_SIGNALED = 1;
    /** Flag bit: the send sets the solicited-event bit. */
    public static final byte FLAG_SOLICITED = 2;

    public static final int WC_ID_OFFSET = 0;
    public static final int WC_BYTE_LENGTH_OFFSET = 8;
    public static final int WC_IMMEDIATE_OFFSET = 12;
    public static final int WC_QP_NUMBER_OFFSET = 16;
    public static final int WC_STATUS_OFFSET = 20;
    public static final int WC_OPCODE_OFFSET = 21;
    public static final int WC_HAS_IMMEDIATE_OFFSET = 22;
    public static final int WC_LENGTH = 24;

    private static final WorkCompletionStatus[] STATUSES = WorkCompletionStatus.values();
    private static final WorkCompletionOpcode[] OPCODES = WorkCompletionOpcode.values();

    private final SealedMemory made; // the NIC's side; null on the client's
    private final Arena arena; // the client's mapping; null on the NIC's
    private final long connectionId;
    private final OneToOneRingBuffer requests;
    private final OneToOneRingBuffer sendCompletions;
    private final OneToOneRingBuffer receiveCompletions;

    private ConnectionRings(final SealedMemory made, final Arena arena, final MemorySegment memory)
    {
        this.made = made;
        this.arena = arena;
        final UnsafeBuffer file = new UnsafeBuffer(memory.address(), (int)memory.byteSize());
        this.connectionId = file.getLong(CONNECTION_ID_OFFSET, IpcMessages.ORDER);
        final int requestLength = file.getInt(REQUEST_RING_LENGTH_OFFSET, IpcMessages.ORDER);
        final int completionLength = file.getInt(COMPLETION_RING_LENGTH_OFFSET, IpcMessages.ORDER);
        this.requests = new OneToOneRingBuffer(new UnsafeBuffer(file, HEADER_LENGTH, requestLength));
        this.sendCompletions = new OneToOneRingBuffer(new UnsafeBuffer(file, HEADER_LENGTH + requestLength, completionLength));
        this.receiveCompletions = new OneToOneRingBuffer(
            new UnsafeBuffer(file, HEADER_LENGTH + requestLength + completionLength, completionLength));
    }

    /** @return bytes of a connection file. */
    public static int fileLength()
    {
        return HEADER_LENGTH + REQUEST_RING_CAPACITY + 2 * COMPLETION_RING_CAPACITY + 3 * RingBufferDescriptor.TRAILER_LENGTH;
    }

    /** Makes the sealed memory (NIC side); the version is written last. */
    static ConnectionRings create(final long connectionId)
    {
        final SealedMemory made = SealedMemory.create("spraynic-conn-" + connectionId, fileLength());
        final UnsafeBuffer file = new UnsafeBuffer(made.memory().address(), fileLength());
        file.putInt(MAGIC_OFFSET, MAGIC, IpcMessages.ORDER);
        file.putLong(CONNECTION_ID_OFFSET, connectionId, IpcMessages.ORDER);
        file.putInt(REQUEST_RING_LENGTH_OFFSET, REQUEST_RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH, IpcMessages.ORDER);
        file.putInt(COMPLETION_RING_LENGTH_OFFSET, COMPLETION_RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH,
            IpcMessages.ORDER);
        file.putIntRelease(VERSION_OFFSET, IpcFileDescriptor.VERSION);
        return new ConnectionRings(made, null, made.memory());
    }

    /**
     * Maps the rings the NIC sent as {@code fd} (client side; the descriptor stays the caller's).
     *
     * @throws IllegalStateException when it is not sealed memory holding connection {@code connectionId}'s rings of
     *                               this version.
     */
    static ConnectionRings map(final int fd, final long connectionId)
    {
        final Arena arena = Arena.ofShared();
        try
        {
            final MemorySegment memory = SealedMemory.mapChecked(fd, fileLength(), arena, "connection " + connectionId +
                "'s rings");
            if (memory.get(ValueLayout.JAVA_INT_UNALIGNED, MAGIC_OFFSET) != MAGIC ||
                memory.get(ValueLayout.JAVA_INT_UNALIGNED, VERSION_OFFSET) != IpcFileDescriptor.VERSION ||
                memory.get(ValueLayout.JAVA_LONG_UNALIGNED, CONNECTION_ID_OFFSET) != connectionId ||
                memory.get(ValueLayout.JAVA_INT_UNALIGNED, REQUEST_RING_LENGTH_OFFSET) !=
                REQUEST_RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH ||
                memory.get(ValueLayout.JAVA_INT_UNALIGNED, COMPLETION_RING_LENGTH_OFFSET) !=
                COMPLETION_RING_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH)
            {
                throw new IllegalStateException("the memory the NIC sent is not connection " + connectionId +
                    " of version " + IpcFileDescriptor.VERSION);
            }
            return new ConnectionRings(null, arena, memory);
        }
        catch (final RuntimeException ex)
        {
            arena.close();
            throw ex;
        }
    }

    /** @return the NIC's sealed memory (NIC side; null on the client's): what OPEN_MEMORY hands over. */
    SealedMemory sealedMemory()
    {
        return made;
    }

    public long connectionId()
    {
        return connectionId;
    }

    /** @return client to NIC: work requests. */
    public OneToOneRingBuffer requests()
    {
        return requests;
    }

    /** @return NIC to client: send completions. */
    public OneToOneRingBuffer sendCompletions()
    {
        return sendCompletions;
    }

    /** @return NIC to client: receive completions. */
    public OneToOneRingBuffer receiveCompletions()
    {
        return receiveCompletions;
    }

    /**
     * Copies a completion into a ring (NIC side): no allocation.
     *
     * @return false when the ring has no room.
     */
    static boolean offerCompletion(final OneToOneRingBuffer ring, final WorkCompletion completion)
    {
        final int index = ring.tryClaim(COMPLETION, WC_LENGTH);
        if (index < 0)
        {
            return false;
        }
        final AtomicBuffer b = ring.buffer();
        b.putLong(index + WC_ID_OFFSET, completion.wrId(), IpcMessages.ORDER);
        b.putInt(index + WC_BYTE_LENGTH_OFFSET, completion.byteLength(), IpcMessages.ORDER);
        b.putInt(index + WC_IMMEDIATE_OFFSET, completion.immediateData(), IpcMessages.ORDER);
        b.putInt(index + WC_QP_NUMBER_OFFSET, completion.qpNumber(), IpcMessages.ORDER);
        b.putByte(index + WC_STATUS_OFFSET, (byte)completion.status().ordinal());
        b.putByte(index + WC_OPCODE_OFFSET, (byte)completion.opcode().ordinal());
        b.putByte(index + WC_HAS_IMMEDIATE_OFFSET, (byte)(completion.hasImmediate() ? 1 : 0));
        ring.commit(index);
        return true;
    }

    /** Reads a completion record into a holder (client side); bad codes read as GENERAL_ERR. */
    static void readCompletion(final MutableDirectBuffer b, final int index, final WorkCompletion into)
    {
        final int status = b.getByte(index + WC_STATUS_OFFSET);
        final int opcode = b.getByte(index + WC_OPCODE_OFFSET);
        into.set(b.getLong(index + WC_ID_OFFSET, IpcMessages.ORDER),
            status >= 0 && status < STATUSES.length ? STATUSES[status] : WorkCompletionStatus.GENERAL_ERR,
            opcode >= 0 && opcode < OPCODES.length ? OPCODES[opcode] : WorkCompletionOpcode.SEND,
            b.getInt(index + WC_BYTE_LENGTH_OFFSET, IpcMessages.ORDER),
            b.getByte(index + WC_HAS_IMMEDIATE_OFFSET) != 0,
            b.getInt(index + WC_IMMEDIATE_OFFSET, IpcMessages.ORDER),
            b.getInt(index + WC_QP_NUMBER_OFFSET, IpcMessages.ORDER));
    }

    /** Unmaps (and, on the NIC's side, closes the descriptor if it was never handed over). */
    public void close()
    {
        if (null != made)
        {
            made.close();
        }
        else
        {
            arena.close();
        }
    }
}
