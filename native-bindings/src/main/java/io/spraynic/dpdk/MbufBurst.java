package io.spraynic.dpdk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A burst: a native array of mbuf pointers, held in a {@link MemorySegment} allocated once, and
 * the number of entries in use. RX appends to it, TX drains it from the front, alloc appends
 * fresh mbufs and release frees them all. None of these allocate on the Java heap.
 * <p>
 * A writer that fills frames one at a time takes them with {@link #allocateOne}: the burst keeps a reserve of spare
 * mbufs beside its entries, refilled by one bulk allocation, so that a frame does not cost a downcall and a pool
 * access of its own. Filled only through it, the reserve and the entries together never hold more than
 * {@link #capacity()} mbufs, the most a full burst holds; release and close give the reserve back too.
 * <p>
 * Not thread-safe: a burst belongs to one poll thread.
 */
public final class MbufBurst implements AutoCloseable
{
    /** The burst size DPDK's examples and drivers are tuned for. */
    public static final int DEFAULT_CAPACITY = 32;

    private static final long POINTER_SIZE = ValueLayout.JAVA_LONG.byteSize();

    // Owns the pointer array's memory. Reads go through pointers, a view of the same memory in the
    // global scope: reading through the confined segment itself re-checks the owning thread and
    // liveness on every burst, and those checks add nothing here, because every read is first
    // checked against size, which release() (and so close()) sets to 0 before the memory is freed.
    private final Arena arena;
    private final MemorySegment pointers;
    private final long pointersAddress;
    private final MemorySegment spares; // the reserve of allocateOne, same scheme as pointers
    private final long sparesAddress;
    private int spareCount;
    private long sparesPool; // the pool the reserve came from
    private final int capacity;
    private final MemorySegment memory;
    private final long memoryBase;
    private int size;
    private boolean closed;

    /**
     * @param capacity most mbufs the burst holds (DPDK bursts are at most 65535).
     * @param memory   the packet memory the mbufs live in.
     */
    public MbufBurst(final int capacity, final PacketMemory memory)
    {
        if (capacity < 1 || capacity > 0xFFFF)
        {
            throw new IllegalArgumentException("burst capacity " + capacity + " must be between 1 and 65535");
        }
        this.capacity = capacity;
        this.arena = Arena.ofConfined();
        final MemorySegment owned = arena.allocate(ValueLayout.JAVA_LONG, capacity);
        this.pointersAddress = owned.address();
        this.pointers = MemorySegment.ofAddress(pointersAddress).reinterpret(owned.byteSize());
        final MemorySegment ownedSpares = arena.allocate(ValueLayout.JAVA_LONG, capacity);
        this.sparesAddress = ownedSpares.address();
        this.spares = MemorySegment.ofAddress(sparesAddress).reinterpret(ownedSpares.byteSize());
        this.memory = memory.segment();
        this.memoryBase = this.memory.address();
    }

    public int size()
    {
        return size;
    }

    public int capacity()
    {
        return capacity;
    }

    public boolean isEmpty()
    {
        return 0 == size;
    }

    /**
     * @return the segment that data offsets are relative to.
     */
    public MemorySegment memory()
    {
        return memory;
    }

    /**
     * @return the native address of mbuf pointer {@code index}'s slot, for a downcall.
     */
    public long slotAddress(final int index)
    {
        return pointersAddress + index * POINTER_SIZE;
    }

    /**
     * @return the native address of mbuf {@code index}.
     */
    public long mbufAddress(final int index)
    {
        return pointers.getAtIndex(ValueLayout.JAVA_LONG, checkIndex(index));
    }

    /**
     * @return the offset in {@link #memory()} of mbuf {@code index}'s first data byte.
     */
    public long dataOffset(final int index)
    {
        return Mbuf.dataOffset(memory, memoryBase, mbufAddress(index) - memoryBase);
    }

    public int dataLength(final int index)
    {
        return Mbuf.dataLength(memory, mbufAddress(index) - memoryBase);
    }

    /**
     * Sets the length of single-segment mbuf {@code index}.
     */
    public void dataLength(final int index, final int length)
    {
        Mbuf.dataLength(memory, mbufAddress(index) - memoryBase, length);
    }

    /**
     * @return bytes writable from {@link #dataOffset(int)} in mbuf {@code index}.
     */
    public int dataRoom(final int index)
    {
        return Mbuf.dataRoom(memory, mbufAddress(index) - memoryBase);
    }

    /**
     * Looks mbuf {@code index} up once for a frame about to be written into it.
     *
     * @param index  an mbuf of the burst.
     * @param length bytes about to be written from its data offset.
     * @return the mbuf's offset in {@link #memory()} (for {@link #dataOffsetOf} and {@link #dataLengthOf}), or -1
     * when its data room is less than {@code length}.
     */
    public long writableMbuf(final int index, final int length)
    {
        final long mbuf = mbufAddress(index) - memoryBase;
        return Mbuf.dataRoom(memory, mbuf) >= length ? mbuf : -1;
    }

    /** @param mbuf an mbuf's offset in {@link #memory()}. @return the offset of its first data byte there. */
    public long dataOffsetOf(final long mbuf)
    {
        return Mbuf.dataOffset(memory, memoryBase, mbuf);
    }

    /** Sets the length of single-segment mbuf at {@code mbuf}, an offset in {@link #memory()}. */
    public void dataLengthOf(final long mbuf, final int length)
    {
        Mbuf.dataLength(memory, mbuf, length);
    }

    /**
     * Appends {@code count} fresh mbufs from {@code pool}, all or none.
     *
     * @return true when they were appended, false when the pool cannot supply them now.
     */
    public boolean allocate(final Mempool pool, final int count)
    {
        requireOpen();
        if (count < 0 || count > capacity - size)
        {
            throw new IllegalArgumentException("cannot add " + count + " mbufs to a burst holding " + size + " of " + capacity);
        }
        if (0 == Shim.mbufAllocBulk(pool.address(), slotAddress(size), count))
        {
            size += count;
            return true;
        }
        return false;
    }

    /**
     * Appends one fresh mbuf from {@code pool}, taken from the burst's reserve; an empty reserve is first refilled
     * with as many as the burst has room for, in one bulk allocation (one mbuf alone when the pool cannot supply
     * that many).
     *
     * @return true when appended, false when the burst is full or the pool has no mbuf now.
     */
    public boolean allocateOne(final Mempool pool)
    {
        requireOpen();
        final int room = capacity - size;
        if (room <= 0)
        {
            return false;
        }
        final long poolAddress = pool.address();
        if (0 == spareCount || poolAddress != sparesPool)
        {
            releaseSpares();
            if (room > 1 && 0 == Shim.mbufAllocBulk(poolAddress, sparesAddress, room))
            {
                spareCount = room;
                sparesPool = poolAddress;
            }
            else
            {
                return allocate(pool, 1);
            }
        }
        pointers.setAtIndex(ValueLayout.JAVA_LONG, size, spares.getAtIndex(ValueLayout.JAVA_LONG, --spareCount));
        size++;
        return true;
    }

    /**
     * @return spare mbufs in the reserve of {@link #allocateOne}.
     */
    public int spareCount()
    {
        return spareCount;
    }

    /**
     * Sets the length of every mbuf in the burst (for fixed-size traffic).
     */
    public void dataLengthAll(final int length)
    {
        Shim.mbufSetLengths(pointersAddress, size, length);
    }

    /**
     * Receives from an RX queue into the free tail of the burst.
     *
     * @return the number received.
     */
    public int receive(final int portId, final int queueId)
    {
        requireOpen();
        final int received = Shim.rxBurst(portId, queueId, slotAddress(size), capacity - size);
        size += received;
        return received;
    }

    /**
     * Transmits the burst on a TX queue. The driver owns what it took; what it did not take moves
     * to the front of the burst, still owned by the caller (to retry or {@link #release()}).
     *
     * @return the number sent.
     */
    public int transmit(final int portId, final int queueId)
    {
        requireOpen();
        final int sent = Shim.txBurst(portId, queueId, pointersAddress, size);
        final int left = size - sent;
        if (left > 0 && sent > 0)
        {
            MemorySegment.copy(pointers, sent * POINTER_SIZE, pointers, 0, left * POINTER_SIZE);
        }
        size = left;
        return sent;
    }

    /**
     * {@link #transmit} then {@link #receive} on the same queue pair in one downcall: the burst
     * goes out, what the driver did not take moves to the front, and received mbufs fill the rest.
     *
     * @return the number sent; {@link #size()} is then the unsent plus the received.
     */
    public int transmitAndReceive(final int portId, final int queueId)
    {
        requireOpen();
        final int result = Shim.txRxBurst(portId, queueId, pointersAddress, size, capacity);
        size = result >>> 16;
        return result & 0xFFFF;
    }

    /**
     * Returns every mbuf in the burst, and those in its reserve, to their pool.
     */
    public void release()
    {
        if (size > 0)
        {
            Shim.mbufFreeBulk(pointersAddress, size);
            size = 0;
        }
        releaseSpares();
    }

    private void releaseSpares()
    {
        if (spareCount > 0)
        {
            Shim.mbufFreeBulk(sparesAddress, spareCount);
            spareCount = 0;
        }
    }

    /**
     * Returns the last mbuf of the burst to its pool (one allocated for a frame that was never written).
     */
    public void releaseLast()
    {
        if (size > 0)
        {
            Shim.mbufFreeBulk(slotAddress(size - 1), 1);
            size--;
        }
    }

    /**
     * Forgets the burst's mbufs without freeing them (their ownership moved elsewhere).
     */
    public void clear()
    {
        size = 0;
    }

    /**
     * Frees any mbufs still held (the reserve's too), then the pointer arrays.
     */
    public void close()
    {
        if (!closed)
        {
            release();
            closed = true;
            arena.close();
        }
    }

    // after close() the pointer array is freed: the native calls must not write into it
    private void requireOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("the burst is closed");
        }
    }

    private int checkIndex(final int index)
    {
        if (index < 0 || index >= size)
        {
            throw new IndexOutOfBoundsException("mbuf " + index + " of a burst holding " + size);
        }
        return index;
    }

    public String toString()
    {
        return "MbufBurst{size=" + size + ", capacity=" + capacity + '}';
    }
}
