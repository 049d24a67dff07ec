package io.spraynic.datapath.verbs;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
}
