package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.AccessCheck;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.wire.ImmediateDataHeader;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.RdmaExtendedTransportHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;

import java.lang.foreign.MemorySegment;

import static io.spraynic.datapath.transport.spray.MessageKinds.READ;
import static io.spraynic.datapath.transport.spray.MessageKinds.SEND;
import static io.spraynic.datapath.transport.spray.MessageKinds.SEND_IMM;
import static io.spraynic.datapath.transport.spray.MessageKinds.WRITE;
import static io.spraynic.datapath.transport.spray.MessageKinds.WRITE_IMM;

/**
 * The receive side of one spray connection's message layer (docs/PROTOCOL.md S4, S9.3, S9.4, S12.4, S12.7): a
 * data packet the path layer accepted is checked against its message's record, access-checked and placed where
 * its headers say (S4.2), counted once (S4.4, through the connection's {@link PlacementMarks}), or refused. Its
 * parts, each owning its state:
 * <ul>
 * <li>{@link InboundMessageRecords}: the records of messages being received, found by (stream, MSN);</li>
 * <li>{@link PostedReceives}: the receives the application posted, matched by RSN, placed into and completed;</li>
 * <li>{@link InboundRetirement}: each stream's next MSN; messages retire and their receives complete in MSN order
 * (S4.8);</li>
 * <li>{@link InboundRefusals}: refusals for good, RNR attempts, refusals for want of resources, their NACKs,
 * streams in error, and the answers to queries (S9.3, S9.4, S10.2).</li>
 * </ul>
 * A message complete on its first packet and next in its stream's MSN order (most one-packet messages) needs no
 * record: it is placed and completed at once ({@link #placeWhole}), and the stream's next MSN is all that remembers
 * it. READ responses belong to the READ's send slot and stay with the connection. Allocation-free after
 * construction.
 */
final class InboundMessages
{
    private static final int MISSING = SendSlots.MISSING;

    /** Inbound message records: the placement marks' owners below this are records, above it READs' send slots. */
    final int capacity;
    private final SprayConnection connection; // READ responses, local errors
    private final TransportCounters counters;
    private final TransportCounters[] pathCounters;
    private final PacketAuthenticator auth;
    private final PlacementMarks marks;
    private final int mtu;
    private ProtectionDomain pd;
    private final InboundMessageRecords records;
    private final PostedReceives receives;
    private final InboundRetirement retirement;
    private final InboundRefusals refusals;
    private final TransportCounters engineCounters; // malformed packets
    private Storage storage; // the pooled arrays of the records and receives, while attached
    private MemoryRegion lastRegion; // the region the last rkey named in pd, kept while registered (issue 13)

    InboundMessages(
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
        this.counters = counters;
        this.pathCounters = pathCounters;
        this.auth = auth;
        this.marks = marks;
        this.mtu = config.mtu;
        this.pd = engine.protectionDomain();
        this.engineCounters = engine.counters();

        capacity = config.maxInboundMessages;
        records = new InboundMessageRecords(capacity);
        receives = new PostedReceives(config.receiveQueueDepth, config.streams, config.receiveCq, config.localCid, pd);
        retirement = new InboundRetirement(config.streams, records, marks, receives, counters, engineCounters,
            connection);
        this.refusals = new InboundRefusals(config.streams, records, marks, retirement, refusals, control, engine,
            counters);
    }

    /**
     * Takes the arrays of a pooled {@link Storage} (cleared: no record, no receive); this side must be empty and
     * detached. Control path of the connection (its first traffic after being idle).
     */
    void attach(final Storage storage)
    {
        if (records.isAttached() || !records.isEmpty() || storage.capacity != records.capacity)
        {
            throw new IllegalStateException("attach needs an empty, detached side and storage of its capacities");
        }
        receives.attach(storage.receives); // throws, before this side takes anything, unless it fits
        records.attach(storage.records);
        this.storage = storage;
    }

    /** @return whether the records and receives are held (else there are none and nothing reads them). */
    boolean isAttached()
    {
        return null != storage;
    }

    /** @return whether {@link #detach} may run: no inbound message, no posted receive. */
    boolean isDetachable()
    {
        return null != storage && records.isDetachable() && receives.isDetachable();
    }

    /** Gives the arrays back (this side is {@link #isDetachable detachable}); the caller clears and pools them. */
    Storage detach()
    {
        final Storage detached = storage;
        storage = null;
        records.detach();
        receives.detach();
        return detached;
    }

    /** The arrays of the records and receives of one pair of capacities, drawn from and returned to a pool. */
    static final class Storage
    {
        final int capacity;
        final int receiveCapacity;
        final InboundMessageRecords.Storage records;
        final PostedReceives.Storage receives;

        Storage(final int capacity, final int receiveCapacity)
        {
            this.capacity = capacity;
            this.receiveCapacity = receiveCapacity;
            records = new InboundMessageRecords.Storage(capacity);
            receives = new PostedReceives.Storage(receiveCapacity);
        }

        /** @return bytes of the arrays and maps (S10.1). */
        long bytes()
        {
            return records.bytes() + receives.bytes();
        }

        /** Back to the state of a new side: every record and receive free, handed out in a new side's order. */
        void clear()
        {
            records.clear();
            receives.clear();
        }
    }

    /** Binds to a tenant's protection domain (control path, before use): rkeys then name only its regions. */
    void protectionDomain(final ProtectionDomain domain)
    {
        this.pd = domain;
        lastRegion = null; // a region of the old domain
        receives.protectionDomain(domain);
    }

    /** @return inbound message records in use. */
    int inUse()
    {
        return records.inUse();
    }

    /** @return bytes of the records, receives and their maps (S10.1). */
    long stateBytes()
    {
        return InboundMessageRecords.stateBytes(records.capacity) + PostedReceives.stateBytes(receives.capacity);
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

    // S12.4: a packet of a message with state here carries the tag its state holds, of attempt 0 (and, for a WRITE,
    // the same base address and rkey); one of an RNR retry (rare) or without state, the tag of its own headers, its
    // attempt included, so that a changed attempt fails; S12.7: a new message only inside the window (a READ response
    // is checked against the READ's send slot by the connection)
    boolean authentic(
        final RoceFrame frame, final long tag, final byte messageKind, final int streamId, final int msn,
        final long key, final int offset)
    {
        final MemorySegment buffer = frame.segment();
        final long seth = frame.customHeaderOffset();
        final int record = records.recordOf(key); // detached: no record
        if (record != MISSING)
        {
            boolean valid = SprayExtendedTransportHeader.attempt(buffer, seth) == 0 ? tag == records.tag(record) :
                tag == auth.expectedTag(frame);
            if (valid && (messageKind == WRITE || messageKind == WRITE_IMM))
            {
                final long reth = seth + SprayExtendedTransportHeader.LENGTH;
                valid = RdmaExtendedTransportHeader.virtualAddress(buffer, reth) - offset == records.base(record) &&
                    RdmaExtendedTransportHeader.rkey(buffer, reth) == records.rkey(record);
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
        if (msn - retirement.nextMsn(streamId) >= records.capacity)
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
        final int record = records.recordOf(key);
        if (record == MISSING)
        {
            if (msn - retirement.nextMsn(streamId) < 0 ||
                (records.hasRoom() && marks.hasFreeChunk() && (messageKind != READ || responseRoom)))
            {
                return ROOM;
            }
            return records.hasRoomToRefuse() ? REFUSE : NO_ROOM;
        }
        if ((records.isAttemptRefused(record) &&
            !SprayExtendedTransportHeader.isLaterAttempt(attempt, records.attempt(record))) ||
            records.isDone(record) || records.syndrome(record) != 0)
        {
            return ROOM; // refused or complete: nothing is marked (a retry of a refused attempt is judged below)
        }
        if (records.isRefusedForResources(record) && records.received(record) == 0)
        {
            // the retry of an attempt refused for want of resources: placed if there is room now
            return (!records.isFromReserve(record) || records.hasRoom()) && marks.hasFreeChunk() &&
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
        if (refusals.isFlushed(streamId, msn))
        {
            counters.increment(SprayCounters.FLUSHED); // S9.4: the stream is in error, later messages are not placed
            return;
        }
        int record = records.recordOf(key);
        if (record == MISSING)
        {
            if (msn - retirement.nextMsn(streamId) < 0)
            {
                counters.increment(SprayCounters.DUPLICATES); // message already completed and retired
                return;
            }
            if (msn == retirement.nextMsn(streamId) && offset == 0 && room == ROOM &&
                (messageKind == READ || messageLength <= mtu) &&
                placeWhole(frame, path, messageKind, streamId, msn, messageLength, payloadLength))
            {
                return; // the common case: complete on its first packet and next in MSN order, never recorded
            }
            final MemorySegment buffer = frame.segment();
            final long seth = frame.customHeaderOffset();
            record = records.open(key, room == REFUSE && !records.hasRoom(), messageKind, streamId, msn,
                messageLength, messageKind == READ ? 1 : SendSlots.packetsFor(messageLength, mtu),
                SprayExtendedTransportHeader.rsn(buffer, seth), SprayExtendedTransportHeader.attempt(buffer, seth),
                // the tag of the message's attempt 0, which its packets of every attempt are checked against (S12.4)
                SprayExtendedTransportHeader.attempt(buffer, seth) == 0 ? SprayExtendedTransportHeader.messageTag(buffer,
                    seth) : auth.expectedTag(frame, 0));
            if (messageKind == WRITE || messageKind == WRITE_IMM)
            {
                final long reth = seth + SprayExtendedTransportHeader.LENGTH;
                records.writeTarget(record, RdmaExtendedTransportHeader.virtualAddress(buffer, reth) - offset,
                    RdmaExtendedTransportHeader.rkey(buffer, reth));
            }
        }
        if (records.kind(record) != messageKind || records.length(record) != messageLength ||
            records.rsn(record) != SprayExtendedTransportHeader.rsn(frame.segment(), frame.customHeaderOffset()))
        {
            engineCounters.increment(SprayCounters.MALFORMED);
            return;
        }
        if (records.syndrome(record) != 0)
        {
            refusals.repeatRefusal(path, record, streamId, msn); // S9.3: repeated for every further packet
            return;
        }
        if (records.isDone(record))
        {
            counters.increment(SprayCounters.DUPLICATES);
            return;
        }
        // S9.3-3: a packet of a later attempt (the sender's retry) ends the refusal of the earlier one; a packet of
        // an earlier attempt is a late copy of one the sender has given up on: neither placed nor counted
        final int attempt = SprayExtendedTransportHeader.attempt(frame.segment(), frame.customHeaderOffset());
        if (attempt != records.attempt(record))
        {
            if (!SprayExtendedTransportHeader.isLaterAttempt(attempt, records.attempt(record)))
            {
                counters.increment(SprayCounters.DUPLICATES);
                return;
            }
            records.laterAttempt(record, attempt);
        }
        if (records.isAttemptRefused(record))
        {
            // the refused attempt is still arriving: refuse all of it
            refusals.refuseRnr(path, record, streamId, msn, now);
            return;
        }
        if (room == REFUSE)
        {
            refusals.refuseForResources(path, record, streamId, msn, now);
            return;
        }
        if (records.isRefusedForResources(record))
        {
            records.retryHasRoom(record); // a retry with room: a reserve record joins the window
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
                final MemoryRegion region = regionByRkey(key32);
                if (dma != messageLength || ProtectionDomain.checkAccess(region, va - offset, messageLength,
                    AccessFlags.REMOTE_WRITE) != AccessCheck.OK)
                {
                    refusals.refuse(path, record, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, streamId, msn);
                    return;
                }
                if (messageKind == WRITE_IMM)
                {
                    final int receive = receives.find(streamId, records.rsn(record)); // S4.5: matched by RSN
                    if (receive == MISSING)
                    {
                        refusals.refuseRnr(path, record, streamId, msn, now);
                        return;
                    }
                    records.receive(record, receive);
                    records.immediate(record,
                        ImmediateDataHeader.immediateData(buffer, reth + RdmaExtendedTransportHeader.LENGTH));
                }
                target = region.segment();
                targetOffset = region.offsetOf(va);
            }
            case SEND, SEND_IMM ->
            {
                final int receive = receives.find(streamId, records.rsn(record)); // S4.5: matched by RSN
                if (receive == MISSING)
                {
                    refusals.refuseRnr(path, record, streamId, msn, now);
                    return;
                }
                records.receive(record, receive);
                if (messageLength > receives.length(receive))
                {
                    refusals.refuse(path, record, NegativeAckHeader.SYNDROME_REMOTE_INVALID_REQUEST, streamId, msn);
                    return;
                }
                if (receives.isDeregistered(receive))
                {
                    // the receive's memory was deregistered: refused, the receive completes with LOC_PROT_ERR
                    refusals.refuse(path, record, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, streamId, msn);
                    return;
                }
                if (messageKind == SEND_IMM)
                {
                    records.immediate(record,
                        ImmediateDataHeader.immediateData(buffer, seth + SprayExtendedTransportHeader.LENGTH));
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
                final MemoryRegion region = regionByRkey(key32);
                if (dma != messageLength || dma < 0 ||
                    ProtectionDomain.checkAccess(region, va, dma, AccessFlags.REMOTE_READ) != AccessCheck.OK)
                {
                    refusals.refuse(path, record, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR, streamId, msn);
                    return;
                }
                if (marks.mark(record, 0) == PlacementMarks.DUPLICATE)
                {
                    counters.increment(SprayCounters.DUPLICATES);
                    return;
                }
                connection.queueReadResponse(streamId, msn, region, va, dma);
                records.readTaken(record);
                retirement.retire(streamId);
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
        if (records.countPacket(record))
        {
            retirement.retire(streamId);
        }
    }

    // issue 13: a message complete on its first packet and next in its stream's MSN order is placed and completed
    // here, without a record or placement marks (no hash lookup, insert or remove): nothing of it outlives this
    // call, and a duplicate of it is known by the stream's next MSN having passed it, as a retired message's is.
    // What would need state (a refusal: access, length, RNR) returns false before any effect, and the record path
    // takes the packet from the start and decides as it always did
    private boolean placeWhole(
        final RoceFrame frame,
        final int path,
        final byte messageKind,
        final int streamId,
        final int msn,
        final int messageLength,
        final int payloadLength)
    {
        final MemorySegment buffer = frame.segment();
        final long seth = frame.customHeaderOffset();
        final int rsn = SprayExtendedTransportHeader.rsn(buffer, seth);
        int receive = MISSING;
        int immediate = 0;
        final MemorySegment target;
        final long targetOffset;
        switch (messageKind)
        {
            case WRITE, WRITE_IMM ->
            {
                final long reth = seth + SprayExtendedTransportHeader.LENGTH;
                final long va = RdmaExtendedTransportHeader.virtualAddress(buffer, reth);
                final MemoryRegion region = regionByRkey(RdmaExtendedTransportHeader.rkey(buffer, reth));
                if (RdmaExtendedTransportHeader.dmaLength(buffer, reth) != messageLength ||
                    ProtectionDomain.checkAccess(region, va, messageLength, AccessFlags.REMOTE_WRITE) != AccessCheck.OK)
                {
                    return false;
                }
                if (messageKind == WRITE_IMM)
                {
                    receive = receives.find(streamId, rsn); // S4.5: matched by RSN
                    if (receive == MISSING)
                    {
                        return false;
                    }
                    immediate = ImmediateDataHeader.immediateData(buffer, reth + RdmaExtendedTransportHeader.LENGTH);
                }
                target = region.segment();
                targetOffset = region.offsetOf(va);
            }
            case SEND, SEND_IMM ->
            {
                receive = receives.find(streamId, rsn); // S4.5: matched by RSN
                if (receive == MISSING || messageLength > receives.length(receive) || receives.isDeregistered(receive))
                {
                    return false;
                }
                if (messageKind == SEND_IMM)
                {
                    immediate = ImmediateDataHeader.immediateData(buffer, seth + SprayExtendedTransportHeader.LENGTH);
                }
                target = receives.target(receive);
                targetOffset = receives.targetOffset(receive, 0);
            }
            case READ ->
            {
                final long reth = seth + SprayExtendedTransportHeader.LENGTH;
                final long va = RdmaExtendedTransportHeader.virtualAddress(buffer, reth);
                final int key32 = RdmaExtendedTransportHeader.rkey(buffer, reth);
                final int dma = RdmaExtendedTransportHeader.dmaLength(buffer, reth);
                final MemoryRegion region = regionByRkey(key32);
                if (dma != messageLength || dma < 0 ||
                    ProtectionDomain.checkAccess(region, va, dma, AccessFlags.REMOTE_READ) != AccessCheck.OK)
                {
                    return false;
                }
                connection.queueReadResponse(streamId, msn, region, va, dma);
                retirement.completeInOrder(streamId, messageKind, rsn, MISSING, 0, messageLength, 0);
                return true;
            }
            default ->
            {
                return false;
            }
        }
        if (payloadLength > 0)
        {
            MemorySegment.copy(buffer, frame.payloadOffset(), target, targetOffset, payloadLength);
            counters.add(SprayCounters.RX_BYTES, payloadLength);
            pathCounters[path].add(SprayCounters.RX_BYTES, payloadLength);
        }
        retirement.completeInOrder(streamId, messageKind, rsn, receive, 0, messageLength, immediate);
        return true;
    }

    // the region a peer's rkey names in this end's domain, as pd.regionByRkey answers (issue 13: one table lookup
    // per WRITE packet, where there were two, and none while the packets name the region the last one did). The
    // region last found answers again while it is registered: a registered region stays in the domain's table under
    // its rkey, which no other region of the domain can hold, and deregistration takes it out and marks it; a
    // new domain drops it (protectionDomain)
    private MemoryRegion regionByRkey(final int rkey)
    {
        final MemoryRegion last = lastRegion;
        if (null != last && last.rkey() == rkey && last.isRegistered())
        {
            return last;
        }
        final MemoryRegion found = pd.regionByRkey(rkey);
        if (null != found)
        {
            lastRegion = found;
        }
        return found;
    }

    // S9.3: the receiver of a message tells its fate: placed, or refused (again, with the refusal's number)
    void answerQuery(final int streamId, final int msn)
    {
        refusals.answerQuery(streamId, msn);
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
