package io.spraynic.datapath.wire;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SipHashTest
{
    // key 00 01 .. 0f, read little-endian as the reference implementation does
    private static final long K0 = 0x0706050403020100L;
    private static final long K1 = 0x0f0e0d0c0b0a0908L;

    // the reference implementation's vectors (vectors.h): input 00 01 .. (n-1), output as a little-endian word
    private static final long[] VECTORS = {
        0x726fdb47dd0e0e31L, 0x74f839c593dc67fdL, 0x0d6c8009d9a94f5aL, 0x85676696d7fb7e2dL,
        0xcf2794e0277187b7L, 0x18765564cd99a68dL, 0xcbc9466e58fee3ceL, 0xab0200f58b01d137L,
        0x93f5f5799a932462L,
    };

    @Test
    void matchesTheReferenceVectors()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment input = arena.allocate(64);
            for (int i = 0; i < 64; i++)
            {
                input.set(ValueLayout.JAVA_BYTE, i, (byte)i);
            }
            for (int n = 0; n < VECTORS.length; n++)
            {
                assertEquals(VECTORS[n], SipHash.hash(K0, K1, input, 0, n), "length " + n);
            }
            // the paper's worked example (appendix A): 15 bytes 00..0e
            assertEquals(0xa129ca6149be45e5L, SipHash.hash(K0, K1, input, 0, 15));
        }
    }

    @Test
    void wordsGiveTheSameTagAsTheirBytes()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment input = arena.allocate(32);
            final long[] words = {0x1122334455667788L, -1L, 0, 0x0123456789abcdefL};
            for (int i = 0; i < 4; i++)
            {
                input.set(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 8L * i, words[i]);
            }
            assertEquals(SipHash.hash(K0, K1, input, 0, 32), SipHash.hash4(K0, K1, words[0], words[1], words[2], words[3]));
        }
    }

    @Test
    void fiveWordsGiveTheSameTagAsTheirBytes()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment input = arena.allocate(40);
            final long[] words = {0x1122334455667788L, -1L, 0, 0x0123456789abcdefL, 0x00000000DEADBEEFL};
            for (int i = 0; i < 5; i++)
            {
                input.set(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 8L * i, words[i]);
            }
            assertEquals(SipHash.hash(K0, K1, input, 0, 40),
                SipHash.hash5(K0, K1, words[0], words[1], words[2], words[3], words[4]));
        }
    }

    @Test
    void everyKeyBitAndInputBitChangesTheTag()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment input = arena.allocate(20);
            final long tag = SipHash.hash(K0, K1, input, 0, 20);
            for (int bit = 0; bit < 64; bit++)
            {
                assertNotEquals(tag, SipHash.hash(K0 ^ 1L << bit, K1, input, 0, 20));
                assertNotEquals(tag, SipHash.hash(K0, K1 ^ 1L << bit, input, 0, 20));
            }
            for (int bit = 0; bit < 160; bit++)
            {
                final long at = bit / 8;
                input.set(ValueLayout.JAVA_BYTE, at, (byte)(1 << bit % 8));
                assertNotEquals(tag, SipHash.hash(K0, K1, input, 0, 20), "bit " + bit);
                input.set(ValueLayout.JAVA_BYTE, at, (byte)0);
            }
            assertTrue(SipHash.tagsEqual(tag, SipHash.hash(K0, K1, input, 0, 20)));
            assertFalse(SipHash.tagsEqual(tag, tag ^ Long.MIN_VALUE));
        }
    }
}
