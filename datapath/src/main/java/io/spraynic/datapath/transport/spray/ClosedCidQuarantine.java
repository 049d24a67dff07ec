package io.spraynic.datapath.transport.spray;

import org.agrona.collections.Int2IntHashMap;

/**
 * The CIDs an engine closed recently (docs/PROTOCOL.md S9.2): a CID is not given to a new connection until
 * {@code 2 x connectionTimeout} after its connection was forgotten, so that a late packet of the old connection
 * (a retransmission, a repeated CLOSE) can never be taken for one of the new connection's. Closes happen in
 * time order, so the entries form a FIFO and expire from its head. A CID's latest entry is found through a hash
 * map, not a scan: a CLOSE for a CID no connection has is looked up here before any tag is checked, so from any
 * sender, and after churn the FIFO holds every close of the last {@code 2 x connectionTimeout} (a scan of 10^5
 * entries per such packet let a few thousand packets a second take a worker). Adding may grow the arrays.
 * <p>
 * Each entry also keeps the closed connection's peer CID and keys (S12.3), so that a repeated CLOSE whose
 * CLOSE_ACK was lost is answered only when its tag verifies, with a tagged CLOSE_ACK.
 */
final class ClosedCidQuarantine
{
    private static final int KEYS = 4; // send 0, send 1, receive 0, receive 1

    private final long holdNanos;
    private int[] cids = new int[16];
    private long[] closedAt = new long[16];
    private int[] remoteCids = new int[16];
    private long[] keys = new long[16 * KEYS];
    private final Int2IntHashMap latestSlot = new Int2IntHashMap(-1); // CID -> its latest entry's slot
    private int head;
    private int size;

    /**
     * @param holdNanos how long a closed CID stays unusable.
     */
    ClosedCidQuarantine(final long holdNanos)
    {
        if (holdNanos < 0)
        {
            throw new IllegalArgumentException("holdNanos must not be negative: " + holdNanos);
        }
        this.holdNanos = holdNanos;
    }

    /**
     * @param cid      a CID whose connection was just forgotten.
     * @param nowNanos the time.
     */
    void add(final int cid, final long nowNanos)
    {
        add(cid, nowNanos, 0, 0, 0, 0, 0);
    }

    /**
     * @param cid       a CID whose connection was just forgotten.
     * @param nowNanos  the time.
     * @param remoteCid its peer's CID.
     */
    void add(final int cid, final long nowNanos, final int remoteCid, final long send0, final long send1,
        final long receive0, final long receive1)
    {
        expire(nowNanos);
        if (size == cids.length)
        {
            final int[] moreCids = new int[size * 2];
            final long[] moreAt = new long[size * 2];
            final int[] moreRemote = new int[size * 2];
            final long[] moreKeys = new long[size * 2 * KEYS];
            for (int i = 0; i < size; i++)
            {
                final int from = (head + i) % cids.length;
                moreCids[i] = cids[from];
                moreAt[i] = closedAt[from];
                moreRemote[i] = remoteCids[from];
                System.arraycopy(keys, from * KEYS, moreKeys, i * KEYS, KEYS);
            }
            cids = moreCids;
            closedAt = moreAt;
            remoteCids = moreRemote;
            keys = moreKeys;
            head = 0;
            latestSlot.clear();
            for (int i = 0; i < size; i++)
            {
                latestSlot.put(cids[i], i); // in time order: a CID's latest entry wins
            }
        }
        final int tail = (head + size) % cids.length;
        cids[tail] = cid;
        closedAt[tail] = nowNanos;
        remoteCids[tail] = remoteCid;
        keys[tail * KEYS] = send0;
        keys[tail * KEYS + 1] = send1;
        keys[tail * KEYS + 2] = receive0;
        keys[tail * KEYS + 3] = receive1;
        latestSlot.put(cid, tail);
        size++;
    }

    /**
     * @return nanoseconds until {@code cid} may be used again; 0 when it may be now.
     */
    long heldFor(final int cid, final long nowNanos)
    {
        final int slot = find(cid, nowNanos);
        return slot < 0 ? 0 : holdNanos - (nowNanos - closedAt[slot]);
    }

    /**
     * @return the entry of the latest connection closed with {@code cid} that is still held, or -1; valid until
     * the next {@link #add}.
     */
    int find(final int cid, final long nowNanos)
    {
        expire(nowNanos);
        return latestSlot.get(cid);
    }

    int remoteCid(final int entry)
    {
        return remoteCids[entry];
    }

    /** @param which 0, 1: the send key's halves; 2, 3: the receive key's. */
    long key(final int entry, final int which)
    {
        return keys[entry * KEYS + which];
    }

    /** @return CIDs held now (after the last expiry). */
    int size()
    {
        return size;
    }

    private void expire(final long nowNanos)
    {
        while (size > 0 && nowNanos - closedAt[head] >= holdNanos)
        {
            if (latestSlot.get(cids[head]) == head)
            {
                latestSlot.remove(cids[head]); // its latest entry: the CID is free (a later one keeps it held)
            }
            head = (head + 1) % cids.length;
            size--;
        }
    }
}
