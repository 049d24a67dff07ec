package io.spraynic.datapath.capture;

import io.spraynic.datapath.port.PacketBurst;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * One worker's end of a live capture ring ({@link CaptureRingLayout}): copies frames (up to the snap length) with
 * their metadata into the next free slot, lossy: when the client has not freed a slot the frame is counted as dropped,
 * never waited for. The tail lives in this object and is only published; the one value read from the shared memory,
 * the client's head, is checked before use, and a head that no honest client writes stops this writer (every frame
 * counts as dropped from then on). Allocates nothing, takes no lock, throws nothing for what the client writes.
 * Single-threaded: the worker's.
 */
public final class CaptureRingWriter
{
    private static final VarHandle LONG_ATOMIC = ValueLayout.JAVA_LONG.varHandle();

    private final MemorySegment memory;
    private final int queue;
    private final long tailOffset;
    private final long headOffset;
    private final long slotsOffset;
    private final long statsOffset;
    private final int slotLength;
    private final int snapLength;
    private final long mask;
    private final long slots;
    private long tail;
    private long head;
    private boolean headCorrupt;
    private boolean headReadThisBurst;
    private long captured;
    private long dropped;
    private long filtered;
    private final long[] interfaceDrops = new long[2 * CaptureRingLayout.MAX_PLANES];

    /**
     * @param memory the whole capture memory, laid out by {@code layout}.
     * @param queue  this worker's queue (its ring).
     */
    public CaptureRingWriter(final MemorySegment memory, final CaptureRingLayout layout, final int queue)
    {
        this.memory = memory;
        this.queue = queue;
        this.tailOffset = layout.ringOffset(queue) + CaptureRingLayout.TAIL_OFFSET;
        this.headOffset = layout.ringOffset(queue) + CaptureRingLayout.HEAD_OFFSET;
        this.slotsOffset = layout.slotsOffset(queue);
        this.statsOffset = layout.statsOffset(queue);
        this.slotLength = layout.slotLength();
        this.snapLength = layout.snapLength();
        this.slots = layout.slots();
        this.mask = slots - 1;
    }

    /**
     * Copies frames {@code from} to {@code to} (exclusive) of {@code burst}, all seen on {@code plane} in
     * {@code direction} at {@code timestampNanos}, then publishes them.
     */
    public void write(final int plane, final int direction, final PacketBurst burst, final int from, final int to,
        final long timestampNanos, final CaptureFilter filter)
    {
        final MemorySegment source = burst.memory();
        final boolean check = filter.checksFrames();
        headReadThisBurst = false;
        for (int i = from; i < to; i++)
        {
            if (!check && tail - head >= slots && !refreshHead())
            {
                drop(plane, direction, to - i); // full for the rest of the burst: no frame of it needs looking at
                break;
            }
            final long offset = burst.offset(i);
            final int length = burst.length(i);
            if (check && !filter.matches(source, offset, length))
            {
                filtered++;
                continue;
            }
            write(plane, direction, source, offset, length, timestampNanos);
        }
        publish();
    }

    /** Copies one frame into the next slot, or counts it dropped; {@link #publish} makes it visible. */
    public void write(final int plane, final int direction, final MemorySegment source, final long offset, final int length,
        final long timestampNanos)
    {
        if (tail - head >= slots && !refreshHead())
        {
            drop(plane, direction, 1);
            return;
        }
        final long slot = slotsOffset + (tail & mask) * slotLength;
        final int copied = Math.min(length, snapLength);
        // three little-endian longs for the six fields (original and captured length; plane, queue and direction)
        memory.set(CaptureRingLayout.LONG, slot + CaptureRingLayout.SLOT_TIMESTAMP_OFFSET, timestampNanos);
        memory.set(CaptureRingLayout.LONG, slot + CaptureRingLayout.SLOT_ORIGINAL_LENGTH_OFFSET,
            (length & 0xFFFF_FFFFL) | (long)copied << 32);
        memory.set(CaptureRingLayout.LONG, slot + CaptureRingLayout.SLOT_PLANE_OFFSET,
            (plane & 0xFFFFL) | (queue & 0xFFFFL) << 16 | (direction & 0xFFL) << 32);
        MemorySegment.copy(source, offset, memory, slot + CaptureRingLayout.SLOT_DATA_OFFSET, copied);
        tail++;
        captured++;
    }

    private void drop(final int plane, final int direction, final int frames)
    {
        dropped += frames;
        interfaceDrops[(plane & (CaptureRingLayout.MAX_PLANES - 1)) * 2 + (direction & 1)] += frames;
    }

    /** @return true when the client freed a slot; a head no client writes honestly stops the writer. */
    private boolean refreshHead()
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
        return tail - head < slots;
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
