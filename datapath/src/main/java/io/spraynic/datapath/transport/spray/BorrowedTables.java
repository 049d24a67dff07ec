package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;

import java.util.Arrays;


/**
 * The {@link ConnectionStorage} one spray connection borrows from its engine's pool while it has traffic (issue 13):
 * taken by the first post or authentic data packet after being idle and attached to the connection's parts; given
 * back, detached and cleared, at a tick once every table is empty and has stayed so for the linger time. While it
 * holds none, the connection's timers and the ACKs it receives read no table: its paths' send windows, empty, are
 * parked ({@link PathScheduler#parkWindows}: each path keeps its next PSN, an ACK is checked against it), and a
 * lookup of a message finds none. Engine thread only.
 * <p>
 * The per-path counters come and go with the tables: the connection's parts count into the sets of
 * {@code pathCounters} (one array they all share), which hold the borrowed sets while there is traffic and the
 * bucket's write-only sink while idle. Readers ask {@link #pathCounters(int)} each time, never keep a set: a set
 * given back is zeroed and lent to another connection.
 */
final class BorrowedTables
{
    private final ConnectionStoragePool.Bucket bucket;
    // the parts the tables attach to, and the linger time, are read through the connection (issue 13: one reference
    // here, not eight; borrowing and giving back are the idle edges, off the per-packet path)
    private final SprayConnection connection;
    private final TransportCounters[] pathCounters;
    private PathCountersFold fold; // told each period's path counters before they go back, or null
    private ConnectionStorage storage;
    /** Since when every table was empty (-1: in use at the last tick). */
    private long idleSince = -1;

    /** @param connection its send slots, inbound messages, marks, retransmit queues, scheduler and loss detector made. */
    BorrowedTables(
        final ConnectionStoragePool.Bucket bucket,
        final SprayConnection connection,
        final TransportCounters[] pathCounters)
    {
        this.bucket = bucket;
        this.connection = connection;
        this.pathCounters = pathCounters;
        Arrays.fill(pathCounters, bucket.idlePathSink);
    }

    /** @return true when the tables are held (borrowed now if need be); false at the pool's limit (counted there). */
    boolean borrow()
    {
        if (null != storage)
        {
            return true;
        }
        final ConnectionStorage borrowed = bucket.take();
        if (null == borrowed)
        {
            return false;
        }
        connection.slots.attach(borrowed.slots);
        connection.inbound.attach(borrowed.inbound);
        connection.marks.attach(borrowed.marks);
        connection.resend.attach(borrowed.resend);
        connection.scheduler.unparkWindows(borrowed.windows, borrowed.times);
        connection.loss.attach(borrowed.timeouts);
        System.arraycopy(borrowed.pathCounters, 0, pathCounters, 0, pathCounters.length);
        storage = borrowed;
        idleSince = -1;
        return true;
    }

    boolean holds()
    {
        return null != storage;
    }

    /**
     * @return path {@code path}'s counters for the current traffic period (since the tables were borrowed), or
     * zeros while none are held; every event is in the connection's totals as well.
     */
    TransportCounters pathCounters(final int path)
    {
        return null != storage ? pathCounters[path] : bucket.idlePathView;
    }

    void foldPathCountersInto(final PathCountersFold fold)
    {
        this.fold = fold;
    }

    /** @return the pool bucket the tables come from (its idle objects are shared by its idle connections). */
    ConnectionStoragePool.Bucket bucket()
    {
        return bucket;
    }

    // nothing to send, resend, acknowledge, complete or place, no receive posted; no failed path (its resync probes
    // go through its send window)
    private boolean empty()
    {
        if (!connection.slots.isDetachable() || !connection.inbound.isDetachable() ||
            !connection.marks.isDetachable() || !connection.resend.isDetachable())
        {
            return false;
        }
        final PathScheduler scheduler = connection.scheduler;
        for (int path = 0; path < scheduler.sendWindows.length; path++)
        {
            if (!scheduler.sendWindows[path].isDetachable() || !scheduler.isActive(path))
            {
                return false;
            }
        }
        return true;
    }

    /** At a tick of an established connection: gives the tables back once empty for the linger time. */
    void giveBackWhenIdle(final long now)
    {
        if (null == storage)
        {
            return;
        }
        if (!empty())
        {
            idleSince = -1;
            return;
        }
        if (idleSince == -1)
        {
            idleSince = now;
        }
        if (now - idleSince >= connection.config.storageLingerNanos)
        {
            giveBack();
        }
    }

    /** The connection closed (its work flushed): the tables go back, or, if completions still hold slots, with it. */
    void onClosed()
    {
        if (null == storage)
        {
            return;
        }
        if (empty())
        {
            giveBack();
        }
        else
        {
            bucket.discard(); // completions the CQ could not take keep slots: the tables go with the connection
            storage = null;
        }
    }

    private void giveBack()
    {
        if (null != fold)
        {
            for (int path = 0; path < pathCounters.length; path++)
            {
                fold.fold(path, pathCounters[path]);
            }
        }
        connection.slots.detach();
        connection.inbound.detach();
        connection.marks.detach();
        connection.resend.detach();
        connection.scheduler.parkWindows(bucket.idleWindows, bucket.idleTimes);
        connection.loss.attach(bucket.idleTimeouts);
        Arrays.fill(pathCounters, bucket.idlePathSink);
        final ConnectionStorage returned = storage;
        storage = null;
        bucket.give(returned); // cleared there, off the per-packet path
    }
}
