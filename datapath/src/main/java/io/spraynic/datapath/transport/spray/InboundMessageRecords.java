package io.spraynic.datapath.transport.spray;

import org.agrona.collections.Long2LongHashMap;

/**
 * The records of the inbound messages of one spray connection that are being received (docs/PROTOCOL.md S4.4,
 * S9.3, S10.2, S12.4): a fixed table of parallel primitive arrays with a free list, found by a (stream, MSN) key
 * ({@link SendSlots#key}), and the {@link InboundWindow} that counts the records taken inside the window and from
 * the reserve. A record holds what every packet of its message is checked against (kind, length, RSN, the S12.4
 * tag, a WRITE's base address and rkey), what was received of it, and the state of its refusal, if any (the
 * decisions are {@link InboundRefusals}'). The arrays are pooled: attached while the connection has traffic
 * ({@link Storage}). Allocation-free after construction.
 */
final class InboundMessageRecords
{
    static final int MISSING = SendSlots.MISSING;
    private static final long NO_KEY = Long.MIN_VALUE; // no (stream, MSN) key: streams are below 2^16

    final int capacity;
    private final InboundWindow window; // S10.2: records for messages being placed, and the reserve to refuse

    private byte[] kind;
    private int[] stream;
    private int[] msn;
    private int[] length;
    private int[] expected;
    private int[] received;
    private int[] immediate;
    private int[] syndrome;
    private int[] receive;
    private int[] rsn;
    private boolean[] done;
    private boolean[] rnr;
    private int[] attempt; // S9.3-3: the attempt (SETH) its packets are taken from; earlier ones are discarded
    private int[] refusal;
    private boolean[] reserve; // S10.2: taken from the reserve, to refuse a message there was no room for
    private boolean[] noResources; // S10.2: its last attempt was refused for want of resources
    private long[] tag; // S12.4: every packet of the message's attempt 0 carries it (a retry's covers its attempt)
    private long[] base; // S12.4: va - offset of a WRITE's packets
    private int[] rkey;
    private int[] freeRecords;
    private int freeCount;
    private Long2LongHashMap byMsn;
    // the last lookup in byMsn, until the map changes: a packet is looked up three times (authentic, roomFor,
    // accept), and the packets of a message mostly follow one another
    private long lookedUpKey = NO_KEY;
    private int lookedUpRecord;
    private Storage storage;

    InboundMessageRecords(final int capacity)
    {
        this.capacity = capacity;
        window = new InboundWindow(capacity);
        freeCount = capacity;
    }

    /** The arrays of the records of one capacity, drawn from and returned to a pool. */
    static final class Storage
    {
        final int capacity;
        final byte[] kind;
        final int[] stream;
        final int[] msn;
        final int[] length;
        final int[] expected;
        final int[] received;
        final int[] immediate;
        final int[] syndrome;
        final int[] receive;
        final int[] rsn;
        final boolean[] done;
        final boolean[] rnr;
        final int[] attempt;
        final int[] refusal;
        final boolean[] reserve;
        final boolean[] noResources;
        final long[] tag;
        final long[] base;
        final int[] rkey;
        final int[] freeRecords;
        final Long2LongHashMap byMsn;

        Storage(final int capacity)
        {
            this.capacity = capacity;
            kind = new byte[capacity];
            stream = new int[capacity];
            msn = new int[capacity];
            length = new int[capacity];
            expected = new int[capacity];
            received = new int[capacity];
            immediate = new int[capacity];
            syndrome = new int[capacity];
            receive = new int[capacity];
            rsn = new int[capacity];
            done = new boolean[capacity];
            rnr = new boolean[capacity];
            attempt = new int[capacity];
            refusal = new int[capacity];
            reserve = new boolean[capacity];
            noResources = new boolean[capacity];
            tag = new long[capacity];
            base = new long[capacity];
            rkey = new int[capacity];
            freeRecords = new int[capacity];
            byMsn = new Long2LongHashMap(4 * capacity, 0.5f, MISSING);
            clear();
        }

        /** @return bytes of the arrays and the map (S10.1). */
        long bytes()
        {
            return (1 + 4 * 9 + 1 + 1 + 4 + 4 + 4 + 8 + 8 + 4 + 2) * (long)capacity + 16L * byMsn.capacity();
        }

        /** Back to the state of a new table: every record free, handed out in a new table's order. */
        void clear()
        {
            java.util.Arrays.fill(kind, (byte)0);
            java.util.Arrays.fill(stream, 0);
            java.util.Arrays.fill(msn, 0);
            java.util.Arrays.fill(length, 0);
            java.util.Arrays.fill(expected, 0);
            java.util.Arrays.fill(received, 0);
            java.util.Arrays.fill(immediate, 0);
            java.util.Arrays.fill(syndrome, 0);
            java.util.Arrays.fill(receive, 0);
            java.util.Arrays.fill(rsn, 0);
            java.util.Arrays.fill(done, false);
            java.util.Arrays.fill(rnr, false);
            java.util.Arrays.fill(attempt, 0);
            java.util.Arrays.fill(refusal, 0);
            java.util.Arrays.fill(reserve, false);
            java.util.Arrays.fill(noResources, false);
            java.util.Arrays.fill(tag, 0L);
            java.util.Arrays.fill(base, 0L);
            java.util.Arrays.fill(rkey, 0);
            ConnectionStorage.freeListInOrder(freeRecords);
            byMsn.clear();
        }
    }

    /** @return bytes of the records and their map, for a table of {@code capacity} (S10.1). */
    static long stateBytes(final int capacity)
    {
        final long record = 1 + 4 * 9 + 1 + 1 + 4 + 4 + 4 + 2;
        return record * capacity + 16L * ConnectionStorage.mapCapacity(4 * capacity);
    }

    /** Takes the arrays of a pooled, cleared {@link Storage}; no record may be in use and none attached. */
    void attach(final Storage storage)
    {
        if (null != this.storage || freeCount != capacity || storage.capacity != capacity)
        {
            throw new IllegalStateException("attach needs an empty, detached table and storage of its capacity");
        }
        this.storage = storage;
        kind = storage.kind;
        stream = storage.stream;
        msn = storage.msn;
        length = storage.length;
        expected = storage.expected;
        received = storage.received;
        immediate = storage.immediate;
        syndrome = storage.syndrome;
        receive = storage.receive;
        rsn = storage.rsn;
        done = storage.done;
        rnr = storage.rnr;
        attempt = storage.attempt;
        refusal = storage.refusal;
        reserve = storage.reserve;
        noResources = storage.noResources;
        tag = storage.tag;
        base = storage.base;
        rkey = storage.rkey;
        freeRecords = storage.freeRecords;
        byMsn = storage.byMsn;
        lookedUpKey = NO_KEY;
    }

    /** @return whether the arrays are held. */
    boolean isAttached()
    {
        return null != storage;
    }

    /** @return whether {@link #detach} may run: no record in use. */
    boolean isDetachable()
    {
        return null != storage && freeCount == capacity && byMsn.isEmpty();
    }

    /** Gives the arrays back (the table is {@link #isDetachable detachable}); the caller clears and pools them. */
    Storage detach()
    {
        final Storage detached = storage;
        storage = null;
        kind = null;
        stream = null;
        msn = null;
        length = null;
        expected = null;
        received = null;
        immediate = null;
        syndrome = null;
        receive = null;
        rsn = null;
        done = null;
        rnr = null;
        attempt = null;
        refusal = null;
        reserve = null;
        noResources = null;
        tag = null;
        base = null;
        rkey = null;
        freeRecords = null;
        byMsn = null;
        return detached;
    }

    /** @return records in use. */
    int inUse()
    {
        return capacity - freeCount;
    }

    /** @return whether no record is in use (then there is none to look up; also when detached). */
    boolean isEmpty()
    {
        return freeCount == capacity;
    }

    /** @return whether a new message can take a record inside the window (S10.2). */
    boolean hasRoom()
    {
        return window.hasRoom();
    }

    /** @return whether a record can hold a refusal: one inside the window, else one of the reserve (S10.2). */
    boolean hasRoomToRefuse()
    {
        return window.hasRoomToRefuse();
    }

    /**
     * @return the record of a (stream, MSN) key, or {@link #MISSING}. No record in use (between messages, the
     * common case, and when detached): there is none to look up; else the last lookup answers again while the map
     * has not changed.
     */
    int recordOf(final long key)
    {
        if (freeCount == capacity)
        {
            return MISSING;
        }
        if (key != lookedUpKey)
        {
            lookedUpRecord = (int)byMsn.get(key);
            lookedUpKey = key;
        }
        return lookedUpRecord;
    }

    /** @return the record of a key, looked up in the map itself (the table is attached), or {@link #MISSING}. */
    int lookUp(final long key)
    {
        return (int)byMsn.get(key);
    }

    /**
     * Takes a free record for a new message and files it under its key (a record is free and the window or the
     * reserve has room: the caller checked). Its packets are not yet received, it is neither refused nor done, and
     * no receive is matched.
     *
     * @return the record.
     */
    int open(
        final long key,
        final boolean fromReserve,
        final byte messageKind,
        final int streamId,
        final int messageMsn,
        final int messageLength,
        final int expectedPackets,
        final int messageRsn,
        final int messageAttempt,
        final long messageTag)
    {
        final int record = freeRecords[--freeCount];
        reserve[record] = fromReserve;
        window.take(fromReserve);
        kind[record] = messageKind;
        stream[record] = streamId;
        msn[record] = messageMsn;
        length[record] = messageLength;
        expected[record] = expectedPackets;
        received[record] = 0;
        syndrome[record] = 0;
        receive[record] = MISSING;
        immediate[record] = 0; // a message refused before its immediate is read completes with none, not another's
        rsn[record] = messageRsn;
        done[record] = false;
        rnr[record] = false;
        attempt[record] = messageAttempt;
        refusal[record] = 0;
        noResources[record] = false;
        tag[record] = messageTag;
        byMsn.put(key, record);
        lookedUpKey = NO_KEY;
        return record;
    }

    /** A WRITE's packets all carry this base address (va - offset) and rkey (S12.4). */
    void writeTarget(final int record, final long baseAddress, final int writeRkey)
    {
        base[record] = baseAddress;
        rkey[record] = writeRkey;
    }

    /** Removes the record filed under {@code key} and frees it. */
    void close(final long key, final int record)
    {
        byMsn.remove(key);
        lookedUpKey = NO_KEY;
        window.release(reserve[record]);
        freeRecords[freeCount++] = record;
    }

    /** The message's receive, matched by RSN (S4.5). */
    void receive(final int record, final int postedReceive)
    {
        receive[record] = postedReceive;
    }

    /** The message's immediate data. */
    void immediate(final int record, final int immediateData)
    {
        immediate[record] = immediateData;
    }

    /**
     * Counts one new packet placed.
     *
     * @return whether that was the message's last: then it is done.
     */
    boolean countPacket(final int record)
    {
        if (++received[record] == expected[record])
        {
            done[record] = true;
            return true;
        }
        return false;
    }

    /** A READ request (its one packet) was taken: a response is queued, the message is done. */
    void readTaken(final int record)
    {
        received[record] = 1;
        done[record] = true;
    }

    /** S9.3: refused with a syndrome, for good; it retires with that status. */
    void refused(final int record, final int refusalSyndrome, final int refusalNumber)
    {
        syndrome[record] = refusalSyndrome;
        done[record] = true;
        refusal[record] = refusalNumber;
    }

    /** S9.3, S10.2: its current attempt is refused (RNR); nothing of it counts as received. */
    void attemptRefused(final int record, final int refusalNumber, final boolean forResources)
    {
        rnr[record] = true;
        noResources[record] = forResources;
        received[record] = 0;
        refusal[record] = refusalNumber;
    }

    /** S9.3-3: a later attempt (the sender's retry) replaces the current one, and ends its refusal. */
    void laterAttempt(final int record, final int laterAttempt)
    {
        attempt[record] = laterAttempt;
        rnr[record] = false;
    }

    /** S10.2: the retry of an attempt refused for want of resources found room; a reserve record joins the window. */
    void retryHasRoom(final int record)
    {
        noResources[record] = false;
        if (reserve[record])
        {
            reserve[record] = false;
            window.joinWindow();
        }
    }

    byte kind(final int record)
    {
        return kind[record];
    }

    int stream(final int record)
    {
        return stream[record];
    }

    int msn(final int record)
    {
        return msn[record];
    }

    int length(final int record)
    {
        return length[record];
    }

    /** @return packets the message has (a READ: its one request). */
    int expected(final int record)
    {
        return expected[record];
    }

    /** @return packets placed of the current attempt. */
    int received(final int record)
    {
        return received[record];
    }

    int immediate(final int record)
    {
        return immediate[record];
    }

    /** @return the syndrome it was refused with for good, or 0. */
    int syndrome(final int record)
    {
        return syndrome[record];
    }

    /** @return its receive, or {@link #MISSING}. */
    int receive(final int record)
    {
        return receive[record];
    }

    int rsn(final int record)
    {
        return rsn[record];
    }

    /** @return whether complete or refused for good: it retires when its MSN is next. */
    boolean isDone(final int record)
    {
        return done[record];
    }

    /** @return whether its current attempt is refused (RNR). */
    boolean isAttemptRefused(final int record)
    {
        return rnr[record];
    }

    int attempt(final int record)
    {
        return attempt[record];
    }

    /** @return the number of its last refusal, or 0. */
    int refusal(final int record)
    {
        return refusal[record];
    }

    /** @return whether it holds a record of the reserve (S10.2). */
    boolean isFromReserve(final int record)
    {
        return reserve[record];
    }

    /** @return whether its last attempt was refused for want of resources (S10.2). */
    boolean isRefusedForResources(final int record)
    {
        return noResources[record];
    }

    long tag(final int record)
    {
        return tag[record];
    }

    long base(final int record)
    {
        return base[record];
    }

    int rkey(final int record)
    {
        return rkey[record];
    }
}
