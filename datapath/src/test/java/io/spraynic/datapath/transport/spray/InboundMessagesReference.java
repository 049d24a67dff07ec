package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.AccessCheck;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.wire.ImmediateDataHeader;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.RdmaExtendedTransportHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import org.agrona.collections.Long2LongHashMap;

import java.lang.foreign.MemorySegment;

import static io.spraynic.datapath.transport.spray.SendSlots.key;
import static io.spraynic.datapath.transport.spray.MessageKinds.READ;
import static io.spraynic.datapath.transport.spray.MessageKinds.SEND;
import static io.spraynic.datapath.transport.spray.MessageKinds.SEND_IMM;
import static io.spraynic.datapath.transport.spray.MessageKinds.WRITE;
import static io.spraynic.datapath.transport.spray.MessageKinds.WRITE_IMM;

/**
 * The receive side of one spray connection's message layer (docs/PROTOCOL.md S4, S9.3, S9.4, S12.4, S12.7):
 * the records of inbound messages being received and each stream's next MSN to complete and error state; the
 * receives the application posted are a {@link PostedReceives} table it matches, places into and completes. A data packet the path layer accepted is checked against its
 * message's record, access-checked and placed where its headers say (S4.2), counted once (S4.4, through the
 * connection's {@link PlacementMarks}), or refused with a NACK (S9.3); messages retire, and their receives
 * complete, in MSN order per stream (S4.8). READ responses belong to the READ's send slot and stay with the
 * connection.
 * <p>
 * Records are a fixed table of parallel primitive arrays with a free list, found by a (stream, MSN) map.
 * Allocation-free after construction.
 */
final class InboundMessagesReference
{
    private static final int MISSING = SendSlots.MISSING;

    private final SprayConnection connection; // READ responses, local errors, refused packets
    private final ControlPackets control; // NACKs
    private final SprayEngine engine;
    private final TransportCounters counters;
    private final TransportCounters[] pathCounters;
    private final PacketAuthenticator auth;
    private final PlacementMarks marks;
    private final Refusals refusals;
    private final int mtu;
    private final int streams;
    private ProtectionDomain pd;

    // ---- inbound message records
    final int capacity;
    private byte[] inKind;
    private int[] inStream;
    private int[] inMsn;
    private int[] inLength;
    private int[] inExpected;
    private int[] inReceived;
    private int[] inImmediate;
    private int[] inSyndrome;
    private int[] inReceive;
    private int[] inRsn;
    private boolean[] inDone;
    private boolean[] inRnr;
    private int[] inAttempt; // S9.3-3: the attempt (SETH) its packets are taken from; earlier ones are discarded
    private int[] inRefusal;
    private boolean[] inReserve; // S10.2: taken from the reserve, to refuse a message there was no room for
    private boolean[] inNoResources; // S10.2: its last attempt was refused for want of resources
    private long[] inTag; // S12.4: every packet of the message carries it
    private long[] inBase; // S12.4: va - offset of a WRITE's packets
    private int[] inRkey;
    private int[] freeRecords;
    private int freeCount;
    private Long2LongHashMap byMsn;
    private final InboundWindow window; // S10.2: records for messages being placed, and the reserve to refuse

    private Storage storage;

    private final PostedReceives receives;

    // ---- per stream
    private final int[] nextMsn;
    private final boolean[] errored;
    private final int[] erroredMsn;
    private final int[] erroredSyndrome;
    private final int[] erroredRefusal;

    InboundMessagesReference(
        final SprayConnection connection,
        final ControlPackets control,
        final SprayEngine engine,
        final SprayConnectionConfig config,
        final TransportCounters counters,
        final TransportCounters[] pathCounters,
        final PacketAuthenticator auth,
        final PlacementMarks marks,
        final Refusals refusals)
    {
        this.connection = connection;
        this.control = control;
        this.engine = engine;
        this.counters = counters;
        this.pathCounters = pathCounters;
        this.auth = auth;
        this.marks = marks;
        this.refusals = refusals;
        this.mtu = config.mtu;
        this.streams = config.streams;
        this.pd = engine.protectionDomain();

        capacity = config.maxInboundMessages;
        window = new InboundWindow(capacity);
        freeCount = capacity;
        receives = new PostedReceives(config.receiveQueueDepth, streams, config.receiveCq, config.localCid, pd);

        nextMsn = new int[streams];
        errored = new boolean[streams];
        erroredMsn = new int[streams];
        erroredSyndrome = new int[streams];
        erroredRefusal = new int[streams];
    }

    /**
     * Takes the arrays of a pooled {@link Storage} (cleared: no record, no receive); this side must be empty and
     * detached. Control path of the connection (its first traffic after being idle).
     */
    void attach(final Storage storage)
    {
        if (null != this.storage || freeCount != capacity || storage.capacity != capacity)
        {
            throw new IllegalStateException("attach needs an empty, detached side and storage of its capacities");
        }
        receives.attach(storage.receives); // throws, before this side takes anything, unless it fits
        this.storage = storage;
        inKind = storage.inKind;
        inStream = storage.inStream;
        inMsn = storage.inMsn;
        inLength = storage.inLength;
        inExpected = storage.inExpected;
        inReceived = storage.inReceived;
        inImmediate = storage.inImmediate;
        inSyndrome = storage.inSyndrome;
        inReceive = storage.inReceive;
        inRsn = storage.inRsn;
        inDone = storage.inDone;
        inRnr = storage.inRnr;
        inAttempt = storage.inAttempt;
        inRefusal = storage.inRefusal;
        inReserve = storage.inReserve;
        inNoResources = storage.inNoResources;
        inTag = storage.inTag;
        inBase = storage.inBase;
        inRkey = storage.inRkey;
        freeRecords = storage.freeRecords;
        byMsn = storage.byMsn;
    }

    /** @return whether the records and receives are held (else there are none and nothing reads them). */
    boolean isAttached()
    {
        return null != storage;
    }

    /** @return whether {@link #detach} may run: no inbound message, no posted receive. */
    boolean isDetachable()
    {
        return null != storage && freeCount == capacity && byMsn.isEmpty() && receives.isDetachable();
    }

    /** Gives the arrays back (this side is {@link #isDetachable detachable}); the caller clears and pools them. */
    Storage detach()
    {
        final Storage detached = storage;
        storage = null;
        inKind = null;
        inStream = null;
        inMsn = null;
        inLength = null;
        inExpected = null;
        inReceived = null;
        inImmediate = null;
        inSyndrome = null;
        inReceive = null;
        inRsn = null;
        inDone = null;
        inRnr = null;
        inAttempt = null;
        inRefusal = null;
        inReserve = null;
        inNoResources = null;
        inTag = null;
        inBase = null;
        inRkey = null;
        freeRecords = null;
        byMsn = null;
        receives.detach();
        return detached;
    }

    /** The arrays of the records and receives of one pair of capacities, drawn from and returned to a pool. */
    static final class Storage
    {
        final int capacity;
        final int receiveCapacity;
        final byte[] inKind;
        final int[] inStream;
        final int[] inMsn;
        final int[] inLength;
        final int[] inExpected;
        final int[] inReceived;
        final int[] inImmediate;
        final int[] inSyndrome;
        final int[] inReceive;
        final int[] inRsn;
        final boolean[] inDone;
        final boolean[] inRnr;
        final int[] inAttempt;
        final int[] inRefusal;
        final boolean[] inReserve;
        final boolean[] inNoResources;
        final long[] inTag;
        final long[] inBase;
        final int[] inRkey;
        final int[] freeRecords;
        final Long2LongHashMap byMsn;
        final PostedReceives.Storage receives;

        Storage(final int capacity, final int receiveCapacity)
        {
            this.capacity = capacity;
            this.receiveCapacity = receiveCapacity;
            inKind = new byte[capacity];
            inStream = new int[capacity];
            inMsn = new int[capacity];
            inLength = new int[capacity];
            inExpected = new int[capacity];
            inReceived = new int[capacity];
            inImmediate = new int[capacity];
            inSyndrome = new int[capacity];
            inReceive = new int[capacity];
            inRsn = new int[capacity];
            inDone = new boolean[capacity];
            inRnr = new boolean[capacity];
            inAttempt = new int[capacity];
            inRefusal = new int[capacity];
            inReserve = new boolean[capacity];
            inNoResources = new boolean[capacity];
            inTag = new long[capacity];
            inBase = new long[capacity];
            inRkey = new int[capacity];
            freeRecords = new int[capacity];
            byMsn = new Long2LongHashMap(4 * capacity, 0.5f, MISSING);
            receives = new PostedReceives.Storage(receiveCapacity);
            clear();
        }

        /** @return bytes of the arrays and maps (S10.1). */
        long bytes()
        {
            return (1 + 4 * 9 + 1 + 1 + 4 + 4 + 4 + 8 + 8 + 4 + 2) * (long)capacity + 16L * byMsn.capacity() +
                receives.bytes();
        }

        /** Back to the state of a new side: every record and receive free, handed out in a new side's order. */
        void clear()
        {
            java.util.Arrays.fill(inKind, (byte)0);
            java.util.Arrays.fill(inStream, 0);
            java.util.Arrays.fill(inMsn, 0);
            java.util.Arrays.fill(inLength, 0);
            java.util.Arrays.fill(inExpected, 0);
            java.util.Arrays.fill(inReceived, 0);
            java.util.Arrays.fill(inImmediate, 0);
            java.util.Arrays.fill(inSyndrome, 0);
            java.util.Arrays.fill(inReceive, 0);
            java.util.Arrays.fill(inRsn, 0);
            java.util.Arrays.fill(inDone, false);
            java.util.Arrays.fill(inRnr, false);
            java.util.Arrays.fill(inAttempt, 0);
            java.util.Arrays.fill(inRefusal, 0);
            java.util.Arrays.fill(inReserve, false);
            java.util.Arrays.fill(inNoResources, false);
            java.util.Arrays.fill(inTag, 0L);
            java.util.Arrays.fill(inBase, 0L);
            java.util.Arrays.fill(inRkey, 0);
            ConnectionStorage.freeListInOrder(freeRecords);
            byMsn.clear();
            receives.clear();
        }
    }

    /** Binds to a tenant's protection domain (control path, before use): rkeys then name only its regions. */
    void protectionDomain(final ProtectionDomain domain)
    {
        this.pd = domain;
        receives.protectionDomain(domain);
    }

    /** @return inbound message records in use. */
    int inUse()
    {
        return capacity - freeCount;
    }

    /** @return bytes of the records, receives and their maps (S10.1). */
    long stateBytes()
    {
        final long record = 1 + 4 * 9 + 1 + 1 + 4 + 4 + 4 + 2;
        return record * capacity + 16L * ConnectionStorage.mapCapacity(4 * capacity) +
            PostedReceives.stateBytes(receives.capacity);
    }

    /**
     * Posts a receive on a stream (S4.5); the connection checked the stream and its own state.
     *
     * @return a {@link PostResult} code.
     */
    int post(final int streamId, final ReceiveWorkRequest request)
    {
        return receives.post(streamId, request);
    }

    // S12.4: a packet of a message with state here carries the tag its state holds (and, for a WRITE, the same
    // base address and rkey); one without, the tag of its own headers; S12.7: a new message only inside the window
    // (a READ response is checked against the READ's send slot by the connection)
    boolean authentic(
        final RoceFrame frame, final long tag, final byte messageKind, final int streamId, final int msn,
        final long key, final int offset)
    {
        final MemorySegment buffer = frame.segment();
        final long seth = frame.customHeaderOffset();
        final int record = null == byMsn ? MISSING : (int)byMsn.get(key); // detached: no record
        if (record != MISSING)
        {
            boolean valid = tag == inTag[record];
            if (valid && (messageKind == WRITE || messageKind == WRITE_IMM))
            {
                final long reth = seth + SprayExtendedTransportHeader.LENGTH;
                valid = RdmaExtendedTransportHeader.virtualAddress(buffer, reth) - offset == inBase[record] &&
                    RdmaExtendedTransportHeader.rkey(buffer, reth) == inRkey[record];
            }
            if (!valid)
            {
                connection.refused(SprayCounters.AUTH_FAILURES);
            }
            return valid;
        }
        if (tag != auth.expectedTag(frame))
        {
            connection.refused(SprayCounters.AUTH_FAILURES);
            return false;
        }
        if (msn - nextMsn[streamId] >= capacity)
        {
            connection.refused(SprayCounters.MSN_OUT_OF_WINDOW);
            return false;
        }
        return true;
    }

    /** {@link #roomFor}: the packet can be placed (or is refused or a duplicate for another reason). */
    static final int ROOM = 0;
    /** {@link #roomFor}: its attempt is refused for want of resources, with an RNR NACK (S10.2). */
    static final int REFUSE = 1;
    /** {@link #roomFor}: not even a reserve record: the packet is dropped unseen (the sender takes it as lost). */
    static final int NO_ROOM = 2;

    /**
     * @return whether the state a packet of a message needs is there: its record (inside the window) and placement
     * marks, and for a READ the room to respond ({@code responseRoom}): {@link #ROOM}; else {@link #REFUSE} when a
     * record can hold the refusal, or {@link #NO_ROOM}.
     */
    int roomFor(
        final byte messageKind, final int streamId, final int msn, final long key, final int packet, final int attempt,
        final boolean responseRoom)
    {
        final int record = (int)byMsn.get(key);
        if (record == MISSING)
        {
            if (msn - nextMsn[streamId] < 0 ||
                (window.hasRoom() && marks.hasFreeChunk() && (messageKind != READ || responseRoom)))
            {
                return ROOM;
            }
            return window.hasRoomToRefuse() ? REFUSE : NO_ROOM;
        }
        if ((inRnr[record] && !SprayExtendedTransportHeader.isLaterAttempt(attempt, inAttempt[record])) ||
            inDone[record] || inSyndrome[record] != 0)
        {
            return ROOM; // refused or complete: nothing is marked (a retry of a refused attempt is judged below)
        }
        if (inNoResources[record] && inReceived[record] == 0)
        {
            // the retry of an attempt refused for want of resources: placed if there is room now
            return (!inReserve[record] || window.hasRoom()) && marks.hasFreeChunk() &&
                (messageKind != READ || responseRoom) ? ROOM : REFUSE;
        }
        return marks.roomToMark(record, packet) ? ROOM : REFUSE;
    }

    /** Places a data packet the path layer accepted (S4.2), counts it towards its message (S4.4). */
    void accept(
        final RoceFrame frame,
        final int path,
        final byte messageKind,
        final int streamId,
        final int msn,
        final long key,
        final int offset,
        final int messageLength,
        final int payloadLength,
        final int room,
        final long now)
    {
        if (errored[streamId] && msn - erroredMsn[streamId] > 0)
        {
            counters.increment(SprayCounters.FLUSHED); // S9.4: the stream is in error, later messages are not placed
            return;
        }
        int record = (int)byMsn.get(key);
        if (record == MISSING)
        {
            if (msn - nextMsn[streamId] < 0)
            {
                counters.increment(SprayCounters.DUPLICATES); // message already completed and retired
                return;
            }
            record = takeRecord(room == REFUSE && !window.hasRoom());
            inKind[record] = messageKind;
            inStream[record] = streamId;
            inMsn[record] = msn;
            inLength[record] = messageLength;
            inExpected[record] = messageKind == READ ? 1 : SendSlots.packetsFor(messageLength, mtu);
            inReceived[record] = 0;
            inSyndrome[record] = 0;
            inReceive[record] = MISSING;
            // not verbatim (issue 13): the stale immediate fixed here as in InboundMessageRecords.open, so that a
            // refused SEND with immediate's error completion carries no other message's immediate in either layer
            inImmediate[record] = 0;
            inRsn[record] = SprayExtendedTransportHeader.rsn(frame.segment(), frame.customHeaderOffset());
            inDone[record] = false;
            inRnr[record] = false;
            inAttempt[record] = SprayExtendedTransportHeader.attempt(frame.segment(), frame.customHeaderOffset());
            inRefusal[record] = 0;
            inNoResources[record] = false;
            inTag[record] = SprayExtendedTransportHeader.messageTag(frame.segment(), frame.customHeaderOffset());
            if (messageKind == WRITE || messageKind == WRITE_IMM)
            {
                final long reth = frame.customHeaderOffset() + SprayExtendedTransportHeader.LENGTH;
                inBase[record] = RdmaExtendedTransportHeader.virtualAddress(frame.segment(), reth) - offset;
                inRkey[record] = RdmaExtendedTransportHeader.rkey(frame.segment(), reth);
            }
            byMsn.put(key, record);
        }
        if (inKind[record] != messageKind || inLength[record] != messageLength ||
            inRsn[record] != SprayExtendedTransportHeader.rsn(frame.segment(), frame.customHeaderOffset()))
        {
            engine.counters().increment(SprayCounters.MALFORMED);
            return;
        }
        if (inSyndrome[record] != 0)
        {
            // S9.3: repeated for every further packet
            control.sendNack(path, inSyndrome[record], streamId, msn, inRefusal[record]);
            return;
        }
        if (inDone[record])
        {
            counters.increment(SprayCounters.DUPLICATES);
            return;
        }
        // S9.3-3: a packet of a later attempt (the sender's retry) ends the refusal of the earlier one; a packet of
        // an earlier attempt is a late copy of one the sender has given up on: neither placed nor counted
        final int attempt = SprayExtendedTransportHeader.attempt(frame.segment(), frame.customHeaderOffset());
        if (attempt != inAttempt[record])
        {
            if (!SprayExtendedTransportHeader.isLaterAttempt(attempt, inAttempt[record]))
            {
                counters.increment(SprayCounters.DUPLICATES);
                return;
            }
            inAttempt[record] = attempt;
            inRnr[record] = false;
        }
        if (inRnr[record])
        {
            refuseRnr(path, record, streamId, msn, now); // the refused attempt is still arriving: refuse all of it
            return;
        }
        if (room == REFUSE)
        {
            refuseForResources(path, record, streamId, msn, now);
            return;
        }
        if (inNoResources[record])
        {
            inNoResources[record] = false; // a retry with room: a reserve record joins the window
            if (inReserve[record])
            {
                inReserve[record] = false;
                window.joinWindow();
            }
        }

        final MemorySegment buffer = frame.segment();
        final long seth = frame.customHeaderOffset();
        final MemorySegment target;
        final long targetOffset;
        switch (messageKind)
        {
            case WRITE, WRITE_IMM ->
            {
                final long reth = seth + SprayExtendedTransportHeader.LENGTH;
                final long va = RdmaExtendedTransportHeader.virtualAddress(buffer, reth);
                final int key32 = RdmaExtendedTransportHeader.rkey(buffer, reth);
                final int dma = RdmaExtendedTransportHeader.dmaLength(buffer, reth);
                if (dma != messageLength ||
                    pd.checkRemoteAccess(key32, va - offset, messageLength, AccessFlags.REMOTE_WRITE) != AccessCheck.OK)
                {
                    refuse(path, record, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, streamId, msn);
                    return;
                }
                if (messageKind == WRITE_IMM)
                {
                    final int receive = receives.find(streamId, inRsn[record]); // S4.5: matched by RSN
                    if (receive == MISSING)
                    {
                        refuseRnr(path, record, streamId, msn, now);
                        return;
                    }
                    inReceive[record] = receive;
                    inImmediate[record] =
                        ImmediateDataHeader.immediateData(buffer, reth + RdmaExtendedTransportHeader.LENGTH);
                }
                final MemoryRegion region = pd.regionByRkey(key32);
                target = region.segment();
                targetOffset = region.offsetOf(va);
            }
            case SEND, SEND_IMM ->
            {
                final int receive = receives.find(streamId, inRsn[record]); // S4.5: matched by RSN
                if (receive == MISSING)
                {
                    refuseRnr(path, record, streamId, msn, now);
                    return;
                }
                inReceive[record] = receive;
                if (messageLength > receives.length(receive))
                {
                    refuse(path, record, NegativeAckHeader.SYNDROME_REMOTE_INVALID_REQUEST, streamId, msn);
                    return;
                }
                if (receives.isDeregistered(receive))
                {
                    // the receive's memory was deregistered: refused, the receive completes with LOC_PROT_ERR
                    refuse(path, record, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, streamId, msn);
                    return;
                }
                if (messageKind == SEND_IMM)
                {
                    inImmediate[record] =
                        ImmediateDataHeader.immediateData(buffer, seth + SprayExtendedTransportHeader.LENGTH);
                }
                target = receives.target(receive);
                targetOffset = receives.targetOffset(receive, offset);
            }
            case READ ->
            {
                final long reth = seth + SprayExtendedTransportHeader.LENGTH;
                final long va = RdmaExtendedTransportHeader.virtualAddress(buffer, reth);
                final int key32 = RdmaExtendedTransportHeader.rkey(buffer, reth);
                final int dma = RdmaExtendedTransportHeader.dmaLength(buffer, reth);
                if (dma != messageLength || dma < 0 ||
                    pd.checkRemoteAccess(key32, va, dma, AccessFlags.REMOTE_READ) != AccessCheck.OK)
                {
                    refuse(path, record, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, streamId, msn);
                    return;
                }
                if (marks.mark(record, 0) == PlacementMarks.DUPLICATE)
                {
                    counters.increment(SprayCounters.DUPLICATES);
                    return;
                }
                connection.queueReadResponse(streamId, msn, pd.regionByRkey(key32), va, dma);
                inReceived[record] = 1;
                inDone[record] = true;
                retire(streamId);
                return;
            }
            default -> throw new IllegalStateException("kind " + messageKind);
        }
        if (marks.mark(record, offset / mtu) == PlacementMarks.DUPLICATE)
        {
            counters.increment(SprayCounters.DUPLICATES);
            return;
        }
        if (payloadLength > 0)
        {
            MemorySegment.copy(buffer, frame.payloadOffset(), target, targetOffset, payloadLength);
            counters.add(SprayCounters.RX_BYTES, payloadLength);
            pathCounters[path].add(SprayCounters.RX_BYTES, payloadLength);
        }
        if (++inReceived[record] == inExpected[record])
        {
            inDone[record] = true;
            retire(streamId);
        }
    }

    private void refuse(final int path, final int record, final int syndrome, final int streamId, final int msn)
    {
        inSyndrome[record] = syndrome;
        inDone[record] = true;
        // S9.3: counted before its NACK and the ACK of its packet leave, so every ACK that covers a refused
        // packet tells the sender a refusal exists; a refusal of an earlier message of a stream already in
        // error keeps the stream's number (the sender, which then holds that stream's earlier messages until
        // the receiver confirms them, learns of it by the number it already has or by asking)
        final int refusal = errored[streamId] ? erroredRefusal[streamId] : refusals.next();
        inRefusal[record] = refusal;
        control.sendNack(path, syndrome, streamId, msn, refusal);
        if (!errored[streamId] || msn - erroredMsn[streamId] < 0)
        {
            errored[streamId] = true;
            erroredMsn[streamId] = msn;
            erroredSyndrome[streamId] = syndrome;
            erroredRefusal[streamId] = refusal;
            // later messages of the stream that had begun arriving are abandoned (control path: rare)
            for (int other = 0; other < capacity; other++)
            {
                if (inStream[other] == streamId && byMsn.get(key(streamId, inMsn[other])) == other &&
                    inMsn[other] - msn > 0)
                {
                    byMsn.remove(key(streamId, inMsn[other]));
                    marks.release(other, inExpected[other]);
                    freeRecord(other);
                    counters.increment(SprayCounters.FLUSHED);
                }
            }
        }
        retire(streamId);
    }

    private int takeRecord(final boolean fromReserve)
    {
        final int record = freeRecords[--freeCount];
        inReserve[record] = fromReserve;
        window.take(fromReserve);
        return record;
    }

    private void freeRecord(final int record)
    {
        window.release(inReserve[record]);
        freeRecords[freeCount++] = record;
    }

    // S10.2: no room for this attempt (a record inside the window, placement marks, READ response resources): it
    // is refused as an RNR attempt is, and the marks of any packet of it placed so far are given back (its retry
    // places every packet again)
    private void refuseForResources(final int path, final int record, final int streamId, final int msn, final long now)
    {
        marks.release(record, inExpected[record]);
        inRnr[record] = true;
        inNoResources[record] = true;
        inReceived[record] = 0;
        inRefusal[record] = refusals.next();
        refuseRnr(path, record, streamId, msn, now);
    }

    // RNR: the whole attempt is refused, packet by packet, until a packet of a later attempt (the sender's retry,
    // S9.3-3) starts clean, so no byte of a refused attempt is ever counted, however many copies of its packets
    // arrive (a packet moved to another path whose original arrived too, S7.4.1). A refusal for want
    // of resources is NACKed only within the engine's response rate (S10.2, S12.9): the SACKH's refusal count and
    // the sender's query stand in for a NACK withheld
    private void refuseRnr(final int path, final int record, final int streamId, final int msn, final long now)
    {
        if (!inRnr[record])
        {
            inRnr[record] = true;
            inNoResources[record] = false;
            inReceived[record] = 0;
            inRefusal[record] = refusals.next(); // each refused attempt is a refusal the sender must learn of (S9.3)
        }
        if (!inNoResources[record])
        {
            control.sendNack(path, NegativeAckHeader.SYNDROME_RNR, streamId, msn, inRefusal[record]);
        }
        else
        {
            counters.increment(SprayCounters.NO_RESOURCES);
            if (engine.tryRespond(now))
            {
                control.sendNack(path, NegativeAckHeader.SYNDROME_RNR, NegativeAckHeader.RNR_REASON_NO_RESOURCES,
                    streamId, msn, inRefusal[record]);
            }
        }
    }

    private void retire(final int streamId)
    {
        while (true)
        {
            final long key = key(streamId, nextMsn[streamId]);
            final int record = (int)byMsn.get(key);
            if (record == MISSING || !inDone[record])
            {
                return;
            }
            final int receive = inReceive[record];
            final byte messageKind = inKind[record];
            if (receive != MISSING && (messageKind == SEND || messageKind == SEND_IMM || messageKind == WRITE_IMM) &&
                !receives.holds(streamId, inRsn[record], receive))
            {
                // session 29: the record table completed (and freed) a receive twice when two messages named its
                // RSN; the rule both sides now keep is InboundRetirement's
                engine.counters().increment(SprayCounters.RECEIVES_CLAIMED_TWICE);
            }
            else if (receive != MISSING && (messageKind == SEND || messageKind == SEND_IMM || messageKind == WRITE_IMM))
            {
                final WorkCompletionStatus st = inSyndrome[record] == 0 ? WorkCompletionStatus.SUCCESS :
                    inSyndrome[record] == NegativeAckHeader.SYNDROME_REMOTE_INVALID_REQUEST ?
                    WorkCompletionStatus.LOC_LEN_ERR : WorkCompletionStatus.LOC_PROT_ERR;
                final boolean imm = messageKind != SEND;
                if (!receives.complete(streamId, inRsn[record], receive, st,
                    messageKind == WRITE_IMM ? WorkCompletionOpcode.RECV_RDMA_WITH_IMM : WorkCompletionOpcode.RECV,
                    inLength[record], imm, imm ? inImmediate[record] : 0))
                {
                    counters.increment(SprayCounters.CQ_OVERRUNS);
                    connection.localError();
                }
            }
            counters.increment(SprayCounters.MESSAGES_RECEIVED);
            byMsn.remove(key);
            marks.release(record, inExpected[record]);
            freeRecord(record);
            nextMsn[streamId]++;
        }
    }

    // S9.3: the receiver of a message tells its fate: placed, or refused (again, with the refusal's number)
    void answerQuery(final int streamId, final int msn)
    {
        if (errored[streamId] && msn - erroredMsn[streamId] >= 0)
        {
            // refused, or flushed behind the refused message: the answer names the refused one
            control.sendNack(0, erroredSyndrome[streamId], streamId, erroredMsn[streamId], erroredRefusal[streamId]);
            return;
        }
        final int record = null == byMsn ? MISSING : (int)byMsn.get(key(streamId, msn)); // detached: no record
        if (record == MISSING)
        {
            if (msn - nextMsn[streamId] < 0)
            {
                final int lateRefusal = refusals.lateRefusal(streamId, msn); // a READ whose response was refused
                control.sendNack(0, lateRefusal != 0 ? NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR :
                    NegativeAckHeader.SYNDROME_ACCEPTED, streamId, msn, lateRefusal); // completed and retired
            }
            return;
        }
        if (inSyndrome[record] != 0)
        {
            control.sendNack(0, inSyndrome[record], streamId, msn, inRefusal[record]);
        }
        else if (inDone[record])
        {
            control.sendNack(0, NegativeAckHeader.SYNDROME_ACCEPTED, streamId, msn, 0);
        }
        else if (inRefusal[record] != 0 && (inRnr[record] || inReceived[record] == 0))
        {
            // the last attempt was refused
            control.sendNack(0, NegativeAckHeader.SYNDROME_RNR, inNoResources[record] ?
                NegativeAckHeader.RNR_REASON_NO_RESOURCES : NegativeAckHeader.RNR_REASON_NO_RECEIVE, streamId, msn,
                inRefusal[record]);
        }
    }

    // posted receives complete with WR_FLUSH_ERR, in posting order per stream
    void flushReceives()
    {
        final int overruns = receives.flush();
        if (overruns > 0)
        {
            counters.add(SprayCounters.CQ_OVERRUNS, overruns);
            connection.localError();
        }
    }
}
