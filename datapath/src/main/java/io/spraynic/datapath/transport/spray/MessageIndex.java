package io.spraynic.datapath.transport.spray;

import org.agrona.BitUtil;
import org.agrona.collections.Long2LongHashMap;

/**
 * A map from a message's (stream, MSN) key ({@link SendSlots#key}) to the slot that holds it, for at most
 * {@code capacity} messages at once: what a {@code Long2LongHashMap} did, at a lower cost per message.
 * <p>
 * Issue 13: the sender put and removed one key per message, and the map's scattering hash sent each to a random
 * cache line of a table four times the capacity (with one-packet messages, about as much of the poll thread as
 * the message's SipHash tag). Here a key goes first to a direct bucket: its MSN plus a per-stream offset, modulo a
 * power of two of at least {@code capacity}. The MSNs of one stream's messages in flight are consecutive (each
 * message takes the next), so they never share a bucket and neighbours share cache lines; a key whose bucket a
 * message of another stream holds goes to an overflow map (sized so it never grows). A lookup reads one bucket,
 * and the overflow map only when that bucket holds another key and the overflow map is not empty: a hostile key
 * costs no more than that. Allocation-free once made.
 */
final class MessageIndex
{
    // spreads the streams' runs of MSNs over the buckets (2^32 / golden ratio, odd)
    private static final int STREAM_SPREAD = 0x9E37_79B9;

    private final int missingValue;
    private final int mask;
    private final long[] keys;
    private final int[] values;
    private final Long2LongHashMap overflow;
    private int directCount;

    /**
     * @param capacity     most keys held at once.
     * @param missingValue what {@link #get} returns for a key not held; never a value put.
     */
    MessageIndex(final int capacity, final int missingValue)
    {
        final int buckets = buckets(capacity);
        this.missingValue = missingValue;
        this.mask = buckets - 1;
        this.keys = new long[buckets];
        this.values = new int[buckets];
        this.overflow = new Long2LongHashMap(2 * capacity, 0.5f, missingValue);
        java.util.Arrays.fill(values, missingValue);
    }

    /** @return bytes of an index for {@code capacity} keys (S10.1). */
    static long bytesFor(final int capacity)
    {
        return (long)buckets(capacity) * (Long.BYTES + Integer.BYTES) +
            16L * ConnectionStorage.mapCapacity(2 * capacity);
    }

    private static int buckets(final int capacity)
    {
        return BitUtil.findNextPositivePowerOfTwo(Math.max(8, capacity));
    }

    // the MSN (low 32 bits) plus the stream's offset: one stream's consecutive MSNs take consecutive buckets
    private int bucket(final long key)
    {
        return ((int)key + (int)(key >>> 32) * STREAM_SPREAD) & mask;
    }

    /** Maps {@code key}, not held now, to {@code value} (not the missing value). */
    void put(final long key, final int value)
    {
        final int bucket = bucket(key);
        if (values[bucket] == missingValue)
        {
            keys[bucket] = key;
            values[bucket] = value;
            directCount++;
        }
        else
        {
            overflow.put(key, value);
        }
    }

    /** @return the value of {@code key}, or the missing value. */
    int get(final long key)
    {
        final int bucket = bucket(key);
        if (values[bucket] != missingValue && keys[bucket] == key)
        {
            return values[bucket];
        }
        return overflow.isEmpty() ? missingValue : (int)overflow.get(key);
    }

    /** Forgets {@code key} (nothing happens if it is not held). */
    void remove(final long key)
    {
        final int bucket = bucket(key);
        if (values[bucket] != missingValue && keys[bucket] == key)
        {
            values[bucket] = missingValue;
            directCount--;
        }
        else if (!overflow.isEmpty())
        {
            overflow.remove(key);
        }
    }

    boolean isEmpty()
    {
        return directCount == 0 && overflow.isEmpty();
    }

    /** @return keys held. */
    int size()
    {
        return directCount + overflow.size();
    }

    /** @return keys held in their direct bucket (the rest are in the overflow map). */
    int directSize()
    {
        return directCount;
    }

    void clear()
    {
        if (directCount > 0)
        {
            java.util.Arrays.fill(values, missingValue);
            directCount = 0;
        }
        overflow.clear();
    }
}
