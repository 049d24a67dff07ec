package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.MemoryRegion;

/**
 * The send slots as parallel arrays, verbatim as before issue 13 packed them into one record per slot (only the
 * class name changed): the reference {@link SendSlotsDifferentialTest} compares {@link SendSlots} with.
 * <p>
 * Before: the outbound message table of one spray connection (docs/PROTOCOL.md S4, S9.3, S10.1): a fixed number of
 * slots, one per send work request (or READ response) not yet finished, as parallel primitive arrays indexed by
 * slot; the free list; the send queue of slots with packets still to make; each stream's list of slots in MSN
 * order (completions leave in that order, S4.8); and the map from (stream, MSN) to slot.
 * <p>
 * A packet in flight is named by a handle, (slot, generation, packet index) packed in a {@code long}: the
 * generation changes whenever a slot is freed or its message restarts (an RNR retry), so that the ACK of a
 * packet of an earlier use of the slot is recognised and ignored.
 * <p>
 * The arrays are package-private for the connection's hot path to read and write without calls; the free
 * list, queues and counts are changed only through methods. Allocation-free after construction.
 */
final class SendSlotsReference
{
    /** No slot, no next slot in a stream, no map entry. */
    static final int MISSING = -1;
    /** {@link #status}: not finished yet. */
    static final int PENDING = -1;
    /** {@link #kind} of a free slot. */
    static final byte FREE = -1;

    final int capacity;
    private final int mtu;

    // ---- per slot: the message
    byte[] kind;
    long[] wrId;
    int[] stream;
    int[] msn;
    int[] rsn;
    MemoryRegion[] region;
    long[] localAddress;
    int[] length;
    long[] remoteAddress;
    int[] rkey;
    int[] immediate;
    long[] messageTag; // S12.4: in every packet of the message
    long[] responseTag; // S12.4: what the peer's READ response to a READ carries
    boolean[] signaled;
    boolean[] solicited;

    // ---- per slot: its progress
    int[] packets;
    int[] nextPacket;
    int[] acked;
    int[] outstanding;
    int[] generation;
    int[] status;
    boolean[] delivered;
    boolean[] inSendQueue;
    int[] nextInStream;
    int[] readExpected;
    int[] readReceived;
    boolean[] rnrWaiting;
    int[] rnrCount;
    long[] rnrRetryAt;
    boolean[] held; // S9.3: all acknowledged, completion held until the refusals are known
    long[] queryAt;
    long[] heldAt;
    boolean[] started; // S10.2: a packet of it was sent: it counts against the peer's window (and READ limit)

    // ---- per stream
    final int[] nextMsn;
    final int[] nextRsn;
    final int[] head;
    final int[] tail;
    final boolean[] errored;

    private int[] freeSlots;
    private int freeCount;
    private int[] sendQueue;
    private int sendQueueHead;
    private int sendQueueSize;
    private int heldCount;
    private int rnrWaitingCount;
    private int messagesStarted;
    private int readsStarted;
    private int responsesUnsent;
    private MessageIndex byMsn;
    private Storage storage;

    /** A table with storage of its own, attached for good. */
    SendSlotsReference(final int capacity, final int streams, final int mtu)
    {
        this(capacity, streams, mtu, new Storage(capacity));
    }

    /**
     * @param storage the per-slot arrays, or null: the table starts detached, empty, and takes its storage from a
     *                pool when its connection gets traffic ({@link #attach}).
     */
    SendSlotsReference(final int capacity, final int streams, final int mtu, final Storage storage)
    {
        this.capacity = capacity;
        this.mtu = mtu;
        freeCount = capacity;
        if (null != storage)
        {
            attach(storage);
        }
        nextMsn = new int[streams];
        nextRsn = new int[streams];
        head = new int[streams];
        tail = new int[streams];
        errored = new boolean[streams];
        java.util.Arrays.fill(head, MISSING);
        java.util.Arrays.fill(tail, MISSING);
    }

    /**
     * Takes the per-slot arrays of a pooled {@link Storage} (cleared: every slot free); the table must be empty and
     * detached. Control path of the connection (its first traffic after being idle).
     */
    void attach(final Storage storage)
    {
        if (null != this.storage || freeCount != capacity || storage.capacity != capacity)
        {
            throw new IllegalStateException("attach needs an empty, detached table and storage of its capacity");
        }
        this.storage = storage;
        kind = storage.kind;
        wrId = storage.wrId;
        stream = storage.stream;
        msn = storage.msn;
        rsn = storage.rsn;
        region = storage.region;
        localAddress = storage.localAddress;
        length = storage.length;
        remoteAddress = storage.remoteAddress;
        rkey = storage.rkey;
        immediate = storage.immediate;
        messageTag = storage.messageTag;
        responseTag = storage.responseTag;
        signaled = storage.signaled;
        solicited = storage.solicited;
        packets = storage.packets;
        nextPacket = storage.nextPacket;
        acked = storage.acked;
        outstanding = storage.outstanding;
        generation = storage.generation;
        status = storage.status;
        delivered = storage.delivered;
        inSendQueue = storage.inSendQueue;
        nextInStream = storage.nextInStream;
        readExpected = storage.readExpected;
        readReceived = storage.readReceived;
        rnrWaiting = storage.rnrWaiting;
        rnrCount = storage.rnrCount;
        rnrRetryAt = storage.rnrRetryAt;
        held = storage.held;
        queryAt = storage.queryAt;
        heldAt = storage.heldAt;
        started = storage.started;
        freeSlots = storage.freeSlots;
        sendQueue = storage.sendQueue;
        byMsn = storage.byMsn;
        sendQueueHead = 0;
        sendQueueSize = 0;
    }

    /** @return whether the table holds its arrays (else it is empty and may be read only through its counts). */
    boolean isAttached()
    {
        return null != storage;
    }

    /** @return whether {@link #detach} may run: no slot in use, nothing queued, held or waiting. */
    boolean isDetachable()
    {
        return null != storage && freeCount == capacity && sendQueueSize == 0 && heldCount == 0 &&
            rnrWaitingCount == 0 && byMsn.isEmpty();
    }

    /** Gives the arrays back (the table is {@link #isDetachable detachable}); the caller clears and pools them. */
    Storage detach()
    {
        final Storage detached = storage;
        storage = null;
        kind = null;
        wrId = null;
        stream = null;
        msn = null;
        rsn = null;
        region = null;
        localAddress = null;
        length = null;
        remoteAddress = null;
        rkey = null;
        immediate = null;
        messageTag = null;
        responseTag = null;
        signaled = null;
        solicited = null;
        packets = null;
        nextPacket = null;
        acked = null;
        outstanding = null;
        generation = null;
        status = null;
        delivered = null;
        inSendQueue = null;
        nextInStream = null;
        readExpected = null;
        readReceived = null;
        rnrWaiting = null;
        rnrCount = null;
        rnrRetryAt = null;
        held = null;
        queryAt = null;
        heldAt = null;
        started = null;
        freeSlots = null;
        sendQueue = null;
        byMsn = null;
        return detached;
    }

    /** The per-slot arrays of a table of one capacity, drawn from and returned to a pool; see {@link #attach}. */
    static final class Storage
    {
        final int capacity;
        final byte[] kind;
        final long[] wrId;
        final int[] stream;
        final int[] msn;
        final int[] rsn;
        final MemoryRegion[] region;
        final long[] localAddress;
        final int[] length;
        final long[] remoteAddress;
        final int[] rkey;
        final int[] immediate;
        final long[] messageTag;
        final long[] responseTag;
        final boolean[] signaled;
        final boolean[] solicited;
        final int[] packets;
        final int[] nextPacket;
        final int[] acked;
        final int[] outstanding;
        final int[] generation;
        final int[] status;
        final boolean[] delivered;
        final boolean[] inSendQueue;
        final int[] nextInStream;
        final int[] readExpected;
        final int[] readReceived;
        final boolean[] rnrWaiting;
        final int[] rnrCount;
        final long[] rnrRetryAt;
        final boolean[] held;
        final long[] queryAt;
        final long[] heldAt;
        final boolean[] started;
        final int[] freeSlots;
        final int[] sendQueue;
        final MessageIndex byMsn;

        Storage(final int capacity)
        {
            this.capacity = capacity;
            kind = new byte[capacity];
            wrId = new long[capacity];
            stream = new int[capacity];
            msn = new int[capacity];
            rsn = new int[capacity];
            region = new MemoryRegion[capacity];
            localAddress = new long[capacity];
            length = new int[capacity];
            remoteAddress = new long[capacity];
            rkey = new int[capacity];
            immediate = new int[capacity];
            messageTag = new long[capacity];
            responseTag = new long[capacity];
            signaled = new boolean[capacity];
            solicited = new boolean[capacity];
            packets = new int[capacity];
            nextPacket = new int[capacity];
            acked = new int[capacity];
            outstanding = new int[capacity];
            generation = new int[capacity];
            status = new int[capacity];
            delivered = new boolean[capacity];
            inSendQueue = new boolean[capacity];
            nextInStream = new int[capacity];
            readExpected = new int[capacity];
            readReceived = new int[capacity];
            rnrWaiting = new boolean[capacity];
            rnrCount = new int[capacity];
            rnrRetryAt = new long[capacity];
            held = new boolean[capacity];
            queryAt = new long[capacity];
            heldAt = new long[capacity];
            started = new boolean[capacity];
            freeSlots = new int[capacity];
            sendQueue = new int[capacity];
            byMsn = new MessageIndex(capacity, MISSING);
            clear();
        }

        /** Back to the state of a new table: every slot free, in the order a new table hands them out. */
        void clear()
        {
            java.util.Arrays.fill(kind, (byte)0);
            java.util.Arrays.fill(wrId, 0L);
            java.util.Arrays.fill(stream, 0);
            java.util.Arrays.fill(msn, 0);
            java.util.Arrays.fill(rsn, 0);
            java.util.Arrays.fill(region, null);
            java.util.Arrays.fill(localAddress, 0L);
            java.util.Arrays.fill(length, 0);
            java.util.Arrays.fill(remoteAddress, 0L);
            java.util.Arrays.fill(rkey, 0);
            java.util.Arrays.fill(immediate, 0);
            java.util.Arrays.fill(messageTag, 0L);
            java.util.Arrays.fill(responseTag, 0L);
            java.util.Arrays.fill(signaled, false);
            java.util.Arrays.fill(solicited, false);
            java.util.Arrays.fill(packets, 0);
            java.util.Arrays.fill(nextPacket, 0);
            java.util.Arrays.fill(acked, 0);
            java.util.Arrays.fill(outstanding, 0);
            java.util.Arrays.fill(generation, 0);
            java.util.Arrays.fill(status, 0);
            java.util.Arrays.fill(delivered, false);
            java.util.Arrays.fill(inSendQueue, false);
            java.util.Arrays.fill(nextInStream, 0);
            java.util.Arrays.fill(readExpected, 0);
            java.util.Arrays.fill(readReceived, 0);
            java.util.Arrays.fill(rnrWaiting, false);
            java.util.Arrays.fill(rnrCount, 0);
            java.util.Arrays.fill(rnrRetryAt, 0L);
            java.util.Arrays.fill(held, false);
            java.util.Arrays.fill(queryAt, 0L);
            java.util.Arrays.fill(heldAt, 0L);
            java.util.Arrays.fill(started, false);
            ConnectionStorage.freeListInOrder(freeSlots);
            java.util.Arrays.fill(sendQueue, 0);
            byMsn.clear();
        }

        /** @return bytes of the arrays and the map (S10.1). */
        long bytes()
        {
            return SendSlotsReference.slotBytes() * capacity + MessageIndex.bytesFor(capacity);
        }
    }

    /** @return the key of a message in the connection's (stream, MSN) maps. */
    static long key(final int streamId, final int msn)
    {
        return ((long)streamId << 32) | (msn & 0xFFFF_FFFFL);
    }

    /** @return packets of a message of {@code length} bytes (a message of 0 bytes takes one). */
    static int packetsFor(final int length, final int mtu)
    {
        if (length == 0)
        {
            return 1;
        }
        if (length > 0 && mtu > 0 && (mtu & (mtu - 1)) == 0)
        {
            // issue 13: the MTUs of S11 are powers of two: a shift, not a 64-bit division per message
            return (int)((length + (long)mtu - 1) >>> Integer.numberOfTrailingZeros(mtu));
        }
        return (int)((length + (long)mtu - 1) / mtu);
    }

    /** @return the handle of a packet of the message in {@code slot}, in the slot's current generation. */
    long handle(final int slot, final int packet)
    {
        return ((long)slot << 48) | ((long)(generation[slot] & 0xFFFF) << 32) | (packet & 0xFFFF_FFFFL);
    }

    static int slotOf(final long handle)
    {
        return (int)(handle >>> 48);
    }

    static int generationOf(final long handle)
    {
        return (int)(handle >>> 32) & 0xFFFF;
    }

    static int packetOf(final long handle)
    {
        return (int)handle;
    }

    /** @return whether {@code handle} names a packet of the slot's current use. */
    boolean isCurrent(final long handle)
    {
        return generationOf(handle) == (generation[slotOf(handle)] & 0xFFFF);
    }

    /** @return payload bytes of a packet of the message in {@code slot} (a READ request carries none). */
    int payloadOf(final int slot, final int packet)
    {
        if (kind[slot] == MessageKinds.READ)
        {
            return 0;
        }
        return Math.min(mtu, length[slot] - packet * mtu);
    }

    boolean hasFree()
    {
        return freeCount > 0;
    }

    /** @return slots in use. */
    int inUse()
    {
        return capacity - freeCount;
    }

    /**
     * Takes a free slot for a message and resets its progress; the caller checked {@link #hasFree} and fills in
     * the message.
     */
    int take()
    {
        final int slot = freeSlots[--freeCount];
        readReceived[slot] = 0;
        nextPacket[slot] = 0;
        acked[slot] = 0;
        outstanding[slot] = 0;
        status[slot] = PENDING;
        delivered[slot] = false;
        rnrWaiting[slot] = false;
        rnrCount[slot] = 0;
        held[slot] = false;
        started[slot] = false;
        nextInStream[slot] = MISSING;
        return slot;
    }

    /** Appends a slot to its stream's completion list and to the (stream, MSN) map. */
    void appendToStream(final int slot)
    {
        final int streamId = stream[slot];
        if (tail[streamId] == MISSING)
        {
            head[streamId] = slot;
        }
        else
        {
            nextInStream[tail[streamId]] = slot;
        }
        tail[streamId] = slot;
        byMsn.put(key(streamId, msn[slot]), slot);
    }

    /** @return the slot of a message this end sent and has not completed, or {@link #MISSING}. */
    int slotFor(final long key)
    {
        return null == byMsn ? MISSING : byMsn.get(key); // detached: no message outstanding
    }

    /** @return bytes of the table and its (stream, MSN) map (S10.1). */
    long stateBytes()
    {
        return slotBytes() * capacity + MessageIndex.bytesFor(capacity); // borrowed or not
    }

    private static long slotBytes()
    {
        final long slot = 1 + 8 + 4 + 4 + 8 + 8 + 4 + 8 + 4 + 4 + 1 + 1 + 4 * 6 + 1 + 1 + 4 + 4 + 4 + 1 + 4 + 8 +
            4 + 4 +
            1 + 8 + 8 + 4 + 1; // held, queryAt, heldAt (S9.3), rsn (S4.5), started (S10.2)
        return slot;
    }

    /** Forgets a completed message's (stream, MSN) entry. */
    void forget(final int slot)
    {
        byMsn.remove(key(stream[slot], msn[slot]));
    }

    /**
     * @return whether the slot can be freed: its message delivered and finished, no packet of it in flight or
     * queued.
     */
    boolean isFinished(final int slot)
    {
        return delivered[slot] && status[slot] != PENDING && outstanding[slot] == 0 && !inSendQueue[slot] &&
            kind[slot] != FREE;
    }

    /** Frees a slot: a later ACK of one of its packets names an old generation. */
    void free(final int slot)
    {
        if (started[slot])
        {
            started[slot] = false;
            messagesStarted--;
            readsStarted -= kind[slot] == MessageKinds.READ ? 1 : 0;
        }
        region[slot] = null;
        kind[slot] = FREE;
        generation[slot]++;
        freeSlots[freeCount++] = slot;
    }

    /** @return whether the slot is on the free list (control path: a linear scan). */
    boolean isFree(final int slot)
    {
        for (int i = 0; i < freeCount; i++)
        {
            if (freeSlots[i] == slot)
            {
                return true;
            }
        }
        return false;
    }

    // ---- S10.2: what counts against the peer's limits, and this end's READ responses in progress

    /** @return whether a message may start within the peer's {@code window} and READ limit {@code reads}. */
    boolean mayStart(final int slot, final int window, final int reads)
    {
        return started[slot] || (messagesStarted < window && (kind[slot] != MessageKinds.READ || readsStarted < reads));
    }

    /** Its first packet leaves: the message counts against the peer's limits until its slot is freed. */
    void start(final int slot)
    {
        if (!started[slot])
        {
            started[slot] = true;
            messagesStarted++;
            readsStarted += kind[slot] == MessageKinds.READ ? 1 : 0;
        }
    }

    /** @return messages started and not completed (S10.2). */
    int messagesStarted()
    {
        return messagesStarted;
    }

    /** @return READs started and not completed (S10.2). */
    int readsStarted()
    {
        return readsStarted;
    }

    /** A READ response was queued. */
    void responseQueued()
    {
        responsesUnsent++;
    }

    /** The last packet of a READ response left, or the response was refused (S9.3.2). */
    void responseSent()
    {
        responsesUnsent--;
    }

    /** @return READ responses with packets still to send: the READs this end serves now (S10.2). */
    int responsesUnsent()
    {
        return responsesUnsent;
    }

    // ---- the send queue: slots with packets not yet made, in posting order

    void enqueueSend(final int slot)
    {
        sendQueue[wrap(sendQueueHead + sendQueueSize)] = slot;
        sendQueueSize++;
        inSendQueue[slot] = true;
    }

    /** Puts a slot at the head of the send queue: a retry already counted against the peer's limits (S10.2). */
    void enqueueSendFirst(final int slot)
    {
        sendQueueHead = wrap(sendQueueHead - 1 + capacity);
        sendQueue[sendQueueHead] = slot;
        sendQueueSize++;
        inSendQueue[slot] = true;
    }

    int sendQueueSize()
    {
        return sendQueueSize;
    }

    /** @return the slot at the head of the send queue; the queue is not empty. */
    int sendQueueHead()
    {
        return sendQueue[sendQueueHead];
    }

    /** Removes the head of the send queue. */
    void dequeueSend()
    {
        inSendQueue[sendQueue[sendQueueHead]] = false;
        sendQueueHead = wrap(sendQueueHead + 1);
        sendQueueSize--;
    }

    // a position in the send queue's ring from one below twice its length: a subtraction where % was a division per
    // message and packet (issue 13)
    private int wrap(final int position)
    {
        return position >= capacity ? position - capacity : position;
    }

    // S8.3.1: whether more new data is queued than the start budget covers (whole packets, counted until the
    // answer is known): a start that fits in the budget needs no share, so it sends no probe and does not wait
    boolean queuedPacketsAbove(final int budgetPackets)
    {
        int queued = 0;
        for (int i = 0; i < sendQueueSize; i++)
        {
            final int slot = sendQueue[wrap(sendQueueHead + i)];
            queued += packets[slot] - nextPacket[slot];
            if (queued > budgetPackets)
            {
                return true;
            }
        }
        return false;
    }

    // ---- S9.3: completions held until the refusals are known; RNR waits

    /** @return true if the slot was not held and now is. */
    boolean hold(final int slot, final long now, final long queryInterval)
    {
        if (held[slot])
        {
            return false;
        }
        held[slot] = true;
        heldCount++;
        heldAt[slot] = now;
        queryAt[slot] = now + queryInterval;
        return true;
    }

    void unhold(final int slot)
    {
        if (held[slot])
        {
            held[slot] = false;
            heldCount--;
        }
    }

    int heldCount()
    {
        return heldCount;
    }

    void startRnrWait(final int slot, final long retryAt)
    {
        rnrWaiting[slot] = true;
        rnrWaitingCount++;
        rnrRetryAt[slot] = retryAt;
    }

    void stopRnrWait(final int slot)
    {
        if (rnrWaiting[slot])
        {
            rnrWaiting[slot] = false;
            rnrWaitingCount--;
        }
    }

    int rnrWaitingCount()
    {
        return rnrWaitingCount;
    }

    /**
     * @return the attempt of the message in {@code slot} that its packets belong to (S9.3-3): the RNR retries
     * started so far. An RNR NACK counts a retry at once ({@link #rnrCount}), but the packets of the refused
     * attempt still to go (its tail, its retransmissions) keep its number until the retry starts.
     */
    int attempt(final int slot)
    {
        return rnrWaiting[slot] ? rnrCount[slot] - 1 : rnrCount[slot];
    }

    /**
     * Everything in flight is forgotten (the connection flushes): no packet outstanding or queued, no wait, no
     * hold. The slots stay in use until their completions are delivered.
     */
    void clearInFlight()
    {
        for (int slot = 0; slot < capacity; slot++)
        {
            outstanding[slot] = 0;
            inSendQueue[slot] = false;
            rnrWaiting[slot] = false;
        }
        rnrWaitingCount = 0;
        responsesUnsent = 0;
        heldCount = 0;
        java.util.Arrays.fill(held, false);
        sendQueueSize = 0;
    }
}
