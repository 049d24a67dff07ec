package io.spraynic.datapath.transport.spray;

/**
 * The CIDs an engine closed recently (docs/PROTOCOL.md S9.2): a CID is not given to a new connection until
 * {@code 2 x connectionTimeout} after its connection was forgotten, so that a late packet of the old connection
 * (a retransmission, a repeated CLOSE) can never be taken for one of the new connection's. Closes happen in
 * time order, so the entries form a FIFO and expire from its head. Control path: add and lookup scan and may
 * grow the arrays; nothing here runs per packet.
 */
final class ClosedCidQuarantine
{
    private final long holdNanos;
    private int[] cids = new int[16];
    private long[] closedAt = new long[16];
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
        expire(nowNanos);
        if (size == cids.length)
        {
            final int[] moreCids = new int[size * 2];
            final long[] moreAt = new long[size * 2];
            for (int i = 0; i < size; i++)
            {
                moreCids[i] = cids[(head + i) % cids.length];
                moreAt[i] = closedAt[(head + i) % cids.length];
            }
            cids = moreCids;
            closedAt = moreAt;
            head = 0;
        }
        final int tail = (head + size) % cids.length;
        cids[tail] = cid;
        closedAt[tail] = nowNanos;
        size++;
    }

    /**
     * @return nanoseconds until {@code cid} may be used again; 0 when it may be now.
     */
    long heldFor(final int cid, final long nowNanos)
    {
        expire(nowNanos);
        long latest = Long.MIN_VALUE;
        for (int i = 0; i < size; i++)
        {
            final int slot = (head + i) % cids.length;
            if (cids[slot] == cid)
            {
                latest = closedAt[slot];
            }
        }
        return latest == Long.MIN_VALUE ? 0 : holdNanos - (nowNanos - latest);
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
            head = (head + 1) % cids.length;
            size--;
        }
    }
}
