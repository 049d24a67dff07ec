package io.spraynic.datapath.capture;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;

/**
 * The layout of a live capture's shared memory: a running NIC's workers copy the frames a capture client asked for
 * into it, one lossy single-producer ring per worker, and the client ({@code spraynic capture}) drains them into a
 * pcapng file. As Aeron's CnC file, the layout is drawn here once and every offset computed from it.
 * <pre>
 *   0      header (4 KiB): magic, version (written last), NIC pid, capture id, workers, planes, slots per ring
 *          (records of the full snap length a ring holds), slot length, snap length, state (RUNNING, then ENDED
 *          once no worker writes any more), start and end time (ns since the epoch), the sampling rate N (one
 *          frame in N of those the filter takes), each ring's bytes of records, each plane's port name, the
 *          filter as text
 *   4096   per worker, 256 B: frames captured, dropped (ring full), filtered out, tap faults, sampled out, then
 *          drops per plane and direction (plane * 2 + direction)
 *   R      per worker (R and each ring 4 KiB aligned): tail (the worker's, one cache line), head (the client's,
 *          one cache line), then {@link #ringCapacity} bytes of records, back to back
 *   record timestamp (ns since the epoch, a long: read when a worker loop taps its received burst, and shared by
 *          the first burst that loop transmits), then one long of captured length (16 bits), original length
 *          (16 bits), plane, queue and direction (a byte each), then the frame's first {@code capturedLength}
 *          bytes at {@link #RECORD_DATA_OFFSET}, padded to {@link #RECORD_ALIGNMENT}
 * </pre>
 * Records lie back to back, so that a small frame costs the worker the cache lines it fills and no more (a fixed slot
 * of the snap length each cost a page, and a TLB miss, per frame). A record never wraps: one that would is preceded by
 * a padding record (direction {@link #PADDING}) to the end of the ring. Tail and head count bytes since the start.
 * A ring is sized in bytes ({@link #ringCapacity}, a multiple of {@link #RECORD_ALIGNMENT}), not in frames: records are
 * packed by each frame's own length, so the bytes are what a ring holds of a traffic, whatever the snap length; its
 * "slots" are the records of the full snap length ({@link #slotLength} bytes each) that fit, at least
 * {@link #MIN_SLOTS}. A client that sizes by slots ({@link #of}) asks for {@code slots * slotLength} bytes.
 * A worker claims room for a whole burst at once (records of the snap length each, and a padding record), reading the
 * client's head at most once a burst, and publishes the tail once a burst (one release store).
 * Little-endian: both ends are on one host. The worker owns the tail, every record and every statistic; the client
 * owns the head. Each side reads what the other writes as hostile: the worker reads only the head, and a head behind
 * what it may overwrite or ahead of its tail stops it writing (counted as drops); the client checks every record, and
 * one whose length it cannot trust makes it skip to the tail (counted).
 */
public final class CaptureRingLayout
{
    public static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;
    public static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ORDER);
    public static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ORDER);
    public static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ORDER);

    public static final int MAGIC = 0x50414353; // "SCAP"
    /**
     * 4: rings sized in bytes (their bytes of records in the header); 3: the sampling rate in the header, frames
     * sampled out in the statistics; 2: records back to back.
     */
    public static final int VERSION = 4;
    public static final int STATE_RUNNING = 1;
    public static final int STATE_ENDED = 2;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int NIC_PID_OFFSET = 8;
    public static final int CAPTURE_ID_OFFSET = 16;
    public static final int WORKERS_OFFSET = 24;
    public static final int PLANES_OFFSET = 28;
    public static final int SLOTS_OFFSET = 32;
    public static final int SLOT_LENGTH_OFFSET = 36;
    public static final int SNAP_LENGTH_OFFSET = 40;
    public static final int STATE_OFFSET = 44;
    public static final int START_NANOS_OFFSET = 48;
    public static final int END_NANOS_OFFSET = 56;
    public static final int SAMPLE_OFFSET = 64;
    /** Each ring's bytes of records, a long (since version 4). */
    public static final int RING_BYTES_OFFSET = 72;
    public static final int PLANE_NAMES_OFFSET = 128;
    public static final int PLANE_NAME_BYTES = 64;
    public static final int FILTER_OFFSET = PLANE_NAMES_OFFSET + 8 * PLANE_NAME_BYTES;
    public static final int MAX_FILTER_BYTES = 1024;
    public static final int HEADER_LENGTH = 4096;

    public static final int STATS_LENGTH = 256;
    public static final int CAPTURED_OFFSET = 0;
    public static final int DROPPED_OFFSET = 8;
    public static final int FILTERED_OFFSET = 16;
    public static final int FAULTS_OFFSET = 24;
    public static final int SAMPLED_OUT_OFFSET = 32;
    public static final int INTERFACE_DROPS_OFFSET = 64;

    public static final int TAIL_OFFSET = 0;
    public static final int HEAD_OFFSET = 64;
    public static final int RING_HEADER_LENGTH = 128;

    public static final int RECORD_TIMESTAMP_OFFSET = 0;
    /** One little-endian long: captured length, original length (16 bits each), plane, queue, direction (a byte each). */
    public static final int RECORD_FIELDS_OFFSET = 8;
    public static final int RECORD_DATA_OFFSET = 16;
    public static final int RECORD_ALIGNMENT = 16;
    /** The direction of a record that only fills the ring's end (its captured length covers the rest). */
    public static final int PADDING = 0xFF;
    /** Longest original length a record carries (longer frames are recorded as this long). */
    public static final int MAX_ORIGINAL_LENGTH = 0xFFFF;

    /** Most workers (queues) and planes (ports) a capture covers: the filter's masks are 64 bits, the drops 8 planes. */
    public static final int MAX_WORKERS = 64;
    public static final int MAX_PLANES = 8;
    public static final int MIN_SLOTS = 16;
    public static final int MAX_SLOTS = 1 << 16;
    public static final int DEFAULT_SLOTS = 2048;
    public static final int MIN_SNAP_LENGTH = 64;
    /** A jumbo frame's 9,216 B. */
    public static final int MAX_SNAP_LENGTH = 9216;
    /** Full frames as the NIC's buffers hold them (2 KiB mbufs), with room to spare. */
    public static final int DEFAULT_SNAP_LENGTH = 4096;
    /** Sampling rates a capture may ask for: one frame in 1 (every frame) .. one in 2^24 (sFlow's rates go to 2^20 and beyond). */
    public static final int MIN_SAMPLE = 1;
    public static final int MAX_SAMPLE = 1 << 24;
    /** Largest capture memory a client may ask for. */
    public static final long MAX_FILE_LENGTH = 1L << 30;
    /** Most bytes of records one ring may have (the whole memory is bounded by {@link #MAX_FILE_LENGTH} as well). */
    public static final long MAX_RING_BYTES = MAX_FILE_LENGTH;
    /**
     * A ring of {@link #DEFAULT_SLOTS} frames of the default snap length, 8,421,376 B: the floor of
     * {@link #defaultRingBytes}, so that a shorter snap length gets more records in the same memory, not less memory.
     */
    public static final long DEFAULT_RING_BYTES = (long)DEFAULT_SLOTS *
        ((RECORD_DATA_OFFSET + DEFAULT_SNAP_LENGTH + RECORD_ALIGNMENT - 1) & -RECORD_ALIGNMENT); // a constant: options show it

    private final int workers;
    private final long ringBytes;
    private final int snapLength;
    private final int sample;
    private final int slotLength;
    private final long ringsOffset;
    private final long ringLength;

    private CaptureRingLayout(final int workers, final long ringBytes, final int snapLength, final int sample)
    {
        this.workers = workers;
        this.ringBytes = ringBytes;
        this.snapLength = snapLength;
        this.sample = sample;
        this.slotLength = slotLength(snapLength);
        this.ringsOffset = align(HEADER_LENGTH + (long)workers * STATS_LENGTH, 4096);
        this.ringLength = align(RING_HEADER_LENGTH + ringBytes, 4096);
    }

    /**
     * @return the layout, or throws {@link IllegalArgumentException} naming the value out of range and the range.
     */
    public static CaptureRingLayout of(final int workers, final int slots, final int snapLength)
    {
        return of(workers, slots, snapLength, 1);
    }

    /**
     * Rings of {@code slots} records of the full snap length each ({@link #ofRingBytes} of {@code slots * slotLength}).
     *
     * @param sample the workers write one frame in {@code sample} of those the filter takes (1: every frame).
     * @return the layout, or throws {@link IllegalArgumentException} naming the value out of range and the range.
     */
    public static CaptureRingLayout of(final int workers, final int slots, final int snapLength, final int sample)
    {
        final String problem = problem(workers, slots, snapLength, sample);
        if (null != problem)
        {
            throw new IllegalArgumentException(problem);
        }
        return new CaptureRingLayout(workers, ringBytes(slots, snapLength), snapLength, sample);
    }

    /**
     * Rings of {@code ringBytes} bytes of records each, however many records of the snap length that is.
     *
     * @return the layout, or throws {@link IllegalArgumentException} naming the value out of range and the range.
     */
    public static CaptureRingLayout ofRingBytes(final int workers, final long ringBytes, final int snapLength,
        final int sample)
    {
        final String problem = ringBytesProblem(workers, ringBytes, snapLength, sample);
        if (null != problem)
        {
            throw new IllegalArgumentException(problem);
        }
        return new CaptureRingLayout(workers, ringBytes, snapLength, sample);
    }

    /** @return bytes of a record of a frame of the full {@code snapLength} (no range check: callers check it first). */
    public static int slotLength(final int snapLength)
    {
        return align(RECORD_DATA_OFFSET + snapLength, RECORD_ALIGNMENT);
    }

    /** @return bytes of a ring of {@code slots} records of the full {@code snapLength}. */
    public static long ringBytes(final int slots, final int snapLength)
    {
        return (long)slots * slotLength(snapLength);
    }

    /** @return the fewest bytes a ring of this snap length may have: {@link #MIN_SLOTS} records of the full snap length. */
    public static long minRingBytes(final int snapLength)
    {
        return ringBytes(MIN_SLOTS, snapLength);
    }

    /**
     * @return the most bytes each of {@code workers} rings (1..{@link #MAX_WORKERS}) may have, the whole memory within
     * {@link #MAX_FILE_LENGTH}.
     */
    public static long maxRingBytes(final int workers)
    {
        final long ringsOffset = align(HEADER_LENGTH + (long)workers * STATS_LENGTH, 4096);
        final long ringLength = (MAX_FILE_LENGTH - ringsOffset) / workers & -4096L;
        return Math.min(MAX_RING_BYTES, ringLength - RING_HEADER_LENGTH);
    }

    /**
     * @return the bytes of a ring a client asks for unless told otherwise: {@link #DEFAULT_RING_BYTES}, or
     * {@link #DEFAULT_SLOTS} records of a longer snap length than the default.
     */
    public static long defaultRingBytes(final int snapLength)
    {
        return Math.max(DEFAULT_RING_BYTES, ringBytes(DEFAULT_SLOTS, snapLength));
    }

    /** @return null when a layout of these values is allowed, else why not. */
    public static String problem(final int workers, final int slots, final int snapLength)
    {
        return problem(workers, slots, snapLength, 1);
    }

    /** @return null when a layout of these values, sampling one frame in {@code sample}, is allowed, else why not. */
    public static String problem(final int workers, final int slots, final int snapLength, final int sample)
    {
        if (sample < MIN_SAMPLE || sample > MAX_SAMPLE)
        {
            return "the sampling rate must be one frame in " + MIN_SAMPLE + ".." + MAX_SAMPLE + ", not one in " + sample;
        }
        if (workers < 1 || workers > MAX_WORKERS)
        {
            return "a capture covers 1.." + MAX_WORKERS + " workers, not " + workers;
        }
        if (slots < MIN_SLOTS || slots > MAX_SLOTS || Integer.bitCount(slots) != 1)
        {
            return "ring slots must be a power of two in " + MIN_SLOTS + ".." + MAX_SLOTS + ", not " + slots;
        }
        if (snapLength < MIN_SNAP_LENGTH || snapLength > MAX_SNAP_LENGTH)
        {
            return "the snap length must be in " + MIN_SNAP_LENGTH + ".." + MAX_SNAP_LENGTH + " bytes, not " + snapLength;
        }
        final long length = new CaptureRingLayout(workers, ringBytes(slots, snapLength), snapLength, sample).fileLength();
        if (length > MAX_FILE_LENGTH)
        {
            return "rings of " + slots + " slots of " + snapLength + " B for " + workers + " worker(s) need " + length +
                " B, more than the " + MAX_FILE_LENGTH + " B allowed: ask for fewer slots or a shorter snap length";
        }
        return null;
    }

    /**
     * The checks of a ring's size in bytes, as another process asked for it: every value is bounded before any
     * product is taken, so that no value of {@code ringBytes} (negative, zero, or near 2^63, where rounding up or
     * multiplying by the workers would wrap) reaches the arithmetic.
     *
     * @return null when rings of {@code ringBytes} bytes each, sampling one frame in {@code sample}, are allowed, else
     * why not.
     */
    public static String ringBytesProblem(final int workers, final long ringBytes, final int snapLength, final int sample)
    {
        if (sample < MIN_SAMPLE || sample > MAX_SAMPLE)
        {
            return "the sampling rate must be one frame in " + MIN_SAMPLE + ".." + MAX_SAMPLE + ", not one in " + sample;
        }
        if (workers < 1 || workers > MAX_WORKERS)
        {
            return "a capture covers 1.." + MAX_WORKERS + " workers, not " + workers;
        }
        if (snapLength < MIN_SNAP_LENGTH || snapLength > MAX_SNAP_LENGTH)
        {
            return "the snap length must be in " + MIN_SNAP_LENGTH + ".." + MAX_SNAP_LENGTH + " bytes, not " + snapLength;
        }
        final long min = minRingBytes(snapLength);
        if (ringBytes < min || ringBytes > MAX_RING_BYTES)
        {
            return "a ring of " + ringBytes + " B is not in " + min + ".." + MAX_RING_BYTES + " B (at least " + MIN_SLOTS +
                " records of the " + snapLength + " B snap length)";
        }
        if (ringBytes % RECORD_ALIGNMENT != 0)
        {
            return "a ring of " + ringBytes + " B is not a multiple of " + RECORD_ALIGNMENT + " B (its records' alignment)";
        }
        final long length = new CaptureRingLayout(workers, ringBytes, snapLength, sample).fileLength();
        if (length > MAX_FILE_LENGTH)
        {
            return "rings of " + ringBytes + " B for " + workers + " worker(s) need " + length + " B, more than the " +
                MAX_FILE_LENGTH + " B allowed: ask for at most " + maxRingBytes(workers) + " B a ring";
        }
        return null;
    }

    /**
     * Reads the layout a NIC wrote at the start of {@code memory} (a client's view; the NIC may be lying or the
     * memory short), or throws {@link IllegalStateException} with what is wrong.
     */
    public static CaptureRingLayout read(final MemorySegment memory)
    {
        if (memory.byteSize() < HEADER_LENGTH || memory.get(INT, MAGIC_OFFSET) != MAGIC)
        {
            throw new IllegalStateException("not a SprayNIC capture ring (" + memory.byteSize() + " B, no magic)");
        }
        final int version = memory.get(INT, VERSION_OFFSET);
        if (version != VERSION)
        {
            throw new IllegalStateException("the capture ring is of version " + version + ", this reader " + VERSION +
                ": use the same SprayNIC build on both sides");
        }
        final CaptureRingLayout layout = ofRingBytes(memory.get(INT, WORKERS_OFFSET), memory.get(LONG, RING_BYTES_OFFSET),
            memory.get(INT, SNAP_LENGTH_OFFSET), memory.get(INT, SAMPLE_OFFSET));
        if (memory.byteSize() < layout.fileLength() || memory.get(INT, SLOT_LENGTH_OFFSET) != layout.slotLength ||
            memory.get(INT, SLOTS_OFFSET) != layout.slots())
        {
            throw new IllegalStateException("the capture ring's " + memory.byteSize() + " B do not hold its layout");
        }
        return layout;
    }

    /** Writes the header of a new capture; the version last, so a reader sees a whole header or none. */
    public void writeHeader(final MemorySegment memory, final long nicPid, final long captureId, final String[] planeNames,
        final String filter, final long startNanos, final long endNanos)
    {
        memory.set(INT, MAGIC_OFFSET, MAGIC);
        memory.set(LONG, NIC_PID_OFFSET, nicPid);
        memory.set(LONG, CAPTURE_ID_OFFSET, captureId);
        memory.set(INT, WORKERS_OFFSET, workers);
        memory.set(INT, PLANES_OFFSET, planeNames.length);
        memory.set(INT, SLOTS_OFFSET, slots());
        memory.set(LONG, RING_BYTES_OFFSET, ringBytes);
        memory.set(INT, SLOT_LENGTH_OFFSET, slotLength);
        memory.set(INT, SNAP_LENGTH_OFFSET, snapLength);
        memory.set(INT, SAMPLE_OFFSET, sample);
        memory.set(INT, STATE_OFFSET, STATE_RUNNING);
        memory.set(LONG, START_NANOS_OFFSET, startNanos);
        memory.set(LONG, END_NANOS_OFFSET, endNanos);
        for (int p = 0; p < Math.min(planeNames.length, MAX_PLANES); p++)
        {
            putString(memory, PLANE_NAMES_OFFSET + (long)p * PLANE_NAME_BYTES, PLANE_NAME_BYTES, planeNames[p]);
        }
        putString(memory, FILTER_OFFSET, MAX_FILTER_BYTES, filter);
        java.lang.invoke.VarHandle.releaseFence();
        memory.set(INT, VERSION_OFFSET, VERSION);
    }

    /** Marks the capture ended: no worker writes into it any more. */
    public static void end(final MemorySegment memory)
    {
        java.lang.invoke.VarHandle.releaseFence();
        memory.set(INT, STATE_OFFSET, STATE_ENDED);
    }

    /** @return the capture's state as the NIC last wrote it ({@link #STATE_RUNNING}, {@link #STATE_ENDED}). */
    public static int state(final MemorySegment memory)
    {
        final int state = memory.get(INT, STATE_OFFSET);
        java.lang.invoke.VarHandle.acquireFence();
        return state;
    }

    /** @return the plane's port name as the NIC wrote it (at most {@link #PLANE_NAME_BYTES} - 4 bytes). */
    public static String planeName(final MemorySegment memory, final int plane)
    {
        return getString(memory, PLANE_NAMES_OFFSET + (long)plane * PLANE_NAME_BYTES, PLANE_NAME_BYTES);
    }

    /** @return the filter as the NIC wrote it. */
    public static String filter(final MemorySegment memory)
    {
        return getString(memory, FILTER_OFFSET, MAX_FILTER_BYTES);
    }

    private static void putString(final MemorySegment memory, final long offset, final int room, final String value)
    {
        byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > room - 4)
        {
            bytes = java.util.Arrays.copyOf(bytes, room - 4);
        }
        memory.set(INT, offset, bytes.length);
        MemorySegment.copy(bytes, 0, memory, ValueLayout.JAVA_BYTE, offset + 4, bytes.length);
    }

    private static String getString(final MemorySegment memory, final long offset, final int room)
    {
        final int length = Math.max(0, Math.min(room - 4, memory.get(INT, offset)));
        final byte[] bytes = new byte[length];
        MemorySegment.copy(memory, ValueLayout.JAVA_BYTE, offset + 4, bytes, 0, length);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static long align(final long value, final int alignment)
    {
        return (value + alignment - 1) & -alignment;
    }

    private static int align(final int value, final int alignment)
    {
        return (value + alignment - 1) & -alignment;
    }

    public int workers()
    {
        return workers;
    }

    /** @return records of the full snap length each ring holds (more of shorter frames). */
    public int slots()
    {
        return (int)(ringBytes / slotLength);
    }

    public int snapLength()
    {
        return snapLength;
    }

    /** @return N: the workers write one frame in N of those the filter takes (1: every frame). */
    public int sample()
    {
        return sample;
    }

    /** @return bytes of a record of the full snap length. */
    public int slotLength()
    {
        return slotLength;
    }

    /** @return bytes of the whole capture memory. */
    public long fileLength()
    {
        return ringsOffset + workers * ringLength;
    }

    /** @return offset of worker {@code worker}'s statistics. */
    public long statsOffset(final int worker)
    {
        return HEADER_LENGTH + (long)worker * STATS_LENGTH;
    }

    /** @return offset of worker {@code worker}'s ring (its tail). */
    public long ringOffset(final int worker)
    {
        return ringsOffset + worker * ringLength;
    }

    /** @return bytes of records each ring holds: at least {@link #slots} records of the full snap length. */
    public long ringCapacity()
    {
        return ringBytes;
    }

    /** @return bytes a record of a frame of {@code capturedLength} bytes takes in a ring. */
    public static int recordLength(final int capturedLength)
    {
        return align(RECORD_DATA_OFFSET + capturedLength, RECORD_ALIGNMENT);
    }

    /** @return offset of the first record of worker {@code worker}'s ring. */
    public long recordsOffset(final int worker)
    {
        return ringOffset(worker) + RING_HEADER_LENGTH;
    }

    public String toString()
    {
        return workers + " ring(s) of " + ringBytes + " B (" + slots() + " frames of the snap length, " + snapLength + " B)" +
            (sample == 1 ? "" : ", sampling 1 frame in " + sample);
    }
}
