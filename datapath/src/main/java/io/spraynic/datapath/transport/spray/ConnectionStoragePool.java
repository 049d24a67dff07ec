package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * The {@link ConnectionStorage} sets one engine's connections borrow while they have traffic: one bucket per
 * connection shape, pre-filled with {@link SprayConfig#storagePrewarm} sets when the first connection of that shape
 * opens (control path). Single-threaded, the engine's thread.
 * <p>
 * When a bucket is empty it grows by one set, allocated there and then, as long as fewer than
 * {@link SprayConfig#storageLimit} sets exist in the whole pool, every shape together (a peer chooses its connection's
 * paths, and with them the shape: a limit per shape let 8 peers' shapes hold 8 times the memory the operator allowed,
 * and so do prewarmed sets, which count too): the working set is reached once, at warm-up, and from
 * then on taking and giving back allocate nothing. At the limit the connection waits: a post is answered
 * {@code QUEUE_FULL}, a data packet is dropped unseen as {@code no_resources} (the sender recovers it as a loss),
 * and {@link #exhausted()} counts it. Nothing throws.
 */
final class ConnectionStoragePool
{
    private final int prewarm;
    private final int limit;
    private final Map<ConnectionStorage.Shape, Bucket> buckets = new HashMap<>();
    /** The buckets in the order made: walked without an iterator when the worker publishes the figures. */
    private Bucket[] bucketList = new Bucket[0];

    ConnectionStoragePool(final int prewarm, final int limit)
    {
        this.prewarm = prewarm;
        this.limit = limit;
    }

    /** Sets of every shape that exist now, lent or not: what {@link #limit} bounds. */
    private int createdTotal;

    /** @return the bucket of a shape, made (and pre-filled) on first use. Control path. */
    Bucket bucket(final ConnectionStorage.Shape shape)
    {
        Bucket bucket = buckets.get(shape);
        if (null == bucket)
        {
            bucket = new Bucket(this, shape, prewarm);
            buckets.put(shape, bucket);
            bucketList = Arrays.copyOf(bucketList, bucketList.length + 1);
            bucketList[bucketList.length - 1] = bucket;
        }
        return bucket;
    }

    /**
     * Drops one set another shape's bucket holds unlent (the garbage collector takes it), so that a shape at the
     * engine-wide limit can make one: idle sets of shapes no connection uses now must not keep the others waiting
     * (prewarmed sets of 16 shapes filled a limit of 64 for good). Warm-up path: an allocation follows.
     *
     * @return whether one was dropped.
     */
    private boolean dropIdleSet()
    {
        for (final Bucket bucket : bucketList)
        {
            if (bucket.freeCount > 0)
            {
                bucket.free[--bucket.freeCount] = null;
                bucket.created--;
                createdTotal--;
                return true;
            }
        }
        return false;
    }

    /** @return sets of every shape made so far. */
    int created()
    {
        return (int)sum(bucket -> bucket.created);
    }

    /** @return sets of every shape in the pool, not lent. */
    int available()
    {
        return (int)sum(bucket -> bucket.freeCount);
    }

    /** @return sets of every shape lent now. */
    int lent()
    {
        return (int)sum(bucket -> bucket.created - bucket.freeCount);
    }

    /** @return the most sets of each shape lent at once, added over the shapes. */
    int lentPeak()
    {
        return (int)sum(bucket -> bucket.lentPeak);
    }

    /** @return takes refused at the limit. */
    /** @return sets lent so far (each an idle connection's first traffic, an idle -> busy edge). */
    long lends()
    {
        return sum(bucket -> bucket.lends);
    }

    long exhausted()
    {
        return sum(bucket -> bucket.exhausted);
    }

    /** @return bytes of every set made so far, lent or not (by {@link ConnectionStorage#bytes}). */
    long bytes()
    {
        return sum(bucket -> (long)bucket.created * bucket.setBytes);
    }

    // statistics (control path, tests): one walk over the buckets for each figure
    private long sum(final ToLongFunction<Bucket> figure)
    {
        long total = 0;
        for (final Bucket bucket : bucketList)
        {
            total += figure.applyAsLong(bucket);
        }
        return total;
    }

    /** The sets of one shape. */
    static final class Bucket
    {
        private final ConnectionStoragePool pool;
        private final ConnectionStorage.Shape shape;
        private ConnectionStorage[] free;
        private int freeCount;
        private int created;
        private long exhausted;
        private long lends;
        private int lentPeak;
        private long setBytes; // of one set: every set of a shape has the same tables
        /**
         * Where this shape's idle connections count per-path events (a keepalive's ACK, the peer's answer): written,
         * never read; those events stay in each connection's totals. An idle connection's per-path counters are
         * {@link #idlePathView}.
         */
        final TransportCounters idlePathSink = SprayCounters.createForPath();
        /** What an idle connection reports as a path's counters: zeros, nothing writes to it. */
        final TransportCounters idlePathView = SprayCounters.createForPath();
        /**
         * What the paths of this shape's idle connections name as their send window (issue 13): empty and without
         * records; only {@link PathScheduler#parkWindows} and the ACK check of a parked path read it, nothing sends.
         */
        final PathSendWindow idleWindow = new PathSendWindow(0, null);
        /** What idle connections of this shape name as their paths' send windows: every entry {@link #idleWindow}. */
        final PathSendWindow[] idleWindows;
        /** The timeouts set idle connections of this shape name: zeros, read by nothing while they are idle. */
        final LossDetector.Timeouts idleTimeouts;
        /** The probe, RESYNC and answered times idle connections of this shape name: read by nothing while idle. */
        final PathLentTimes idleTimes;

        Bucket(final ConnectionStoragePool pool, final ConnectionStorage.Shape shape, final int prewarm)
        {
            this.pool = pool;
            this.shape = shape;
            idleTimeouts = new LossDetector.Timeouts(shape.paths());
            idleTimes = new PathLentTimes(shape.paths());
            idleWindows = PathScheduler.idleWindows(idleWindow, shape.paths());
            final int initial = Math.max(0, Math.min(prewarm, pool.limit - pool.createdTotal));
            free = new ConnectionStorage[Math.max(1, initial)];
            for (int i = 0; i < initial; i++)
            {
                free[freeCount++] = make();
            }
        }

        // the one place a set is made: counted, and its size taken once
        private ConnectionStorage make()
        {
            final ConnectionStorage storage = new ConnectionStorage(shape);
            created++;
            pool.createdTotal++;
            if (0 == setBytes)
            {
                setBytes = storage.bytes();
            }
            return storage;
        }

        /** @return a cleared set, or null at the limit (counted). */
        ConnectionStorage take()
        {
            if (freeCount > 0)
            {
                final ConnectionStorage storage = free[--freeCount];
                free[freeCount] = null;
                lends++;
                lentPeak = Math.max(lentPeak, created - freeCount);
                return storage;
            }
            if (pool.createdTotal >= pool.limit && !pool.dropIdleSet())
            {
                exhausted++;
                return null;
            }
            // warm-up: the working set grows by one; the free list is sized for every set made, so giving back
            // never allocates
            if (free.length < created + 1)
            {
                free = Arrays.copyOf(free, Math.min(pool.limit, Math.max(created + 1, 2 * free.length)));
            }
            final ConnectionStorage made = make();
            lends++;
            lentPeak = Math.max(lentPeak, created - freeCount);
            return made;
        }

        /** Takes back a set its connection no longer needs, and clears it. */
        void give(final ConnectionStorage storage)
        {
            storage.clear();
            free[freeCount++] = storage;
        }

        /** A lent set its closed connection keeps (not empty): it is no longer the pool's. */
        void discard()
        {
            created--;
            pool.createdTotal--;
        }

        int available()
        {
            return freeCount;
        }

        int created()
        {
            return created;
        }
    }
}
