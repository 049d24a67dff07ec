package io.spraynic.datapath.transport.spray;

/**
 * The two queues of packets a spray connection sends again (docs/PROTOCOL.md S6.6, S7.4): retransmissions,
 * each on the path it was lost on with its PSN there, sent ahead of new data; and moves, packets taken off a
 * failed path (S7.4) or relocated from a path that timed out (S7.4.1), each sent again as new on whichever
 * live path the scheduler picks. Both are rings of packet handles sized for every path's whole send window,
 * so that neither can overflow. Allocation-free after construction.
 */
final class RetransmitQueues
{
    /** {@link #moveLostOn}: moved off a failed path, not lost on one. */
    static final int NOT_LOST = -1;

    private final int capacity;
    private int[] retransmitPath;
    private int[] retransmitPsn;
    private long[] retransmitHandle;
    private int retransmitHead;
    private int retransmitSize;
    private long[] moveHandle;
    private int[] moveLostOn;
    private int moveHead;
    private int moveSize;
    private Storage storage;

    /** Queues with rings of their own, attached for good. */
    RetransmitQueues(final int capacity)
    {
        this(capacity, new Storage(capacity));
    }

    /** @param storage the rings, or null: detached and empty until {@link #attach}. */
    RetransmitQueues(final int capacity, final Storage storage)
    {
        this.capacity = capacity;
        if (null != storage)
        {
            attach(storage);
        }
    }

    /** Takes the rings of a pooled {@link Storage}; both queues must be empty and none attached. */
    void attach(final Storage storage)
    {
        if (null != this.storage || retransmitSize != 0 || moveSize != 0 || storage.capacity != capacity)
        {
            throw new IllegalStateException("attach needs empty, detached queues and storage of their capacity");
        }
        this.storage = storage;
        retransmitPath = storage.retransmitPath;
        retransmitPsn = storage.retransmitPsn;
        retransmitHandle = storage.retransmitHandle;
        moveHandle = storage.moveHandle;
        moveLostOn = storage.moveLostOn;
        retransmitHead = 0;
        moveHead = 0;
    }

    /** @return whether the rings are held. */
    boolean isAttached()
    {
        return null != storage;
    }

    /** @return whether {@link #detach} may run: nothing queued. */
    boolean isDetachable()
    {
        return null != storage && retransmitSize == 0 && moveSize == 0;
    }

    /** Gives the rings back (the queues are {@link #isDetachable detachable}). */
    Storage detach()
    {
        final Storage detached = storage;
        storage = null;
        retransmitPath = null;
        retransmitPsn = null;
        retransmitHandle = null;
        moveHandle = null;
        moveLostOn = null;
        return detached;
    }

    /**
     * The rings of one capacity, drawn from and returned to a connection storage pool; nothing to clear: only
     * entries between a queue's head and its size are ever read.
     */
    static final class Storage
    {
        final int capacity;
        final int[] retransmitPath;
        final int[] retransmitPsn;
        final long[] retransmitHandle;
        final long[] moveHandle;
        final int[] moveLostOn;

        Storage(final int capacity)
        {
            this.capacity = capacity;
            retransmitPath = new int[capacity];
            retransmitPsn = new int[capacity];
            retransmitHandle = new long[capacity];
            moveHandle = new long[capacity];
            moveLostOn = new int[capacity];
        }

        /** @return bytes of the rings (S10.1). */
        long bytes()
        {
            return (long)capacity * (4 + 4 + 8 + 8 + 4);
        }
    }

    // ---- retransmissions: same path, same PSN

    void queueRetransmission(final int path, final int psn, final long handle)
    {
        final int at = (retransmitHead + retransmitSize) % capacity;
        retransmitPath[at] = path;
        retransmitPsn[at] = psn;
        retransmitHandle[at] = handle;
        retransmitSize++;
    }

    int retransmissions()
    {
        return retransmitSize;
    }

    /** @return the path of the oldest queued retransmission; the queue is not empty. */
    int retransmissionPath()
    {
        return retransmitPath[retransmitHead];
    }

    int retransmissionPsn()
    {
        return retransmitPsn[retransmitHead];
    }

    long retransmissionHandle()
    {
        return retransmitHandle[retransmitHead];
    }

    /** Removes the oldest queued retransmission. */
    void dropRetransmission()
    {
        retransmitHead = (retransmitHead + 1) % capacity;
        retransmitSize--;
    }

    // ---- moves: any live path, a new PSN

    /** @param lostOn the path the packet timed out on (S7.4.1), or {@link #NOT_LOST}. */
    void queueMove(final long handle, final int lostOn)
    {
        final int at = (moveHead + moveSize) % capacity;
        moveHandle[at] = handle;
        moveLostOn[at] = lostOn;
        moveSize++;
    }

    int moves()
    {
        return moveSize;
    }

    /** @return the handle of the oldest queued move; the queue is not empty. */
    long moveHandle()
    {
        return moveHandle[moveHead];
    }

    /** @return the path the oldest queued move was lost on, or {@link #NOT_LOST}. */
    int moveLostOn()
    {
        return moveLostOn[moveHead];
    }

    /** Removes the oldest queued move. */
    void dropMove()
    {
        moveHead = (moveHead + 1) % capacity;
        moveSize--;
    }

    /** Forgets everything queued (the connection flushes). */
    void clear()
    {
        retransmitSize = 0;
        moveSize = 0;
    }

    /** @return bytes of state (S10.1). */
    long stateBytes()
    {
        return (long)capacity * (4 + 4 + 8 + 8);
    }
}
