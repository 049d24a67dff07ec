package io.spraynic.datapath.fabric;

import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;

import java.lang.foreign.MemorySegment;

/**
 * A host port's receive side as a {@link io.spraynic.datapath.nic.NicWorker} polls it: the fabric pushes a frame
 * ({@link Endpoint#onFrame}), its endpoint {@link #offer offers} it here and steps the worker, whose receive takes
 * it. The frame is not copied: it stays in the fabric's memory, which is the endpoint's only during the delivery, so
 * the port holds at most one frame and the worker must run before the delivery returns (a second offer before the
 * worker took the first is refused and counted).
 * <p>
 * Receive only: the worker's engine transmits through a {@link FabricFrameSink} straight onto the host's link, so
 * {@link #allocate} has no buffers and {@link #transmit} sends nothing. One thread (the fabric's); allocation-free
 * after {@link #newBurst}.
 */
final class FabricDeliveryPort implements PacketPort
{
    private final String name;
    private MemorySegment pendingMemory;
    private long pendingOffset;
    private int pendingLength;
    private long framesOffered;
    private long framesRefused;

    /** @param name for logs, e.g. {@code host3/plane1}. */
    FabricDeliveryPort(final String name)
    {
        this.name = name;
    }

    /**
     * Holds a delivered frame for the worker's next receive.
     *
     * @return false (counted) when the worker has not taken the previous frame yet.
     */
    boolean offer(final MemorySegment memory, final long offset, final int length)
    {
        if (null != pendingMemory)
        {
            framesRefused++;
            return false;
        }
        pendingMemory = memory;
        pendingOffset = offset;
        pendingLength = length;
        framesOffered++;
        return true;
    }

    /** Forgets a frame the worker did not take (the delivery is over: its memory is the fabric's again). */
    void clear()
    {
        pendingMemory = null;
    }

    /** @return frames offered and held. */
    long framesOffered()
    {
        return framesOffered;
    }

    /** @return frames refused because the worker had not taken the one before. */
    long framesRefused()
    {
        return framesRefused;
    }

    public String name()
    {
        return name;
    }

    public PacketBurst newBurst(final int capacity)
    {
        return new DeliveredFrameBurst(capacity);
    }

    public int receive(final PacketBurst burst)
    {
        final DeliveredFrameBurst frames = (DeliveredFrameBurst)burst;
        if (null == pendingMemory || frames.size > 0)
        {
            return 0; // a burst holds frames of one delivery's memory: one frame, taken by an empty burst
        }
        frames.memory = pendingMemory;
        frames.offset = pendingOffset;
        frames.length = pendingLength;
        frames.size = 1;
        pendingMemory = null;
        return 1;
    }

    /** @return false: this port has no transmit buffers (its worker's engine writes to the fabric's link). */
    public boolean allocate(final PacketBurst burst, final int count)
    {
        return false;
    }

    /** @return 0: nothing to send (no buffers are ever allocated). */
    public int transmit(final PacketBurst burst)
    {
        return 0;
    }

    public void release(final PacketBurst burst)
    {
        final DeliveredFrameBurst frames = (DeliveredFrameBurst)burst;
        frames.size = 0;
        frames.memory = null; // the fabric's memory, not this port's: nothing to give back
    }

    public void releaseLast(final PacketBurst burst)
    {
        release(burst);
    }

    public void close()
    {
        clear();
    }

    public String toString()
    {
        return "FabricDeliveryPort{" + name + '}';
    }

    /** At most one delivered frame, read in the fabric's memory. */
    private static final class DeliveredFrameBurst implements PacketBurst
    {
        private final int capacity;
        private MemorySegment memory;
        private long offset;
        private int length;
        private int size;

        DeliveredFrameBurst(final int capacity)
        {
            if (capacity < 1)
            {
                throw new IllegalArgumentException("burst capacity " + capacity + " must be at least 1");
            }
            this.capacity = capacity;
        }

        public int size()
        {
            return size;
        }

        public int capacity()
        {
            return capacity;
        }

        public MemorySegment memory()
        {
            return null == memory ? MemorySegment.NULL : memory;
        }

        public long offset(final int index)
        {
            check(index);
            return offset;
        }

        public int length(final int index)
        {
            check(index);
            return length;
        }

        public void length(final int index, final int newLength)
        {
            check(index);
            if (newLength < 0 || newLength > length)
            {
                throw new IllegalArgumentException("length " + newLength + " is not 0.." + length);
            }
            length = newLength;
        }

        public int room(final int index)
        {
            check(index);
            return length;
        }

        public void close()
        {
            size = 0;
            memory = null;
        }

        private void check(final int index)
        {
            if (index < 0 || index >= size)
            {
                throw new IndexOutOfBoundsException("packet " + index + " of a burst holding " + size);
            }
        }
    }
}
