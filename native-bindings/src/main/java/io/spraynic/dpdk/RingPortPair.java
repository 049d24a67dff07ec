package io.spraynic.dpdk;

import io.spraynic.dpdk.generated.Dpdk;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Two {@code net_ring} ports crossed in one process with {@code rte_eth_from_rings}: what one
 * transmits on queue q the other receives on queue q. A single {@code net_ring} vdev receives its
 * own transmits; a pair like this is the in-process wire between two endpoints.
 * <p>
 * The ports still need {@link EthPort#configure}, queue set-up and {@link EthPort#start()}.
 */
public final class RingPortPair implements AutoCloseable
{
    private final EthPort first;
    private final EthPort second;
    private final MemorySegment[] rings;

    private RingPortPair(final EthPort first, final EthPort second, final MemorySegment[] rings)
    {
        this.first = first;
        this.second = second;
        this.rings = rings;
    }

    /**
     * @param name      a short prefix; the ports are {@code net_ring_<name>a} and {@code net_ring_<name>b}.
     * @param queues    queues per direction.
     * @param ringSize  slots per ring, a power of two.
     */
    public static RingPortPair create(final String name, final int queues, final int ringSize)
    {
        Eal.current();
        if (Integer.bitCount(ringSize) != 1)
        {
            throw new IllegalArgumentException("ring size " + ringSize + " must be a power of two (e.g. 1024)");
        }
        final MemorySegment[] aToB = new MemorySegment[queues];
        final MemorySegment[] bToA = new MemorySegment[queues];
        final MemorySegment[] all = new MemorySegment[queues * 2];
        final int flags = Dpdk.RING_F_SP_ENQ() | Dpdk.RING_F_SC_DEQ(); // one poll thread per queue and side
        try (Arena arena = Arena.ofConfined())
        {
            for (int q = 0; q < queues; q++)
            {
                aToB[q] = createRing(arena, name + "ab" + q, ringSize, flags);
                bToA[q] = createRing(arena, name + "ba" + q, ringSize, flags);
                all[2 * q] = aToB[q];
                all[2 * q + 1] = bToA[q];
            }
            final EthPort a = fromRings(arena, name + "a", bToA, aToB);
            final EthPort b = fromRings(arena, name + "b", aToB, bToA);
            return new RingPortPair(a, b, all);
        }
    }

    private static MemorySegment createRing(final Arena arena, final String name, final int size, final int flags)
    {
        final MemorySegment ring = Dpdk.rte_ring_create(arena.allocateFrom(name), size, Dpdk.SOCKET_ID_ANY(), flags);
        if (MemorySegment.NULL.equals(ring))
        {
            final int errno = Shim.errno();
            throw new DpdkException("rte_ring_create(" + name + ", " + size + ")", errno, Eal.strerror(errno));
        }
        return ring;
    }

    private static EthPort fromRings(
        final Arena arena, final String name, final MemorySegment[] rx, final MemorySegment[] tx)
    {
        final MemorySegment rxArray = arena.allocate(ValueLayout.ADDRESS, rx.length);
        final MemorySegment txArray = arena.allocate(ValueLayout.ADDRESS, tx.length);
        for (int i = 0; i < rx.length; i++)
        {
            rxArray.setAtIndex(ValueLayout.ADDRESS, i, rx[i]);
            txArray.setAtIndex(ValueLayout.ADDRESS, i, tx[i]);
        }
        final int portId = Dpdk.rte_eth_from_rings(arena.allocateFrom(name), rxArray, rx.length, txArray, tx.length,
            Dpdk.SOCKET_ID_ANY());
        if (portId < 0)
        {
            final int errno = Shim.errno();
            throw new DpdkException("rte_eth_from_rings(" + name + ")", errno, Eal.strerror(errno));
        }
        return EthPort.byId(portId);
    }

    public EthPort first()
    {
        return first;
    }

    public EthPort second()
    {
        return second;
    }

    /**
     * Closes both ports and frees the rings.
     */
    public void close()
    {
        first.close();
        second.close();
        for (final MemorySegment ring : rings)
        {
            Dpdk.rte_ring_free(ring);
        }
    }
}
