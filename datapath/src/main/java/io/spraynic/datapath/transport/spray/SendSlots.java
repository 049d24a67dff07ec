package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.MemoryRegion;

/**
 * The outbound message table of one spray connection (docs/PROTOCOL.md S4, S9.3, S10.1): a fixed number of
 * slots, one per send work request (or READ response) not yet finished; the free list; the send queue of slots
 * with packets still to make; each stream's list of slots in MSN order (completions leave in that order, S4.8);
 * and the map from (stream, MSN) to slot.
 * <p>
 * Issue 13: a slot's fields lie in records at named offsets, laid out and read through the final accessors of
 * {@link SendSlotRecords}, which this class extends (split by concern: the layout there, the lifecycle here).
 * <p>
 * A packet in flight is named by a handle, (slot, generation, packet index) packed in a {@code long}: the
 * generation changes whenever a slot is freed or its message restarts (an RNR retry), so that the ACK of a
 * packet of an earlier use of the slot is recognised and ignored.
 * <p>
 * The accessors write a field and nothing else; the free list, queues and counts are changed only through the
 * methods that name them. Allocation-free after construction.
 */
final class SendSlots extends SendSlotRecords
{
    final int capacity;
    private final int mtu;

    // ---- per stream: one record of STREAM_INTS ints (an idle connection holds one small array, not five)
    private static final int NEXT_MSN_OFFSET = 0;
    private static final int NEXT_RSN_OFFSET = 1;
    private static final int HEAD_OFFSET = 2; // the stream's completion list: its first slot, or MISSING
    private static final int TAIL_OFFSET = 3;
    private static final int ERRORED_OFFSET = 4; // S9.4: 1 once a message of the stream failed
    private static final int STREAM_INTS = 5;
    private final int[] streamRecords;

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
    SendSlots(final int capacity, final int streams, final int mtu)
    {
        this(capacity, streams, mtu, new Storage(capacity));
    }

    /**
     * @param storage the slots' records, or null: the table starts detached, empty, and takes its storage from a
     *                pool when its connection gets traffic ({@link #attach}).
     */
    SendSlots(final int capacity, final int streams, final int mtu, final Storage storage)
    {
        this.capacity = capacity;
        this.mtu = mtu;
        freeCount = capacity;
        if (null != storage)
        {
            attach(storage);
        }
        streamRecords = new int[streams * STREAM_INTS];
        for (int streamId = 0; streamId < streams; streamId++)
        {
            streamRecords[streamId * STREAM_INTS + HEAD_OFFSET] = MISSING;
            streamRecords[streamId * STREAM_INTS + TAIL_OFFSET] = MISSING;
        }
    }

    /**
     * Takes the records of a pooled {@link Storage} (cleared: every slot free); the table must be empty and
     * detached. Control path of the connection (its first traffic after being idle).
     */
    void attach(final Storage storage)
    {
        if (null != this.storage || freeCount != capacity || storage.capacity != capacity)
        {
            throw new IllegalStateException("attach needs an empty, detached table and storage of its capacity");
        }
        this.storage = storage;
        records = storage.records;
        rareRecords = storage.rareRecords;
        regions = storage.regions;
        freeSlots = storage.freeSlots;
        sendQueue = storage.sendQueue;
        byMsn = storage.byMsn;
        sendQueueHead = 0;
        sendQueueSize = 0;
    }

    /** @return whether the table holds its records (else it is empty and may be read only through its counts). */
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

    /** Gives the records back (the table is {@link #isDetachable detachable}); the caller clears and pools them. */
    Storage detach()
    {
        final Storage detached = storage;
        storage = null;
        records = null;
        rareRecords = null;
        regions = null;
        freeSlots = null;
        sendQueue = null;
        byMsn = null;
        return detached;
    }

    /** The records of a table of one capacity, drawn from and returned to a pool; see {@link #attach}. */
    static final class Storage
    {
        final int capacity;
        final int[] records;
        final int[] rareRecords;
        final MemoryRegion[] regions;
        final int[] freeSlots;
        final int[] sendQueue;
        final MessageIndex byMsn;

        Storage(final int capacity)
        {
            this.capacity = capacity;
            records = new int[capacity * RECORD_INTS];
            rareRecords = new int[capacity * RARE_INTS];
            regions = new MemoryRegion[capacity];
            freeSlots = new int[capacity];
            sendQueue = new int[capacity];
            byMsn = new MessageIndex(capacity, MISSING);
            clear();
        }

        /** Back to the state of a new table: every slot free, in the order a new table hands them out. */
        void clear()
        {
            java.util.Arrays.fill(records, 0);
            java.util.Arrays.fill(rareRecords, 0);
            java.util.Arrays.fill(regions, null);
            ConnectionStorage.freeListInOrder(freeSlots);
            java.util.Arrays.fill(sendQueue, 0);
            byMsn.clear();
        }

        /** @return bytes of the records and the map (S10.1). */
        long bytes()
        {
            return SendSlots.slotBytes() * capacity + MessageIndex.bytesFor(capacity);
        }
    }

    // ---- a stream's fields

    /** @return streams of the connection. */
    int streams()
    {
        return streamRecords.length / STREAM_INTS;
    }

    /** @return the MSN the stream's next message takes. */
    int nextMsn(final int streamId)
    {
        return streamRecords[streamId * STREAM_INTS + NEXT_MSN_OFFSET];
    }

    void nextMsn(final int streamId, final int msn)
    {
        streamRecords[streamId * STREAM_INTS + NEXT_MSN_OFFSET] = msn;
    }

    /** @return the MSN for a new message of the stream, which the next one follows. */
    int takeMsn(final int streamId)
    {
        return streamRecords[streamId * STREAM_INTS + NEXT_MSN_OFFSET]++;
    }

    /** @return the stream's RSN for a new message that consumes a receive (S4.5). */
    int takeRsn(final int streamId)
    {
        return streamRecords[streamId * STREAM_INTS + NEXT_RSN_OFFSET]++;
    }

    /** @return the RSN the stream's next message that consumes a receive takes. */
    int nextRsn(final int streamId)
    {
        return streamRecords[streamId * STREAM_INTS + NEXT_RSN_OFFSET];
    }

    /** @return the first slot of the stream's completion list, or {@link #MISSING}. */
    int streamHead(final int streamId)
    {
        return streamRecords[streamId * STREAM_INTS + HEAD_OFFSET];
    }

    void streamHead(final int streamId, final int slot)
    {
        streamRecords[streamId * STREAM_INTS + HEAD_OFFSET] = slot;
    }

    /** @return the last slot of the stream's completion list, or {@link #MISSING}. */
    int streamTail(final int streamId)
    {
        return streamRecords[streamId * STREAM_INTS + TAIL_OFFSET];
    }

    void streamTail(final int streamId, final int slot)
    {
        streamRecords[streamId * STREAM_INTS + TAIL_OFFSET] = slot;
    }

    /** @return whether a message of the stream failed: later ones complete with WR_FLUSH_ERR (S9.4). */
    boolean errored(final int streamId)
    {
        return streamRecords[streamId * STREAM_INTS + ERRORED_OFFSET] != 0;
    }

    void errored(final int streamId, final boolean value)
    {
        streamRecords[streamId * STREAM_INTS + ERRORED_OFFSET] = value ? 1 : 0;
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
        return ((long)slot << 48) | ((long)(generation(slot) & 0xFFFF) << 32) | (packet & 0xFFFF_FFFFL);
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
        return generationOf(handle) == (generation(slotOf(handle)) & 0xFFFF);
    }

    /** @return payload bytes of a packet of the message in {@code slot} (a READ request carries none). */
    int payloadOf(final int slot, final int packet)
    {
        if (kind(slot) == MessageKinds.READ)
        {
            return 0;
        }
        return Math.min(mtu, length(slot) - packet * mtu);
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
        readReceived(slot, 0);
        nextPacket(slot, 0);
        acked(slot, 0);
        outstanding(slot, 0);
        status(slot, PENDING);
        final int kindFlags = at(slot) + KIND_FLAGS_OFFSET;
        records[kindFlags] &= ~(DELIVERED | RNR_WAITING | HELD | STARTED);
        rnrCount(slot, 0);
        nextInStream(slot, MISSING);
        return slot;
    }

    /** Appends a slot to its stream's completion list and to the (stream, MSN) map. */
    void appendToStream(final int slot)
    {
        final int streamId = stream(slot);
        final int last = streamTail(streamId);
        if (last == MISSING)
        {
            streamHead(streamId, slot);
        }
        else
        {
            nextInStream(last, slot);
        }
        streamTail(streamId, slot);
        byMsn.put(key(streamId, msn(slot)), slot);
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
        // the record, the rare record, the region's reference, the free list's and the send queue's entries
        return 4L * (RECORD_INTS + RARE_INTS) + 4 + 4 + 4;
    }

    /** Forgets a completed message's (stream, MSN) entry. */
    void forget(final int slot)
    {
        byMsn.remove(key(stream(slot), msn(slot)));
    }

    /**
     * @return whether the slot can be freed: its message delivered and finished, no packet of it in flight or
     * queued.
     */
    boolean isFinished(final int slot)
    {
        return delivered(slot) && status(slot) != PENDING && outstanding(slot) == 0 && !inSendQueue(slot) &&
            kind(slot) != FREE;
    }

    /** Frees a slot: a later ACK of one of its packets names an old generation. */
    void free(final int slot)
    {
        if (started(slot))
        {
            started(slot, false);
            messagesStarted--;
            readsStarted -= kind(slot) == MessageKinds.READ ? 1 : 0;
        }
        region(slot, null);
        kind(slot, FREE);
        generation(slot, generation(slot) + 1);
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
        return started(slot) ||
            (messagesStarted < window && (kind(slot) != MessageKinds.READ || readsStarted < reads));
    }

    /** Its first packet leaves: the message counts against the peer's limits until its slot is freed. */
    void start(final int slot)
    {
        if (!started(slot))
        {
            started(slot, true);
            messagesStarted++;
            readsStarted += kind(slot) == MessageKinds.READ ? 1 : 0;
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
        inSendQueue(slot, true);
    }

    /** Puts a slot at the head of the send queue: a retry already counted against the peer's limits (S10.2). */
    void enqueueSendFirst(final int slot)
    {
        sendQueueHead = wrap(sendQueueHead - 1 + capacity);
        sendQueue[sendQueueHead] = slot;
        sendQueueSize++;
        inSendQueue(slot, true);
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
        inSendQueue(sendQueue[sendQueueHead], false);
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
            queued += packets(slot) - nextPacket(slot);
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
        if (held(slot))
        {
            return false;
        }
        held(slot, true);
        heldCount++;
        heldAt(slot, now);
        queryAt(slot, now + queryInterval);
        return true;
    }

    void unhold(final int slot)
    {
        if (held(slot))
        {
            held(slot, false);
            heldCount--;
        }
    }

    int heldCount()
    {
        return heldCount;
    }

    void startRnrWait(final int slot, final long retryAt)
    {
        rnrWaiting(slot, true);
        rnrWaitingCount++;
        rnrRetryAt(slot, retryAt);
    }

    void stopRnrWait(final int slot)
    {
        if (rnrWaiting(slot))
        {
            rnrWaiting(slot, false);
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
        return rnrWaiting(slot) ? rnrCount(slot) - 1 : rnrCount(slot);
    }

    /**
     * Everything in flight is forgotten (the connection flushes): no packet outstanding or queued, no wait, no
     * hold. The slots stay in use until their completions are delivered.
     */
    void clearInFlight()
    {
        for (int slot = 0; slot < capacity; slot++)
        {
            outstanding(slot, 0);
            inSendQueue(slot, false);
            rnrWaiting(slot, false);
        }
        rnrWaitingCount = 0;
        responsesUnsent = 0;
        heldCount = 0;
        for (int slot = 0; slot < capacity; slot++)
        {
            held(slot, false);
        }
        sendQueueSize = 0;
    }
}
