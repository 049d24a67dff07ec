package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.MemoryRegion;

/**
 * The records of the slots of a {@link SendSlots} table (docs/PROTOCOL.md S4, S10.1), split from it by concern
 * (issue 13): the layout and the accessors of a slot's fields here; the slots' lifecycle (free list, send queue,
 * streams, counts, the (stream, MSN) map, attach and detach) in {@link SendSlots}, the only subclass.
 * <p>
 * A slot is one record of {@link #RECORD_INTS} ints (96 B) in one {@code int[]}, its fields at named
 * offsets (the flyweight layout of Agrona's buffers, on plain array elements so that each access is one bounds-checked
 * load or store the compiler inlines), read and written through the accessors below. What a message's
 * post, data frames, ACKs and completion use lies in that record, two cache lines at most, where the parallel
 * arrays this replaced spread one message over about 35 lines; what only READs, RNR waits and held completions use
 * lies in a second, smaller record ({@link #RARE_INTS} ints), and the message's memory region, an object, in an array
 * of its own.
 * <p>
 * Every accessor is final and the class is sealed to its one subclass: a call on a {@code SendSlots} binds
 * statically and loads the same fields as when they were declared there (no virtual dispatch, no extra object on the
 * per-packet path). The setters that were private to {@link SendSlots} (in send queue, next in stream, RNR waiting
 * and its time, held and its time, started) are package-private here but for {@link SendSlots} alone: it changes
 * them together with its counts, lists and queues. The accessors write a field and nothing else. Allocation-free.
 */
abstract sealed class SendSlotRecords permits SendSlots
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
    static final int SIGNALED = 1 << 8;
    static final int SOLICITED = 1 << 9;
    static final int DELIVERED = 1 << 10;
    static final int IN_SEND_QUEUE = 1 << 11;
    static final int RNR_WAITING = 1 << 12;
    static final int HELD = 1 << 13; // S9.3: all acknowledged, completion held until the refusals are known
    static final int STARTED = 1 << 14; // S10.2: a packet of it was sent: it counts against the peer's window
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

    // the records of the slots: set by SendSlots#attach, cleared by SendSlots#detach
    int[] records;
    int[] rareRecords;
    MemoryRegion[] regions;

    // ---- a slot's fields. Hot path: each is one load or store at a constant offset from the record's start.

    static int at(final int slot)
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
    final byte kind(final int slot)
    {
        return (byte)records[at(slot) + KIND_FLAGS_OFFSET];
    }

    final void kind(final int slot, final byte value)
    {
        final int index = at(slot) + KIND_FLAGS_OFFSET;
        records[index] = (records[index] & ~KIND_MASK) | (value & KIND_MASK);
    }

    final long wrId(final int slot)
    {
        return longField(slot, WR_ID_OFFSET);
    }

    final void wrId(final int slot, final long value)
    {
        longField(slot, WR_ID_OFFSET, value);
    }

    final int stream(final int slot)
    {
        return intField(slot, STREAM_OFFSET);
    }

    final void stream(final int slot, final int value)
    {
        intField(slot, STREAM_OFFSET, value);
    }

    final int msn(final int slot)
    {
        return intField(slot, MSN_OFFSET);
    }

    final void msn(final int slot, final int value)
    {
        intField(slot, MSN_OFFSET, value);
    }

    final int rsn(final int slot)
    {
        return intField(slot, RSN_OFFSET);
    }

    final void rsn(final int slot, final int value)
    {
        intField(slot, RSN_OFFSET, value);
    }

    /** @return the memory the message's payload comes from (or, for a READ, goes to); null for none. */
    final MemoryRegion region(final int slot)
    {
        return regions[slot];
    }

    final void region(final int slot, final MemoryRegion value)
    {
        regions[slot] = value;
    }

    final long localAddress(final int slot)
    {
        return longField(slot, LOCAL_ADDRESS_OFFSET);
    }

    final void localAddress(final int slot, final long value)
    {
        longField(slot, LOCAL_ADDRESS_OFFSET, value);
    }

    /** @return the message's length in bytes. */
    final int length(final int slot)
    {
        return intField(slot, LENGTH_OFFSET);
    }

    final void length(final int slot, final int value)
    {
        intField(slot, LENGTH_OFFSET, value);
    }

    final long remoteAddress(final int slot)
    {
        return longField(slot, REMOTE_ADDRESS_OFFSET);
    }

    final void remoteAddress(final int slot, final long value)
    {
        longField(slot, REMOTE_ADDRESS_OFFSET, value);
    }

    final int rkey(final int slot)
    {
        return intField(slot, RKEY_OFFSET);
    }

    final void rkey(final int slot, final int value)
    {
        intField(slot, RKEY_OFFSET, value);
    }

    final int immediate(final int slot)
    {
        return intField(slot, IMMEDIATE_OFFSET);
    }

    final void immediate(final int slot, final int value)
    {
        intField(slot, IMMEDIATE_OFFSET, value);
    }

    /** @return the S12.4 tag every packet of the message's first attempt carries. */
    final long messageTag(final int slot)
    {
        return longField(slot, MESSAGE_TAG_OFFSET);
    }

    final void messageTag(final int slot, final long value)
    {
        longField(slot, MESSAGE_TAG_OFFSET, value);
    }

    /** @return the S12.4 tag the peer's READ response to this READ carries. */
    final long responseTag(final int slot)
    {
        return longAt(rareRecords, rareAt(slot) + RESPONSE_TAG_OFFSET);
    }

    final void responseTag(final int slot, final long value)
    {
        longAt(rareRecords, rareAt(slot) + RESPONSE_TAG_OFFSET, value);
    }

    final boolean signaled(final int slot)
    {
        return flag(slot, SIGNALED);
    }

    final void signaled(final int slot, final boolean value)
    {
        flag(slot, SIGNALED, value);
    }

    final boolean solicited(final int slot)
    {
        return flag(slot, SOLICITED);
    }

    final void solicited(final int slot, final boolean value)
    {
        flag(slot, SOLICITED, value);
    }

    /** @return packets of the message (a READ request: one). */
    final int packets(final int slot)
    {
        return intField(slot, PACKETS_OFFSET);
    }

    final void packets(final int slot, final int value)
    {
        intField(slot, PACKETS_OFFSET, value);
    }

    /** @return the index of the next packet to make for the first time. */
    final int nextPacket(final int slot)
    {
        return intField(slot, NEXT_PACKET_OFFSET);
    }

    final void nextPacket(final int slot, final int value)
    {
        intField(slot, NEXT_PACKET_OFFSET, value);
    }

    /** @return packets of the current attempt acknowledged. */
    final int acked(final int slot)
    {
        return intField(slot, ACKED_OFFSET);
    }

    final void acked(final int slot, final int value)
    {
        intField(slot, ACKED_OFFSET, value);
    }

    /** @return packets sent and not yet acknowledged or given up. */
    final int outstanding(final int slot)
    {
        return intField(slot, OUTSTANDING_OFFSET);
    }

    final void outstanding(final int slot, final int value)
    {
        intField(slot, OUTSTANDING_OFFSET, value);
    }

    /** @return the slot's generation: see {@link SendSlots#handle}. */
    final int generation(final int slot)
    {
        return intField(slot, GENERATION_OFFSET);
    }

    final void generation(final int slot, final int value)
    {
        intField(slot, GENERATION_OFFSET, value);
    }

    /** @return the completion status's ordinal, or {@link #PENDING}. */
    final int status(final int slot)
    {
        return intField(slot, STATUS_OFFSET);
    }

    final void status(final int slot, final int value)
    {
        intField(slot, STATUS_OFFSET, value);
    }

    /** @return whether the message's completion left (or it needs none: a READ response). */
    final boolean delivered(final int slot)
    {
        return flag(slot, DELIVERED);
    }

    final void delivered(final int slot, final boolean value)
    {
        flag(slot, DELIVERED, value);
    }

    final boolean inSendQueue(final int slot)
    {
        return flag(slot, IN_SEND_QUEUE);
    }

    /** @return the next slot of the stream's completion list, or {@link #MISSING}. */
    final int nextInStream(final int slot)
    {
        return intField(slot, NEXT_IN_STREAM_OFFSET);
    }

    /** @return packets of the READ response this READ expects. */
    final int readExpected(final int slot)
    {
        return rareRecords[rareAt(slot) + READ_EXPECTED_OFFSET];
    }

    final void readExpected(final int slot, final int value)
    {
        rareRecords[rareAt(slot) + READ_EXPECTED_OFFSET] = value;
    }

    /** @return packets of the READ response placed. */
    final int readReceived(final int slot)
    {
        return rareRecords[rareAt(slot) + READ_RECEIVED_OFFSET];
    }

    final void readReceived(final int slot, final int value)
    {
        rareRecords[rareAt(slot) + READ_RECEIVED_OFFSET] = value;
    }

    /** @return whether the message waits for its RNR retry (S9.3-3). */
    final boolean rnrWaiting(final int slot)
    {
        return flag(slot, RNR_WAITING);
    }

    /** @return RNR retries counted. */
    final int rnrCount(final int slot)
    {
        return intField(slot, RNR_COUNT_OFFSET);
    }

    final void rnrCount(final int slot, final int value)
    {
        intField(slot, RNR_COUNT_OFFSET, value);
    }

    /** @return when the RNR retry may start (nanoseconds). */
    final long rnrRetryAt(final int slot)
    {
        return longAt(rareRecords, rareAt(slot) + RNR_RETRY_AT_OFFSET);
    }

    /** @return whether the completion is held (S9.3). */
    final boolean held(final int slot)
    {
        return flag(slot, HELD);
    }

    /** @return when a held completion's next query goes (nanoseconds). */
    final long queryAt(final int slot)
    {
        return longAt(rareRecords, rareAt(slot) + QUERY_AT_OFFSET);
    }

    final void queryAt(final int slot, final long value)
    {
        longAt(rareRecords, rareAt(slot) + QUERY_AT_OFFSET, value);
    }

    /** @return when the completion was held (nanoseconds). */
    final long heldAt(final int slot)
    {
        return longAt(rareRecords, rareAt(slot) + HELD_AT_OFFSET);
    }

    final void inSendQueue(final int slot, final boolean value)
    {
        flag(slot, IN_SEND_QUEUE, value);
    }

    final void nextInStream(final int slot, final int value)
    {
        intField(slot, NEXT_IN_STREAM_OFFSET, value);
    }

    final void rnrWaiting(final int slot, final boolean value)
    {
        flag(slot, RNR_WAITING, value);
    }

    final void rnrRetryAt(final int slot, final long value)
    {
        longAt(rareRecords, rareAt(slot) + RNR_RETRY_AT_OFFSET, value);
    }

    final void held(final int slot, final boolean value)
    {
        flag(slot, HELD, value);
    }

    final void heldAt(final int slot, final long value)
    {
        longAt(rareRecords, rareAt(slot) + HELD_AT_OFFSET, value);
    }

    final void started(final int slot, final boolean value)
    {
        flag(slot, STARTED, value);
    }

    /** @return whether a packet of the message was sent (S10.2). */
    final boolean started(final int slot)
    {
        return flag(slot, STARTED);
    }
}
