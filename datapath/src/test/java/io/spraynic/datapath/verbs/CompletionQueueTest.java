package io.spraynic.datapath.verbs;

import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CompletionQueueTest
{
    @Test
    void shouldRoundCapacityAndRefuseWhenFull()
    {
        final CompletionQueue cq = new CompletionQueue(3);
        assertEquals(4, cq.capacity());
        for (int i = 0; i < 4; i++)
        {
            assertTrue(cq.offer(i, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.SEND, i, false, 0, 7));
        }
        assertFalse(cq.hasOverrun());
        assertFalse(cq.offer(9, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.SEND, 0, false, 0, 7));
        assertEquals(1, cq.overruns());
        assertEquals(4, cq.size());
        assertTrue(cq.hasOverrun());
    }

    @Test
    void shouldKeepTheOverrunVisibleAfterTheQueueDrains() throws InterruptedException
    {
        final CompletionQueue cq = new CompletionQueue(1);
        assertTrue(cq.offer(1, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.SEND, 0, false, 0, 7));
        // the producer (a transport thread) overruns; the application thread sees it, as IBV_EVENT_CQ_ERR
        final Thread producer = new Thread(() ->
            cq.offer(2, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.SEND, 0, false, 0, 7));
        producer.start();
        producer.join();
        assertTrue(cq.hasOverrun());
        final WorkCompletion wc = new WorkCompletion();
        assertTrue(cq.poll(wc));
        assertEquals(1, wc.wrId(), "what was held before the overrun is still delivered");
        assertFalse(cq.poll(wc), "the refused completion never appears");
        assertTrue(cq.hasOverrun(), "sticky");
        assertEquals(1, cq.overruns());
    }

    @Test
    void shouldPollInOrderIntoReusedHolders()
    {
        final CompletionQueue cq = new CompletionQueue(8);
        cq.offer(1, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.RDMA_READ, 4096, false, 0, 17);
        cq.offer(2, WorkCompletionStatus.REM_ACCESS_ERR, WorkCompletionOpcode.RDMA_WRITE, 0, false, 0, 17);
        cq.offer(3, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.RECV_RDMA_WITH_IMM, 5, true, 0xABCD, 18);
        final WorkCompletion wc = new WorkCompletion();
        assertTrue(cq.poll(wc));
        assertEquals(1, wc.wrId());
        assertEquals(WorkCompletionOpcode.RDMA_READ, wc.opcode());
        assertEquals(4096, wc.byteLength());
        final WorkCompletion[] many = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
        assertEquals(2, cq.poll(many));
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, many[0].status());
        assertEquals(3, many[1].wrId());
        assertTrue(many[1].hasImmediate());
        assertEquals(0xABCD, many[1].immediateData());
        assertEquals(18, many[1].qpNumber());
        assertFalse(cq.poll(wc));
        assertTrue(cq.isEmpty());
    }

    @Test
    void shouldHandOverBetweenThreads() throws InterruptedException
    {
        final CompletionQueue cq = new CompletionQueue(64);
        final int count = 200_000;
        final Thread producer = new Thread(() ->
        {
            for (int i = 0; i < count; i++)
            {
                while (!cq.offer(i, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.SEND, i, false, 0, 1))
                {
                    Thread.onSpinWait();
                }
            }
        });
        producer.start();
        final WorkCompletion wc = new WorkCompletion();
        for (int i = 0; i < count; i++)
        {
            while (!cq.poll(wc))
            {
                Thread.onSpinWait();
            }
            assertEquals(i, wc.wrId());
            assertEquals(i, wc.byteLength());
        }
        producer.join();
    }

    @Test
    void aGrowingQueueHoldsNoSlotsUntilItsFirstCompletionThenDoublesOnlyWhenFull()
    {
        final CompletionQueue cq = CompletionQueue.growing(4096);
        assertEquals(4096, cq.capacity(), "the limit is the capacity asked for");
        assertEquals(0, cq.slotsHeld(), "nothing made before the first completion");
        final WorkCompletion wc = new WorkCompletion();
        assertFalse(cq.poll(wc));
        assertEquals(0, cq.poll(new WorkCompletion[]{wc}));
        assertEquals(0, cq.slotsHeld(), "polling an empty queue makes nothing");
        assertTrue(offer(cq, 0));
        assertEquals(CompletionQueue.FIRST_SLOTS, cq.slotsHeld());
        for (int i = 1; i < CompletionQueue.FIRST_SLOTS - 1; i++)
        {
            assertTrue(offer(cq, i));
        }
        assertEquals(CompletionQueue.FIRST_SLOTS, cq.slotsHeld(), "one slot kept free for the link");
        assertTrue(offer(cq, CompletionQueue.FIRST_SLOTS - 1));
        assertEquals(2 * CompletionQueue.FIRST_SLOTS, cq.slotsHeld(), "grown by the first completion that needed it");
        for (int i = 0; i < CompletionQueue.FIRST_SLOTS; i++)
        {
            assertTrue(cq.poll(wc));
            assertEquals(i, wc.wrId());
            assertEquals(i, wc.byteLength());
            assertEquals(WorkCompletionStatus.SUCCESS, wc.status());
        }
        assertFalse(cq.poll(wc));
        for (int round = 0; round < 1000; round++) // one at a time never needs more
        {
            assertTrue(offer(cq, round));
            assertTrue(cq.poll(wc));
            assertEquals(round, wc.wrId());
        }
        assertEquals(2 * CompletionQueue.FIRST_SLOTS, cq.slotsHeld());
        assertFalse(cq.hasOverrun());
    }

    @Test
    void aGrowingQueueHoldsItsWholeCapacityAndOverrunsOnTheNextAsAQueueMadeWhole()
    {
        for (final CompletionQueue cq : new CompletionQueue[]{CompletionQueue.growing(100), new CompletionQueue(100)})
        {
            assertEquals(128, cq.capacity());
            for (int i = 0; i < 128; i++)
            {
                assertTrue(offer(cq, i), "completion " + i);
            }
            assertEquals(128, cq.slotsHeld());
            assertFalse(cq.hasOverrun());
            assertFalse(offer(cq, 128), "the 129th is refused");
            assertEquals(1, cq.overruns());
            final WorkCompletion[] batch = new WorkCompletion[50];
            for (int i = 0; i < batch.length; i++)
            {
                batch[i] = new WorkCompletion();
            }
            int expected = 0;
            int taken;
            while ((taken = cq.poll(batch)) > 0)
            {
                for (int i = 0; i < taken; i++, expected++)
                {
                    assertEquals(expected, batch[i].wrId(), "across the links, in order");
                    assertEquals(expected, batch[i].byteLength());
                }
            }
            assertEquals(128, expected, "every completion held is delivered, none twice");
            assertTrue(cq.hasOverrun(), "sticky");
        }
    }

    @Test
    void aGrowingQueueKeepsOrderAndItsLimitAgainstAModel()
    {
        final SplittableRandom random = new SplittableRandom(13);
        final CompletionQueue cq = CompletionQueue.growing(256);
        final ArrayDeque<Long> model = new ArrayDeque<>();
        final WorkCompletion[] batch = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
        long next = 0;
        for (int step = 0; step < 200_000; step++)
        {
            final int offers = random.nextInt(random.nextBoolean() ? 3 : 40);
            for (int i = 0; i < offers; i++)
            {
                final boolean room = model.size() < 256;
                assertEquals(room, offer(cq, next), "refused exactly when the model is full");
                if (room)
                {
                    model.add(next);
                }
                next++;
            }
            final int polls = random.nextInt(random.nextBoolean() ? 3 : 40);
            for (int i = 0; i < polls; i++)
            {
                final int taken = cq.poll(batch);
                assertEquals(Math.min(batch.length, model.size()), taken);
                for (int n = 0; n < taken; n++)
                {
                    assertEquals(model.poll().longValue(), batch[n].wrId());
                    assertEquals((int)batch[n].wrId(), batch[n].byteLength());
                }
            }
            assertEquals(model.size(), cq.size());
        }
        assertEquals(256, cq.slotsHeld());
    }

    @Test
    void aGrowingQueueHandsOverBetweenThreadsWhileItGrows() throws InterruptedException
    {
        final CompletionQueue cq = CompletionQueue.growing(1 << 12);
        final int count = 500_000;
        final Thread producer = new Thread(() ->
        {
            for (int i = 0; i < count; i++)
            {
                while (!offer(cq, i))
                {
                    Thread.onSpinWait();
                }
                if ((i & 0xFFFF) == 0)
                {
                    Thread.yield(); // let the consumer fall behind and the queue grow
                }
            }
        });
        producer.start();
        final WorkCompletion[] batch = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(),
            new WorkCompletion(), new WorkCompletion()};
        int expected = 0;
        while (expected < count)
        {
            final int taken = cq.poll(batch);
            for (int n = 0; n < taken; n++, expected++)
            {
                assertEquals(expected, batch[n].wrId());
                assertEquals(expected, batch[n].byteLength());
            }
            if ((expected & 0x3FFF) == 0)
            {
                Thread.yield();
            }
        }
        producer.join();
        assertTrue(cq.isEmpty());
    }

    @Test
    void aGrowingQueueAllocatesNothingOnceItHoldsItsHighWaterMark()
    {
        final CompletionQueue cq = CompletionQueue.growing(4096);
        final WorkCompletion[] batch = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(),
            new WorkCompletion()};
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)java.lang.management.ManagementFactory.getThreadMXBean();
        long allocated = Long.MAX_VALUE;
        for (int window = 0; window < 5; window++) // the first windows grow it to 64 and compile the loop
        {
            final long start = threads.getCurrentThreadAllocatedBytes();
            for (int round = 0; round < 20_000; round++)
            {
                for (int i = 0; i < 40; i++)
                {
                    offer(cq, i);
                }
                while (cq.poll(batch) > 0)
                {
                    assertTrue(batch[0].wrId() >= 0);
                }
            }
            allocated = Math.min(allocated, threads.getCurrentThreadAllocatedBytes() - start);
        }
        assertEquals(64, cq.slotsHeld(), "40 waiting at most: grown to 8, 16, 32, then 64");
        assertEquals(0, allocated, "800,000 completions in and out of a queue at its high-water mark");
    }

    /**
     * Random completions, polls and trims on a virtual clock against a plain queue: order and limit as before, slots
     * given back only when the queue is empty and nothing was added for the idle time, and made again by the next.
     */
    @Test
    void aQueueGivesItsSlotsBackWhenIdleAndKeepsOrderAndItsLimitAgainstAModel()
    {
        final SplittableRandom random = new SplittableRandom(17);
        final CompletionQueue cq = CompletionQueue.growing(256);
        final ArrayDeque<Long> model = new ArrayDeque<>();
        final WorkCompletion[] batch = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
        final long idleNanos = 1_000;
        long now = 0;
        long next = 0;
        int trims = 0;
        int grownAfterATrim = 0;
        for (int step = 0; step < 200_000; step++)
        {
            final int offers = random.nextInt(4) == 0 ? random.nextInt(random.nextBoolean() ? 3 : 300) : 0;
            for (int i = 0; i < offers; i++)
            {
                final boolean room = model.size() < 256;
                assertEquals(room, offer(cq, next), "refused exactly when the model is full");
                if (room)
                {
                    model.add(next);
                }
                next++;
            }
            final int polls = random.nextInt(random.nextBoolean() ? 3 : 40);
            for (int i = 0; i < polls; i++)
            {
                final int taken = cq.poll(batch);
                assertEquals(Math.min(batch.length, model.size()), taken);
                for (int n = 0; n < taken; n++)
                {
                    assertEquals(model.poll().longValue(), batch[n].wrId());
                    assertEquals((int)batch[n].wrId(), batch[n].byteLength());
                }
            }
            now += random.nextInt(600);
            final int held = cq.slotsHeld();
            if (cq.trimIfIdle(now, idleNanos))
            {
                assertTrue(model.isEmpty(), "given back only when empty");
                assertEquals(0, cq.slotsHeld());
                trims++;
                grownAfterATrim += held > CompletionQueue.FIRST_SLOTS ? 1 : 0;
            }
            assertEquals(model.size(), cq.size());
        }
        assertTrue(cq.overruns() > 0, "the limit was reached");
        assertTrue(trims > 1_000 && grownAfterATrim > 100, trims + " trims, " + grownAfterATrim + " after growing");
    }

    /** The producer gives the slots back as often as it can while a consumer polls: nothing lost or repeated. */
    @Test
    void aQueueHandsOverBetweenThreadsWhileTheProducerGivesItsSlotsBack() throws InterruptedException
    {
        final CompletionQueue cq = CompletionQueue.growing(1 << 10);
        final int count = 400_000;
        final int[] trims = {0};
        final Thread producer = new Thread(() ->
        {
            final SplittableRandom random = new SplittableRandom(5);
            long tick = 0;
            for (int i = 0; i < count; i++)
            {
                while (!offer(cq, i))
                {
                    Thread.onSpinWait();
                }
                if (random.nextInt(64) == 0)
                {
                    for (int spin = random.nextInt(2_000); spin > 0; spin--)
                    {
                        trims[0] += cq.trimIfIdle(++tick, 0) ? 1 : 0; // idle time 0: whenever empty at two checks
                        Thread.onSpinWait();
                    }
                }
            }
        });
        producer.start();
        final WorkCompletion[] batch = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(),
            new WorkCompletion(), new WorkCompletion()};
        final WorkCompletion one = new WorkCompletion();
        int expected = 0;
        while (expected < count)
        {
            if ((expected & 1) == 0)
            {
                final int taken = cq.poll(batch);
                for (int n = 0; n < taken; n++, expected++)
                {
                    assertEquals(expected, batch[n].wrId());
                    assertEquals(expected, batch[n].byteLength());
                }
            }
            else if (cq.poll(one))
            {
                assertEquals(expected, one.wrId());
                assertEquals(expected, one.byteLength());
                expected++;
            }
        }
        producer.join();
        assertTrue(cq.isEmpty());
        assertFalse(cq.poll(one));
        System.out.printf("CompletionQueueTest: %,d completions handed over, the slots given back %,d times%n", count,
            trims[0]);
        assertTrue(trims[0] > 100, "given back " + trims[0] + " times");
    }

    /** Checking whether a queue in use may give its slots back allocates nothing. */
    @Test
    void aQueueCheckedForIdlenessAllocatesNothingAndGivesItsSlotsBackOnlyWhenIdle()
    {
        final CompletionQueue cq = CompletionQueue.growing(4096);
        final WorkCompletion[] batch = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
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
                    offer(cq, i);
                }
                while (cq.poll(batch) > 0)
                {
                    assertTrue(batch[0].wrId() >= 0);
                }
                assertFalse(cq.trimIfIdle(now += 10, 1_000_000), "in use every round: never idle long enough");
            }
            allocated = Math.min(allocated, threads.getCurrentThreadAllocatedBytes() - start);
        }
        assertEquals(64, cq.slotsHeld());
        assertEquals(0, allocated, "800,000 completions through a queue checked for idleness every 40");
        offer(cq, 7);
        assertFalse(cq.trimIfIdle(now + 5_000_000, 1_000_000), "a completion added since: the idle time starts again");
        assertFalse(cq.trimIfIdle(now + 10_000_000, 1_000_000), "one waiting: never given back");
        assertEquals(1, cq.poll(batch));
        assertTrue(cq.trimIfIdle(now + 10_000_001, 1_000_000), "empty, nothing added for the idle time");
        assertEquals(0, cq.slotsHeld());
        assertTrue(offer(cq, 8));
        assertEquals(CompletionQueue.FIRST_SLOTS, cq.slotsHeld());
        assertEquals(1, cq.poll(batch));
        assertEquals(8, batch[0].wrId());
    }

    @Test
    void refusesACapacityOutOfRangeNamingIt()
    {
        for (final int capacity : new int[]{0, -1, Integer.MIN_VALUE, Integer.MAX_VALUE, (1 << 24) + 1})
        {
            final IllegalArgumentException growing =
                assertThrows(IllegalArgumentException.class, () -> CompletionQueue.growing(capacity));
            assertEquals("completion queue capacity " + capacity + " must be in 1..2^24", growing.getMessage());
            assertThrows(IllegalArgumentException.class, () -> new CompletionQueue(capacity));
        }
        assertEquals(1, CompletionQueue.growing(1).capacity());
        assertEquals(1 << 24, CompletionQueue.growing(1 << 24).capacity());
    }

    private static boolean offer(final CompletionQueue cq, final long wrId)
    {
        return cq.offer(wrId, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.RDMA_WRITE, (int)wrId, false, 0, 3);
    }
}
