package io.spraynic.datapath.api;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(10)
class SeededPatternTest
{
    // not a multiple of 8: the tail after the last whole long is filled a byte at a time
    private static final long BYTES = 1003;

    @Test
    void shouldGiveTheSameBytesForTheSameSeedWhetherAllocatedOrFilled()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment allocated = SeededPattern.allocate(arena, BYTES, 42);
            final MemorySegment filled = arena.allocate(BYTES);
            filled.fill((byte)0x5A);
            SeededPattern.fill(filled, 42);

            assertEquals(BYTES, allocated.byteSize());
            assertEquals(0, allocated.address() % 64);
            assertEquals(-1, allocated.mismatch(filled));
            assertEquals(-1, SeededPattern.allocate(arena, BYTES, 42).mismatch(allocated));
        }
    }

    @Test
    void shouldWriteEveryByteIncludingTheTail()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment first = arena.allocate(BYTES);
            final MemorySegment second = arena.allocate(BYTES);
            first.fill((byte)0x5A);
            second.fill((byte)0x5A);
            SeededPattern.fill(first, 1);
            SeededPattern.fill(second, 2);

            // two seeds' bytes differ in the last long and in the tail: both were written, neither left at 0x5A
            final long tail = BYTES - BYTES % Long.BYTES;
            assertNotEquals(first.get(ValueLayout.JAVA_LONG_UNALIGNED, tail - Long.BYTES),
                second.get(ValueLayout.JAVA_LONG_UNALIGNED, tail - Long.BYTES));
            assertTrue(-1 != first.asSlice(tail).mismatch(second.asSlice(tail)));
            assertTrue(-1 != SeededPattern.allocate(arena, BYTES, 1).mismatch(SeededPattern.allocate(arena, BYTES, 2)));
        }
    }

    @Test
    void shouldAllocateAnEmptyPattern()
    {
        try (Arena arena = Arena.ofConfined())
        {
            assertEquals(0, SeededPattern.allocate(arena, 0, 7).byteSize());
        }
    }
}
