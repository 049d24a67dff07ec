package io.spraynic.dpdk;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Burst ownership rules on real DPDK: all-or-none allocation, partial transmit keeping the unsent
 * mbufs at the front, release returning everything to the pool.
 */
class MbufBurstTest
{
    private static Eal eal;
    private static Mempool pool;
    private static RingPortPair pair;

    @BeforeAll
    static void start()
    {
        eal = Eal.init(List.of("spraynic-test", "--no-huge", "-m", "256", "--no-pci", "-l", "0",
            "--file-prefix", "spraynic-mbuf-test-" + ProcessHandle.current().pid(), "--log-level", "lib.eal:warning"));
        eal.registerCurrentThread();
        pool = Mempool.createPacketPool("burst_test", 511, 0, 2048 + 128, -1);
        pair = RingPortPair.create("m", 1, 64);
        for (final EthPort port : List.of(pair.first(), pair.second()))
        {
            port.configure(1, 1);
            port.setupRxQueue(0, 64, pool);
            port.setupTxQueue(0, 64);
            port.start();
        }
    }

    @AfterAll
    static void stop()
    {
        pair.close();
        pool.close();
        eal.close();
    }

    @Test
    void shouldPackMbufsWithoutHugepages()
    {
        // DPDK's default pool keeps each mbuf inside one page: without hugepages, one per 4 KiB page,
        // every header in the same L1 set. The shim's pool packs them: header, mbuf, data room.
        final long stride = 64 + 128 + 2048 + 128;
        try (MbufBurst burst = new MbufBurst(511, PacketMemory.current()))
        {
            assertTrue(burst.allocate(pool, 511));
            long lowest = Long.MAX_VALUE;
            long highest = Long.MIN_VALUE;
            for (int i = 0; i < burst.size(); i++)
            {
                lowest = Math.min(lowest, burst.mbufAddress(i));
                highest = Math.max(highest, burst.mbufAddress(i));
            }
            assertEquals(510 * stride, highest - lowest, "511 mbufs back to back");
            assertEquals(2048, burst.dataRoom(510), "initialised as rte_pktmbuf_pool_create would");
            burst.release();
        }
    }

    @Test
    void shouldAllocateAllOrNone()
    {
        try (MbufBurst burst = new MbufBurst(512, PacketMemory.current()))
        {
            assertFalse(burst.allocate(pool, 512), "the pool has 511");
            assertEquals(0, burst.size());
            assertTrue(burst.allocate(pool, 500));
            assertEquals(11, pool.availableCount());
            burst.release();
            assertEquals(511, pool.availableCount());
            assertThrows(IllegalArgumentException.class, () -> burst.allocate(pool, 513));
        }
    }

    @Test
    void shouldKeepUnsentMbufsAtFrontWhenRingIsFull()
    {
        try (MbufBurst burst = new MbufBurst(100, PacketMemory.current()))
        {
            assertTrue(burst.allocate(pool, 100));
            burst.dataLengthAll(64);
            final long firstUnsent = burst.mbufAddress(63);
            final int sent = burst.transmit(pair.first().portId(), 0);
            assertEquals(63, sent, "a 64-slot ring holds 63");
            assertEquals(37, burst.size());
            assertEquals(firstUnsent, burst.mbufAddress(0));

            try (MbufBurst received = new MbufBurst(100, PacketMemory.current()))
            {
                assertEquals(63, received.receive(pair.second().portId(), 0));
                assertEquals(64, received.dataLength(0));
                assertNotEquals(0, received.dataRoom(0));
                received.release();
            }
            burst.release();
            assertEquals(511, pool.availableCount());
        }
    }

    @Test
    void shouldTransmitThenReceiveInOneCallKeepingUnsentFirst()
    {
        final int first = pair.first().portId();
        final int second = pair.second().portId();
        try (MbufBurst burst = new MbufBurst(100, PacketMemory.current());
            MbufBurst peer = new MbufBurst(100, PacketMemory.current()))
        {
            assertTrue(peer.allocate(pool, 5));
            peer.dataLengthAll(99);
            assertEquals(5, peer.transmit(second, 0), "5 frames waiting on the first port's RX");

            assertTrue(burst.allocate(pool, 100));
            burst.dataLengthAll(64);
            final long firstUnsent = burst.mbufAddress(63);
            assertEquals(63, burst.transmitAndReceive(first, 0), "a 64-slot ring holds 63");
            assertEquals(37 + 5, burst.size(), "the unsent, then what was received");
            assertEquals(firstUnsent, burst.mbufAddress(0));
            assertEquals(64, burst.dataLength(36));
            assertEquals(99, burst.dataLength(37));
            assertEquals(99, burst.dataLength(41));

            assertEquals(63, peer.receive(second, 0));
            assertEquals(64, peer.dataLength(62));
            peer.release();
            burst.release();
            assertEquals(0, burst.transmitAndReceive(first, 0), "nothing to send, nothing waiting");
            assertEquals(0, burst.size());
        }
        assertEquals(511, pool.availableCount());
    }

    @Test
    void shouldExposeDataThroughFlyweightWithoutCopies()
    {
        try (MbufBurst burst = new MbufBurst(4, PacketMemory.current()))
        {
            assertTrue(burst.allocate(pool, 1));
            burst.dataLength(0, 100);
            final Mbuf mbuf = new Mbuf(PacketMemory.current()).wrap(burst.mbufAddress(0));
            assertEquals(100, mbuf.dataLength());
            assertEquals(100, mbuf.packetLength());
            assertEquals(1, mbuf.segmentCount());
            assertEquals(burst.dataOffset(0), mbuf.dataOffset());
            assertEquals(2048, mbuf.dataRoom(), "data room minus the 128 B headroom");
            mbuf.memory().set(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, mbuf.dataOffset(), 0x1122334455667788L);
            assertEquals(0x1122334455667788L, burst.memory().get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, burst.dataOffset(0)));
            assertTrue(PacketMemory.current().contains(mbuf.address(), Mbuf.LENGTH));
            burst.release();
        }
    }

    @Test
    void shouldLookAWritableMbufUpOnceForItsOffsetAndLength()
    {
        try (MbufBurst burst = new MbufBurst(4, PacketMemory.current()))
        {
            assertTrue(burst.allocate(pool, 3));
            for (int i = 0; i < 3; i++)
            {
                final long mbuf = burst.writableMbuf(i, 2048);
                assertEquals(burst.mbufAddress(i) - burst.memory().address(), mbuf, "the mbuf's offset in the memory");
                assertEquals(burst.dataOffset(i), burst.dataOffsetOf(mbuf));
                burst.dataLengthOf(mbuf, 100 + i);
            }
            for (int i = 0; i < 3; i++)
            {
                assertEquals(100 + i, burst.dataLength(i), "each length in its own mbuf");
                assertEquals(100 + i, new Mbuf(PacketMemory.current()).wrap(burst.mbufAddress(i)).packetLength());
            }
            assertEquals(-1, burst.writableMbuf(0, 2049), "more than the data room");
            assertThrows(IndexOutOfBoundsException.class, () -> burst.writableMbuf(3, 64));
            burst.release();
        }
        assertEquals(511, pool.availableCount());
    }

    @Test
    void shouldRefuseReadsPastSizeAfterReleaseAndAfterClose()
    {
        // The pointer array is read through a global-scope view: these checks are what keep a read
        // from reaching a slot that holds no mbuf, or memory that close() has freed.
        final MbufBurst burst = new MbufBurst(8, PacketMemory.current());
        assertTrue(burst.allocate(pool, 2));
        burst.dataLength(1, 77);
        assertEquals(77, burst.dataLength(1));
        assertThrows(IndexOutOfBoundsException.class, () -> burst.dataLength(2));
        assertThrows(IndexOutOfBoundsException.class, () -> burst.mbufAddress(-1));
        burst.release();
        assertThrows(IndexOutOfBoundsException.class, () -> burst.dataLength(0));
        assertTrue(burst.allocate(pool, 1));
        burst.close();
        assertEquals(0, burst.size());
        assertThrows(IndexOutOfBoundsException.class, () -> burst.dataLength(0));
        assertThrows(IndexOutOfBoundsException.class, () -> burst.mbufAddress(0));
        assertEquals(511, pool.availableCount(), "close() returned the mbuf it held");
        // nor may a closed burst hand its freed pointer array to DPDK
        assertThrows(IllegalStateException.class, () -> burst.allocate(pool, 1));
        assertThrows(IllegalStateException.class, () -> burst.receive(0, 0));
        assertThrows(IllegalStateException.class, () -> burst.transmit(0, 0));
        burst.close(); // a second close does nothing
    }

    @Test
    void shouldTakeOneAtATimeFromAReserveFilledInBulkAndGiveTheReserveBack()
    {
        try (MbufBurst burst = new MbufBurst(8, PacketMemory.current()))
        {
            assertTrue(burst.allocateOne(pool));
            assertEquals(1, burst.size());
            assertEquals(7, burst.spareCount());
            assertEquals(503, pool.availableCount(), "one bulk allocation: the burst's whole room");
            final java.util.Set<Long> addresses = new java.util.HashSet<>();
            addresses.add(burst.mbufAddress(0));
            for (int i = 1; i < 8; i++)
            {
                assertTrue(burst.allocateOne(pool));
                addresses.add(burst.mbufAddress(i));
                assertEquals(503, pool.availableCount(), "taken from the reserve, not the pool");
            }
            assertEquals(8, addresses.size(), "eight distinct mbufs");
            assertEquals(0, burst.spareCount());
            assertFalse(burst.allocateOne(pool), "a full burst takes no more");
            burst.release();
            assertEquals(511, pool.availableCount());

            assertTrue(burst.allocateOne(pool));
            assertEquals(7, burst.spareCount());
            burst.release();
            assertEquals(0, burst.spareCount());
            assertEquals(511, pool.availableCount(), "release gives the reserve back");

            assertTrue(burst.allocate(pool, 7));
            assertTrue(burst.allocateOne(pool));
            assertEquals(0, burst.spareCount(), "room for one: no reserve");
            assertEquals(503, pool.availableCount());
            burst.release();

            try (MbufBurst hog = new MbufBurst(511, PacketMemory.current()))
            {
                assertTrue(hog.allocate(pool, 505));
                assertTrue(burst.allocateOne(pool), "6 left, room for 8: one alone");
                assertEquals(0, burst.spareCount());
                assertEquals(5, pool.availableCount());
                assertTrue(hog.allocate(pool, 5));
                assertFalse(burst.allocateOne(pool), "the pool is empty");
                assertEquals(1, burst.size());
                hog.release();
            }
            burst.release();
            assertEquals(511, pool.availableCount());

            final Mempool other = Mempool.createPacketPool("burst_test_other", 63, 0, 2048 + 128, -1);
            try
            {
                assertTrue(burst.allocateOne(pool));
                assertTrue(burst.allocateOne(other));
                assertEquals(510, pool.availableCount(), "the first pool's reserve went back to it");
                assertEquals(63 - 7, other.availableCount());
                assertEquals(6, burst.spareCount());
                burst.release();
                assertEquals(63, other.availableCount());
            }
            finally
            {
                other.close();
            }
            assertEquals(511, pool.availableCount());
            assertTrue(burst.allocateOne(pool));
        }
        assertEquals(511, pool.availableCount(), "close() gives the reserve back");
    }

    @Test
    void shouldStillBoundsCheckHeaderReadsAgainstPacketMemory()
    {
        // The unaligned header layouts drop only the alignment test: an mbuf address outside the
        // pools' memory is still refused.
        final PacketMemory memory = PacketMemory.current();
        final Mbuf mbuf = new Mbuf(memory).wrap(memory.segment().address() + memory.segment().byteSize());
        assertThrows(IndexOutOfBoundsException.class, mbuf::dataLength);
        assertThrows(IndexOutOfBoundsException.class, mbuf::dataRoom);
        assertThrows(IndexOutOfBoundsException.class, () -> new Mbuf(memory).wrap(memory.segment().address() - Mbuf.LENGTH).dataLength());
    }
}
