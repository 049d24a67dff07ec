package io.spraynic.datapath.capture;

import io.spraynic.dpdk.Shim;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * A live capture by reference: the mbufs a worker took a second reference on ({@code refcnt} 2) for a capture, on
 * their way to the capture copier, which copies them into the client's ring and frees that reference. A
 * single-producer (the worker), single-consumer (the copier) ring in the NIC process's own memory, never shared with a
 * client: an entry is the mbuf's address and one long of metadata, so the worker's cost per captured frame is the
 * reference and two sequential stores, and its bound on the references in flight is the ring's capacity, which the
 * copier sizes to a fraction of the mbuf pool (a copier that falls behind makes the worker drop, never empties the
 * pool). The addresses lie in an array of their own, so that the copier frees a run of them in one
 * {@code rte_pktmbuf_free_bulk}.
 * <p>
 * Metadata: {@code nanos << NANOS_SHIFT | queue << 8 | plane << 1 | direction}, {@code nanos} the capture's
 * {@code System.nanoTime()} offset (2^47 ns: 39 hours before it wraps).
 */
public final class MbufReferenceRing implements AutoCloseable
{
    public static final int MIN_CAPACITY = 32;
    public static final int MAX_CAPACITY = 1 << 16;
    public static final int NANOS_SHIFT = 16;

    private static final VarHandle LONG_ATOMIC = ValueLayout.JAVA_LONG.varHandle();
    private static final long TAIL_OFFSET = 0;
    private static final long HEAD_OFFSET = 128; // the consumer's line apart from the producer's (and its prefetch pair)
    private static final long DROPPED_TOTAL_OFFSET = 8; // beside the tail: one line for what the copier reads
    private static final long INDICES_LENGTH = 256;
    private static final int DROP_SLOTS = 2 * CaptureRingLayout.MAX_PLANES;
    /** Bursts a producer that found the ring full drops before it reads the copier's head again. */
    private static final int FULL_SKIPS = 8;

    private final Arena arena;
    private final MemorySegment addresses;
    private final long addressesBase;
    private final MemorySegment metadata;
    private final MemorySegment indices;
    private final int mask;
    private final int capacity;
    private boolean closed;

    // producer (worker) side
    private long tail;
    private long headSeen;
    private final long[] drops = new long[DROP_SLOTS];
    private long droppedTotal;
    private int skipHeadReads;

    // consumer (copier) side
    private long head;

    /** @param capacity most references in flight: a power of two from {@link #MIN_CAPACITY} to {@link #MAX_CAPACITY}. */
    public MbufReferenceRing(final int capacity)
    {
        if (capacity < MIN_CAPACITY || capacity > MAX_CAPACITY || Integer.bitCount(capacity) != 1)
        {
            throw new IllegalArgumentException("capacity " + capacity + " must be a power of two from " + MIN_CAPACITY +
                " to " + MAX_CAPACITY);
        }
        this.capacity = capacity;
        this.mask = capacity - 1;
        this.arena = Arena.ofShared();
        this.addresses = arena.allocate(8L * capacity, 64);
        this.addressesBase = addresses.address();
        this.metadata = arena.allocate(8L * capacity, 64);
        this.indices = arena.allocate(INDICES_LENGTH, 64);
    }

    /** @return the capacity that suits a pool of {@code poolSize} mbufs shared by {@code rings} rings: a quarter of it. */
    public static int capacityFor(final long poolSize, final int rings)
    {
        final long share = Math.max(1, poolSize / (4L * Math.max(1, rings)));
        return (int)Math.max(MIN_CAPACITY, Math.min(MAX_CAPACITY, Long.highestOneBit(share)));
    }

    /** @return most references in flight. */
    public int capacity()
    {
        return capacity;
    }

    /** @return the metadata of a frame of {@code plane}'s {@code queue} in {@code direction}, {@code nanos} after the start. */
    public static long metadata(final long nanos, final int plane, final int queue, final int direction)
    {
        return nanos << NANOS_SHIFT | (queue & 0xFFL) << 8 | (plane & 0x7FL) << 1 | (direction & 1L);
    }

    public static long nanos(final long metadata)
    {
        return metadata >>> NANOS_SHIFT;
    }

    public static int queue(final long metadata)
    {
        return (int)(metadata >>> 8) & 0xFF;
    }

    public static int plane(final long metadata)
    {
        return (int)(metadata >>> 1) & 0x7F;
    }

    public static int direction(final long metadata)
    {
        return (int)metadata & 1;
    }

    // ---- producer: the worker ----

    /**
     * @return entries the producer may {@link #put} now, up to {@code wanted}; the copier's head is read only when the
     *         room known already is short (at most once a burst: its line is the copier's).
     */
    public int room(final int wanted)
    {
        long free = capacity - (tail - headSeen);
        if (free < wanted)
        {
            if (skipHeadReads > 0)
            {
                skipHeadReads--; // found full lately: drop without touching the copier's line, it needs time anyway
            }
            else
            {
                headSeen = (long)LONG_ATOMIC.getAcquire(indices, HEAD_OFFSET);
                free = capacity - (tail - headSeen);
                skipHeadReads = free < wanted ? FULL_SKIPS : 0;
            }
        }
        return (int)Math.max(0, Math.min(free, wanted));
    }

    /** Appends one reference; the caller made {@link #room} for it. Visible to the copier after {@link #publish}. */
    public void put(final long mbufAddress, final long metadata)
    {
        final long index = (tail & mask) << 3;
        addresses.set(ValueLayout.JAVA_LONG, index, mbufAddress);
        this.metadata.set(ValueLayout.JAVA_LONG, index, metadata);
        tail++;
    }

    /** Makes the references put so far, and the drops counted, visible to the copier (once a burst, and at the end). */
    public void publish()
    {
        LONG_ATOMIC.setOpaque(indices, DROPPED_TOTAL_OFFSET, droppedTotal);
        LONG_ATOMIC.setRelease(indices, TAIL_OFFSET, tail);
    }

    /**
     * Counts {@code frames} of {@code plane} in {@code direction} dropped because the ring was full (producer); the
     * copier sees the total at the next {@link #publish} (beside the tail, on the line it reads anyway), and the split
     * by port and direction once the capture ends ({@link #droppedSoFar(int, int)}): a producer that only drops
     * writes nothing the copier reads.
     */
    public void dropped(final int plane, final int direction, final int frames)
    {
        drops[(plane & (CaptureRingLayout.MAX_PLANES - 1)) * 2 + (direction & 1)] += frames;
        droppedTotal += frames;
    }

    // ---- consumer: the copier ----

    /** @return references the producer published that the consumer has not released. */
    public int available()
    {
        return (int)((long)LONG_ATOMIC.getAcquire(indices, TAIL_OFFSET) - head);
    }

    /** @return the mbuf address of the {@code index}-th reference from the head ({@code index < available()}). */
    public long address(final int index)
    {
        return addresses.get(ValueLayout.JAVA_LONG, ((head + index) & mask) << 3);
    }

    /** @return the metadata of the {@code index}-th reference from the head. */
    public long metadata(final int index)
    {
        return metadata.get(ValueLayout.JAVA_LONG, ((head + index) & mask) << 3);
    }

    /** @return frames the producer dropped so far because the ring was full (any thread). */
    public long droppedSoFar()
    {
        return (long)LONG_ATOMIC.getOpaque(indices, DROPPED_TOTAL_OFFSET);
    }

    /**
     * @return frames of {@code plane} in {@code direction} the producer dropped because the ring was full; exact only
     *         once the producer stopped (and that was made visible to the caller, as a worker command does).
     */
    public long droppedSoFar(final int plane, final int direction)
    {
        return drops[(plane & (CaptureRingLayout.MAX_PLANES - 1)) * 2 + (direction & 1)];
    }

    /** Frees the first {@code count} references (at most two {@code rte_pktmbuf_free_bulk}) and gives their room back. */
    public void release(final int count)
    {
        if (count <= 0)
        {
            return;
        }
        final int first = (int)(head & mask);
        final int run = Math.min(count, capacity - first);
        Shim.mbufFreeBulk(addressesBase + 8L * first, run);
        if (run < count)
        {
            Shim.mbufFreeBulk(addressesBase, count - run);
        }
        head += count;
        LONG_ATOMIC.setRelease(indices, HEAD_OFFSET, head);
    }

    /** Frees every reference left and the ring's memory (consumer, once the producer stopped for good). */
    public void close()
    {
        if (!closed)
        {
            release(available());
            closed = true;
            arena.close();
        }
    }
}
