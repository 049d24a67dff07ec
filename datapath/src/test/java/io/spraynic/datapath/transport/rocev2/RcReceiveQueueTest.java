package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class RcReceiveQueueTest
{
    private final RcParts parts = new RcParts();
    private final MemoryRegion region = parts.register(4096, AccessFlags.LOCAL_WRITE);
    private final RcReceiveQueue queue = new RcReceiveQueue(2);

    @AfterEach
    void close()
    {
        parts.close();
    }

    @Test
    void shouldHandOutReceivesInOrderAndDropTheirMemory()
    {
        queue.add(1, region, 0, 100);
        queue.add(2, null, 0, 0);
        assertTrue(queue.isFull());
        assertEquals(100, queue.length[queue.headIndex()]);
        assertTrue(queue.uses(region));
        final int first = queue.headIndex();
        assertEquals(1, queue.consumeHead());
        assertNull(queue.region[first]);
        assertFalse(queue.uses(region));
        assertEquals(1, queue.size());
        assertEquals(2, queue.consumeHead());
        assertTrue(queue.isEmpty());
        queue.add(3, region, 64, 8);
        assertEquals(64, queue.offset[queue.headIndex()], "wrapped around");
    }

    @Test
    void shouldForgetEverythingOnClear()
    {
        queue.add(1, region, 0, 100);
        queue.clear();
        assertTrue(queue.isEmpty());
        assertEquals(0, queue.head);
        assertFalse(queue.uses(region));
    }
}
