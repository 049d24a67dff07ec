package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;

import org.agrona.BitUtil;

/**
 * The tables a spray connection needs only while it has traffic (issue 13: connections that cost kilobytes): its
 * send slots, inbound records and posted receives, placement marks, retransmit and move queues, its paths' send
 * windows and its per-path counters. An idle connection holds none of them; its
 * {@link ConnectionStoragePool} lends one set when it gets traffic and takes it back, cleared, once everything is acknowledged and completed. What stays with
 * the connection is its protocol state: PSNs, MSNs, estimators, congestion windows, counter totals (benchmarks/RESULTS.md
 * gives the bytes of both).
 */
final class ConnectionStorage
{
    final Shape shape;
    final SendSlots.Storage slots;
    final InboundMessages.Storage inbound;
    final PlacementMarks.Storage marks;
    final RetransmitQueues.Storage resend;
    /** The paths' send windows with their records (all empty when lent and when given back). */
    final PathSendWindow[] windows;
    /** What the paths' timeouts left to judge (S6.8.1, S7.5), zeros when lent. */
    final LossDetector.Timeouts timeouts;
    /** The paths' probe, RESYNC and answered times (S6.8.1, S7.5), as new when lent. */
    final PathLentTimes times;
    /**
     * Each path's counters for the traffic period ({@link SprayCounters#PATH_SLOTS}): an idle connection holds none
     * (issue 13: 8 paths' sets were 1.7 KB of its 7.7 KB). The connection's totals count every event as well, so
     * nothing is lost when a set returns: it is zeroed, and its period's values stay in the totals.
     */
    final TransportCounters[] pathCounters;

    /** What sizes a set of tables: connections of one shape share a pool. */
    record Shape(int paths, int sendQueueDepth, int receiveQueueDepth, int maxInboundMessages, int placementChunks)
    {
        static Shape of(final SprayConnectionConfig c)
        {
            return new Shape(c.paths, c.sendQueueDepth, c.receiveQueueDepth, c.maxInboundMessages, c.placementChunks);
        }

        int retransmitCapacity()
        {
            return paths * PathSendWindow.CAPACITY;
        }
    }

    ConnectionStorage(final Shape shape)
    {
        this.shape = shape;
        slots = new SendSlots.Storage(shape.sendQueueDepth);
        inbound = new InboundMessages.Storage(shape.maxInboundMessages, shape.receiveQueueDepth);
        marks = new PlacementMarks.Storage(shape.placementChunks);
        resend = new RetransmitQueues.Storage(shape.retransmitCapacity());
        windows = new PathSendWindow[shape.paths];
        for (int path = 0; path < windows.length; path++)
        {
            windows[path] = new PathSendWindow(0); // restarted at the borrower's next PSN (PathScheduler.unparkWindows)
        }
        timeouts = new LossDetector.Timeouts(shape.paths);
        times = new PathLentTimes(shape.paths);
        pathCounters = new TransportCounters[shape.paths];
        for (int path = 0; path < pathCounters.length; path++)
        {
            pathCounters[path] = SprayCounters.createForPath();
        }
    }

    /**
     * Back to the state of new tables (a connection detaches them only when empty: this restores what their use
     * left behind, such as slot generations and free-list order, so a connection sees the same tables whoever held
     * them before). Runs when they return to the pool, off the per-packet path.
     */
    void clear()
    {
        slots.clear();
        inbound.clear();
        marks.clear();
        timeouts.clear();
        times.clear();
        for (final TransportCounters path : pathCounters)
        {
            path.reset();
        }
    }

    /** Fills a free list as a new table's: entry 0 is handed out first, from the top of the stack. */
    static void freeListInOrder(final int[] free)
    {
        for (int i = 0, n = free.length; i < n; i++)
        {
            free[i] = n - 1 - i;
        }
    }

    /** @return the capacity of a {@code Long2LongHashMap} made for {@code initialCapacity} entries (S10.1). */
    static int mapCapacity(final int initialCapacity)
    {
        return BitUtil.findNextPositivePowerOfTwo(Math.max(8, initialCapacity));
    }

    /** @return bytes of the tables of a set of this shape (S10.1): what a connection with traffic adds. */
    long bytes()
    {
        return slots.bytes() + inbound.bytes() + marks.bytes() + resend.bytes() +
            (long)windows.length * (PathSendWindow.BYTES + PathSendWindow.Storage.BYTES) +
            LossDetector.Timeouts.bytes(shape.paths) + PathLentTimes.bytes(shape.paths) + (long)pathCounters.length * SprayCounters.pathStateBytes();
    }
}
