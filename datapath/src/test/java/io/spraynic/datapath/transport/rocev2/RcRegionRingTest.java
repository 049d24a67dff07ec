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

/** The ring the RC queues share: positions, capacity, and the memory references that deregistration asks about. */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class RcRegionRingTest
{
    private final RcParts parts = new RcParts();
    private final MemoryRegion first = parts.register(4096, AccessFlags.LOCAL_WRITE);
    private final MemoryRegion second = parts.register(4096, AccessFlags.LOCAL_WRITE);

    /** The least a ring needs: appending an entry. */
    private static final class Ring extends RcRegionRing
    {
        Ring(final int depth)
        {
            super(depth);
        }

        void add(final MemoryRegion memory)
        {
            region[index(tail)] = memory;
            tail++;
        }
    }

    @AfterEach
    void close()
    {
        parts.close();
    }

    @Test
    void shouldRoundItsDepthUpToAPowerOfTwo()
    {
        assertEquals(1, new Ring(1).capacity());
        assertEquals(4, new Ring(3).capacity());
        assertEquals(8, new Ring(8).capacity());
    }

    @Test
    void shouldKeepPositionsGrowingAcrossManyWrapsAndCountFullAndEmpty()
    {
        final Ring ring = new Ring(4);
        for (int round = 0; round < 1000; round++)
        {
            assertTrue(ring.isEmpty());
            for (int i = 0; i < 4; i++)
            {
                assertFalse(ring.isFull());
                ring.add(0 == (i & 1) ? first : second);
            }
            assertTrue(ring.isFull());
            assertEquals(4, ring.size());
            assertEquals(ring.head, ring.positionOf(first));
            assertEquals(ring.head + 1, ring.positionOf(second));
            for (int i = 0; i < 4; i++)
            {
                final long position = ring.head;
                final int slot = ring.removeHead();
                assertEquals((int)position & 3, slot);
                assertNull(ring.region[slot], "its memory reference dropped as it leaves");
            }
        }
        assertEquals(4000, ring.head);
        assertEquals(ring.head, ring.tail);
        assertFalse(ring.uses(first) || ring.uses(second));
    }

    @Test
    void shouldFindOnlyMemoryThatEntriesStillHold()
    {
        final Ring ring = new Ring(4);
        ring.add(first);
        ring.add(second);
        ring.add(first);
        assertEquals(0, ring.positionOf(first), "the oldest");
        ring.removeHead();
        assertEquals(2, ring.positionOf(first));
        ring.removeHead();
        assertEquals(-1, ring.positionOf(second));
        assertEquals(2, ring.headIndex());
        ring.clear();
        assertEquals(0, ring.head);
        assertEquals(0, ring.tail);
        assertFalse(ring.uses(first));
        for (final MemoryRegion slot : ring.region)
        {
            assertNull(slot);
        }
    }
}
