package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.HashMix;

import java.security.SecureRandom;

/**
 * The late margins an engine's new connections start from (S6.8.1's seed {@code S}), one per peer host: the margin
 * measures how late the two hosts' threads answer, so a fresh connection to a peer starts from what the engine's
 * connections to that peer learnt or narrowed last, and from 0 to a peer it has no word of.
 * <p>
 * Per peer, not per engine, because what a margin is learnt from is the peer's word: its ACKs and its report of
 * duplicates (S6.8-1). A peer that withholds its ACKs until a timeout fires and then reports the copy as a duplicate
 * widens its connection's margin to {@code lateMarginMax} as often as it likes; with one seed per engine it handed that
 * margin to every connection the engine opened next, to any peer (their tails then waited up to the cap where the
 * tail-loss probe is lost too, S6.7). Kept per peer, it hurts only its own connections.
 * <p>
 * A peer is known by a key: a 32-bit hash of its address (128 bits: IPv6, or IPv4-mapped) keyed with a secret drawn
 * at start, so no peer can aim at another's key or slot (two peers share a key by chance once in 2^32 pairs; a
 * connection holds its 4-byte key, not the address, issue 13). {@link #SLOTS} slots, the key's top bits choosing one,
 * each holding the key it serves: a peer whose slot another holds takes it over when it learns (the other's next
 * connection starts from 0 then, as before any seed: the cost of a collision is a margin learnt again, never
 * another's margin), and a reader of a slot another key holds gets 0. A seed ages lazily: for each {@code quiet} span
 * (the engine's {@code connectionTimeout}) since its last change it narrows by a quarter, as the table says, worked
 * out when read or written rather than by a walk on every
 * tick. Engine thread only; allocation-free once made.
 */
final class LateMarginSeeds
{
    /** Peers whose seeds an engine keeps at once (an int and two longs each: 5 KiB). */
    static final int SLOTS = 256;
    private static final int SLOT_SHIFT = Integer.SIZE - Integer.numberOfTrailingZeros(SLOTS);
    /** Past this many quiet spans a seed is 0 whatever it was (a quarter off each: 2 s is below 1 us after 51). */
    private static final int FORGOTTEN_AFTER_SPANS = 128;

    private final long hashKey;
    private final int[] keys = new int[SLOTS];
    private final long[] seedNanos = new long[SLOTS];
    private final long[] changedAtNanos = new long[SLOTS];
    private long nowNanos;
    private long quietNanos = Long.MAX_VALUE;

    LateMarginSeeds()
    {
        this(new SecureRandom().nextLong());
    }

    /** @param hashKey the secret that spreads peers over slots (a test may fix it). */
    LateMarginSeeds(final long hashKey)
    {
        this.hashKey = hashKey;
    }

    /**
     * The engine's tick: the time seeds are aged to, and the quiet span that ages them.
     *
     * @param quietNanos the engine's {@code connectionTimeout}: beyond it, silence is not trusted either.
     */
    void tick(final long nowNanos, final long quietNanos)
    {
        this.nowNanos = nowNanos;
        this.quietNanos = Math.max(1, quietNanos);
    }

    /** @return the key of the peer whose address is {@code high:low} (128 bits). */
    int key(final long high, final long low)
    {
        return (int)(HashMix.finish(HashMix.finish(low ^ hashKey) ^ high) >>> 32);
    }

    /** @return the slot a key's seed is kept in. */
    static int slot(final int key)
    {
        return key >>> SLOT_SHIFT;
    }

    /** @return the margin a new connection to that peer starts from: its seed aged to now, 0 if it has none. */
    long seed(final int key)
    {
        final int slot = slot(key);
        return keys[slot] == key ? aged(slot) : 0;
    }

    /** A connection to that peer learnt or narrowed its margin to {@code marginNanos}: its next ones start there. */
    void changed(final int key, final long marginNanos)
    {
        final int slot = slot(key);
        keys[slot] = key;
        seedNanos[slot] = marginNanos;
        changedAtNanos[slot] = nowNanos;
    }

    private long aged(final int slot)
    {
        final long spans = (nowNanos - changedAtNanos[slot]) / quietNanos;
        long seed = seedNanos[slot];
        if (spans > 0 && seed > 0)
        {
            for (long span = 0; span < Math.min(spans, FORGOTTEN_AFTER_SPANS) && seed > 0; span++)
            {
                seed = RttEstimator.narrowed(seed);
            }
            seedNanos[slot] = seed;
            changedAtNanos[slot] += spans * quietNanos; // the rest of the span still counts toward the next
        }
        return seed;
    }
}
