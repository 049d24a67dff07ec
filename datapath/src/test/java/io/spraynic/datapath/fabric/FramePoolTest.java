package io.spraynic.datapath.fabric;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class FramePoolTest
{
    private final FramePool pool = new FramePool(4, 128);

    @AfterEach
    void close()
    {
        pool.close();
    }

    @Test
    void shouldHandOutEverySlotOnceThenNone()
    {
        final Set<Integer> slots = new HashSet<>();
        for (int i = 0; i < 4; i++)
        {
            slots.add(pool.allocate());
        }
        assertEquals(Set.of(0, 1, 2, 3), slots);
        assertEquals(FramePool.NONE, pool.allocate());
        assertEquals(0, pool.available());
        assertEquals(4, pool.inUse());

        pool.free(2);
        assertEquals(2, pool.allocate());
    }

    @Test
    void shouldCopyFramesInWithTheirLength()
    {
        final MemorySegment source = MemorySegment.ofArray(new byte[200]);
        for (int i = 0; i < 200; i++)
        {
            source.set(ValueLayout.JAVA_BYTE, i, (byte)i);
        }
        final int slot = pool.copyIn(source, 10, 100);

        assertEquals(100, pool.length(slot));
        assertEquals(slot * 128L, pool.offset(slot));
        for (int i = 0; i < 100; i++)
        {
            assertEquals((byte)(10 + i), pool.memory().get(ValueLayout.JAVA_BYTE, pool.offset(slot) + i));
        }
        assertEquals(FramePool.NONE, pool.copyIn(source, 0, 129), "longer than a slot");
        assertEquals(3, pool.available());
    }

    @Test
    void shouldValidateItsShape()
    {
        assertEquals("frame pool capacity 0 must be at least 1",
            assertThrows(IllegalArgumentException.class, () -> new FramePool(0, 128)).getMessage());
        assertEquals("frame slot size 63 B must be at least 64 B",
            assertThrows(IllegalArgumentException.class, () -> new FramePool(1, 63)).getMessage());
        assertThrows(IllegalArgumentException.class, () -> pool.length(0, 129));
    }
}
