package io.spraynic.dpdk;

import io.spraynic.dpdk.generated.Dpdk;
import io.spraynic.dpdk.generated.rte_mempool_mem_cb_t;
import io.spraynic.dpdk.generated.rte_mempool_memhdr;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * A DPDK packet-buffer pool ({@code rte_pktmbuf_pool_create}, through the shim's
 * {@code spraynic_pktmbuf_pool_create}: without hugepages its mbufs are packed, not one per 4 KiB
 * page). Its memory joins {@link PacketMemory} so that {@link Mbuf} flyweights reach its buffers by
 * offset.
 */
public final class Mempool implements AutoCloseable
{
    private final String name;
    private final MemorySegment pool;
    private final int size;
    private final int dataRoomSize;
    private boolean closed;

    private Mempool(final String name, final MemorySegment pool, final int size, final int dataRoomSize)
    {
        this.name = name;
        this.pool = pool;
        this.size = size;
        this.dataRoomSize = dataRoomSize;
    }

    /**
     * Creates a pool of packet buffers.
     *
     * @param name         unique pool name (DPDK limits it to 25 characters).
     * @param size         number of mbufs; {@code 2^n - 1} is the most memory-efficient.
     * @param cacheSize    per-lcore cache size (0 to disable); at most 512 and at most size / 1.5.
     * @param dataRoomSize bytes of buffer per mbuf, headroom included (e.g. 2048 + 128).
     * @param socketId     NUMA socket, or -1 for any.
     */
    public static Mempool createPacketPool(
        final String name, final int size, final int cacheSize, final int dataRoomSize, final int socketId)
    {
        Eal.current();
        final MemorySegment pool;
        try (Arena arena = Arena.ofConfined())
        {
            // the shim's variant packs the mbufs when there are no hugepages, as the C benchmarks' pools
            pool = MemorySegment.ofAddress(
                Shim.pktmbufPoolCreate(arena.allocateFrom(name).address(), size, cacheSize, 0, dataRoomSize, socketId));
        }
        if (MemorySegment.NULL.equals(pool))
        {
            final int errno = Shim.errno();
            throw new DpdkException("rte_pktmbuf_pool_create(" + name + ", size=" + size + ", cache=" + cacheSize +
                ", dataRoom=" + dataRoomSize + ")", errno, Eal.strerror(errno));
        }
        final Mempool mempool = new Mempool(name, pool, size, dataRoomSize);
        mempool.includeInPacketMemory();
        return mempool;
    }

    private void includeInPacketMemory()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment callback = rte_mempool_mem_cb_t.allocate((mp, opaque, memhdr, index) ->
            {
                final MemorySegment header = memhdr.reinterpret(rte_mempool_memhdr.sizeof());
                PacketMemory.include(rte_mempool_memhdr.addr(header).address(), rte_mempool_memhdr.len(header));
            }, arena);
            Dpdk.rte_mempool_mem_iter(pool, callback, MemorySegment.NULL);
        }
    }

    public String name()
    {
        return name;
    }

    /**
     * @return the {@code struct rte_mempool *} as a raw address, for the fast path.
     */
    public long address()
    {
        return pool.address();
    }

    MemorySegment segment()
    {
        return pool;
    }

    public int size()
    {
        return size;
    }

    public int dataRoomSize()
    {
        return dataRoomSize;
    }

    /**
     * @return mbufs free in the pool (ring plus lcore caches).
     */
    public int availableCount()
    {
        return Dpdk.rte_mempool_avail_count(pool);
    }

    /**
     * @return mbufs handed out and not yet returned.
     */
    public int inUseCount()
    {
        return Dpdk.rte_mempool_in_use_count(pool);
    }

    /**
     * Frees the pool. Every port using it must be closed first.
     */
    public void close()
    {
        if (!closed)
        {
            closed = true;
            Dpdk.rte_mempool_free(pool);
        }
    }

    public String toString()
    {
        return "Mempool{name=" + name + ", size=" + size + ", dataRoom=" + dataRoomSize + '}';
    }
}
