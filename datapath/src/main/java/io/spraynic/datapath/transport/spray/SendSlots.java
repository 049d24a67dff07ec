package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.MemoryRegion;

/**
 * The outbound message table of one spray connection (docs/PROTOCOL.md S4, S9.3, S10.1): a fixed number of
 * slots, one per send work request (or READ response) not yet finished; the free list; the send queue of slots
 * with packets still to make; each stream's list of slots in MSN order (completions leave in that order, S4.8);
 * and the map from (stream, MSN) to slot.
 * <p>
 * Issue 13: a slot is one record of {@link #RECORD_INTS} ints (96 B) in one {@code int[]}, its fields at named
 * offsets (the flyweight layout of Agrona's buffers, on plain array elements so that each access is one bounds-checked
 * load or store the compiler inlines), read and written through the accessors below. What a message's
 * post, data frames, ACKs and completion use lies in that record, two cache lines at most, where the parallel
 * arrays this replaced spread one message over about 35 lines; what only READs, RNR waits and held completions use
 * lies in a second, smaller record ({@link #RARE_INTS} ints), and the message's memory region, an object, in an array
 * of its own.
 * <p>
 * A packet in flight is named by a handle, (slot, generation, packet index) packed in a {@code long}: the
 * generation changes whenever a slot is freed or its message restarts (an RNR retry), so that the ACK of a
 * packet of an earlier use of the slot is recognised and ignored.
 * <p>
 * The accessors write a field and nothing else; the free list, queues and counts are changed only through the
 * methods that name them. Allocation-free after construction.
 */
final class SendSlots
{
    /** No slot, no next slot in a stream, no map entry. */
    static final int MISSING = -1;
    /** {@link #status}: not finished yet. */
    static final int PENDING = -1;
    /** {@link #kind} of a free slot. */
    static final byte FREE = -1;

    // ---- the record of a slot: what the post writes, the data frame reads (first 64 B), the ACK and completion
    // (the rest). Offsets in ints from the record's start; a long takes two ints, its low half first.
    static final int LOCAL_ADDRESS_OFFSET = 0;
    static final int REMOTE_ADDRESS_OFFSET = 2;
    static final int MESSAGE_TAG_OFFSET = 4; // S12.4: in every packet of the message
    static final int STREAM_OFFSET = 6;
    static final int MSN_OFFSET = 7;
    static final int RSN_OFFSET = 8;
    static final int LENGTH_OFFSET = 9;
    static final int RKEY_OFFSET = 10;
    static final int IMMEDIATE_OFFSET = 11;
    static final int PACKETS_OFFSET = 12;
    static final int NEXT_PACKET_OFFSET = 13;
    static final int RNR_COUNT_OFFSET = 14;
    static final int KIND_FLAGS_OFFSET = 15; // the kind in the low byte, the flags above it
    static final int WR_ID_OFFSET = 16;
    static final int ACKED_OFFSET = 18;
    static final int OUTSTANDING_OFFSET = 19;
    static final int STATUS_OFFSET = 20;
    static final int NEXT_IN_STREAM_OFFSET = 21;
    static final int GENERATION_OFFSET = 22;
    /** Ints of a slot's record (23 used; 96 B). */
    static final int RECORD_INTS = 24;

    // ---- the bits of the record's flags, above the kind's byte
    private static final int SIGNALED = 1 << 8;
    private static final int SOLICITED = 1 << 9;
    private static final int DELIVERED = 1 << 10;
    private static final int IN_SEND_QUEUE = 1 << 11;
    private static final int RNR_WAITING = 1 << 12;
    private static final int HELD = 1 << 13; // S9.3: all acknowledged, completion held until the refusals are known
    private static final int STARTED = 1 << 14; // S10.2: a packet of it was sent: it counts against the peer's window
    private static final int KIND_MASK = 0xFF;

    // ---- the rare record of a slot: READs (S4.6), RNR waits (S9.3-3), held completions (S9.3); offsets in ints
    static final int RESPONSE_TAG_OFFSET = 0; // S12.4: what the peer's READ response to a READ carries
    static final int RNR_RETRY_AT_OFFSET = 2;
    static final int QUERY_AT_OFFSET = 4;
    static final int HELD_AT_OFFSET = 6;
    static final int READ_EXPECTED_OFFSET = 8;
    static final int READ_RECEIVED_OFFSET = 9;
    /** Ints of a slot's rare record (40 B). */
    static final int RARE_INTS = 10;

    final int capacity;
    private final int mtu;

    private int[] records;
    private int[] rareRecords;
    private MemoryRegion[] regions;

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

    // ---- a slot's fields. Hot path: each is one load or store at a constant offset from the record's start.

    private static int at(final int slot)
    {
        return slot * RECORD_INTS;
    }

    private static int rareAt(final int slot)
    {
        return slot * RARE_INTS;
    }

    private int intField(final int slot, final int offset)
    {
        return records[at(slot) + offset];
    }

    private void intField(final int slot, final int offset, final int value)
    {
        records[at(slot) + offset] = value;
    }

    private long longField(final int slot, final int offset)
    {
        return longAt(records, at(slot) + offset);
    }

    private void longField(final int slot, final int offset, final long value)
    {
        longAt(records, at(slot) + offset, value);
    }

    private static long longAt(final int[] ints, final int index)
    {
        return ((long)ints[index + 1] << 32) | (ints[index] & 0xFFFF_FFFFL);
    }

    private static void longAt(final int[] ints, final int index, final long value)
    {
        ints[index] = (int)value;
        ints[index + 1] = (int)(value >>> 32);
    }

    private boolean flag(final int slot, final int bit)
    {
        return (records[at(slot) + KIND_FLAGS_OFFSET] & bit) != 0;
    }

    private void flag(final int slot, final int bit, final boolean value)
    {
        final int index = at(slot) + KIND_FLAGS_OFFSET;
        records[index] = value ? records[index] | bit : records[index] & ~bit;
    }

    /** @return the message's kind ({@link SprayConnection#SEND} ...), or {@link #FREE}. */
    byte kind(final int slot)
    {
        return (byte)records[at(slot) + KIND_FLAGS_OFFSET];
    }

    void kind(final int slot, final byte value)
    {
        final int index = at(slot) + KIND_FLAGS_OFFSET;
        records[index] = (records[index] & ~KIND_MASK) | (value & KIND_MASK);
    }

    long wrId(final int slot)
    {
        return longField(slot, WR_ID_OFFSET);
    }

    void wrId(final int slot, final long value)
    {
        longField(slot, WR_ID_OFFSET, value);
    }

    int stream(final int slot)
    {
        return intField(slot, STREAM_OFFSET);
    }

    void stream(final int slot, final int value)
    {
        intField(slot, STREAM_OFFSET, value);
    }

    int msn(final int slot)
    {
        return intField(slot, MSN_OFFSET);
    }

    void msn(final int slot, final int value)
    {
        intField(slot, MSN_OFFSET, value);
    }

    int rsn(final int slot)
    {
        return intField(slot, RSN_OFFSET);
    }

    void rsn(final int slot, final int value)
    {
        intField(slot, RSN_OFFSET, value);
    }

    /** @return the memory the message's payload comes from (or, for a READ, goes to); null for none. */
    MemoryRegion region(final int slot)
    {
        return regions[slot];
    }

    void region(final int slot, final MemoryRegion value)
    {
        regions[slot] = value;
    }

    long localAddress(final int slot)
    {
        return longField(slot, LOCAL_ADDRESS_OFFSET);
    }

    void localAddress(final int slot, final long value)
    {
        longField(slot, LOCAL_ADDRESS_OFFSET, value);
    }

    /** @return the message's length in bytes. */
    int length(final int slot)
    {
        return intField(slot, LENGTH_OFFSET);
    }

    void length(final int slot, final int value)
    {
        intField(slot, LENGTH_OFFSET, value);
    }

    long remoteAddress(final int slot)
    {
        return longField(slot, REMOTE_ADDRESS_OFFSET);
    }

    void remoteAddress(final int slot, final long value)
    {
        longField(slot, REMOTE_ADDRESS_OFFSET, value);
    }

    int rkey(final int slot)
    {
        return intField(slot, RKEY_OFFSET);
    }

    void rkey(final int slot, final int value)
    {
        intField(slot, RKEY_OFFSET, value);
    }

    int immediate(final int slot)
    {
        return intField(slot, IMMEDIATE_OFFSET);
    }

    void immediate(final int slot, final int value)
    {
        intField(slot, IMMEDIATE_OFFSET, value);
    }

    /** @return the S12.4 tag every packet of the message's first attempt carries. */
    long messageTag(final int slot)
    {
        return longField(slot, MESSAGE_TAG_OFFSET);
    }

    void messageTag(final int slot, final long value)
    {
        longField(slot, MESSAGE_TAG_OFFSET, value);
    }

    /** @return the S12.4 tag the peer's READ response to this READ carries. */
    long responseTag(final int slot)
    {
        return longAt(rareRecords, rareAt(slot) + RESPONSE_TAG_OFFSET);
    }

    void responseTag(final int slot, final long value)
    {
        longAt(rareRecords, rareAt(slot) + RESPONSE_TAG_OFFSET, value);
    }

    boolean signaled(final int slot)
    {
        return flag(slot, SIGNALED);
    }

    void signaled(final int slot, final boolean value)
    {
        flag(slot, SIGNALED, value);
    }

    boolean solicited(final int slot)
    {
        return flag(slot, SOLICITED);
    }

    void solicited(final int slot, final boolean value)
    {
        flag(slot, SOLICITED, value);
    }

    /** @return packets of the message (a READ request: one). */
    int packets(final int slot)
    {
        return intField(slot, PACKETS_OFFSET);
    }

    void packets(final int slot, final int value)
    {
        intField(slot, PACKETS_OFFSET, value);
    }

    /** @return the index of the next packet to make for the first time. */
    int nextPacket(final int slot)
    {
        return intField(slot, NEXT_PACKET_OFFSET);
    }

    void nextPacket(final int slot, final int value)
    {
        intField(slot, NEXT_PACKET_OFFSET, value);
    }

    /** @return packets of the current attempt acknowledged. */
    int acked(final int slot)
    {
        return intField(slot, ACKED_OFFSET);
    }

    void acked(final int slot, final int value)
    {
        intField(slot, ACKED_OFFSET, value);
    }

    /** @return packets sent and not yet acknowledged or given up. */
    int outstanding(final int slot)
    {
        return intField(slot, OUTSTANDING_OFFSET);
    }

    void outstanding(final int slot, final int value)
    {
        intField(slot, OUTSTANDING_OFFSET, value);
    }

    /** @return the slot's generation: see {@link #handle}. */
    int generation(final int slot)
    {
        return intField(slot, GENERATION_OFFSET);
    }

    void generation(final int slot, final int value)
    {
        intField(slot, GENERATION_OFFSET, value);
    }

    /** @return the completion status's ordinal, or {@link #PENDING}. */
    int status(final int slot)
    {
        return intField(slot, STATUS_OFFSET);
    }

    void status(final int slot, final int value)
    {
        intField(slot, STATUS_OFFSET, value);
    }

    /** @return whether the message's completion left (or it needs none: a READ response). */
    boolean delivered(final int slot)
    {
        return flag(slot, DELIVERED);
    }

    void delivered(final int slot, final boolean value)
    {
        flag(slot, DELIVERED, value);
    }

    boolean inSendQueue(final int slot)
    {
        return flag(slot, IN_SEND_QUEUE);
    }

    /** @return the next slot of the stream's completion list, or {@link #MISSING}. */
    int nextInStream(final int slot)
    {
        return intField(slot, NEXT_IN_STREAM_OFFSET);
    }

    /** @return packets of the READ response this READ expects. */
    int readExpected(final int slot)
    {
        return rareRecords[rareAt(slot) + READ_EXPECTED_OFFSET];
    }

    void readExpected(final int slot, final int value)
    {
        rareRecords[rareAt(slot) + READ_EXPECTED_OFFSET] = value;
    }

    /** @return packets of the READ response placed. */
    int readReceived(final int slot)
    {
        return rareRecords[rareAt(slot) + READ_RECEIVED_OFFSET];
    }

    void readReceived(final int slot, final int value)
    {
        rareRecords[rareAt(slot) + READ_RECEIVED_OFFSET] = value;
    }

    /** @return whether the message waits for its RNR retry (S9.3-3). */
    boolean rnrWaiting(final int slot)
    {
        return flag(slot, RNR_WAITING);
    }

    /** @return RNR retries counted. */
    int rnrCount(final int slot)
    {
        return intField(slot, RNR_COUNT_OFFSET);
    }

    void rnrCount(final int slot, final int value)
    {
        intField(slot, RNR_COUNT_OFFSET, value);
    }

    /** @return when the RNR retry may start (nanoseconds). */
    long rnrRetryAt(final int slot)
    {
        return longAt(rareRecords, rareAt(slot) + RNR_RETRY_AT_OFFSET);
    }

    /** @return whether the completion is held (S9.3). */
    boolean held(final int slot)
    {
        return flag(slot, HELD);
    }

    /** @return when a held completion's next query goes (nanoseconds). */
    long queryAt(final int slot)
    {
        return longAt(rareRecords, rareAt(slot) + QUERY_AT_OFFSET);
    }

    void queryAt(final int slot, final long value)
    {
        longAt(rareRecords, rareAt(slot) + QUERY_AT_OFFSET, value);
    }

    /** @return when the completion was held (nanoseconds). */
    long heldAt(final int slot)
    {
        return longAt(rareRecords, rareAt(slot) + HELD_AT_OFFSET);
    }

    private void inSendQueue(final int slot, final boolean value)
    {
        flag(slot, IN_SEND_QUEUE, value);
    }

    private void nextInStream(final int slot, final int value)
    {
        intField(slot, NEXT_IN_STREAM_OFFSET, value);
    }

    private void rnrWaiting(final int slot, final boolean value)
    {
        flag(slot, RNR_WAITING, value);
    }

    private void rnrRetryAt(final int slot, final long value)
    {
        longAt(rareRecords, rareAt(slot) + RNR_RETRY_AT_OFFSET, value);
    }

    private void held(final int slot, final boolean value)
    {
        flag(slot, HELD, value);
    }

    private void heldAt(final int slot, final long value)
    {
        longAt(rareRecords, rareAt(slot) + HELD_AT_OFFSET, value);
    }

    private void started(final int slot, final boolean value)
    {
        flag(slot, STARTED, value);
    }

    /** @return whether a packet of the message was sent (S10.2). */
    boolean started(final int slot)
    {
        return flag(slot, STARTED);
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
        if (kind(slot) == SprayConnection.READ)
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
            readsStarted -= kind(slot) == SprayConnection.READ ? 1 : 0;
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
            (messagesStarted < window && (kind(slot) != SprayConnection.READ || readsStarted < reads));
    }

    /** Its first packet leaves: the message counts against the peer's limits until its slot is freed. */
    void start(final int slot)
    {
        if (!started(slot))
        {
            started(slot, true);
            messagesStarted++;
            readsStarted += kind(slot) == SprayConnection.READ ? 1 : 0;
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
