package io.spraynic.pmd;

import java.util.Objects;

/**
 * The {@code [mempool]} table: the one packet-buffer pool every port's RX queues fill from, as passed
 * to {@code rte_pktmbuf_pool_create(name, mbufs, cache, privSize, dataRoom, socketId)}.
 *
 * @param name     pool name, unique in the process; DPDK prefixes "MP_" and caps the ring name, so at most 25 chars.
 * @param mbufs    number of mbufs; 2^n - 1 is the most memory-efficient size for the backing ring.
 * @param cache    per-lcore cache size (at most 512, and at most mbufs / 1.5, as DPDK requires).
 * @param dataRoom bytes of data room per mbuf, including the {@link #HEADROOM} bytes of headroom.
 * @param privSize application-private bytes between the mbuf header and its data, a multiple of 8.
 * @param socketId NUMA socket to allocate on, or {@link #SOCKET_ID_ANY}.
 */
public record MempoolConfig(String name, int mbufs, int cache, int dataRoom, int privSize, int socketId)
{
    /** {@code RTE_PKTMBUF_HEADROOM} in Debian's DPDK build. */
    public static final int HEADROOM = 128;

    /** {@code sizeof(struct rte_mbuf)}: two cache lines. */
    public static final int MBUF_HEADER_SIZE = 128;

    /** Mempool per-object header and trailer, rounded to a cache line, for memory estimates. */
    public static final int OBJECT_OVERHEAD = 64;

    /** {@code SOCKET_ID_ANY}. */
    public static final int SOCKET_ID_ANY = -1;

    /** Default pool name. */
    public static final String DEFAULT_NAME = "spraynic_mbufs";

    /** Default mbuf count: 2^13 - 1, enough for a few ports with 1024-descriptor rings. */
    public static final int DEFAULT_MBUFS = 8191;

    /** Default per-lcore cache. */
    public static final int DEFAULT_CACHE = 256;

    /**
     * The largest frame a default mbuf holds: a 4096 B RDMA payload with every header SprayNIC may put around
     * it (at most 122 B: Ethernet, VLAN, IPv6, UDP, BTH, extension headers, ICRC), rounded up to 4352 B, the
     * fabric emulator's slot size.
     */
    public static final int DEFAULT_MAX_FRAME_LENGTH = 4352;

    /**
     * {@link #DEFAULT_MAX_FRAME_LENGTH} plus headroom: one frame of the 4 KiB MTU (PROTOCOL.md S11) per mbuf,
     * never chained. A pool of {@link #DEFAULT_MBUFS} of them takes about 37 MiB.
     */
    public static final int DEFAULT_DATA_ROOM = DEFAULT_MAX_FRAME_LENGTH + HEADROOM;

    /** The defaults: frames of the 4 KiB MTU and anything smaller. */
    public static final MempoolConfig DEFAULT =
        new MempoolConfig(DEFAULT_NAME, DEFAULT_MBUFS, DEFAULT_CACHE, DEFAULT_DATA_ROOM, 0, SOCKET_ID_ANY);

    /**
     * Refuses a null name; ranges are checked as part of a {@link NicConfig}.
     */
    public MempoolConfig
    {
        Objects.requireNonNull(name, "name");
    }

    /**
     * @return bytes of one pool object, as laid out by the mempool (header, private area, data room, overhead).
     */
    public long objectSize()
    {
        return (long)MBUF_HEADER_SIZE + privSize + dataRoom + OBJECT_OVERHEAD;
    }

    /**
     * @return an estimate of the memory the pool takes, to check it fits in what EAL reserves.
     */
    public long bytesNeeded()
    {
        return objectSize() * mbufs;
    }

    /**
     * @return the largest frame, without headroom, that fits in one mbuf.
     */
    public int maxFrameLength()
    {
        return dataRoom - HEADROOM;
    }

    /**
     * @param mbufs number of mbufs.
     * @return a copy with another pool size.
     */
    public MempoolConfig withMbufs(final int mbufs)
    {
        return new MempoolConfig(name, mbufs, cache, dataRoom, privSize, socketId);
    }

    /**
     * @param cache per-lcore cache size.
     * @return a copy with another cache size.
     */
    public MempoolConfig withCache(final int cache)
    {
        return new MempoolConfig(name, mbufs, cache, dataRoom, privSize, socketId);
    }

    /**
     * @param dataRoom data room per mbuf, headroom included.
     * @return a copy with another data room, e.g. for jumbo frames.
     */
    public MempoolConfig withDataRoom(final int dataRoom)
    {
        return new MempoolConfig(name, mbufs, cache, dataRoom, privSize, socketId);
    }
}
