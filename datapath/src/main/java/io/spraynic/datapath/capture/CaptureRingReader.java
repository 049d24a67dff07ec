package io.spraynic.datapath.capture;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * The capture client's end of a live capture ({@link CaptureRingLayout}): drains every worker's ring, hands each
 * frame to a {@link FrameHandler} as a view of its slot, and frees the slots. Every slot is checked before use (a
 * length beyond the snap length, an unknown plane or direction is skipped and counted). Single-threaded.
 */
public final class CaptureRingReader
{
    private static final VarHandle LONG_ATOMIC = ValueLayout.JAVA_LONG.varHandle();

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
    private long malformed;

    /** @param memory capture memory whose header is checked ({@link CaptureRingLayout#read}). */
    public CaptureRingReader(final MemorySegment memory)
    {
        this.memory = memory;
        this.layout = CaptureRingLayout.read(memory);
        this.planes = Math.max(0, Math.min(CaptureRingLayout.MAX_PLANES, memory.get(CaptureRingLayout.INT,
            CaptureRingLayout.PLANES_OFFSET)));
        this.heads = new long[layout.workers()];
        for (int w = 0; w < heads.length; w++)
        {
            heads[w] = memory.get(CaptureRingLayout.LONG, layout.ringOffset(w) + CaptureRingLayout.HEAD_OFFSET);
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
     * Hands up to {@code limit} frames of each ring to {@code handler} and frees their slots.
     *
     * @return frames handed over.
     */
    public int poll(final FrameHandler handler, final int limit)
    {
        int read = 0;
        final int slotLength = layout.slotLength();
        final long mask = layout.slots() - 1;
        for (int w = 0; w < heads.length; w++)
        {
            final long tail = (long)LONG_ATOMIC.getAcquire(memory, layout.ringOffset(w) + CaptureRingLayout.TAIL_OFFSET);
            long head = heads[w];
            if (tail < head || tail - head > layout.slots())
            {
                malformed++; // the NIC wrote a tail no writer of this layout writes: resynchronise on it
                heads[w] = tail;
                continue;
            }
            final long slots = layout.slotsOffset(w);
            int n = 0;
            while (head < tail && n < limit)
            {
                final long slot = slots + (head & mask) * slotLength;
                final int captured = memory.get(CaptureRingLayout.INT, slot + CaptureRingLayout.SLOT_CAPTURED_LENGTH_OFFSET);
                final int original = memory.get(CaptureRingLayout.INT, slot + CaptureRingLayout.SLOT_ORIGINAL_LENGTH_OFFSET);
                final int plane = memory.get(CaptureRingLayout.SHORT, slot + CaptureRingLayout.SLOT_PLANE_OFFSET);
                final int direction = memory.get(ValueLayout.JAVA_BYTE, slot + CaptureRingLayout.SLOT_DIRECTION_OFFSET);
                if (captured < 0 || captured > layout.snapLength() || original < captured || plane < 0 || plane >= planes ||
                    (direction != TappingPacketPort.RX && direction != TappingPacketPort.TX))
                {
                    malformed++;
                }
                else
                {
                    handler.onFrame(plane, w, direction,
                        memory.get(CaptureRingLayout.LONG, slot + CaptureRingLayout.SLOT_TIMESTAMP_OFFSET), memory,
                        slot + CaptureRingLayout.SLOT_DATA_OFFSET, captured, original);
                    read++;
                }
                head++;
                n++;
            }
            if (n > 0)
            {
                heads[w] = head;
                LONG_ATOMIC.setRelease(memory, layout.ringOffset(w) + CaptureRingLayout.HEAD_OFFSET, head);
            }
        }
        return read;
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
