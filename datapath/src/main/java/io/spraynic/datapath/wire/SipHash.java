package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * SipHash-2-4 (Aumasson and Bernstein, 2012): a keyed 64-bit MAC for short inputs, the tag of the spray
 * transport's authenticated packets (docs/PROTOCOL.md S12). A 128-bit key is two longs, {@code k0} the first
 * 8 key bytes and {@code k1} the last 8, each read little-endian as the reference implementation does.
 * <p>
 * No allocation, no state: safe on the per-packet path and from any thread. Inputs are read straight from a
 * {@link MemorySegment} (a frame in an mbuf), or given as words by {@link #hash4(long, long, long, long, long, long)}
 * for tags over values that are not contiguous on the wire.
 */
public final class SipHash
{
    /** Bytes of a tag on the wire. */
    public static final int TAG_LENGTH = 8;

    private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);

    private SipHash()
    {
    }

    /**
     * @param k0     first half of the key.
     * @param k1     second half of the key.
     * @param s      the input's memory.
     * @param offset where the input starts.
     * @param length its bytes; the caller has checked that they lie inside {@code s}.
     * @return the 64-bit tag.
     */
    public static long hash(final long k0, final long k1, final MemorySegment s, final long offset, final int length)
    {
        long v0 = k0 ^ 0x736f6d6570736575L;
        long v1 = k1 ^ 0x646f72616e646f6dL;
        long v2 = k0 ^ 0x6c7967656e657261L;
        long v3 = k1 ^ 0x7465646279746573L;
        final int whole = length & ~7;
        for (int i = 0; i < whole; i += 8)
        {
            final long m = s.get(LONG_LE, offset + i);
            v3 ^= m;
            // two compression rounds (SipRound, inlined)
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            v0 ^= m;
        }
        long last = (long)(length & 0xFF) << 56;
        final int tail = length - whole;
        if (tail > 0)
        {
            final long at = offset + whole;
            if (at + Long.BYTES <= s.byteSize())
            {
                // one read and a mask: a tag is checked or written in place, so its own 8 bytes follow the input
                last |= s.get(LONG_LE, at) & (-1L >>> (64 - 8 * tail));
            }
            else
            {
                for (int i = tail - 1; i >= 0; i--)
                {
                    last |= (s.get(ValueLayout.JAVA_BYTE, at + i) & 0xFFL) << (8 * i);
                }
            }
        }
        return finish(v0, v1, v2, v3, last);
    }

    /**
     * The tag of 32 bytes given as four words (each taken as 8 little-endian input bytes), for tags over fields
     * that are not contiguous on the wire, e.g. a message's invariants. Equal to {@link #hash} over the same
     * 32 bytes.
     */
    public static long hash4(final long k0, final long k1, final long w0, final long w1, final long w2, final long w3)
    {
        long v0 = k0 ^ 0x736f6d6570736575L;
        long v1 = k1 ^ 0x646f72616e646f6dL;
        long v2 = k0 ^ 0x6c7967656e657261L;
        long v3 = k1 ^ 0x7465646279746573L;
        for (int i = 0; i < 4; i++)
        {
            final long m = i == 0 ? w0 : i == 1 ? w1 : i == 2 ? w2 : w3;
            v3 ^= m;
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            v0 ^= m;
        }
        return finish(v0, v1, v2, v3, 32L << 56);
    }

    /**
     * The tag of 40 bytes given as five words, as {@link #hash4} for four: equal to {@link #hash} over the same
     * 40 bytes (each word 8 little-endian input bytes). The message tag of S12.4.
     */
    public static long hash5(
        final long k0, final long k1, final long w0, final long w1, final long w2, final long w3, final long w4)
    {
        long v0 = k0 ^ 0x736f6d6570736575L;
        long v1 = k1 ^ 0x646f72616e646f6dL;
        long v2 = k0 ^ 0x6c7967656e657261L;
        long v3 = k1 ^ 0x7465646279746573L;
        // the words move down one place a round (not a chain of compares choosing one): under C2's 325 bytecodes
        // of a hot method it may inline, so callers do not pay the call with its spilled registers
        long m = w0;
        long next1 = w1;
        long next2 = w2;
        long next3 = w3;
        for (int i = 0; i < 5; i++)
        {
            v3 ^= m;
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
            v0 ^= m;
            m = next1;
            next1 = next2;
            next2 = next3;
            next3 = w4;
        }
        return finish(v0, v1, v2, v3, 40L << 56);
    }

    private static long finish(long v0, long v1, long v2, long v3, final long last)
    {
        v3 ^= last;
        for (int r = 0; r < 2; r++)
        {
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
        }
        v0 ^= last;
        v2 ^= 0xff;
        for (int r = 0; r < 4; r++)
        {
            v0 += v1; v1 = Long.rotateLeft(v1, 13); v1 ^= v0; v0 = Long.rotateLeft(v0, 32);
            v2 += v3; v3 = Long.rotateLeft(v3, 16); v3 ^= v2;
            v0 += v3; v3 = Long.rotateLeft(v3, 21); v3 ^= v0;
            v2 += v1; v1 = Long.rotateLeft(v1, 17); v1 ^= v2; v2 = Long.rotateLeft(v2, 32);
        }
        return v0 ^ v1 ^ v2 ^ v3;
    }

    /**
     * Compares two tags without an early exit (the time taken does not say how many bytes matched).
     */
    public static boolean tagsEqual(final long a, final long b)
    {
        return (a ^ b) == 0;
    }
}
