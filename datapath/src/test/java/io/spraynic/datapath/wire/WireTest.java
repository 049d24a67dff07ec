package io.spraynic.datapath.wire;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The wide reads the parser uses: one big-endian read of eight (or four) bytes, then each field taken out of it at
 * its byte offset, must give exactly what a read of that field alone gives, at every offset the field fits.
 */
class WireTest
{
    @Test
    void shouldTakeEveryFieldOutOfAnEightByteReadAsItsOwnReadGivesIt()
    {
        final Random random = new Random(7);
        final MemorySegment s = MemorySegment.ofArray(new byte[16]);
        for (int round = 0; round < 1_000; round++)
        {
            for (int i = 0; i < 16; i++)
            {
                Wire.put8(s, i, random.nextInt(256));
            }
            final int start = random.nextInt(9);
            final long word = Wire.i64(s, start);
            for (int at = 0; at < 8; at++)
            {
                assertEquals(Wire.u8(s, start + at), Wire.u8Of(word, at), "u8 at " + at);
            }
            for (int at = 0; at < 7; at++)
            {
                assertEquals(Wire.u16(s, start + at), Wire.u16Of(word, at), "u16 at " + at);
            }
            for (int at = 0; at < 6; at++)
            {
                assertEquals(Wire.u24(s, start + at), Wire.u24Of(word, at), "u24 at " + at);
            }
            for (int at = 0; at < 5; at++)
            {
                assertEquals(Wire.i32(s, start + at), Wire.i32Of(word, at), "i32 at " + at);
            }
        }
    }

    @Test
    void shouldTakeEveryFieldOutOfAFourByteReadAsItsOwnReadGivesIt()
    {
        final Random random = new Random(8);
        final MemorySegment s = MemorySegment.ofArray(new byte[8]);
        for (int round = 0; round < 1_000; round++)
        {
            for (int i = 0; i < 8; i++)
            {
                Wire.put8(s, i, random.nextInt(256));
            }
            final int start = random.nextInt(5);
            final int word = Wire.i32(s, start);
            for (int at = 0; at < 4; at++)
            {
                assertEquals(Wire.u8(s, start + at), Wire.u8Of(word, at), "u8 at " + at);
            }
            for (int at = 0; at < 3; at++)
            {
                assertEquals(Wire.u16(s, start + at), Wire.u16Of(word, at), "u16 at " + at);
            }
            for (int at = 0; at < 2; at++)
            {
                assertEquals(Wire.u24(s, start + at), Wire.u24Of(word, at), "u24 at " + at);
            }
        }
    }

    @Test
    void shouldReadEightBytesBigEndian()
    {
        final MemorySegment s = MemorySegment.ofArray(new byte[] {1, 2, 3, 4, 5, 6, 7, (byte)0x88});
        assertEquals(0x0102030405060788L, Wire.i64(s, 0));
        assertEquals(0x01, Wire.u8Of(Wire.i64(s, 0), 0));
        assertEquals(0x88, Wire.u8Of(Wire.i64(s, 0), 7));
        assertEquals(0x060788, Wire.u24Of(Wire.i64(s, 0), 5));
    }

    @Test
    void shouldRefuseAWideReadThatWouldCrossTheSegmentsEnd()
    {
        try (Arena arena = Arena.ofConfined())
        {
            for (int size = 0; size < 8; size++)
            {
                final MemorySegment heap = MemorySegment.ofArray(new byte[size]);
                final MemorySegment off = arena.allocate(8).asSlice(0, size);
                assertThrows(IndexOutOfBoundsException.class, () -> Wire.i64(heap, 0), "heap " + heap.byteSize());
                assertThrows(IndexOutOfBoundsException.class, () -> Wire.i64(off, 0), "native " + off.byteSize());
            }
            final MemorySegment sixteen = arena.allocate(16);
            assertEquals(0L, Wire.i64(sixteen, 8));
            assertThrows(IndexOutOfBoundsException.class, () -> Wire.i64(sixteen, 9));
        }
    }
}
