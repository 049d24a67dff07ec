package io.spraynic.datapath.neighbour;

/**
 * How a {@link NeighbourAgent} resolves and answers.
 *
 * @param capacity          most neighbour entries per plane.
 * @param reachableNanos    how long an answer counts (REACHABLE), then the entry is STALE and asked again.
 * @param retransmitNanos   time between two ARP requests for one address.
 * @param tries             requests sent before an address is FAILED.
 * @param holdDownNanos     how long a FAILED address is refused without asking again.
 * @param repliesPerSecond  most ARP replies or neighbour advertisements per second per plane, and as many echo
 *                          replies (a token bucket each, so that echo cannot starve resolution).
 * @param replyBurst        each bucket's depth.
 */
public record NeighbourConfig(int capacity, long reachableNanos, long retransmitNanos, int tries, long holdDownNanos,
    int repliesPerSecond, int replyBurst)
{
    /** Refuses values that cannot work, in one sentence naming the field. */
    public NeighbourConfig
    {
        if (capacity < 1 || capacity > 1 << 20)
        {
            throw new IllegalArgumentException("neighbour capacity " + capacity + " is not allowed: give 1 to 1048576");
        }
        if (reachableNanos < 1_000_000L || retransmitNanos < 1_000_000L || holdDownNanos < 0)
        {
            throw new IllegalArgumentException("neighbour timers must be 1 ms or more (hold-down 0 or more)");
        }
        if (tries < 1 || tries > 100)
        {
            throw new IllegalArgumentException("neighbour tries " + tries + " is not allowed: give 1 to 100");
        }
        if (repliesPerSecond < 1 || replyBurst < 1)
        {
            throw new IllegalArgumentException("neighbour reply rate and burst must be 1 or more");
        }
    }

    /** 1024 entries, reachable 30 s, 3 requests 1 s apart, failed held 5 s, 1000 replies/s in bursts of 64. */
    public static NeighbourConfig defaults()
    {
        return new NeighbourConfig(1024, 30_000_000_000L, 1_000_000_000L, 3, 5_000_000_000L, 1000, 64);
    }

    /** @return a copy with another capacity. */
    public NeighbourConfig withCapacity(final int capacity)
    {
        return new NeighbourConfig(capacity, reachableNanos, retransmitNanos, tries, holdDownNanos, repliesPerSecond,
            replyBurst);
    }

    /** @return a copy with other timers. */
    public NeighbourConfig withTimers(final long reachableNanos, final long retransmitNanos, final int tries,
        final long holdDownNanos)
    {
        return new NeighbourConfig(capacity, reachableNanos, retransmitNanos, tries, holdDownNanos, repliesPerSecond,
            replyBurst);
    }

    /** @return a copy with another reply rate. */
    public NeighbourConfig withReplyRate(final int repliesPerSecond, final int replyBurst)
    {
        return new NeighbourConfig(capacity, reachableNanos, retransmitNanos, tries, holdDownNanos, repliesPerSecond,
            replyBurst);
    }
}
