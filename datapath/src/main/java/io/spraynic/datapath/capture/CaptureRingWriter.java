package io.spraynic.datapath.capture;

import io.spraynic.datapath.port.PacketBurst;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * One worker's end of a live capture ring ({@link CaptureRingLayout}): appends each frame (up to the snap length) with
 * its metadata as a record right behind the previous one, lossy: a frame the client has not made room for is counted
 * as dropped, never waited for. The tail lives in this object and is published once per burst; the one value read from
 * the shared memory, the client's head, is read at most once per burst and checked before use, and a head that no
 * honest client writes stops this writer (every frame counts as dropped from then on). Allocates nothing, takes no
 * lock, throws nothing for what the client writes. Single-threaded: the worker's.
 * <p>
 * Sampling ({@link CaptureRingLayout#sample} N above 1): of the frames the filter takes, the 1st, the (N+1)th, the
 * (2N+1)th... are written, counted over every port and direction of this writer, so that a writer that saw F frames
 * the filter takes wrote ceil(F / N) of them (less its drops). Without frame checks in the filter the frames sampled
 * out are not visited at all: a burst costs one subtraction when none of it is sampled ({@link #samplesNone}), and
 * the frames sampled in one are found by stride.
 */
public final class CaptureRingWriter
{
    private static final VarHandle LONG_ATOMIC = ValueLayout.JAVA_LONG.varHandle();

    private final MemorySegment memory;
    private final long tailOffset;
    private final long headOffset;
    private final long recordsOffset;
    private final long statsOffset;
    private final long capacity;
    private final int snapLength;
    private final int sample;
    /** Frames the filter takes until the next one written, that one included (1: the next is written). */
    private int untilSample = 1;
    private long sampledOut;
    /** Bytes of a record of the snap length, the longest a frame takes. */
    private final long slotLength;
    /** Bytes written since the start (published as the ring's tail). */
    private long tail;
    /** Where the next record goes: {@code tail} modulo the capacity, kept rather than divided for. */
    private long tailIndex;
    private long head;
    private boolean headCorrupt;
    private boolean headReadThisBurst;
    private long captured;
    private long dropped;
    private long filtered;
    private final long[] interfaceDrops = new long[2 * CaptureRingLayout.MAX_PLANES];

    /**
     * @param memory the whole capture memory, laid out by {@code layout}.
     * @param ring   this worker's ring.
     */
    public CaptureRingWriter(final MemorySegment memory, final CaptureRingLayout layout, final int ring)
    {
        this.memory = memory;
        this.tailOffset = layout.ringOffset(ring) + CaptureRingLayout.TAIL_OFFSET;
        this.headOffset = layout.ringOffset(ring) + CaptureRingLayout.HEAD_OFFSET;
        this.recordsOffset = layout.recordsOffset(ring);
        this.statsOffset = layout.statsOffset(ring);
        this.capacity = layout.ringCapacity();
        this.snapLength = layout.snapLength();
        this.sample = layout.sample();
        this.slotLength = layout.slotLength();
    }

    /**
     * For filters without frame checks, where every frame offered is taken: when none of the next {@code frames} is
     * the one in N to write, counts them sampled out and returns true (the caller then skips the burst); else false
     * and nothing changes. Always false without sampling.
     */
    public boolean samplesNone(final int frames)
    {
        if (frames < untilSample)
        {
            untilSample -= frames;
            sampledOut += frames;
            return true;
        }
        return false;
    }

    /**
     * One frame the filter took, for a caller that writes frames one at a time ({@link #write(int, int, int,
     * MemorySegment, long, int, long)}): true when it is the one in N to write, else it is counted sampled out.
     */
    public boolean sampled()
    {
        if (untilSample > 1)
        {
            untilSample--;
            sampledOut++;
            return false;
        }
        untilSample = sample;
        return true;
    }

    /**
     * Copies the frames {@code from} to {@code to} (exclusive) of {@code burst} that {@code filter} takes, all seen on
     * {@code plane}'s {@code queue} in {@code direction} at {@code timestampNanos}, then publishes them.
     */
    public void write(final int plane, final int queue, final int direction, final PacketBurst burst, final int from,
        final int to, final long timestampNanos, final CaptureFilter filter)
    {
        headReadThisBurst = false;
        if (filter.checksFrames())
        {
            writeChecked(plane, queue, direction, burst, from, to, timestampNanos, filter);
        }
        else
        {
            writeEvery(plane, queue, direction, burst, from, to, timestampNanos);
        }
        publish();
    }

    /** Every frame is taken: those sampled are found by stride, the others are not visited. */
    private void writeEvery(final int plane, final int queue, final int direction, final PacketBurst burst,
        final int from, final int to, final long timestampNanos)
    {
        final int first = from + untilSample - 1;
        if (first >= to)
        {
            untilSample -= to - from;
            sampledOut += to - from;
            return;
        }
        final int stride = sample;
        final int written = (to - 1 - first) / stride + 1;
        sampledOut += to - from - written;
        untilSample = first + written * stride - to + 1; // the next frame to write, counted from this burst's end
        final MemorySegment source = burst.memory();
        // room for every frame to write at the longest record each: then no frame checks the client's head again
        final boolean claimed = claim(written);
        for (int i = first; i < to; i += stride)
        {
            final long offset = burst.offset(i);
            final int length = burst.length(i);
            if (claimed)
            {
                append(plane, queue, direction, source, offset, length, timestampNanos);
            }
            else if (!write(plane, queue, direction, source, offset, length, timestampNanos) && headReadThisBurst)
            {
                // no room though the head was read this burst: the rest to write is dropped in one step
                drop(plane, direction, (to - 1 - i) / stride);
                break;
            }
        }
    }

    /** Each frame is checked, and of those taken one in N is written. */
    private void writeChecked(final int plane, final int queue, final int direction, final PacketBurst burst,
        final int from, final int to, final long timestampNanos, final CaptureFilter filter)
    {
        final MemorySegment source = burst.memory();
        // at most this many of the burst are sampled: room for them at the longest record each is claimed at once
        final boolean claimed = claim((to - from - 1) / sample + 1);
        for (int i = from; i < to; i++)
        {
            final long offset = burst.offset(i);
            final int length = burst.length(i);
            if (!filter.matches(source, offset, length))
            {
                filtered++;
            }
            else if (!sampled())
            {
                continue; // counted sampled out
            }
            else if (claimed)
            {
                append(plane, queue, direction, source, offset, length, timestampNanos);
            }
            else if (!write(plane, queue, direction, source, offset, length, timestampNanos) && headReadThisBurst)
            {
                // no room though the head was read this burst: the rest is dropped in one step (unchecked without
                // sampling, as ever; with it, checked and sampled, so that the one in N stays exact)
                if (sample == 1)
                {
                    drop(plane, direction, to - i - 1);
                }
                else
                {
                    dropRest(plane, direction, burst, source, i + 1, to, filter);
                }
                break;
            }
        }
    }

    /** Counts the frames {@code from}..{@code to} of a burst without room: filtered, sampled out or dropped. */
    private void dropRest(final int plane, final int direction, final PacketBurst burst, final MemorySegment source,
        final int from, final int to, final CaptureFilter filter)
    {
        int dropped = 0;
        for (int i = from; i < to; i++)
        {
            if (!filter.matches(source, burst.offset(i), burst.length(i)))
            {
                filtered++;
            }
            else if (sampled())
            {
                dropped++;
            }
        }
        drop(plane, direction, dropped);
    }

    /**
     * Appends one frame, or counts it dropped; {@link #publish} makes it visible.
     *
     * @return false when it was dropped (the ring full, or its head corrupt).
     */
    public boolean write(final int plane, final int queue, final int direction, final MemorySegment source,
        final long offset, final int length, final long timestampNanos)
    {
        final int recordLength = CaptureRingLayout.recordLength(Math.min(length, snapLength));
        final long toEnd = capacity - tailIndex;
        final long needed = recordLength <= toEnd ? recordLength : toEnd + recordLength; // padding to the end first
        if (tail + needed - head > capacity && !refreshHead(needed))
        {
            drop(plane, direction, 1);
            return false;
        }
        append(plane, queue, direction, source, offset, length, timestampNanos);
        return true;
    }

    /**
     * @return true when the ring has room for {@code frames} records of the snap length and a padding record (which
     * is shorter than one), so that none of them needs to check for room; the head is read at most once for it.
     */
    private boolean claim(final int frames)
    {
        final long worst = (long)(frames + 1) * slotLength;
        return tail + worst - head <= capacity || refreshHead(worst);
    }

    /** Writes one frame's record behind the last one (with a padding record first where it would pass the end). */
    private void append(final int plane, final int queue, final int direction, final MemorySegment source,
        final long offset, final int length, final long timestampNanos)
    {
        final int copied = Math.min(length, snapLength);
        final int recordLength = CaptureRingLayout.recordLength(copied);
        final long toEnd = capacity - tailIndex;
        if (recordLength > toEnd)
        {
            // the record does not fit before the end: a padding record fills it (toEnd is a multiple of the alignment)
            memory.set(CaptureRingLayout.LONG, recordsOffset + tailIndex + CaptureRingLayout.RECORD_FIELDS_OFFSET,
                (toEnd - CaptureRingLayout.RECORD_DATA_OFFSET) | (long)CaptureRingLayout.PADDING << 48);
            tail += toEnd;
            tailIndex = 0;
        }
        final long record = recordsOffset + tailIndex;
        memory.set(CaptureRingLayout.LONG, record + CaptureRingLayout.RECORD_TIMESTAMP_OFFSET, timestampNanos);
        memory.set(CaptureRingLayout.LONG, record + CaptureRingLayout.RECORD_FIELDS_OFFSET,
            copied | (long)Math.min(length, CaptureRingLayout.MAX_ORIGINAL_LENGTH) << 16 | (plane & 0xFFL) << 32 |
            (queue & 0xFFL) << 40 | (direction & 0xFFL) << 48);
        MemorySegment.copy(source, offset, memory, record + CaptureRingLayout.RECORD_DATA_OFFSET, copied);
        tail += recordLength;
        tailIndex += recordLength;
        if (tailIndex == capacity)
        {
            tailIndex = 0;
        }
        captured++;
    }

    /** Counts {@code frames} dropped before they reached this writer (their ports and directions: {@link #countInterfaceDrops}). */
    public void countDropped(final long frames)
    {
        dropped += frames;
    }

    /** Adds {@code frames} of {@code plane} in {@code direction}, counted by {@link #countDropped}, to the per-port drops. */
    public void countInterfaceDrops(final int plane, final int direction, final long frames)
    {
        interfaceDrops[(plane & (CaptureRingLayout.MAX_PLANES - 1)) * 2 + (direction & 1)] += frames;
    }

    /** Counts {@code frames} that the filter's frame checks turned away before they reached this writer. */
    public void countFiltered(final long frames)
    {
        filtered += frames;
    }

    private void drop(final int plane, final int direction, final int frames)
    {
        dropped += frames;
        interfaceDrops[(plane & (CaptureRingLayout.MAX_PLANES - 1)) * 2 + (direction & 1)] += frames;
    }

    /** @return true when the client freed room for {@code needed} bytes; a head no client writes honestly stops the writer. */
    private boolean refreshHead(final long needed)
    {
        if (headCorrupt || headReadThisBurst)
        {
            return false; // the client's head is read at most once a burst: its cache line is the client's
        }
        headReadThisBurst = true;
        final long h = (long)LONG_ATOMIC.getAcquire(memory, headOffset);
        if (h < head || h > tail)
        {
            headCorrupt = true; // behind what it freed before, or ahead of what was written: not a consumer's head
            return false;
        }
        head = h;
        return tail + needed - head <= capacity;
    }

    /** Makes the frames written visible to the client and its statistics current (once per burst). */
    public void publish()
    {
        headReadThisBurst = false;
        LONG_ATOMIC.setRelease(memory, tailOffset, tail);
        memory.set(CaptureRingLayout.LONG, statsOffset + CaptureRingLayout.CAPTURED_OFFSET, captured);
        memory.set(CaptureRingLayout.LONG, statsOffset + CaptureRingLayout.DROPPED_OFFSET, dropped);
        memory.set(CaptureRingLayout.LONG, statsOffset + CaptureRingLayout.FILTERED_OFFSET, filtered);
        memory.set(CaptureRingLayout.LONG, statsOffset + CaptureRingLayout.SAMPLED_OUT_OFFSET, sampledOut);
    }

    /** Writes the final statistics, drops per port and direction included (control action, when the capture stops). */
    public void publishFinal(final long faults)
    {
        publish();
        memory.set(CaptureRingLayout.LONG, statsOffset + CaptureRingLayout.FAULTS_OFFSET, faults);
        for (int i = 0; i < interfaceDrops.length; i++)
        {
            memory.set(CaptureRingLayout.LONG, statsOffset + CaptureRingLayout.INTERFACE_DROPS_OFFSET + 8L * i,
                interfaceDrops[i]);
        }
    }

    /** @return frames copied into the ring. */
    public long captured()
    {
        return captured;
    }

    /** @return frames not copied because the ring was full (or its head corrupt). */
    public long dropped()
    {
        return dropped;
    }

    /** @return frames the filter's frame checks turned away. */
    public long filtered()
    {
        return filtered;
    }

    /** @return frames the filter took that sampling passed over (not written, not dropped). */
    public long sampledOut()
    {
        return sampledOut;
    }

    /** @return true once the client's head was found corrupt (the writer only drops from then on). */
    public boolean headCorrupt()
    {
        return headCorrupt;
    }
}
