package io.spraynic.datapath.capture;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.locks.LockSupport;

/**
 * The capture client's end of a live capture ({@link CaptureRingLayout}): drains every worker's ring, hands each
 * frame to a {@link FrameHandler} as a view of its record, and frees the room. Every record is checked before use: an
 * unknown plane, queue or direction, or a length beyond the snap length, is skipped and counted; a record whose length
 * would run past the tail or the ring's end is counted and the ring skipped to its tail (nothing after such a record
 * can be found); so is a head or tail no writer writes (below 0, behind the head, or more than a ring ahead of it).
 * Single-threaded.
 */
public final class CaptureRingReader
{
    private static final VarHandle LONG_ATOMIC = ValueLayout.JAVA_LONG.varHandle();
    /**
     * The longest a client waits after {@link #pollAll} before it reads again ({@link #waitNanos}). A client right
     * behind a worker reads the lines the worker is still filling (one record's end and the next one's start share a
     * line, and the tail's line moves every burst), so those lines cross between the two cores again and again; read
     * in batches a millisecond apart, each copied 64 B frame cost the worker about half as much (benchmarks/RESULTS.md
     * 31). A ring of the default size ({@link CaptureRingLayout#DEFAULT_RING_BYTES}, 8 MiB, whatever the snap length)
     * holds a millisecond of frames up to about 60 Gb/s; a small one (4,096 slots of 64 B: 320 KiB, 4,096 frames, the
     * size a snap length of 64 gave before rings were sized in bytes) holds 0.2-0.7 ms of one worker's 64 B frames, and
     * a client that read it every millisecond dropped three frames in four (RESULTS.md 51, 55): the wait is shortened
     * to what the ring holds.
     */
    public static final long READ_INTERVAL_NANOS = 1_000_000L;
    /**
     * Share of its ring the fullest ring should hold when the client reads again: a quarter, so that a rate that
     * doubles, or a read that comes late, still finds room.
     */
    static final double TARGET_FILL = 0.25;
    /**
     * The shortest wait: a park sleeps at least the timer slack (50 us) anyway, and a client that spins instead stays
     * runnable and, on a shared host, loses its turn to the scheduler for milliseconds (a client that sleeps is woken
     * ahead of the threads that ran meanwhile).
     */
    static final long MIN_PARK_NANOS = 50_000L;
    /** Frames {@link #pollAll} takes of each ring per pass. */
    private static final int PASS_FRAMES = 4096;

    /** Takes one captured frame: {@code capturedLength} bytes at {@code offset} in {@code memory}, valid during the call. */
    @FunctionalInterface
    public interface FrameHandler
    {
        void onFrame(int plane, int queue, int direction, long timestampNanos, MemorySegment memory, long offset,
            int capturedLength, int originalLength);
    }

    private final MemorySegment memory;
    private final CaptureRingLayout layout;
    private final int planes;
    private final long[] heads;
    /** The tail below 0 each ring last showed, so that one is counted once, not at every poll. */
    private final long[] badTails;
    /** Bytes a pass reads before it hands them back to the worker (a quarter of a ring), besides at its end. */
    private final long releaseBytes;
    private long malformed;
    /** Bytes the fullest ring held when the last {@link #poll} read its tail. */
    private long lastPassFullest;
    /** When the last {@link #pollAll} began. */
    private long lastReadNanos;
    /** What {@link #waitNanos} answers: set by each {@link #pollAll}. */
    private long waitNanos = READ_INTERVAL_NANOS;

    /** @param memory capture memory whose header is checked ({@link CaptureRingLayout#read}). */
    public CaptureRingReader(final MemorySegment memory)
    {
        this.memory = memory;
        this.layout = CaptureRingLayout.read(memory);
        this.planes = Math.max(0, Math.min(CaptureRingLayout.MAX_PLANES, memory.get(CaptureRingLayout.INT,
            CaptureRingLayout.PLANES_OFFSET)));
        this.heads = new long[layout.workers()];
        this.badTails = new long[layout.workers()]; // 0: none (a tail of 0 is never a bad one)
        this.releaseBytes = Math.max(CaptureRingLayout.RECORD_ALIGNMENT, layout.ringCapacity() / 4);
        for (int w = 0; w < heads.length; w++)
        {
            final long head = memory.get(CaptureRingLayout.LONG, layout.ringOffset(w) + CaptureRingLayout.HEAD_OFFSET);
            if (head < 0)
            {
                // not a head the NIC starts a ring with: start at its tail (what came before is lost) and say so
                malformed++;
                heads[w] = Math.max(0, memory.get(CaptureRingLayout.LONG, layout.ringOffset(w) + CaptureRingLayout.TAIL_OFFSET));
                LONG_ATOMIC.setRelease(memory, layout.ringOffset(w) + CaptureRingLayout.HEAD_OFFSET, heads[w]);
            }
            else
            {
                heads[w] = head;
            }
        }
    }

    public CaptureRingLayout layout()
    {
        return layout;
    }

    /** @return the NIC's ports (planes) the capture names. */
    public int planes()
    {
        return planes;
    }

    /** @return the name of port (plane) {@code plane} as the NIC wrote it. */
    public String planeName(final int plane)
    {
        return CaptureRingLayout.planeName(memory, plane);
    }

    /**
     * Hands up to {@code limit} frames of each ring to {@code handler} and frees their room.
     *
     * @return frames handed over.
     */
    public int poll(final FrameHandler handler, final int limit)
    {
        int read = 0;
        final long capacity = layout.ringCapacity();
        final int snapLength = layout.snapLength();
        final int workers = heads.length;
        long fullest = 0;
        for (int w = 0; w < workers; w++)
        {
            final long tail = (long)LONG_ATOMIC.getAcquire(memory, layout.ringOffset(w) + CaptureRingLayout.TAIL_OFFSET);
            long head = heads[w];
            if (tail < 0)
            {
                // no writer ever goes below 0, and an index taken from it would be negative: read nothing of this
                // ring, and keep the head, until the NIC writes a tail that can be one (counted once per such tail)
                if (tail != badTails[w])
                {
                    badTails[w] = tail;
                    malformed++;
                }
                continue;
            }
            if (tail < head || tail - head > capacity)
            {
                malformed++; // the NIC wrote a tail no writer of this layout writes: resynchronise on it
                heads[w] = tail;
                continue;
            }
            fullest = Math.max(fullest, tail - head);
            final long records = layout.recordsOffset(w);
            long index = head % capacity;
            int n = 0;
            while (head < tail && n < limit)
            {
                final long available = Math.min(tail - head, capacity - index);
                if (available < CaptureRingLayout.RECORD_DATA_OFFSET)
                {
                    malformed++; // no whole record header before the tail or the end: not what a writer leaves
                    head = tail;
                    break;
                }
                final long fields = memory.get(CaptureRingLayout.LONG, records + index + CaptureRingLayout.RECORD_FIELDS_OFFSET);
                final int captured = (int)(fields & 0xFFFF);
                final int recordLength = CaptureRingLayout.recordLength(captured);
                final int direction = (int)(fields >>> 48 & 0xFF);
                if (recordLength > available ||
                    (direction == CaptureRingLayout.PADDING && index + recordLength != capacity))
                {
                    malformed++; // a record whose length cannot be trusted: what follows it cannot be found
                    head = tail;
                    break;
                }
                if (direction != CaptureRingLayout.PADDING)
                {
                    final int original = (int)(fields >>> 16 & 0xFFFF);
                    final int plane = (int)(fields >>> 32 & 0xFF);
                    final int queue = (int)(fields >>> 40 & 0xFF);
                    if (captured > snapLength || original < captured || plane >= planes || queue >= workers ||
                        (direction != TappingPacketPort.RX && direction != TappingPacketPort.TX))
                    {
                        malformed++;
                    }
                    else
                    {
                        handler.onFrame(plane, queue, direction,
                            memory.get(CaptureRingLayout.LONG, records + index + CaptureRingLayout.RECORD_TIMESTAMP_OFFSET),
                            memory, records + index + CaptureRingLayout.RECORD_DATA_OFFSET, captured, original);
                        read++;
                    }
                    n++;
                }
                head += recordLength;
                index += recordLength;
                if (index == capacity)
                {
                    index = 0;
                }
                if (head - heads[w] >= releaseBytes)
                {
                    // a pass may take a whole small ring (4,096 records of 64 B frames are one pass): the worker gets
                    // room back each quarter of it, not only once the pass ends
                    heads[w] = head;
                    LONG_ATOMIC.setRelease(memory, layout.ringOffset(w) + CaptureRingLayout.HEAD_OFFSET, head);
                }
            }
            if (head != heads[w])
            {
                heads[w] = head;
                LONG_ATOMIC.setRelease(memory, layout.ringOffset(w) + CaptureRingLayout.HEAD_OFFSET, head);
            }
        }
        lastPassFullest = fullest;
        return read;
    }

    /**
     * Polls until the rings are empty, or about {@code limit} frames were handed over (each ring's last pass takes what
     * is left of the limit), so that a worker writing faster than the handler takes cannot keep a client here forever;
     * a client then waits {@link #READ_INTERVAL_NANOS}.
     *
     * @return frames handed over.
     */
    public long pollAll(final FrameHandler handler, final long limit)
    {
        return pollAll(handler, limit, System.nanoTime());
    }

    /** {@link #pollAll(FrameHandler, long)} at {@code now} ({@code System.nanoTime()}; tests give their own clock). */
    long pollAll(final FrameHandler handler, final long limit, final long now)
    {
        final long interval = 0 == lastReadNanos ? READ_INTERVAL_NANOS : now - lastReadNanos;
        lastReadNanos = now;
        long read = 0;
        int n;
        boolean first = true;
        while (read < limit)
        {
            n = poll(handler, (int)Math.min(PASS_FRAMES, limit - read));
            if (first)
            {
                first = false;
                // what filled since the last read sets the next wait
                waitNanos = waitNanos(interval, lastPassFullest / (double)layout.ringCapacity(), waitNanos);
            }
            if (n == 0)
            {
                break;
            }
            read += n;
        }
        return read;
    }

    /**
     * @return ns a client waits after {@link #pollAll} before it reads again: {@link #READ_INTERVAL_NANOS}, or less
     * where the fullest ring filled faster than that: the time it takes, at the rate the last read found, to fill
     * {@link #TARGET_FILL} of the ring; never less than {@link #MIN_PARK_NANOS}.
     */
    public long waitNanos()
    {
        return waitNanos;
    }

    /**
     * @return the wait after a read that found the fullest ring {@code fill} full, {@code intervalNanos} after the
     * last read, which had asked for {@code lastWaitNanos}. A ring found more than half full filled at a rate this
     * read cannot tell (a full one stops growing, and a client the scheduler kept away waited longer than it asked):
     * then the wait also halves, read after read, until the reads find room.
     */
    static long waitNanos(final long intervalNanos, final double fill, final long lastWaitNanos)
    {
        if (!(fill > 0))
        {
            return READ_INTERVAL_NANOS;
        }
        double wait = intervalNanos * TARGET_FILL / fill;
        if (fill > 2 * TARGET_FILL)
        {
            wait = Math.min(wait, lastWaitNanos / 2.0);
        }
        return wait >= READ_INTERVAL_NANOS ? READ_INTERVAL_NANOS : wait < MIN_PARK_NANOS ? MIN_PARK_NANOS : (long)wait;
    }

    /** Waits {@link #waitNanos} (a client's loop, after a {@link #pollAll} that did not reach its limit). */
    public void pause()
    {
        LockSupport.parkNanos(waitNanos);
    }

    /** @return true once the NIC said no worker writes any more (then one more {@link #poll} takes the rest). */
    public boolean ended()
    {
        return CaptureRingLayout.state(memory) == CaptureRingLayout.STATE_ENDED;
    }

    /** @return slots skipped because they held what no honest NIC writes. */
    public long malformed()
    {
        return malformed;
    }

    /** @return frames worker {@code worker} copied into its ring. */
    public long captured(final int worker)
    {
        return stat(worker, CaptureRingLayout.CAPTURED_OFFSET);
    }

    /** @return frames worker {@code worker} dropped because its ring was full. */
    public long dropped(final int worker)
    {
        return stat(worker, CaptureRingLayout.DROPPED_OFFSET);
    }

    /** @return frames the filter took on worker {@code worker} that sampling passed over. */
    public long sampledOut(final int worker)
    {
        return stat(worker, CaptureRingLayout.SAMPLED_OUT_OFFSET);
    }

    /** @return frames worker {@code worker}'s frame checks turned away. */
    public long filtered(final int worker)
    {
        return stat(worker, CaptureRingLayout.FILTERED_OFFSET);
    }

    /** @return frames worker {@code worker} dropped on {@code plane} in {@code direction} (final once {@link #ended}). */
    public long dropped(final int worker, final int plane, final int direction)
    {
        return stat(worker, CaptureRingLayout.INTERFACE_DROPS_OFFSET + 8 * (plane * 2 + direction));
    }

    private long stat(final int worker, final int field)
    {
        return memory.get(CaptureRingLayout.LONG, layout.statsOffset(worker) + field);
    }
}
