package io.spraynic.datapath.neighbour;

import org.agrona.collections.Int2IntHashMap;

import java.util.Arrays;

/**
 * The IPv4 neighbours of one plane: a bounded table of entries, each an address with its state, MAC, deadline
 * and tries left, kept in parallel primitive arrays indexed by slot and found by an {@link Int2IntHashMap}, so
 * nothing allocates once the map has its capacity (it is sized at construction for {@code capacity} entries).
 * <p>
 * States, after Linux's and RFC 4861's: {@link #INCOMPLETE} (asked, no answer yet), {@link #REACHABLE}
 * (answered within the reachable time), {@link #STALE} (the reachable time ran out: the MAC is still used while
 * it is asked again), {@link #FAILED} (no answer after every try: refused for a hold-down time, then forgotten)
 * and {@link #PERMANENT} (configured, never asked, never expires). When the table is full a new entry evicts the
 * least recently used one that is not permanent (counted by the caller); the timers of {@link NeighbourAgent}
 * drive the transitions. One thread.
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
    private final Int2IntHashMap slotByAddress;
    private final int[] address;
    private final long[] mac;
    private final int[] state;
    private final long[] deadline;
    private final int[] triesLeft;
    private final long[] lastUsed;
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
        this.slotByAddress = new Int2IntHashMap(capacity * 2 + 8, 0.65f, NONE);
        this.address = new int[capacity];
        this.mac = new long[capacity];
        this.state = new int[capacity];
        this.deadline = new long[capacity];
        this.triesLeft = new int[capacity];
        this.lastUsed = new long[capacity];
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

    /** @return the slot of {@code ipv4}'s entry, or {@link #NONE}. */
    public int slot(final int ipv4)
    {
        return slotByAddress.get(ipv4);
    }

    /**
     * Makes an entry for {@code ipv4}, which must have none, in state {@code newState}.
     *
     * @return its slot, or {@link #NONE} when the table is full of permanent entries; {@link #evicted()} says whether
     * an entry made room.
     */
    public int create(final int ipv4, final int newState, final long nowNanos)
    {
        evicted = false;
        if (freeCount == 0 && !evictLeastRecentlyUsed())
        {
            return NONE;
        }
        final int slot = free[--freeCount];
        address[slot] = ipv4;
        mac[slot] = 0;
        state[slot] = newState;
        deadline[slot] = Long.MAX_VALUE;
        triesLeft[slot] = 0;
        lastUsed[slot] = nowNanos;
        slotByAddress.put(ipv4, slot);
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
            if (state[i] != FREE && state[i] != PERMANENT && lastUsed[i] < oldest)
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
        slotByAddress.remove(address[slot]);
        state[slot] = FREE;
        mac[slot] = 0;
        deadline[slot] = Long.MAX_VALUE;
        free[freeCount++] = slot;
    }

    public int address(final int slot)
    {
        return address[slot];
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
        slotByAddress.clear();
        Arrays.fill(state, FREE);
        for (int i = 0; i < capacity; i++)
        {
            free[i] = capacity - 1 - i;
        }
        freeCount = capacity;
    }
}
