package io.spraynic.datapath.transport;

/**
 * MurmurHash3's 64-bit finaliser, the one mixing step the datapath's hashes share (a simulated switch's ECMP hash, the
 * late margin seeds' peer keys): every input bit moves every output bit with probability near 1/2. Allocation-free.
 */
public final class HashMix
{
    private HashMix()
    {
    }

    /** @return {@code value} mixed. */
    public static long finish(final long value)
    {
        long h = value;
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        h *= 0xC4CEB9FE1A85EC53L;
        h ^= h >>> 33;
        return h;
    }
}
