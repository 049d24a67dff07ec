package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.Psn;
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
class RcReadResponseQueueTest
{
    private final RcParts parts = new RcParts();
    private final MemoryRegion first = parts.register(4096, AccessFlags.REMOTE_READ);
    private final MemoryRegion second = parts.register(4096, AccessFlags.REMOTE_READ);
    private final RcReadResponseQueue queue = new RcReadResponseQueue(3);

    @AfterEach
    void close()
    {
        parts.close();
    }

    @Test
    void shouldHoldMaxReadsRoundedUp()
    {
        assertEquals(4, queue.capacity());
        for (int i = 0; i < 4; i++)
        {
            assertFalse(queue.isFull());
            queue.add(i * 10, first, 0, 100, 1);
        }
        assertTrue(queue.isFull());
    }

    @Test
    void shouldTrackTheNextResponseAndTheLastPsnAcrossTheWrap()
    {
        queue.add(Psn.MASK - 1, first, 0, 4 * 256, 4);
        assertEquals(1, queue.lastPsn(queue.index(0)));
        assertEquals(Psn.MASK - 1, queue.nextResponsePsn(0));
        queue.packetsSent[queue.index(0)] = 2;
        assertEquals(0, queue.nextResponsePsn(0));
    }

    @Test
    void shouldDropTheNewestReadsReachingAPsnAskedAgain()
    {
        queue.add(0, first, 0, 512, 2);   // PSNs 0-1
        queue.add(2, first, 0, 256, 1);   // PSN 2
        queue.add(3, second, 0, 768, 3);  // PSNs 3-5
        queue.dropFrom(2);
        assertEquals(1, queue.tail, "the READ ending before PSN 2 stays");
        assertEquals(-1, queue.positionOf(second));
        queue.dropFrom(1);
        assertTrue(queue.isEmpty(), "a READ re-issued from its middle replaces the original");
    }

    @Test
    void shouldFindTheOldestReadFromARegionAndTruncateFromIt()
    {
        queue.add(0, first, 0, 256, 1);
        queue.add(1, second, 0, 256, 1);
        queue.add(2, first, 0, 256, 1);
        assertEquals(0, queue.positionOf(first));
        assertEquals(1, queue.positionOf(second));
        queue.truncate(1);
        assertEquals(1, queue.tail);
        assertEquals(-1, queue.positionOf(second));
        assertNull(queue.region[queue.index(1)]);
        queue.removeHead();
        assertTrue(queue.isEmpty());
        assertEquals(-1, queue.positionOf(first));
    }

    @Test
    void shouldForgetEveryReadOnFlushAndClear()
    {
        queue.add(0, first, 0, 256, 1);
        queue.add(1, second, 0, 256, 1);
        queue.flush();
        assertTrue(queue.isEmpty());
        assertEquals(2, queue.head, "positions go on");
        assertEquals(-1, queue.positionOf(second));
        queue.add(2, first, 0, 256, 1);
        queue.clear();
        assertEquals(0, queue.head);
        assertEquals(0, queue.tail);
        for (final MemoryRegion r : queue.region)
        {
            assertNull(r);
        }
    }
}
