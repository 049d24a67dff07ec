package io.spraynic.conformance;

/**
 * SipHash-2-4 (Aumasson and Bernstein, 2012) over bytes, the key as two little-endian longs (S12.2, S12.3), written
 * for the suite from the paper: the implementation under test has its own.
 */
final class SipHash24
{
    private SipHash24()
    {
    }

    static long hash(final long k0, final long k1, final byte[] in, final int offset, final int length)
    {
        final long[] v = {k0 ^ 0x736f6d6570736575L, k1 ^ 0x646f72616e646f6dL, k0 ^ 0x6c7967656e657261L,
            k1 ^ 0x7465646279746573L};
        final int whole = length & ~7;
        for (int i = 0; i < whole; i += 8)
        {
            final long m = littleEndian(in, offset + i, 8);
            v[3] ^= m;
            round(v);
            round(v);
            v[0] ^= m;
        }
        final long last = (long)(length & 0xFF) << 56 | littleEndian(in, offset + whole, length - whole);
        v[3] ^= last;
        round(v);
        round(v);
        v[0] ^= last;
        v[2] ^= 0xFF;
        for (int i = 0; i < 4; i++)
        {
            round(v);
        }
        return v[0] ^ v[1] ^ v[2] ^ v[3];
    }

    /** The S12.4 message tag: five words, each taken as 8 little-endian input bytes. */
    static long words(final long[] key, final long... words)
    {
        final byte[] in = new byte[8 * words.length];
        for (int w = 0; w < words.length; w++)
        {
            for (int i = 0; i < 8; i++)
            {
                in[8 * w + i] = (byte)(words[w] >>> (8 * i));
            }
        }
        return hash(key[0], key[1], in, 0, in.length);
    }

    private static long littleEndian(final byte[] in, final int at, final int n)
    {
        long v = 0;
        for (int i = n - 1; i >= 0; i--)
        {
            v = (v << 8) | (in[at + i] & 0xFF);
        }
        return v;
    }

    private static void round(final long[] v)
    {
        v[0] += v[1];
        v[1] = Long.rotateLeft(v[1], 13);
        v[1] ^= v[0];
        v[0] = Long.rotateLeft(v[0], 32);
        v[2] += v[3];
        v[3] = Long.rotateLeft(v[3], 16);
        v[3] ^= v[2];
        v[0] += v[3];
        v[3] = Long.rotateLeft(v[3], 21);
        v[3] ^= v[0];
        v[2] += v[1];
        v[1] = Long.rotateLeft(v[1], 17);
        v[1] ^= v[2];
        v[2] = Long.rotateLeft(v[2], 32);
    }
}
