package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.ReceiveRequest;
import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendRequestFields;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.util.ArrayDeque;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Both kinds of send request (the verbs one, naming a region, and the application API's, naming an lkey) reach the
 * worker through the ring as the same slot, field for field, and refuse a null opcode when filled; so do both kinds of
 * receive request.
 */
final class WorkRequestRingTest
{
    @Test
    void copiesEitherKindOfSendRequestFieldForField()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemoryRegion region = new ProtectionDomain().register(arena.allocate(4096), AccessFlags.LOCAL_WRITE);
            final WorkRequestRing ring = new WorkRequestRing(4);
            assertTrue(ring.offerSend(3, fill(new SendWorkRequest().local(region, region.address() + 64, 128))));
            assertTrue(ring.offerSend(3, fill(new SendRequest().local(region.lkey(), region.address() + 64, 128))));
            for (int i = 0; i < 2; i++)
            {
                assertEquals(WorkRequestSource.SEND, ring.peek());
                assertEquals(3, ring.stream());
                assertEquals(7, ring.wrId());
                assertEquals(WorkRequestOpcode.RDMA_WRITE_WITH_IMM, ring.opcode());
                assertEquals(region.lkey(), ring.lkey(), "the verbs request's region names the same key");
                assertEquals(region.address() + 64, ring.localAddress());
                assertEquals(128, ring.length());
                assertEquals(0xFEED_0000L, ring.remoteAddress());
                assertEquals(42, ring.rkey());
                assertEquals(-1, ring.immediateData());
                assertFalse(ring.signaled());
                assertTrue(ring.solicited());
                ring.advance();
            }
            assertEquals(0, ring.peek(), "empty");
        }
    }

    @Test
    void aVerbsRequestWithNoRegionNamesKeyZeroAndRefusesANullOpcode()
    {
        final SendWorkRequest request = new SendWorkRequest().opcode(WorkRequestOpcode.RDMA_READ).local(null, 0, 0);
        assertEquals(0, request.lkey());
        assertThrows(NullPointerException.class, () -> request.opcode(null));
        assertEquals(WorkRequestOpcode.RDMA_READ, request.opcode(), "unchanged");
        assertEquals(WorkRequestOpcode.SEND, request.reset().opcode());
        assertTrue(request.signaled());
    }

    @Test
    void copiesEitherKindOfReceiveRequestFieldForField()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemoryRegion region = new ProtectionDomain().register(arena.allocate(4096), AccessFlags.LOCAL_WRITE);
            final WorkRequestRing ring = new WorkRequestRing(4);
            assertTrue(ring.offerReceive(5, new ReceiveWorkRequest().wrId(9).buffer(region, region.address() + 32, 256)));
            assertTrue(ring.offerReceive(5, new ReceiveRequest().wrId(9).buffer(region.lkey(), region.address() + 32, 256)));
            for (int i = 0; i < 2; i++)
            {
                assertEquals(WorkRequestSource.RECEIVE, ring.peek());
                assertEquals(5, ring.stream());
                assertEquals(9, ring.wrId());
                assertEquals(region.lkey(), ring.lkey(), "the verbs request's region names the same key");
                assertEquals(region.address() + 32, ring.localAddress());
                assertEquals(256, ring.length());
                ring.advance();
            }
            assertEquals(0, ring.peek(), "empty");
        }
    }

    @Test
    void aVerbsReceiveRequestWithNoRegionNamesKeyZeroAndResetsToNoBuffer()
    {
        final ReceiveWorkRequest request = new ReceiveWorkRequest().wrId(4).buffer(null, 0, 0);
        assertEquals(0, request.lkey());
        try (Arena arena = Arena.ofConfined())
        {
            final MemoryRegion region = new ProtectionDomain().register(arena.allocate(64), AccessFlags.LOCAL_WRITE);
            request.buffer(region, region.address(), 64);
            assertEquals(region.lkey(), request.lkey());
        }
        request.reset();
        assertEquals(0, request.wrId());
        assertEquals(null, request.region());
        assertEquals(0, request.lkey());
        assertEquals(0, request.address());
        assertEquals(0, request.length());
    }

    @Test
    void aGrowingRingHoldsNoSlotsUntilItsFirstPostThenDoublesOnlyWhenFull()
    {
        final WorkRequestRing ring = WorkRequestRing.growing(1024);
        assertEquals(1024, ring.capacity());
        assertEquals(0, ring.slotsHeld(), "nothing made before the first post");
        assertEquals(0, ring.peek());
        assertEquals(0, ring.slotsHeld(), "peeking an empty ring makes nothing");
        final SendRequest send = new SendRequest().opcode(WorkRequestOpcode.RDMA_WRITE).remote(0xAB00, 5);
        for (int i = 0; i < WorkRequestRing.FIRST_SLOTS - 1; i++)
        {
            assertTrue(ring.offerSend(1, send.wrId(i).local(0, 0, i)));
        }
        assertEquals(WorkRequestRing.FIRST_SLOTS, ring.slotsHeld(), "one slot kept free for the link");
        assertTrue(ring.offerReceive(2, new ReceiveRequest().wrId(WorkRequestRing.FIRST_SLOTS - 1).buffer(0, 0, 9)));
        assertEquals(2 * WorkRequestRing.FIRST_SLOTS, ring.slotsHeld(), "grown by the first post that needed it");
        for (int i = 0; i < WorkRequestRing.FIRST_SLOTS - 1; i++)
        {
            assertEquals(WorkRequestSource.SEND, ring.peek());
            assertEquals(WorkRequestSource.SEND, ring.peek(), "peeking again reads the same request");
            assertEquals(i, ring.wrId());
            assertEquals(i, ring.length());
            assertEquals(1, ring.stream());
            assertEquals(0xAB00, ring.remoteAddress());
            ring.advance();
        }
        assertEquals(WorkRequestSource.RECEIVE, ring.peek(), "across the link");
        assertEquals(WorkRequestRing.FIRST_SLOTS - 1, ring.wrId());
        assertEquals(2, ring.stream());
        assertEquals(9, ring.length());
        ring.advance();
        assertEquals(0, ring.peek());
        for (int round = 0; round < 1000; round++) // one at a time never needs more
        {
            assertTrue(ring.offerSend(0, send.wrId(round)));
            assertEquals(WorkRequestSource.SEND, ring.peek());
            assertEquals(round, ring.wrId());
            ring.advance();
        }
        assertEquals(2 * WorkRequestRing.FIRST_SLOTS, ring.slotsHeld());
    }

    @Test
    void aGrowingRingTakesItsWholeCapacityAndRefusesTheNextAsARingMadeWhole()
    {
        for (final WorkRequestRing ring : new WorkRequestRing[]{WorkRequestRing.growing(100), new WorkRequestRing(100)})
        {
            assertEquals(128, ring.capacity());
            final SendRequest send = new SendRequest().opcode(WorkRequestOpcode.SEND);
            for (int i = 0; i < 128; i++)
            {
                assertTrue(ring.offerSend(0, send.wrId(i)), "request " + i);
            }
            assertEquals(128, ring.slotsHeld());
            assertFalse(ring.offerSend(0, send.wrId(128)), "the 129th backs up to the application");
            assertFalse(ring.offerReceive(0, new ReceiveRequest().wrId(128)));
            for (int i = 0; i < 128; i++)
            {
                assertEquals(WorkRequestSource.SEND, ring.peek());
                assertEquals(i, ring.wrId(), "across the links, in order");
                ring.advance();
            }
            assertEquals(0, ring.peek());
        }
    }

    @Test
    void aGrowingRingKeepsOrderAndItsLimitAgainstAModel()
    {
        final SplittableRandom random = new SplittableRandom(13);
        final WorkRequestRing ring = WorkRequestRing.growing(256);
        final ArrayDeque<Long> model = new ArrayDeque<>();
        final SendRequest send = new SendRequest().opcode(WorkRequestOpcode.RDMA_WRITE);
        final ReceiveRequest receive = new ReceiveRequest();
        long next = 0;
        for (int step = 0; step < 100_000; step++)
        {
            final int offers = random.nextInt(random.nextBoolean() ? 3 : 40);
            for (int i = 0; i < offers; i++, next++)
            {
                final boolean room = model.size() < 256;
                final boolean offered = (next & 1) == 0 ? ring.offerSend((int)(next & 3), send.wrId(next)) :
                    ring.offerReceive((int)(next & 3), receive.wrId(next));
                assertEquals(room, offered, "refused exactly when the model is full");
                if (room)
                {
                    model.add(next);
                }
            }
            final int takes = random.nextInt(random.nextBoolean() ? 3 : 40);
            for (int i = 0; i < takes && !model.isEmpty(); i++)
            {
                final long expected = model.poll();
                assertEquals((expected & 1) == 0 ? WorkRequestSource.SEND : WorkRequestSource.RECEIVE, ring.peek());
                assertEquals(expected, ring.wrId());
                assertEquals((int)(expected & 3), ring.stream());
                ring.advance();
            }
            assertEquals(model.size(), ring.size());
        }
        assertEquals(256, ring.slotsHeld());
    }

    @Test
    void aGrowingRingHandsOverBetweenThreadsWhileItGrows() throws InterruptedException
    {
        final WorkRequestRing ring = WorkRequestRing.growing(1 << 12);
        final int count = 500_000;
        final Thread poster = new Thread(() ->
        {
            final SendRequest send = new SendRequest().opcode(WorkRequestOpcode.RDMA_WRITE);
            for (int i = 0; i < count; i++)
            {
                while (!ring.offerSend(i & 3, send.wrId(i).remote(i, i)))
                {
                    Thread.onSpinWait();
                }
                if ((i & 0xFFFF) == 0)
                {
                    Thread.yield(); // let the worker fall behind and the ring grow
                }
            }
        });
        poster.start();
        for (int expected = 0; expected < count; )
        {
            if (ring.peek() == 0)
            {
                Thread.onSpinWait();
                continue;
            }
            assertEquals(expected, ring.wrId());
            assertEquals(expected, ring.remoteAddress());
            assertEquals(expected, ring.rkey());
            assertEquals(expected & 3, ring.stream());
            ring.advance();
            expected++;
            if ((expected & 0x3FFF) == 0)
            {
                Thread.yield();
            }
        }
        poster.join();
        assertEquals(0, ring.size());
    }

    @Test
    void aGrowingRingAllocatesNothingOnceItHoldsItsHighWaterMark()
    {
        final WorkRequestRing ring = WorkRequestRing.growing(1024);
        final SendRequest send = new SendRequest().opcode(WorkRequestOpcode.RDMA_WRITE);
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)java.lang.management.ManagementFactory.getThreadMXBean();
        long allocated = Long.MAX_VALUE;
        long sum = 0;
        for (int window = 0; window < 5; window++) // the first windows grow it to 64 and compile the loop
        {
            final long start = threads.getCurrentThreadAllocatedBytes();
            for (int round = 0; round < 20_000; round++)
            {
                for (int i = 0; i < 40; i++)
                {
                    ring.offerSend(i & 3, send.wrId(i));
                }
                while (ring.peek() != 0)
                {
                    sum += ring.wrId();
                    ring.advance();
                }
            }
            allocated = Math.min(allocated, threads.getCurrentThreadAllocatedBytes() - start);
        }
        assertEquals(5L * 20_000 * (39 * 40 / 2), sum, "every request taken once");
        assertEquals(64, ring.slotsHeld(), "40 waiting at most: grown to 8, 16, 32, then 64");
        assertEquals(0, allocated, "800,000 requests through a ring at its high-water mark");
    }

    /**
     * Random posts, takes and trims on a virtual clock against a plain queue: order and limit as before, slots given
     * back only when the ring is empty and nothing was taken for the idle time, and made again by the next post.
     */
    @Test
    void aRingGivesItsSlotsBackWhenIdleAndKeepsOrderAndItsLimitAgainstAModel()
    {
        final SplittableRandom random = new SplittableRandom(17);
        final WorkRequestRing ring = WorkRequestRing.growing(256);
        final ArrayDeque<Long> model = new ArrayDeque<>();
        final SendRequest send = new SendRequest().opcode(WorkRequestOpcode.RDMA_WRITE);
        final ReceiveRequest receive = new ReceiveRequest();
        final long idleNanos = 1_000;
        long now = 0;
        long next = 0;
        int trims = 0;
        int grownAfterATrim = 0;
        for (int step = 0; step < 200_000; step++)
        {
            final int offers = random.nextInt(4) == 0 ? random.nextInt(random.nextBoolean() ? 3 : 300) : 0;
            for (int i = 0; i < offers; i++, next++)
            {
                final boolean room = model.size() < 256;
                final boolean offered = (next & 1) == 0 ? ring.offerSend((int)(next & 3), send.wrId(next)) :
                    ring.offerReceive((int)(next & 3), receive.wrId(next));
                assertEquals(room, offered, "refused exactly when the model is full");
                if (room)
                {
                    model.add(next);
                }
            }
            final int takes = random.nextInt(random.nextBoolean() ? 3 : 40);
            for (int i = 0; i < takes && !model.isEmpty(); i++)
            {
                final long expected = model.poll();
                assertEquals((expected & 1) == 0 ? WorkRequestSource.SEND : WorkRequestSource.RECEIVE, ring.peek());
                assertEquals(expected, ring.wrId());
                assertEquals((int)(expected & 3), ring.stream());
                ring.advance();
            }
            now += random.nextInt(600);
            final int held = ring.slotsHeld();
            if (ring.trimIfIdle(now, idleNanos))
            {
                assertTrue(model.isEmpty(), "given back only when empty");
                assertEquals(0, ring.slotsHeld());
                trims++;
                grownAfterATrim += held > WorkRequestRing.FIRST_SLOTS ? 1 : 0;
            }
            assertEquals(model.size(), ring.size());
            if (model.isEmpty())
            {
                assertEquals(0, ring.peek());
            }
        }
        assertTrue(trims > 1_000 && grownAfterATrim > 100, trims + " trims, " + grownAfterATrim + " after growing");
    }

    /** The worker takes and gives the slots back as often as it can while a poster posts: nothing lost or repeated. */
    @Test
    void aRingHandsOverBetweenThreadsWhileTheWorkerGivesItsSlotsBack() throws InterruptedException
    {
        final WorkRequestRing ring = WorkRequestRing.growing(1 << 10);
        final int count = 400_000;
        final Thread poster = new Thread(() ->
        {
            final SendRequest send = new SendRequest().opcode(WorkRequestOpcode.RDMA_WRITE);
            final SplittableRandom random = new SplittableRandom(5);
            for (int i = 0; i < count; i++)
            {
                while (!ring.offerSend(i & 3, send.wrId(i).remote(i, i)))
                {
                    Thread.onSpinWait();
                }
                if (random.nextInt(64) == 0)
                {
                    for (int spin = random.nextInt(2_000); spin > 0; spin--)
                    {
                        Thread.onSpinWait(); // let the ring empty, and the worker give it back
                    }
                }
            }
        });
        poster.start();
        int trims = 0;
        long tick = 0;
        for (int expected = 0; expected < count; )
        {
            if (ring.peek() == 0)
            {
                trims += ring.trimIfIdle(++tick, 0) ? 1 : 0; // idle time 0: whenever two checks see the same head
                Thread.onSpinWait();
                continue;
            }
            assertEquals(expected, ring.wrId());
            assertEquals(expected, ring.remoteAddress());
            assertEquals(expected, ring.rkey());
            assertEquals(expected & 3, ring.stream());
            ring.advance();
            expected++;
        }
        poster.join();
        assertEquals(0, ring.size());
        assertEquals(0, ring.peek());
        System.out.printf("WorkRequestRingTest: %,d requests handed over, the slots given back %,d times%n", count, trims);
        assertTrue(trims > 100, "given back " + trims + " times");
    }

    /** Checking whether a ring in use may give its slots back allocates nothing; a ring given back allocates on regrowth. */
    @Test
    void aRingCheckedForIdlenessAllocatesNothingAndOneGivenBackOnlyWhenItGrowsAgain()
    {
        final WorkRequestRing ring = WorkRequestRing.growing(1024);
        final SendRequest send = new SendRequest().opcode(WorkRequestOpcode.RDMA_WRITE);
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)java.lang.management.ManagementFactory.getThreadMXBean();
        long allocated = Long.MAX_VALUE;
        long now = 0;
        for (int window = 0; window < 5; window++)
        {
            final long start = threads.getCurrentThreadAllocatedBytes();
            for (int round = 0; round < 20_000; round++)
            {
                for (int i = 0; i < 40; i++)
                {
                    ring.offerSend(i & 3, send.wrId(i));
                }
                while (ring.peek() != 0)
                {
                    ring.advance();
                }
                assertFalse(ring.trimIfIdle(now += 10, 1_000_000), "in use every round: never idle long enough");
            }
            allocated = Math.min(allocated, threads.getCurrentThreadAllocatedBytes() - start);
        }
        assertEquals(64, ring.slotsHeld());
        assertEquals(0, allocated, "800,000 requests through a ring checked for idleness every 40");
        assertFalse(ring.trimIfIdle(now + 999_999, 1_000_000));
        assertTrue(ring.trimIfIdle(now + 1_000_000, 1_000_000), "idle for the idle time: given back");
        assertEquals(0, ring.slotsHeld());
        final long start = threads.getCurrentThreadAllocatedBytes();
        for (int i = 0; i < 40; i++)
        {
            assertTrue(ring.offerSend(i & 3, send.wrId(i)));
        }
        final long regrowth = threads.getCurrentThreadAllocatedBytes() - start;
        assertEquals(64, ring.slotsHeld(), "8, 16, 32, 64 again");
        assertTrue(regrowth > 0 && regrowth < 64 * 2 * 64, "regrowth made slots again: " + regrowth + " B");
        for (int i = 0; i < 40; i++)
        {
            assertEquals(WorkRequestSource.SEND, ring.peek());
            assertEquals(i, ring.wrId());
            ring.advance();
        }
    }

    @Test
    void refusesACapacityOutOfRangeNamingIt()
    {
        for (final int capacity : new int[]{0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, (1 << 20) + 1})
        {
            final IllegalArgumentException growing =
                assertThrows(IllegalArgumentException.class, () -> WorkRequestRing.growing(capacity));
            assertEquals("work request ring capacity " + capacity + " must be in 1..2^20", growing.getMessage());
            assertThrows(IllegalArgumentException.class, () -> new WorkRequestRing(capacity));
        }
        final WorkRequestRing one = WorkRequestRing.growing(1);
        assertTrue(one.offerReceive(0, new ReceiveRequest().wrId(1)));
        assertFalse(one.offerReceive(0, new ReceiveRequest().wrId(2)), "a ring of one holds one");
        assertEquals(1, one.slotsHeld());
    }

    private static <T extends SendRequestFields<T>> T fill(final T request)
    {
        return request.wrId(7).opcode(WorkRequestOpcode.RDMA_WRITE_WITH_IMM).remote(0xFEED_0000L, 42).immediate(-1)
            .signaled(false).solicited(true);
    }
}
