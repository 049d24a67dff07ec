package io.spraynic.datapath.transport.spray;

import java.util.SplittableRandom;

/**
 * S7.7.1: what a connection's sender remembers of its source ports' routes while it has traffic (lent with the paths'
 * times, {@link PathLentTimes}; an idle connection holds none). Two kinds of port, per plane (a port's
 * route is a hash of the plane's addresses too):
 * <ul>
 *     <li><b>suspect</b>: a path timed out on it, so it may cross a dead link; until an ACK of the path shows it
 *     answers (a random loss) or the suspicion expires, a new port is not drawn onto it, and while a plane has one
 *     its paths move to ports that proved healthy since (S7.7's rotation would otherwise put a quarter of a
 *     four-link plane's new ports onto a dead link, each losing its packets in flight and waiting an RTO);</li>
 *     <li><b>healthy</b>: it carried a whole rotation run acknowledged, with the send time of the newest packet that
 *     proved it.</li>
 * </ul>
 * Two fixed rings of at least one entry per path: a stream of timeouts (a hostile peer's, a loss pattern's)
 * overwrites the oldest entry, never grows the memory, and makes at most that many of the 16,384 ports suspect.
 * Expiry is judged against {@link #clock}, the latest time the scheduler was told (no clock read when a port is
 * drawn). Allocation-free after construction.
 */
final class PortMemory
{
    static final long NONE = Long.MIN_VALUE;
    private static final int EMPTY = -1;
    private static final int MIN_ENTRIES = 8;

    private final int[] suspectKeys;
    private final long[] suspectSince;
    private final long[] suspectUntil;
    private final int[] healthyKeys;
    private final long[] provenAt;
    private int nextSuspect;
    private int nextHealthy;
    /** The latest ACK or timeout the scheduler took: suspicions expire against it. */
    private long clock;

    PortMemory(final int paths)
    {
        final int suspects = Math.max(MIN_ENTRIES, paths);
        // twice as many healthy ports as paths: while a plane is wary its live paths hold up to one each
        final int healthy = 2 * suspects;
        suspectKeys = new int[suspects];
        suspectSince = new long[suspects];
        suspectUntil = new long[suspects];
        healthyKeys = new int[healthy];
        provenAt = new long[healthy];
        clear();
    }

    /** @return bytes of a memory for {@code paths} paths (S10.1): five arrays and the object. */
    static long bytes(final int paths)
    {
        final int suspects = Math.max(MIN_ENTRIES, paths);
        return 40 + 5 * 16 + 20L * suspects + 2 * 12L * suspects;
    }

    /** Nothing remembered: a connection's first traffic, or traffic again after it was idle. */
    void clear()
    {
        java.util.Arrays.fill(suspectKeys, EMPTY);
        java.util.Arrays.fill(healthyKeys, EMPTY);
        nextSuspect = 0;
        nextHealthy = 0;
        clock = NONE;
    }

    /** The scheduler took an ACK or a timeout at {@code now}. */
    void advance(final long now)
    {
        clock = Math.max(clock, now);
    }

    long clock()
    {
        return clock;
    }

    /**
     * A path on {@code port} of {@code plane} timed out at {@link #clock}; its oldest packet outstanding was sent at
     * {@code since}. A port already suspect keeps its first evidence and is suspected for longer.
     */
    void suspect(final int plane, final int port, final long since, final long until)
    {
        final int key = key(plane, port);
        int at = indexOf(suspectKeys, key);
        if (at < 0 || suspectUntil[at] <= clock)
        {
            if (at < 0)
            {
                at = nextSuspect;
                nextSuspect = at + 1 == suspectKeys.length ? 0 : at + 1;
            }
            suspectKeys[at] = key;
            suspectSince[at] = since;
        }
        else
        {
            suspectSince[at] = Math.min(suspectSince[at], since);
        }
        suspectUntil[at] = until;
    }

    /** An ACK of a path that timed out on the port came: the port answers, the timeout was a loss. */
    void answered(final int plane, final int port)
    {
        final int at = indexOf(suspectKeys, key(plane, port));
        if (at >= 0)
        {
            suspectKeys[at] = EMPTY;
        }
    }

    /** @return whether the port of the plane is suspect now. */
    boolean isSuspect(final int plane, final int port)
    {
        final int at = indexOf(suspectKeys, key(plane, port));
        return at >= 0 && suspectUntil[at] > clock;
    }

    /**
     * @return the earliest send time of a packet lost on a port of the plane still suspect (a link may have died
     * since), or {@link #NONE} when the plane has no suspect port: new ports are then drawn at random.
     */
    long waryFrom(final int plane)
    {
        long from = NONE;
        for (int i = 0; i < suspectKeys.length; i++)
        {
            final int key = suspectKeys[i];
            if (key != EMPTY && key >>> 16 == plane && suspectUntil[i] > clock &&
                (from == NONE || suspectSince[i] < from))
            {
                from = suspectSince[i];
            }
        }
        return from;
    }

    /** The port of the plane carried a run acknowledged in full, its newest packet sent at {@code sentAt}. */
    void healthy(final int plane, final int port, final long sentAt)
    {
        final int key = key(plane, port);
        int at = indexOf(healthyKeys, key);
        if (at < 0)
        {
            at = nextHealthy;
            nextHealthy = at + 1 == healthyKeys.length ? 0 : at + 1;
            healthyKeys[at] = key;
            provenAt[at] = sentAt;
        }
        else
        {
            provenAt[at] = Math.max(provenAt[at], sentAt);
        }
    }

    /**
     * @return while the plane has a suspect port, one proven healthy since the earliest packet lost on a suspect port
     * was sent (a link may have died since) and not suspect itself, at random among those no path holds, else among
     * those a path holds (a proven route shared beats a new one that may be dead); -1 when the plane has no suspect
     * port (new ports are drawn at random, S7.7's spread) or no port proved healthy since.
     */
    int drawHealthy(final int plane, final SplittableRandom random, final PathScheduler scheduler)
    {
        final long after = waryFrom(plane);
        if (after == NONE)
        {
            return -1;
        }
        int free = 0;
        int held = 0;
        for (int i = 0; i < healthyKeys.length; i++)
        {
            final int port = healthyPort(i, plane, after);
            if (port >= 0)
            {
                if (scheduler.inUse(port))
                {
                    held++;
                }
                else
                {
                    free++;
                }
            }
        }
        if (free + held == 0)
        {
            return -1;
        }
        final boolean unused = free > 0;
        int k = random.nextInt(unused ? free : held);
        for (int i = 0; i < healthyKeys.length; i++)
        {
            final int port = healthyPort(i, plane, after);
            if (port >= 0 && scheduler.inUse(port) != unused && k-- == 0)
            {
                return port;
            }
        }
        return -1;
    }

    // the port of healthy entry i if it is of the plane, proven by a packet sent after `after` and not suspect now
    private int healthyPort(final int i, final int plane, final long after)
    {
        final int key = healthyKeys[i];
        if (key == EMPTY || key >>> 16 != plane || provenAt[i] <= after)
        {
            return -1;
        }
        final int port = key & 0xFFFF;
        return isSuspect(plane, port) ? -1 : port;
    }

    private static int key(final int plane, final int port)
    {
        return plane << 16 | (port & 0xFFFF);
    }

    private static int indexOf(final int[] keys, final int key)
    {
        for (int i = 0; i < keys.length; i++)
        {
            if (keys[i] == key)
            {
                return i;
            }
        }
        return -1;
    }
}
