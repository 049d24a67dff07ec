package io.spraynic.pmd;

import java.util.List;
import java.util.regex.Pattern;

import static io.spraynic.pmd.ConfigRules.CACHE;
import static io.spraynic.pmd.ConfigRules.DATA_ROOM;
import static io.spraynic.pmd.ConfigRules.MBUFS;
import static io.spraynic.pmd.ConfigRules.PRIV_SIZE;
import static io.spraynic.pmd.ConfigRules.SOCKET_ID;
import static io.spraynic.pmd.ConfigRules.key;

/**
 * The {@code [mempool]} table's rules, and whether the pool serves the ports: every frame fits one mbuf, the
 * rings fill, the memory EAL reserves holds the pool. Part of {@link ConfigRules}.
 */
final class MempoolRules
{
    /** Ethernet header and CRC, the L2 bytes an MTU does not count. */
    static final int FRAME_OVERHEAD = 18;

    /** {@code PAGE_SIZE}: the largest UMEM chunk the kernel's {@code XDP_UMEM_REG} accepts. */
    static final int AF_XDP_MAX_CHUNK = 4096;

    /** Memory EAL reserves with {@code --no-huge} and no {@code -m}. */
    static final int NO_HUGE_DEFAULT_MEMORY_MB = 64;

    private static final Pattern MEMPOOL_NAME = Pattern.compile("[A-Za-z0-9_-]{1,25}");

    private MempoolRules()
    {
    }

    static void check(final MempoolConfig mempool)
    {
        if (!MEMPOOL_NAME.matcher(mempool.name()).matches())
        {
            throw new ConfigException("mempool.name", Toml.quote(mempool.name()),
                "must be 1 to 25 letters, digits, '_' or '-': DPDK names the pool's ring \"MP_<name>\" " +
                "in 29 bytes");
        }
        MBUFS.check("mempool.mbufs", mempool.mbufs());
        CACHE.check("mempool.cache", mempool.cache());
        final int maxCache = (int)(mempool.mbufs() / 1.5);
        if (mempool.cache() > maxCache)
        {
            throw new ConfigException("mempool.cache", Integer.toString(mempool.cache()),
                "must be at most mempool.mbufs / 1.5 (= " + maxCache + "), as rte_mempool_create requires",
                "use " + maxCache);
        }
        DATA_ROOM.check("mempool.data_room", mempool.dataRoom());
        PRIV_SIZE.check("mempool.priv_size", mempool.privSize());
        SOCKET_ID.check("mempool.socket_id", mempool.socketId());
    }

    static void checkSize(final EalConfig eal, final MempoolConfig mempool, final List<PortConfig> ports)
    {
        for (int i = 0; i < ports.size(); i++)
        {
            final PortConfig port = ports.get(i);
            final int frame = port.mtu() + FRAME_OVERHEAD;
            if (frame > mempool.maxFrameLength())
            {
                throw new ConfigException(key(i, "mtu"), Integer.toString(port.mtu()),
                    "must fit one mbuf: mtu + " + FRAME_OVERHEAD + " (Ethernet header and CRC) must be at most " +
                    "mempool.data_room - " + MempoolConfig.HEADROOM + " (= " + mempool.maxFrameLength() + ")",
                    "set mempool.data_room = " + (frame + MempoolConfig.HEADROOM) + ", or use " +
                    (mempool.maxFrameLength() - FRAME_OVERHEAD));
            }
        }

        long ringMbufs = 0;
        for (final PortConfig port : ports)
        {
            ringMbufs += (long)port.rxQueues() * port.rxDescriptors() + (long)port.txQueues() * port.txDescriptors();
        }
        final long needed = ringMbufs + mempool.cache();
        if (mempool.mbufs() < needed)
        {
            throw new ConfigException("mempool.mbufs", Integer.toString(mempool.mbufs()),
                "must be at least " + needed + " to fill every port's RX and TX rings (" + ringMbufs +
                ") plus one lcore cache (" + mempool.cache() + ")",
                "use " + ((Long.highestOneBit(needed) << 1) - 1));
        }

        for (int i = 0; i < ports.size(); i++)
        {
            final PortConfig port = ports.get(i);
            if (port.isAfPacket() && port.afPacketMaxFrameLength() > mempool.maxFrameLength())
            {
                // net_af_packet refuses the RX queue (ENOMEM) when a ring frame would not fit one mbuf
                final int frameSize = mempool.maxFrameLength() + PortConfig.AF_PACKET_FRAME_HEADER;
                throw new ConfigException(key(i, "args.framesz"), Integer.toString(port.afPacketMaxFrameLength() +
                    PortConfig.AF_PACKET_FRAME_HEADER), "must fit one mbuf: framesz - " +
                    PortConfig.AF_PACKET_FRAME_HEADER + " (the packet header) must be at most mempool.data_room - " +
                    MempoolConfig.HEADROOM + " (= " + mempool.maxFrameLength() + ")",
                    "use framesz=" + (frameSize & ~15) + " or less (4352 with blocksz=69632 holds a 4 KiB-MTU frame), " +
                    "or raise mempool.data_room");
            }
        }

        for (int i = 0; i < ports.size(); i++)
        {
            final PortConfig port = ports.get(i);
            if (port.isAfXdp() && mempool.objectSize() > AF_XDP_MAX_CHUNK)
            {
                // the UMEM is the mbuf pool, one chunk per pool object: XDP_UMEM_REG refuses a chunk over a page
                // (EINVAL), which DPDK reports at start-up only as "Failed to create umem"
                final long largest = AF_XDP_MAX_CHUNK - MempoolConfig.MBUF_HEADER_SIZE - mempool.privSize() -
                    MempoolConfig.OBJECT_OVERHEAD;
                throw new ConfigException("mempool.data_room", Integer.toString(mempool.dataRoom()),
                    "must be at most " + largest + " when port[" + i + "] (" + Toml.quote(port.name()) +
                    ") is net_af_xdp: its UMEM chunk is one mbuf (" + MempoolConfig.MBUF_HEADER_SIZE +
                    " B header + mempool.priv_size + data_room + " + MempoolConfig.OBJECT_OVERHEAD +
                    " B object header = " + mempool.objectSize() + " B), and the kernel takes at most one " +
                    AF_XDP_MAX_CHUNK + " B page",
                    "set mempool.data_room = 2176 (2 KiB frames, as the net_af_xdp preset does), at most " + largest +
                    ", and the ports' mtu to fit it");
            }
        }

        final long availableMb;
        final String availableFrom;
        if (eal.memoryMb() != EalConfig.MEMORY_UNSET)
        {
            availableMb = eal.memoryMb();
            availableFrom = "eal.memory_mb";
        }
        else if (!eal.socketMem().isEmpty())
        {
            availableMb = eal.socketMem().stream().mapToLong(Integer::longValue).sum();
            availableFrom = "eal.socket_mem";
        }
        else if (eal.noHuge())
        {
            availableMb = NO_HUGE_DEFAULT_MEMORY_MB;
            availableFrom = "EAL's --no-huge default";
        }
        else
        {
            return;
        }

        final long neededMb = (mempool.bytesNeeded() + (1 << 20) - 1) >> 20;
        if (neededMb > availableMb)
        {
            throw new ConfigException("mempool.mbufs", Integer.toString(mempool.mbufs()),
                "must fit in the " + availableMb + " MiB reserved by " + availableFrom + ": " + mempool.mbufs() +
                " mbufs of " + mempool.objectSize() + " B need " + neededMb + " MiB",
                "reserve more memory, or use " + (availableMb << 20) / mempool.objectSize());
        }
    }
}
