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

    @Test
    void theTailReadInOneWordGivesTheTagOfTheByteByByteReference()
    {
        final java.util.SplittableRandom random = new java.util.SplittableRandom(12);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment input = arena.allocate(160);
            for (int round = 0; round < 20_000; round++)
            {
                for (long at = 0; at < input.byteSize(); at += 8)
                {
                    input.set(ValueLayout.JAVA_LONG_UNALIGNED, at, random.nextLong());
                }
                final int length = random.nextInt(0, 96);
                // inputs that end anywhere, up to the segment's last byte (where no whole word follows the tail)
                final long offset = round % 4 == 0 ? input.byteSize() - length : random.nextLong(0, 160 - length + 1);
                final long k0 = random.nextLong();
                final long k1 = random.nextLong();
                final long expected = referenceHash(k0, k1, input, offset, length);
                assertEquals(expected, SipHash.hash(k0, k1, input, offset, length), "length " + length + " at " + offset);
                // the bytes after the input do not count
                if (offset + length < input.byteSize())
                {
                    input.set(ValueLayout.JAVA_BYTE, offset + length, (byte)~input.get(ValueLayout.JAVA_BYTE, offset + length));
                    assertEquals(expected, SipHash.hash(k0, k1, input, offset, length));
                }
            }
        }
    }

    // SipHash-2-4 exactly as the paper writes it: one compression per 8 bytes, the tail one byte at a time
    private static long referenceHash(final long k0, final long k1, final MemorySegment s, final long offset, final int length)
    {
        final long[] v = {k0 ^ 0x736f6d6570736575L, k1 ^ 0x646f72616e646f6dL, k0 ^ 0x6c7967656e657261L,
            k1 ^ 0x7465646279746573L};
        final int whole = length & ~7;
        for (int i = 0; i < whole; i += 8)
        {
            long m = 0;
            for (int b = 7; b >= 0; b--)
            {
                m = m << 8 | (s.get(ValueLayout.JAVA_BYTE, offset + i + b) & 0xFFL);
            }
            v[3] ^= m;
            sipRound(v);
            sipRound(v);
            v[0] ^= m;
        }
        long last = (long)(length & 0xFF) << 56;
        for (int i = length - whole - 1; i >= 0; i--)
        {
            last |= (s.get(ValueLayout.JAVA_BYTE, offset + whole + i) & 0xFFL) << (8 * i);
        }
        v[3] ^= last;
        sipRound(v);
        sipRound(v);
        v[0] ^= last;
        v[2] ^= 0xff;
        for (int r = 0; r < 4; r++)
        {
            sipRound(v);
        }
        return v[0] ^ v[1] ^ v[2] ^ v[3];
    }

    private static void sipRound(final long[] v)
    {
        v[0] += v[1]; v[1] = Long.rotateLeft(v[1], 13); v[1] ^= v[0]; v[0] = Long.rotateLeft(v[0], 32);
        v[2] += v[3]; v[3] = Long.rotateLeft(v[3], 16); v[3] ^= v[2];
        v[0] += v[3]; v[3] = Long.rotateLeft(v[3], 21); v[3] ^= v[0];
        v[2] += v[1]; v[1] = Long.rotateLeft(v[1], 17); v[1] ^= v[2]; v[2] = Long.rotateLeft(v[2], 32);
    }
}
