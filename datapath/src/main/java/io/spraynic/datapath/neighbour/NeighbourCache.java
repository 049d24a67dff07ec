package io.spraynic.datapath.neighbour;

import java.util.Arrays;

/**
 * The neighbours of one plane, IPv4 or IPv6: a bounded table of entries, each a 128-bit address (an IPv4 one in
 * its IPv4-mapped form, {@code ::ffff:a.b.c.d}) with its state, MAC, deadline and tries left, kept in parallel
 * primitive arrays indexed by slot and found through an open-addressing index (linear probing, deletion by
 * backward shift) sized at construction for {@code capacity} entries at most half full, so nothing allocates.
 * <p>
 * States, after Linux's and RFC 4861's: {@link #INCOMPLETE} (asked, no answer yet), {@link #REACHABLE}
 * (answered within the reachable time), {@link #STALE} (the reachable time ran out: the MAC is still used while
 * it is asked again), {@link #FAILED} (no answer after every try: refused for a hold-down time, then forgotten, or
 * asked again while connections follow it) and {@link #PERMANENT} (configured, never asked, never expires). An entry
 * counts the connections that send to its address ({@link #follow}). When the table is full a new entry evicts the
 * least recently used one that is neither permanent nor followed (counted by the caller); the timers of
 * {@link NeighbourAgent} drive the transitions. One thread.
 */
public final class NeighbourCache
{
    public static final int FREE = 0;
    public static final int INCOMPLETE = 1;
    public static final int REACHABLE = 2;
    public static final int STALE = 3;
    public static final int FAILED = 4;
    public static final int PERMANENT = 5;
    /** Returned by {@link #slot} for an address with no entry. */
    public static final int NONE = -1;

    private final int capacity;
    private final int[] index; // slot + 1 per bucket, 0 empty
    private final int indexMask;
    private final long[] addressHigh;
    private final long[] addressLow;
    private final long[] mac;
    private final int[] state;
    private final long[] deadline;
    private final int[] triesLeft;
    private final long[] lastUsed;
    private final int[] followers; // connections sending to the entry's address: never evicted, asked again when failed
    private final int maxFollowed; // entries followed at once: the rest of the table stays free for eviction
    private int followedEntries;
    private final int[] free;
    private int freeCount;

    /** @param capacity most entries, 1 or more. */
    public NeighbourCache(final int capacity)
    {
        if (capacity < 1 || capacity > 1 << 20)
        {
            throw new IllegalArgumentException("a neighbour cache of " + capacity + " entries is not allowed: give 1 to 1048576");
        }
        this.capacity = capacity;
        final int buckets = Integer.highestOneBit(capacity * 2 + 1) << 1;
        this.index = new int[buckets];
        this.indexMask = buckets - 1;
        this.addressHigh = new long[capacity];
        this.addressLow = new long[capacity];
        this.mac = new long[capacity];
        this.state = new int[capacity];
        this.deadline = new long[capacity];
        this.triesLeft = new int[capacity];
        this.lastUsed = new long[capacity];
        this.followers = new int[capacity];
        this.maxFollowed = Math.max(1, capacity / 2);
        this.free = new int[capacity];
        for (int i = 0; i < capacity; i++)
        {
            free[i] = capacity - 1 - i;
        }
        freeCount = capacity;
    }

    /** @return most entries. */
    public int capacity()
    {
        return capacity;
    }

    /** @return entries in use. */
    public int size()
    {
        return capacity - freeCount;
    }

    /** @return the slot of {@code high:low}'s entry, or {@link #NONE}. */
    public int slot(final long high, final long low)
    {
        for (int b = bucket(high, low); ; b = (b + 1) & indexMask)
        {
            final int entry = index[b];
            if (entry == 0)
            {
                return NONE;
            }
            if (addressHigh[entry - 1] == high && addressLow[entry - 1] == low)
            {
                return entry - 1;
            }
        }
    }

    private int bucket(final long high, final long low)
    {
        long h = (high * 0x9E37_79B9_7F4A_7C15L) ^ low;
        h = (h ^ (h >>> 32)) * 0xD6E8_FEB8_6659_FD93L;
        return (int)(h ^ (h >>> 32)) & indexMask;
    }

    private void index(final int slot)
    {
        int b = bucket(addressHigh[slot], addressLow[slot]);
        while (index[b] != 0)
        {
            b = (b + 1) & indexMask;
        }
        index[b] = slot + 1;
    }

    // deletion from a linear-probing table without tombstones: later entries of the run move back into the hole
    private void unindex(final int slot)
    {
        int hole = bucket(addressHigh[slot], addressLow[slot]);
        while (index[hole] != slot + 1)
        {
            hole = (hole + 1) & indexMask;
        }
        int b = hole;
        while (true)
        {
            b = (b + 1) & indexMask;
            final int entry = index[b];
            if (entry == 0)
            {
                break;
            }
            final int home = bucket(addressHigh[entry - 1], addressLow[entry - 1]);
            // the entry may move to the hole when its home is not cyclically within (hole, b]
            if (((b - home) & indexMask) >= ((b - hole) & indexMask))
            {
                index[hole] = entry;
                hole = b;
            }
        }
        index[hole] = 0;
    }

    /**
     * Makes an entry for {@code high:low}, which must have none, in state {@code newState}.
     *
     * @return its slot, or {@link #NONE} when the table is full of permanent or followed entries; {@link #evicted()} says whether
     * an entry made room.
     */
    public int create(final long high, final long low, final int newState, final long nowNanos)
    {
        evicted = false;
        if (freeCount == 0 && !evictLeastRecentlyUsed())
        {
            return NONE;
        }
        final int slot = free[--freeCount];
        addressHigh[slot] = high;
        addressLow[slot] = low;
        mac[slot] = 0;
        state[slot] = newState;
        deadline[slot] = Long.MAX_VALUE;
        triesLeft[slot] = 0;
        lastUsed[slot] = nowNanos;
        followers[slot] = 0;
        index(slot);
        return slot;
    }

    private boolean evicted;

    /** @return true when the last {@link #create} evicted an entry to make room. */
    public boolean evicted()
    {
        return evicted;
    }

    // control path, only when full: a scan of the bounded table
    private boolean evictLeastRecentlyUsed()
    {
        int victim = NONE;
        long oldest = Long.MAX_VALUE;
        for (int i = 0; i < capacity; i++)
        {
            if (state[i] != FREE && state[i] != PERMANENT && followers[i] == 0 && lastUsed[i] < oldest)
            {
                oldest = lastUsed[i];
                victim = i;
            }
        }
        if (victim == NONE)
        {
            return false;
        }
        remove(victim);
        evicted = true;
        return true;
    }

    /** Forgets the entry in {@code slot}. */
    public void remove(final int slot)
    {
        unindex(slot);
        state[slot] = FREE;
        mac[slot] = 0;
        deadline[slot] = Long.MAX_VALUE;
        if (followers[slot] > 0)
        {
            followedEntries--;
        }
        followers[slot] = 0;
        free[freeCount++] = slot;
    }

    /**
     * One connection more sends to the entry's address: it is not evicted while one does. At most half the table is
     * followed at once, so that connections whose peers name next hops (a CONNECT's address list) cannot pin all of it.
     *
     * @return false when the entry was not followed and half the table is already: it is not counted.
     */
    public boolean follow(final int slot)
    {
        if (0 == followers[slot])
        {
            if (followedEntries >= maxFollowed)
            {
                return false;
            }
            followedEntries++;
        }
        followers[slot]++;
        return true;
    }

    /** One connection less sends to the entry's address (never below 0). */
    public void unfollow(final int slot)
    {
        if (followers[slot] > 0 && 0 == --followers[slot])
        {
            followedEntries--;
        }
    }

    /** @return entries followed by one connection or more. */
    public int followedEntries()
    {
        return followedEntries;
    }

    /** @return connections sending to the entry's address. */
    public int followers(final int slot)
    {
        return followers[slot];
    }

    /** @return the first 64 bits of the entry's address. */
    public long addressHigh(final int slot)
    {
        return addressHigh[slot];
    }

    /** @return the last 64 bits of the entry's address (an IPv4 address in the low 32 bits, mapped). */
    public long addressLow(final int slot)
    {
        return addressLow[slot];
    }

    public long mac(final int slot)
    {
        return mac[slot];
    }

    public int state(final int slot)
    {
        return state[slot];
    }

    public long deadline(final int slot)
    {
        return deadline[slot];
    }

    public int triesLeft(final int slot)
    {
        return triesLeft[slot];
    }

    /** Sets an entry's state, MAC, deadline and tries left. */
    public void set(final int slot, final int newState, final long newMac, final long newDeadline, final int tries)
    {
        state[slot] = newState;
        mac[slot] = newMac;
        deadline[slot] = newDeadline;
        triesLeft[slot] = tries;
    }

    /** Marks an entry used now (the LRU order). */
    public void touch(final int slot, final long nowNanos)
    {
        lastUsed[slot] = nowNanos;
    }

    /** @return true when {@code slot}'s state has a MAC frames may be sent to. */
    public boolean hasMac(final int slot)
    {
        final int s = state[slot];
        return s == REACHABLE || s == STALE || s == PERMANENT;
    }

    /** @return the state's name, for logs and {@code toString}. */
    public static String stateName(final int state)
    {
        return switch (state)
        {
            case FREE -> "FREE";
            case INCOMPLETE -> "INCOMPLETE";
            case REACHABLE -> "REACHABLE";
            case STALE -> "STALE";
            case FAILED -> "FAILED";
            case PERMANENT -> "PERMANENT";
            default -> "UNKNOWN(" + state + ")";
        };
    }

    /** Forgets every entry. */
    public void clear()
    {
        Arrays.fill(index, 0);
        Arrays.fill(state, FREE);
        for (int i = 0; i < capacity; i++)
        {
            free[i] = capacity - 1 - i;
        }
        freeCount = capacity;
    }
}
