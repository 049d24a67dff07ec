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
        this.slotLength = layout.slotLength();
    }

    /**
     * Copies the frames {@code from} to {@code to} (exclusive) of {@code burst} that {@code filter} takes, all seen on
     * {@code plane}'s {@code queue} in {@code direction} at {@code timestampNanos}, then publishes them.
     */
    public void write(final int plane, final int queue, final int direction, final PacketBurst burst, final int from,
        final int to, final long timestampNanos, final CaptureFilter filter)
    {
        final MemorySegment source = burst.memory();
        final boolean check = filter.checksFrames();
        headReadThisBurst = false;
        // room for the whole burst at the longest record each: then no frame checks the client's head again
        final boolean claimed = claim(to - from);
        for (int i = from; i < to; i++)
        {
            final long offset = burst.offset(i);
            final int length = burst.length(i);
            if (check && !filter.matches(source, offset, length))
            {
                filtered++;
            }
            else if (claimed)
            {
                append(plane, queue, direction, source, offset, length, timestampNanos);
            }
            else if (!write(plane, queue, direction, source, offset, length, timestampNanos) && headReadThisBurst)
            {
                // no room though the head was read this burst: the rest of the burst is dropped in one step
                drop(plane, direction, to - i - 1);
                break;
            }
        }
        publish();
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

    /** @return true once the client's head was found corrupt (the writer only drops from then on). */
    public boolean headCorrupt()
    {
        return headCorrupt;
    }
}
