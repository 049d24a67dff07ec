package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.verbs.AccessCheck;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.ProbeHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.MemorySegment;
import java.util.function.LongConsumer;

/**
 * One spray connection, both directions (docs/PROTOCOL.md): P paths per direction over the planes, each
 * with its own sequence space, SACK window, RTT estimate and congestion window; S ordered streams of
 * messages on top. Made by {@link SprayEngine#open}; driven by its engine's thread only.
 * <p>
 * Sender: a posted message takes a slot of a fixed table; its packets are made one at a time when a path
 * has window space and the pacer tokens (S7.2, S8.4); a packet is named in its path's
 * {@link PathSendWindow} by a handle (slot, generation, packet index) from which the frame is rebuilt for a
 * retransmission, re-reading the payload from the registered source memory: nothing is copied or kept.
 * Receiver: every data packet is placed where its headers say (S4.2) and counted once towards its
 * message (S4.4); completions leave in MSN order per stream (S4.8).
 * <p>
 * The connection keeps dispatch, the verbs entry points, timers and teardown; its state lives in parts it owns:
 * {@link SendSlots} (the outbound message table), {@link InboundMessages} (inbound records, posted receives,
 * placement and refusals of the receive side), {@link PlacementMarks} (S4.4), {@link PathScheduler} (the
 * outbound paths: S6.8, S7), {@link Pacer} (S8.4, S8.3.1), {@link RetransmitQueues} (S6.6, S7.4),
 * {@link Refusals} (S9.3), {@link SprayFrames} (every frame it writes, and S12.5 addressing),
 * {@link PacketAuthenticator} (S12) and {@link Liveness} (S12.10).
 * <p>
 * All state is allocated when the connection is opened; nothing grows with the number of messages (S10.1,
 * see {@link #stateBytes()}).
 */
public final class SprayConnection implements PathSendWindow.Listener
{
    /** Path state: sending. */
    public static final int ACTIVE = 0;
    /** Path state: failed after repeated timeouts (S7.4), probed back (S7.5). */
    public static final int FAILED = 1;

    /** Tries of a {@code SPRAY_CLOSE} (S9.2), as for a CONNECT. */
    public static final int CLOSE_TRIES = SprayHandshake.CONNECT_TRIES;

    /** Connection states of S9.1 and S9.2, from the moment the connection is open. */
    public enum State
    {
        /** Carrying traffic. */
        ESTABLISHED,
        /** Closing gracefully (S9.2): no new work accepted, this end's outstanding messages finishing. */
        DRAINING,
        /** {@code SPRAY_CLOSE} sent, waiting for {@code SPRAY_CLOSE_ACK}. */
        CLOSING,
        /** Closed: forgotten by its engine (or, after S7.6, refusing everything). */
        CLOSED
    }

    static final long PROBE_HANDLE = -1L;
    private static final long NONE = Long.MIN_VALUE;
    private static final int MISSING = SendSlots.MISSING;
    private static final int PENDING = SendSlots.PENDING;
    private static final int CE = 3;

    // message kinds
    static final byte WRITE = 0;
    static final byte WRITE_IMM = 1;
    static final byte SEND = 2;
    static final byte SEND_IMM = 3;
    static final byte READ = 4;
    static final byte READ_RESPONSE = 5;
    private static final int[] OPCODES = {
        SprayOpcodes.WRITE, SprayOpcodes.WRITE_WITH_IMMEDIATE, SprayOpcodes.SEND, SprayOpcodes.SEND_WITH_IMMEDIATE,
        SprayOpcodes.READ_REQUEST, SprayOpcodes.READ_RESPONSE,
    };
    static int opcodeOf(final byte messageKind)
    {
        return OPCODES[messageKind];
    }

    private static final WorkCompletionStatus[] STATUSES = WorkCompletionStatus.values();

    private final SprayEngine engine;
    private final int index;
    private final int localCid;
    private final int remoteCid;
    private final int paths;
    private final int planes;
    private final int mtu;
    private final int streams;
    private final CompletionQueue sendCq;
    private final CompletionQueue receiveCq;
    private ProtectionDomain pd; // the engine's, unless bound to a tenant's (control path, before use)
    private final SprayConfig config;
    private final TransportCounters counters = SprayCounters.create();
    private final PacketAuthenticator auth;
    private final SprayFrames frames;

    // ---- outbound paths (this end sends data on them): the scheduler's, aliased for the hot path
    private final PathScheduler scheduler;
    private final PathSendWindow[] sendWindows;
    private final RttEstimator[] rtts;
    private final PathCongestionControl[] windows;
    private final TransportCounters[] pathCounters; // both directions of each index

    // ---- inbound paths (the peer sends data on them)
    private final PathReceiveWindow[] receiveWindows;
    private final int[] rxSinceAck;
    private final int[] rxCeSinceAck;
    private final long[] rxFirstUnackedAt;
    private final boolean[] rxHadGap;
    private final int[] rxAckSequence;

    // ---- outbound messages (S4, S9.3)
    private final SendSlots slots;

    // ---- retransmissions and moves
    private final RetransmitQueues resend;
    private final LongConsumer mover = this::enqueueMove;
    private final LongConsumer relocator = this::enqueueRelocation;
    private int relocatingFrom;

    // ---- which packets of each message being received were placed (S4.4), by owner: an inbound message
    // record, or the record count + the slot of a READ awaiting its responses
    private final PlacementMarks marks;

    // ---- inbound messages and posted receives (S4, S9.3)
    private final InboundMessages inbound;

    // ---- pacing (S8.4)
    private final Pacer pacer;
    private int peerRateHintMbps;
    /** The fair-share hint this end last sent the peer (S8.3.2), 0 before any ACK. */
    private int advertisedHintMbps;
    /** The peer announced a start with a probe (S8.3.1) and no data of it has arrived yet. */
    private boolean startAnnounced;

    /** The parameters a handshake opened this connection with (responder side, for repeated CONNECT_ACKs). */
    SprayConnectionConfig handshakeConfig;

    // ---- S12.10: idle timeout and keepalive
    private final Liveness liveness;

    // ---- S9.3: refusals made here (carried in every SACKH), and those of the peer this end has learned of
    private final Refusals refusals = new Refusals();

    // ---- S7.6: every path failed
    private State state = State.ESTABLISHED;
    /** A completion queue overran or a region in use was deregistered: the connection fails on the next tick. */
    private boolean localError;
    private long closeStartedAt;
    private long closeNextAt;
    private long closeBackoff;
    private int closeTries;
    private long closeToken;


    // ---- ACK processing scratch
    private int ackPath;
    private long ackNow;
    private boolean probeAcked;

    SprayConnection(final SprayEngine engine, final int index, final SprayConnectionConfig c)
    {
        final SprayConfig config = engine.config();
        if (c.paths < 1 || c.paths > 64)
        {
            throw new IllegalArgumentException("paths must be in 1..64: " + c.paths);
        }
        if (c.mtu != 256 && c.mtu != 512 && c.mtu != 1024 && c.mtu != 2048 && c.mtu != 4096)
        {
            throw new IllegalArgumentException("MTU must be 256, 512, 1024, 2048 or 4096: " + c.mtu);
        }
        if (c.streams < 1 || c.streams > 65536)
        {
            throw new IllegalArgumentException("streams must be in 1..65536: " + c.streams);
        }
        if (c.sendQueueDepth < 1 || c.sendQueueDepth > 32768 || c.receiveQueueDepth < 1 || c.maxInboundMessages < 1)
        {
            throw new IllegalArgumentException("queue depths must be in 1..32768");
        }
        if (null == c.sendCq || null == c.receiveCq)
        {
            throw new IllegalArgumentException("completion queues are required");
        }
        this.engine = engine;
        this.config = config;
        this.liveness = new Liveness(config.idleTimeoutNanos, config.keepaliveNanos());
        this.index = index;
        this.localCid = c.localCid;
        this.remoteCid = c.remoteCid;
        this.paths = c.paths;
        this.planes = config.planes;
        this.mtu = c.mtu;
        this.streams = c.streams;
        this.sendCq = c.sendCq;
        this.receiveCq = c.receiveCq;
        this.pd = engine.protectionDomain();
        this.auth = new PacketAuthenticator(c);

        scheduler = new PathScheduler(paths, config, engine.random(), c.sendInitialPsn, c.sourcePortBase);
        sendWindows = scheduler.sendWindows;
        rtts = scheduler.rtts;
        windows = scheduler.windows;
        pathCounters = new TransportCounters[paths];
        receiveWindows = new PathReceiveWindow[paths];
        rxSinceAck = new int[paths];
        rxCeSinceAck = new int[paths];
        rxFirstUnackedAt = new long[paths];
        rxHadGap = new boolean[paths];
        rxAckSequence = new int[paths];
        for (int path = 0; path < paths; path++)
        {
            receiveWindows[path] = new PathReceiveWindow(PathScheduler.initialPsn(c.receiveInitialPsn, path));
            pathCounters[path] = SprayCounters.create();
            rxFirstUnackedAt[path] = NONE;
        }

        slots = new SendSlots(c.sendQueueDepth, streams, mtu);
        frames = new SprayFrames(engine, c, auth, counters, pathCounters, slots, scheduler);

        resend = new RetransmitQueues(paths * PathSendWindow.CAPACITY);

        marks = new PlacementMarks(c.placementChunks);
        inbound = new InboundMessages(this, engine, c, counters, pathCounters, auth, marks, refusals);

        pacer = new Pacer(config, mtu);
    }

    // =====================================================================================================
    // Posting (application, on the engine's thread)
    // =====================================================================================================

    /**
     * Posts a WRITE, WRITE with immediate, SEND, SEND with immediate or READ on a stream. The request is
     * copied; {@code request} may be reused at once.
     *
     * @param streamId the stream (S1.4); its messages complete in order (S4.8).
     * @param request  the work request.
     * @return a {@link PostResult} code.
     */
    public int postSend(final int streamId, final SendWorkRequest request)
    {
        if (state != State.ESTABLISHED)
        {
            return PostResult.INVALID_STATE; // S9.2: a closing connection takes no new work
        }
        if (streamId < 0 || streamId >= streams || null == request.opcode() || request.length() < 0)
        {
            return PostResult.INVALID_ARGUMENT;
        }
        final byte messageKind = switch (request.opcode())
        {
            case RDMA_WRITE -> WRITE;
            case RDMA_WRITE_WITH_IMM -> WRITE_IMM;
            case SEND -> SEND;
            case SEND_WITH_IMM -> SEND_IMM;
            case RDMA_READ -> READ;
        };
        final int messageLength = request.length();
        if (messageLength > 0)
        {
            final MemoryRegion source = request.localRegion();
            if (null == source || source.protectionDomain() != pd ||
                pd.checkLocalAccess(source.lkey(), request.localAddress(), messageLength,
                    messageKind == READ ? AccessFlags.LOCAL_WRITE : AccessFlags.NONE) != AccessCheck.OK)
            {
                return PostResult.INVALID_ARGUMENT;
            }
        }
        if (!slots.hasFree())
        {
            return PostResult.QUEUE_FULL;
        }
        final int slot = slots.take();
        final int msn = slots.nextMsn[streamId]++;
        final boolean consumesReceive = messageKind == SEND || messageKind == SEND_IMM || messageKind == WRITE_IMM;
        final boolean rdma = messageKind == WRITE || messageKind == WRITE_IMM || messageKind == READ;
        final int rsn = consumesReceive ? slots.nextRsn[streamId]++ : 0; // S4.5
        slots.kind[slot] = messageKind;
        slots.wrId[slot] = request.wrId();
        slots.stream[slot] = streamId;
        slots.msn[slot] = msn;
        slots.rsn[slot] = rsn;
        slots.region[slot] = messageLength > 0 ? request.localRegion() : null;
        slots.localAddress[slot] = request.localAddress();
        slots.length[slot] = messageLength;
        slots.remoteAddress[slot] = request.remoteAddress();
        slots.rkey[slot] = request.rkey();
        slots.immediate[slot] = request.immediateData();
        slots.signaled[slot] = request.signaled();
        slots.solicited[slot] = request.solicited();
        slots.messageTag[slot] = auth.sendTag(OPCODES[messageKind], streamId, msn, messageLength, rsn,
            rdma ? request.remoteAddress() : 0, rdma ? request.rkey() : 0,
            messageKind == WRITE_IMM || messageKind == SEND_IMM ? request.immediateData() : 0);
        slots.responseTag[slot] = messageKind == READ ? auth.readResponseTag(streamId, msn, messageLength) : 0;
        final int dataPackets = SendSlots.packetsFor(messageLength, mtu);
        slots.packets[slot] = messageKind == READ ? 1 : dataPackets;
        slots.readExpected[slot] = messageKind == READ ? dataPackets : 0;
        slots.appendToStream(slot);
        if (slots.errored[streamId])
        {
            slots.status[slot] = WorkCompletionStatus.WR_FLUSH_ERR.ordinal();
            slots.nextPacket[slot] = slots.packets[slot];
            deliverSendCompletions(streamId);
        }
        else
        {
            slots.enqueueSend(slot);
        }
        return PostResult.OK;
    }

    /**
     * Posts a receive on a stream. The j-th receive posted on stream s is the one the j-th receive-consuming
     * message (SEND, SEND with immediate, WRITE with immediate) of that stream consumes, whatever other
     * messages (WRITE, READ) come between them (S4.5: matched by the RSN the messages carry).
     *
     * @param streamId the stream.
     * @param request  the receive; copied.
     * @return a {@link PostResult} code.
     */
    public int postReceive(final int streamId, final ReceiveWorkRequest request)
    {
        if (state != State.ESTABLISHED)
        {
            return PostResult.INVALID_STATE;
        }
        if (streamId < 0 || streamId >= streams || request.length() < 0)
        {
            return PostResult.INVALID_ARGUMENT;
        }
        return inbound.post(streamId, request);
    }

    // =====================================================================================================
    // Receiving
    // =====================================================================================================

    // S12.5, S12.3: a packet from elsewhere than the peer, or a control packet whose tag fails, is dropped before
    // anything is read from it; data packets are checked by their message tag once their SETH is validated
    void onFrame(final RoceFrame frame, final long now)
    {
        if (!frames.fromPeer(frame, -1))
        {
            refused(SprayCounters.ADDRESS_MISMATCHES);
            return;
        }
        if (PacketAuthenticator.isTagged(frame.opcode()) && !controlTagValid(frame))
        {
            return;
        }
        switch (frame.opcode())
        {
            case SprayOpcodes.ACK -> onAckPacket(frame, now);
            case SprayOpcodes.NACK -> onNackPacket(frame, now);
            case SprayOpcodes.QUERY -> onQueryPacket(frame, now);
            case SprayOpcodes.PROBE -> onProbePacket(frame, now);
            case SprayOpcodes.WRITE, SprayOpcodes.WRITE_WITH_IMMEDIATE, SprayOpcodes.SEND,
                SprayOpcodes.SEND_WITH_IMMEDIATE, SprayOpcodes.READ_REQUEST, SprayOpcodes.READ_RESPONSE ->
                onDataPacket(frame, now);
            case SprayOpcodes.CLOSE -> onClosePacket(frame);
            case SprayOpcodes.CLOSE_ACK -> onCloseAckPacket(frame);
            default -> engine.counters().increment(SprayCounters.MALFORMED); // a CONNECT_ACK nobody asked for
        }
    }

    // S12: a packet refused by a check of S12 counts at the connection and in the engine's totals
    void refused(final int slot)
    {
        counters.increment(slot);
        engine.counters().increment(slot);
    }

    private boolean controlTagValid(final RoceFrame frame)
    {
        if (auth.controlTagValid(frame))
        {
            return true;
        }
        refused(SprayCounters.AUTH_FAILURES);
        return false;
    }

    private void onDataPacket(final RoceFrame frame, final long now)
    {
        final MemorySegment buffer = frame.segment();
        final long seth = frame.customHeaderOffset();
        final int path = SprayExtendedTransportHeader.path(buffer, seth);
        final int streamId = SprayExtendedTransportHeader.stream(buffer, seth);
        final int msn = SprayExtendedTransportHeader.msn(buffer, seth);
        final int offset = SprayExtendedTransportHeader.messageOffset(buffer, seth);
        final int messageLength = SprayExtendedTransportHeader.messageLength(buffer, seth);
        final int payloadLength = frame.payloadLength();
        final int opcode = frame.opcode();
        final byte messageKind = (byte)(opcode - SprayOpcodes.WRITE);
        if (path >= paths || streamId >= streams || messageLength < 0 || offset < 0 || offset % mtu != 0 ||
            payloadLength > mtu || (long)offset + payloadLength > messageLength ||
            (payloadLength < mtu && offset + payloadLength != messageLength && messageKind != READ) ||
            (messageKind == READ && payloadLength != 0))
        {
            engine.counters().increment(SprayCounters.MALFORMED); // S4.3 violated: nothing is placed (S9.5)
            return;
        }
        if (!frames.fromPeer(frame, path % planes))
        {
            refused(SprayCounters.ADDRESS_MISMATCHES); // S12.5: a path's packets use its plane
            return;
        }
        final long key = key(streamId, msn);
        if (!messageAuthentic(frame, messageKind, streamId, msn, key, offset))
        {
            return; // S12.4, S12.7: counted; nothing changed, the path layer never saw it
        }

        // message state needed before the path layer accepts the packet: without it the packet is dropped
        // unseen, and the sender recovers it as a loss
        if (!roomFor(messageKind, streamId, msn, key, offset / mtu))
        {
            counters.increment(SprayCounters.NO_RESOURCES);
            return;
        }

        final PathReceiveWindow window = receiveWindows[path];
        final int result = window.onPacket(frame.psn());
        final TransportCounters pathCounter = pathCounters[path];
        counters.increment(SprayCounters.RX_PACKETS);
        pathCounter.increment(SprayCounters.RX_PACKETS);
        if (result == PathReceiveWindow.OUT_OF_WINDOW)
        {
            counters.increment(SprayCounters.OUT_OF_WINDOW);
            pathCounter.increment(SprayCounters.OUT_OF_WINDOW);
            return;
        }
        engine.rateHint().onData(index, now, frame.ecn() == CE);
        startAnnounced = false;
        if (result == PathReceiveWindow.DUPLICATE)
        {
            counters.increment(SprayCounters.DUPLICATES);
            pathCounter.increment(SprayCounters.DUPLICATES);
            sendAck(path, now);
            return;
        }
        boolean ackAtOnce = frame.ackReq();
        if (frame.ecn() == CE)
        {
            counters.increment(SprayCounters.ECN_MARKS_RECEIVED);
            pathCounter.increment(SprayCounters.ECN_MARKS_RECEIVED);
            rxCeSinceAck[path]++;
            ackAtOnce |= rxFirstUnackedAt[path] == NONE;
        }
        final boolean gap = window.hasGap();
        if (gap != rxHadGap[path])
        {
            ackAtOnce = true;
            if (gap)
            {
                counters.increment(SprayCounters.SACK_GAPS);
                pathCounter.increment(SprayCounters.SACK_GAPS);
            }
            rxHadGap[path] = gap;
        }
        if (rxFirstUnackedAt[path] == NONE)
        {
            rxFirstUnackedAt[path] = now;
        }
        if (++rxSinceAck[path] >= config.ackEvery)
        {
            ackAtOnce = true;
        }

        // message layer, before the ACK, so that a NACK precedes the ACK of its packet on the reverse path
        if (messageKind == READ_RESPONSE)
        {
            placeReadResponse(frame, key, offset, messageLength, payloadLength);
        }
        else
        {
            inbound.accept(frame, path, messageKind, streamId, msn, key, offset, messageLength, payloadLength, now);
        }
        if (ackAtOnce)
        {
            sendAck(path, now);
        }
    }

    // S12.4: a packet of a message with state here carries the tag its state holds (and, for a WRITE, the same
    // base address and rkey); one without, the tag of its own headers; S12.7: a new message only inside the window
    private boolean messageAuthentic(
        final RoceFrame frame, final byte messageKind, final int streamId, final int msn, final long key,
        final int offset)
    {
        final MemorySegment buffer = frame.segment();
        final long seth = frame.customHeaderOffset();
        final long tag = SprayExtendedTransportHeader.messageTag(buffer, seth);
        if (messageKind == READ_RESPONSE)
        {
            final int slot = slots.slotFor(key);
            final boolean valid = slot != MISSING && slots.kind[slot] == READ ? tag == slots.responseTag[slot] :
                tag == auth.expectedTag(frame);
            if (!valid)
            {
                refused(SprayCounters.AUTH_FAILURES);
            }
            return valid;
        }
        return inbound.authentic(frame, tag, messageKind, streamId, msn, key, offset);
    }

    private boolean roomFor(final byte messageKind, final int streamId, final int msn, final long key, final int packet)
    {
        if (messageKind == READ_RESPONSE)
        {
            final int slot = slots.slotFor(key);
            return slot == MISSING || slots.kind[slot] != READ || marks.roomToMark(inbound.capacity + slot, packet);
        }
        return inbound.roomFor(messageKind, streamId, msn, key, packet, slots.hasFree());
    }

    private void placeReadResponse(
        final RoceFrame frame, final long key, final int offset, final int messageLength, final int payloadLength)
    {
        final int slot = slots.slotFor(key);
        if (slot == MISSING || slots.kind[slot] != READ || slots.status[slot] != PENDING ||
            slots.readReceived[slot] >= slots.readExpected[slot])
        {
            counters.increment(SprayCounters.DUPLICATES); // a response to a READ already finished
            return;
        }
        if (messageLength != slots.length[slot])
        {
            engine.counters().increment(SprayCounters.MALFORMED);
            return;
        }
        if (payloadLength > 0 && !slots.region[slot].isRegistered())
        {
            localError = true; // the READ's target was deregistered: nothing is placed, the connection fails
            return;
        }
        if (marks.mark(inbound.capacity + slot, offset / mtu) == PlacementMarks.DUPLICATE)
        {
            counters.increment(SprayCounters.DUPLICATES);
            return;
        }
        if (payloadLength > 0)
        {
            final MemoryRegion region = slots.region[slot];
            MemorySegment.copy(frame.segment(), frame.payloadOffset(), region.segment(),
                region.offsetOf(slots.localAddress[slot]) + offset, payloadLength);
            counters.add(SprayCounters.RX_BYTES, payloadLength);
        }
        if (++slots.readReceived[slot] == slots.readExpected[slot])
        {
            slots.status[slot] = WorkCompletionStatus.SUCCESS.ordinal();
            deliverSendCompletions(slots.stream[slot]);
        }
    }

    void queueReadResponse(
        final int streamId, final int msn, final MemoryRegion source, final long address, final int messageLength)
    {
        final int slot = slots.take(); // room checked before the path layer took the packet
        slots.kind[slot] = READ_RESPONSE;
        slots.wrId[slot] = 0;
        slots.stream[slot] = streamId;
        slots.msn[slot] = msn;
        slots.rsn[slot] = 0;
        slots.region[slot] = messageLength > 0 ? source : null;
        slots.localAddress[slot] = address;
        slots.length[slot] = messageLength;
        slots.remoteAddress[slot] = 0;
        slots.rkey[slot] = 0;
        slots.messageTag[slot] = auth.sendTag(SprayOpcodes.READ_RESPONSE, streamId, msn, messageLength, 0, 0, 0, 0);
        slots.responseTag[slot] = 0;
        slots.signaled[slot] = false;
        slots.solicited[slot] = false;
        slots.packets[slot] = SendSlots.packetsFor(messageLength, mtu);
        slots.readExpected[slot] = 0;
        slots.delivered[slot] = true; // nothing to deliver: freed once acknowledged
        slots.enqueueSend(slot);
    }

    private void onProbePacket(final RoceFrame frame, final long now)
    {
        final MemorySegment buffer = frame.segment();
        final long prbh = frame.customHeaderOffset();
        final int path = ProbeHeader.path(buffer, prbh);
        if (path >= paths)
        {
            engine.counters().increment(SprayCounters.MALFORMED);
            return;
        }
        if (!frames.fromPeer(frame, path % planes))
        {
            refused(SprayCounters.ADDRESS_MISMATCHES);
            return;
        }
        final PathReceiveWindow window = receiveWindows[path];
        final boolean resync = (ProbeHeader.flags(buffer, prbh) & ProbeHeader.FLAG_RESYNC) != 0;
        final int nextPsn = ProbeHeader.nextPsn(buffer, prbh);
        // S12.6: the sender's next PSN is above everything it sent on the path: a RESYNC below what arrived
        // (a replayed one), or not within half the PSN space ahead of the cumulative PSN, cannot be the peer's
        if (resync && (Psn.diff(nextPsn, window.frontier()) < 0 || Psn.diff(nextPsn, window.cumulativePsn()) < 0 ||
            nextPsn != frame.psn()))
        {
            refused(SprayCounters.RESYNCS_REFUSED);
            return;
        }
        counters.increment(SprayCounters.PROBES_RECEIVED);
        // S8.3.1: a probe counts its sender active, so the ACK below has its share, and announces its data
        engine.rateHint().onData(index, now, frame.ecn() == CE);
        startAnnounced = true;
        if (resync)
        {
            window.reset(nextPsn);
            rxHadGap[path] = false;
        }
        // a probe occupies its PSN (the nextPsn it names), so the ACK that answers it acknowledges a PSN above
        // every packet sent before it and S6.5 finds a lost tail
        window.onPacket(frame.psn());
        rxHadGap[path] = window.hasGap();
        sendAck(path, now);
    }

    // =====================================================================================================
    // ACKs and NACKs at the sender
    // =====================================================================================================

    private void onAckPacket(final RoceFrame frame, final long now)
    {
        final MemorySegment buffer = frame.segment();
        final long sack = frame.customHeaderOffset();
        final int path = SelectiveAckHeader.path(buffer, sack);
        if (path >= paths)
        {
            engine.counters().increment(SprayCounters.MALFORMED);
            return;
        }
        final int sequence = SelectiveAckHeader.ackSequence(buffer, sack);
        if (scheduler.isStaleAck(path, sequence))
        {
            counters.increment(SprayCounters.ACKS_STALE);
            return;
        }
        // S9.3: before the packets it covers complete, so that a refused one waits for its NACK
        final int peerRefused = SelectiveAckHeader.refusals(buffer, sack);
        refusals.onPeerCount(peerRefused);
        ackPath = path;
        ackNow = now;
        probeAcked = false;
        final int newlyAcked = sendWindows[path].onAck(buffer, sack, now, this);
        if (newlyAcked < 0)
        {
            counters.increment(SprayCounters.ACKS_STALE);
            return;
        }
        counters.increment(SprayCounters.ACKS_RECEIVED);
        pathCounters[path].increment(SprayCounters.ACKS_RECEIVED);
        final int ce = SelectiveAckHeader.ceCount(buffer, sack);
        if (ce > 0)
        {
            counters.add(SprayCounters.ECN_MARKS_ECHOED, ce);
            pathCounters[path].add(SprayCounters.ECN_MARKS_ECHOED, ce);
        }
        scheduler.onAckTaken(path, sequence, now);
        if (scheduler.pathStates[path] == FAILED)
        {
            if (!probeAcked)
            {
                return;
            }
            restorePath(path, now);
        }
        windows[path].onAck(newlyAcked, ce, now, rtts[path].srttNanos());
        peerRateHintMbps = SelectiveAckHeader.rateHintMbps(buffer, sack);
        pacer.onShare(now); // S8.3.1
        drainRetransmissions(now);
    }

    public void onAcked(final long handle, final int psn, final long rttNanos)
    {
        rtts[ackPath].onSample(rttNanos);
        if (handle == PROBE_HANDLE)
        {
            probeAcked = true;
            return;
        }
        final int slot = SendSlots.slotOf(handle);
        if (!slots.isCurrent(handle))
        {
            return;
        }
        slots.outstanding[slot]--;
        slots.acked[slot]++;
        onSlotProgress(slot);
    }

    public void onLost(final long handle, final int psn)
    {
        final int path = ackPath;
        sendWindows[path].retransmitted(psn, ackNow);
        if (handle != PROBE_HANDLE)
        {
            counters.increment(SprayCounters.LOST);
            pathCounters[path].increment(SprayCounters.LOST);
            windows[path].onLoss(ackNow);
            scheduler.countLost(path);
            if (scheduler.isLossy(path))
            {
                repath(path);
            }
        }
        resend.queueRetransmission(path, psn, handle);
    }

    private void onNackPacket(final RoceFrame frame, final long now)
    {
        final MemorySegment buffer = frame.segment();
        final long nakh = frame.customHeaderOffset();
        final int streamId = NegativeAckHeader.stream(buffer, nakh);
        final int msn = NegativeAckHeader.msn(buffer, nakh);
        final int syndrome = NegativeAckHeader.syndrome(buffer, nakh);
        final int refusal = NegativeAckHeader.refusal(buffer, nakh);
        if (streamId >= streams)
        {
            engine.counters().increment(SprayCounters.MALFORMED);
            return;
        }
        if (msn - slots.nextMsn[streamId] >= 0)
        {
            refused(SprayCounters.NACKS_UNMATCHED); // S12.8: names no message this end sent
            return;
        }
        counters.increment(SprayCounters.NACKS_RECEIVED);
        final boolean fresh =
            syndrome != NegativeAckHeader.SYNDROME_ACCEPTED && refusal != 0 && refusals.learn(refusal);
        refusals.onPeerCount(refusal);
        final int slot = slots.slotFor(key(streamId, msn));
        if (slot != MISSING && slots.status[slot] == PENDING && slots.kind[slot] != READ_RESPONSE)
        {
            onRefusal(slot, syndrome, refusal, fresh, NegativeAckHeader.rnrTimerMicros(buffer, nakh), now);
        }
        releaseHeld();
    }

    private void onRefusal(
        final int slot, final int syndrome, final int refusal, final boolean fresh, final int rnrTimerMicros,
        final long now)
    {
        switch (syndrome)
        {
            case NegativeAckHeader.SYNDROME_ACCEPTED ->
            {
                // the answer to a query: every byte was placed (S9.3)
                if (slots.held[slot])
                {
                    slots.unhold(slot);
                    if (slots.kind[slot] != READ && !slots.rnrWaiting[slot] && slots.acked[slot] == slots.packets[slot])
                    {
                        slots.status[slot] = WorkCompletionStatus.SUCCESS.ordinal();
                        deliverSendCompletions(slots.stream[slot]);
                    }
                }
            }
            case NegativeAckHeader.SYNDROME_RNR ->
            {
                if (slots.rnrWaiting[slot] || (refusal != 0 && !fresh))
                {
                    return; // the rest of the refused attempt, or an earlier attempt's
                }
                slots.unhold(slot);
                if (++slots.rnrCount[slot] > config.rnrRetries)
                {
                    fail(slot, WorkCompletionStatus.RNR_RETRY_EXC_ERR);
                    return;
                }
                counters.increment(SprayCounters.RNR_RETRIES);
                slots.startRnrWait(slot, now + rnrTimerMicros * 1000L);
            }
            case NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR -> fail(slot, WorkCompletionStatus.REM_ACCESS_ERR);
            case NegativeAckHeader.SYNDROME_REMOTE_INVALID_REQUEST -> fail(slot, WorkCompletionStatus.REM_INV_REQ_ERR);
            default -> fail(slot, WorkCompletionStatus.REM_OP_ERR);
        }
    }

    // S9.3: a message whose packets were all acknowledged may still have been refused if the peer made a
    // refusal this end has not learned of, or if its stream is in error (an earlier message of the stream can
    // be refused after a later one, under the later one's refusal number)
    private boolean mustHold(final int slot)
    {
        return refusals.anyUnlearned() || slots.errored[slots.stream[slot]];
    }

    private void hold(final int slot, final long now)
    {
        if (slots.hold(slot, now, queryInterval()))
        {
            counters.increment(SprayCounters.COMPLETIONS_HELD);
        }
    }

    // a missing NACK may be on its way over a slower path: ask only after a round trip of the slowest path
    private long queryInterval()
    {
        return Math.max(config.rtoMinNanos, 2 * scheduler.siblingSrtt());
    }

    // completes held messages that need no longer wait (control path: only after a refusal)
    private void releaseHeld()
    {
        if (slots.heldCount() == 0)
        {
            return;
        }
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            if (slots.held[slot] && slots.status[slot] == PENDING && !mustHold(slot))
            {
                slots.unhold(slot);
                if (slots.kind[slot] != READ && !slots.rnrWaiting[slot] && slots.acked[slot] == slots.packets[slot])
                {
                    slots.status[slot] = WorkCompletionStatus.SUCCESS.ordinal();
                    deliverSendCompletions(slots.stream[slot]);
                }
            }
        }
    }

    private int sendQueries(final long now)
    {
        int work = 0;
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            if (slots.held[slot] && slots.status[slot] == PENDING && now >= slots.queryAt[slot])
            {
                if (now - slots.heldAt[slot] >= config.connectionTimeoutNanos)
                {
                    fail(slot, WorkCompletionStatus.RETRY_EXC_ERR); // no answer: its fate is unknown (S9.3.1)
                    work++;
                    continue;
                }
                if (writeQuery(slots.stream[slot], slots.msn[slot]))
                {
                    work++;
                }
                slots.queryAt[slot] = now + queryInterval();
            }
        }
        return work;
    }

    // S9.3: the receiver of a message tells its fate: placed, or refused (again, with the refusal's number)
    private void onQueryPacket(final RoceFrame frame, final long now)
    {
        final MemorySegment buffer = frame.segment();
        final long nakh = frame.customHeaderOffset();
        final int streamId = NegativeAckHeader.stream(buffer, nakh);
        final int msn = NegativeAckHeader.msn(buffer, nakh);
        if (streamId >= streams)
        {
            engine.counters().increment(SprayCounters.MALFORMED);
            return;
        }
        counters.increment(SprayCounters.QUERIES_RECEIVED);
        inbound.answerQuery(streamId, msn);
    }

    // S9.4: the message completes with the error, later messages of its stream are flushed
    private void fail(final int slot, final WorkCompletionStatus completionStatus)
    {
        slots.status[slot] = completionStatus.ordinal();
        slots.nextPacket[slot] = slots.packets[slot];
        slots.stopRnrWait(slot);
        final int streamId = slots.stream[slot];
        slots.errored[streamId] = true;
        for (int i = slots.nextInStream[slot]; i != MISSING; i = slots.nextInStream[i])
        {
            if (slots.status[i] == PENDING)
            {
                slots.status[i] = WorkCompletionStatus.WR_FLUSH_ERR.ordinal();
                slots.nextPacket[i] = slots.packets[i];
                slots.stopRnrWait(i);
            }
        }
        deliverSendCompletions(streamId);
    }

    private void onSlotProgress(final int slot)
    {
        if (slots.status[slot] == PENDING && !slots.rnrWaiting[slot] && slots.acked[slot] == slots.packets[slot])
        {
            if (slots.kind[slot] == READ_RESPONSE)
            {
                slots.status[slot] = WorkCompletionStatus.SUCCESS.ordinal();
            }
            else if (mustHold(slot))
            {
                hold(slot, ackNow);
            }
            else if (slots.kind[slot] != READ)
            {
                slots.status[slot] = WorkCompletionStatus.SUCCESS.ordinal();
                deliverSendCompletions(slots.stream[slot]);
                return;
            }
        }
        maybeFree(slot);
    }

    private void deliverSendCompletions(final int streamId)
    {
        int head = slots.head[streamId];
        while (head != MISSING && slots.status[head] != PENDING)
        {
            final WorkCompletionStatus completionStatus = STATUSES[slots.status[head]];
            if (slots.signaled[head] || completionStatus != WorkCompletionStatus.SUCCESS)
            {
                final WorkCompletionOpcode op = switch (slots.kind[head])
                {
                    case WRITE, WRITE_IMM -> WorkCompletionOpcode.RDMA_WRITE;
                    case READ -> WorkCompletionOpcode.RDMA_READ;
                    default -> WorkCompletionOpcode.SEND;
                };
                if (!sendCq.offer(slots.wrId[head], completionStatus, op, slots.length[head], false, 0, localCid))
                {
                    counters.increment(SprayCounters.CQ_OVERRUNS);
                    localError = true;
                }
            }
            counters.increment(SprayCounters.MESSAGES_SENT);
            slots.unhold(head);
            slots.forget(head);
            slots.delivered[head] = true;
            final int done = head;
            head = slots.nextInStream[head];
            maybeFree(done);
        }
        slots.head[streamId] = head;
        if (head == MISSING)
        {
            slots.tail[streamId] = MISSING;
        }
    }

    private void maybeFree(final int slot)
    {
        if (slots.isFinished(slot))
        {
            if (slots.kind[slot] == READ)
            {
                marks.release(inbound.capacity + slot, slots.readExpected[slot]);
            }
            slots.free(slot);
        }
    }

    // =====================================================================================================
    // Timers and sending
    // =====================================================================================================

    int onTick(final long now)
    {
        if (state == State.CLOSED)
        {
            return 0;
        }
        if (localError || sendCq.hasOverrun() || receiveCq.hasOverrun())
        {
            // as an IB QP: a CQ overrun or a local protection error puts it in error; everything outstanding
            // completes (WR_FLUSH_ERR) and no region it held is touched again
            state = State.CLOSED;
            flushSends(WorkCompletionStatus.WR_FLUSH_ERR);
            inbound.flushReceives();
            return 1;
        }
        if (scheduler.allFailedFor(config.connectionTimeoutNanos, now))
        {
            closeAfterTimeout();
            return 1;
        }
        final int live = liveness.check(counters, now);
        if (live != Liveness.NOTHING && onLiveness(live, now) > 0 && state == State.CLOSED)
        {
            return 1;
        }
        scheduler.refreshSiblingEstimates();
        int work = 0;
        for (int path = 0; path < paths; path++)
        {
            if (rxFirstUnackedAt[path] != NONE && now - rxFirstUnackedAt[path] >= config.ackDelayNanos)
            {
                work += sendAck(path, now) ? 1 : 0;
            }
        }
        work += pushRateHint(now);
        for (int path = 0; path < paths; path++)
        {
            work += pathTimers(path, now);
        }
        work += drainRetransmissions(now);
        if (slots.rnrWaitingCount() > 0)
        {
            work += rnrRetries(now);
        }
        if (slots.heldCount() > 0)
        {
            work += sendQueries(now);
        }
        work += sendData(now);
        if (state != State.ESTABLISHED)
        {
            work += closeTimers(now);
        }
        return work;
    }

    private int pathTimers(final int path, final long now)
    {
        final PathSendWindow window = sendWindows[path];
        if (scheduler.pathStates[path] == FAILED)
        {
            if (now >= scheduler.nextResyncAt[path])
            {
                scheduler.nextResyncAt[path] = now + config.probeIntervalNanos;
                window.reset(window.nextPsn());
                scheduler.sourcePorts[path] = scheduler.unusedSourcePort(); // a new route (S7.5)
                frames.newProbe(path, ProbeHeader.FLAG_RESYNC, now);
                return 1;
            }
            return 0;
        }
        if (window.outstanding() == 0)
        {
            return 0;
        }
        if (now - window.oldestSentAtNanos() >= scheduler.rtoNanos(path))
        {
            counters.increment(SprayCounters.TIMEOUTS);
            pathCounters[path].increment(SprayCounters.TIMEOUTS);
            rtts[path].onTimeout();
            if (++scheduler.consecutiveTimeouts[path] >= config.failAfterTimeouts)
            {
                failPath(path, now);
                return 1;
            }
            final long oldestSentAt = window.oldestSentAtNanos();
            if (scheduler.othersAcknowledgedSince(path, oldestSentAt))
            {
                // S7.4.1: the path went silent for an RTO while another answered, so on a FIFO path nothing
                // sent on it since its oldest packet is known to have arrived: its overdue packets go again at
                // once on the other live paths, and it keeps payload-free probes at their PSNs, the oldest
                // sent now, to find out whether it is alive (an ACK) or dead (more timeouts, then S7.4)
                relocatingFrom = path;
                window.relocate(PROBE_HANDLE, Math.max(now - scheduler.ackExpectedWithinNanos(path), oldestSentAt),
                    relocator);
            }
            // else every path is as silent (a queue in front of them all, or the peer): moving packets would
            // only add copies to that queue and undo the backoff, so the oldest is retransmitted here (S6.8)
            final int psn = window.basePsn();
            final long handle = window.oldestHandle(); // the placeholder when the oldest was relocated
            window.retransmitted(psn, now);
            if (handle != PROBE_HANDLE)
            {
                counters.increment(SprayCounters.LOST);
                pathCounters[path].increment(SprayCounters.LOST);
            }
            resend.queueRetransmission(path, psn, handle);
            return 1;
        }
        if (scheduler.consecutiveTimeouts[path] > 0 &&
            scheduler.othersAcknowledgedSince(path, now - scheduler.ackExpectedWithinNanos(path)))
        {
            // S7.4.1: still no ACK since the timeout: a packet sent shortly before it is lost too once its ACK
            // is overdue, and goes again elsewhere without waiting for the next, backed-off, RTO
            relocatingFrom = path;
            if (window.relocate(PROBE_HANDLE, now - scheduler.ackExpectedWithinNanos(path), relocator) > 0)
            {
                return 1;
            }
        }
        final long quiet = Math.max(2 * scheduler.srttNanos(path), config.probeMinNanos);
        final long since = Math.max(Math.max(scheduler.lastAckAt[path], scheduler.lastProbeAt[path]),
            window.oldestSentAtNanos());
        if (now - since >= quiet && !window.isFull())
        {
            frames.newProbe(path, 0, now);
            return 1;
        }
        return 0;
    }

    private void failPath(final int path, final long now)
    {
        scheduler.fail(path, now);
        counters.increment(SprayCounters.PATH_FAILURES);
        pathCounters[path].increment(SprayCounters.PATH_FAILURES);
        sendWindows[path].drain(mover);
    }

    // S7.6: every path stayed failed for connectionTimeout: outstanding messages complete with RETRY_EXC_ERR
    // and the connection closes (its packets are then counted as for an unknown connection, S9.5)
    private void closeAfterTimeout()
    {
        state = State.CLOSED;
        flushSends(WorkCompletionStatus.RETRY_EXC_ERR);
    }

    // every send work request not finished completes with `st`, in order per stream; nothing is left to send
    private void flushSends(final WorkCompletionStatus completionStatus)
    {
        for (int streamId = 0; streamId < streams; streamId++)
        {
            for (int slot = slots.head[streamId]; slot != MISSING; slot = slots.nextInStream[slot])
            {
                if (slots.status[slot] == PENDING)
                {
                    slots.status[slot] = completionStatus.ordinal();
                }
            }
            slots.errored[streamId] = true;
        }
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            if (slots.kind[slot] == READ_RESPONSE && slots.status[slot] == PENDING && !slots.isFree(slot))
            {
                slots.status[slot] = completionStatus.ordinal();
            }
        }
        slots.clearInFlight();
        resend.clear();
        for (int streamId = 0; streamId < streams; streamId++)
        {
            deliverSendCompletions(streamId);
        }
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            if (!slots.isFree(slot))
            {
                maybeFree(slot);
            }
        }
    }

    /**
     * @return true once closed: gracefully (S9.2), forcefully ({@link SprayEngine#close(SprayConnection)}), or
     * after every path failed for {@code connectionTimeout} (S7.6).
     */
    public boolean isClosed()
    {
        return state == State.CLOSED;
    }

    /** @return the connection's state (S9.1, S9.2). */
    public State state()
    {
        return state;
    }

    // =====================================================================================================
    // Teardown (S9.2): control path, allocation allowed
    // =====================================================================================================

    /**
     * Starts a graceful close: no new work from now on; once this end's outstanding messages have finished
     * (or {@code connectionTimeout} passed, when they are flushed), {@code SPRAY_CLOSE} goes out until
     * {@code SPRAY_CLOSE_ACK} answers or {@link #CLOSE_TRIES} tries passed; then the connection is CLOSED and
     * forgotten.
     *
     * @return false if it was not ESTABLISHED.
     */
    boolean beginClose(final long now)
    {
        if (state != State.ESTABLISHED)
        {
            return false;
        }
        state = State.DRAINING;
        closeStartedAt = now;
        return true;
    }

    // S12.10: the peer said nothing for idleTimeout: unacknowledged sends complete with RETRY_EXC_ERR, the rest with
    // WR_FLUSH_ERR, and the connection is forgotten; or this end sent nothing for keepaliveInterval: an ACK goes out
    private int onLiveness(final int live, final long now)
    {
        if (live == Liveness.IDLE)
        {
            counters.increment(SprayCounters.IDLE_CLOSED);
            engine.counters().increment(SprayCounters.IDLE_CLOSED);
            flushSends(WorkCompletionStatus.RETRY_EXC_ERR);
            finish();
            return 1;
        }
        if (state == State.ESTABLISHED && sendAck(0, now))
        {
            liveness.keepaliveSent(now);
            counters.increment(SprayCounters.KEEPALIVES_SENT);
            return 1;
        }
        return 0;
    }

    /** Forceful close: everything unfinished completes with WR_FLUSH_ERR at once; nothing goes on the wire. */
    void abort()
    {
        if (state != State.CLOSED)
        {
            finish();
        }
    }

    private boolean drained()
    {
        if (sendSlotsInUse() > 0 || resend.retransmissions() > 0 || resend.moves() > 0)
        {
            return false;
        }
        for (int path = 0; path < paths; path++)
        {
            if (sendWindows[path].outstanding() > 0)
            {
                return false;
            }
        }
        return true;
    }

    private int closeTimers(final long now)
    {
        if (state == State.DRAINING)
        {
            final boolean late = now - closeStartedAt >= config.connectionTimeoutNanos;
            if (!drained() && !late)
            {
                return 0;
            }
            if (late && !drained())
            {
                counters.increment(SprayCounters.CLOSE_TIMEOUTS);
                flushSends(WorkCompletionStatus.WR_FLUSH_ERR);
                for (int path = 0; path < paths; path++)
                {
                    sendWindows[path].reset(sendWindows[path].nextPsn()); // nothing of the flushed messages is resent
                }
            }
            state = State.CLOSING;
            closeToken = engine.secrets().nextLong(); // S12.2: a secret, like every token
            closeBackoff = SprayHandshake.CONNECT_BACKOFF_NANOS;
            closeTries = 0;
            closeNextAt = now;
        }
        if (state == State.CLOSING && now >= closeNextAt)
        {
            if (closeTries >= CLOSE_TRIES)
            {
                counters.increment(SprayCounters.CLOSE_TIMEOUTS); // the peer stays silent: forget it anyway
                finish();
                return 1;
            }
            closeTries++; // a CLOSE that found no room in the output counts as a lost one
            if (writeConnectionPacket(SprayOpcodes.CLOSE, closeToken))
            {
                counters.increment(SprayCounters.CLOSES_SENT);
            }
            closeNextAt = now + closeBackoff;
            closeBackoff *= 2;
            return 1;
        }
        return 0;
    }

    // the peer closes (S9.2): answer, flush what is unfinished here, forget the connection
    private void onClosePacket(final RoceFrame frame)
    {
        final MemorySegment buffer = frame.segment();
        final long conh = frame.customHeaderOffset();
        if (ConnectionHeader.senderCid(buffer, conh) != remoteCid)
        {
            engine.counters().increment(SprayCounters.MALFORMED); // not our peer's CID: not our peer's CLOSE
            return;
        }
        counters.increment(SprayCounters.CLOSES_RECEIVED);
        writeConnectionPacket(SprayOpcodes.CLOSE_ACK, ConnectionHeader.token(buffer, conh));
        finish();
    }

    private void onCloseAckPacket(final RoceFrame frame)
    {
        final MemorySegment buffer = frame.segment();
        final long conh = frame.customHeaderOffset();
        if (state != State.CLOSING || ConnectionHeader.token(buffer, conh) != closeToken ||
            ConnectionHeader.senderCid(buffer, conh) != remoteCid)
        {
            engine.counters().increment(SprayCounters.MALFORMED);
            return;
        }
        finish();
    }

    private void finish()
    {
        flushSends(WorkCompletionStatus.WR_FLUSH_ERR);
        inbound.flushReceives();
        state = State.CLOSED;
        engine.forget(this);
    }

    private boolean writeConnectionPacket(final int opcode, final long token)
    {
        return frames.connectionPacket(opcode, paths, streams, localCid, token);
    }

    // S7.3: a lossy or slow path changes route
    private void repath(final int path)
    {
        scheduler.repath(path);
        counters.increment(SprayCounters.REPATHS);
        pathCounters[path].increment(SprayCounters.REPATHS);
    }

    private void enqueueMove(final long handle)
    {
        if (handle == PROBE_HANDLE)
        {
            return;
        }
        resend.queueMove(handle, RetransmitQueues.NOT_LOST);
        counters.increment(SprayCounters.MOVED);
    }

    // S7.4.1: a packet of a path that timed out is lost there and goes again on another live path
    private void enqueueRelocation(final long handle)
    {
        resend.queueMove(handle, relocatingFrom);
        counters.increment(SprayCounters.LOST);
        pathCounters[relocatingFrom].increment(SprayCounters.LOST);
    }

    private void restorePath(final int path, final long now)
    {
        scheduler.restore(path, now);
        counters.increment(SprayCounters.PATH_RESTORES);
        pathCounters[path].increment(SprayCounters.PATH_RESTORES);
    }

    private int rnrRetries(final long now)
    {
        int work = 0;
        for (int slot = 0; slot < slots.capacity; slot++)
        {
            if (slots.rnrWaiting[slot] && slots.outstanding[slot] == 0 &&
                slots.nextPacket[slot] == slots.packets[slot] &&
                now >= slots.rnrRetryAt[slot])
            {
                slots.stopRnrWait(slot);
                slots.unhold(slot);
                slots.generation[slot]++;
                slots.nextPacket[slot] = 0;
                slots.acked[slot] = 0;
                if (!slots.inSendQueue[slot])
                {
                    slots.enqueueSend(slot);
                }
                work++;
            }
        }
        return work;
    }

    private int drainRetransmissions(final long now)
    {
        int sent = 0;
        while (resend.retransmissions() > 0)
        {
            final int path = resend.retransmissionPath();
            final int psn = resend.retransmissionPsn();
            final long handle = resend.retransmissionHandle();
            final PathSendWindow window = sendWindows[path];
            if (scheduler.pathStates[path] == ACTIVE && Psn.inRange(psn, window.basePsn(), window.outstanding()))
            {
                final boolean ok = handle == PROBE_HANDLE ? frames.probe(path, psn, 0) :
                    writeData(path, handle, psn, true, now);
                if (!ok)
                {
                    break;
                }
                if (handle != PROBE_HANDLE)
                {
                    counters.increment(SprayCounters.RETRANSMITTED);
                    pathCounters[path].increment(SprayCounters.RETRANSMITTED);
                    // sent at once, but paced all the same: new data waits for the tokens it took (S8.4)
                    pacer.take(slots.payloadOf(SendSlots.slotOf(handle), SendSlots.packetOf(handle)));
                }
                sent++;
            }
            resend.dropRetransmission();
        }
        return sent;
    }

    private int sendData(final long now)
    {
        final long elapsed = pacer.advance(now);
        if (elapsed > 0)
        {
            pacer.refill(elapsed, pacingRate());
        }
        int sent = 0;
        while (sent < config.maxPacketsPerTick && pacer.hasTokens())
        {
            final long handle;
            final boolean moved = resend.moves() > 0;
            final int lostOn = moved ? resend.moveLostOn() : RetransmitQueues.NOT_LOST;
            if (moved)
            {
                handle = resend.moveHandle();
            }
            else
            {
                if (slots.sendQueueSize() == 0)
                {
                    break;
                }
                final int slot = slots.sendQueueHead();
                if (slots.nextPacket[slot] >= slots.packets[slot])
                {
                    slots.dequeueSend();
                    maybeFree(slot);
                    continue;
                }
                handle = slots.handle(slot, slots.nextPacket[slot]);
            }
            if (!moved && pacer.startBudgetSpent())
            {
                break; // S8.3.1: the rest waits for the share the first ACK brings
            }
            final int path = scheduler.pick();
            if (path < 0)
            {
                break;
            }
            if (!moved && pacer.isStart(now) && scheduler.nothingOutstanding() &&
                slots.queuedPacketsAbove(config.startBudgetBytes / mtu))
            {
                // S8.3.1: starting after a pause, announce it with a header-only probe ahead of the data: the
                // receiver counts this sender (and tells the others still sending their smaller share, S8.3.2) as
                // soon as the probe arrives, before the data of an incast's first round trip has queued up ahead
                if (frames.newProbe(path, 0, now))
                {
                    counters.increment(SprayCounters.START_PROBES_SENT);
                    pacer.startAnnounced();
                }
            }
            if (!writeData(path, handle, -1, false, now))
            {
                break;
            }
            final int slot = SendSlots.slotOf(handle);
            final int payload = slots.payloadOf(slot, SendSlots.packetOf(handle));
            if (!moved)
            {
                pacer.newDataSent(now, payload);
            }
            pacer.take(payload);
            if (lostOn >= 0)
            {
                // a retransmission, counted against the path that lost it (S6.9)
                counters.increment(SprayCounters.RETRANSMITTED);
                pathCounters[lostOn].increment(SprayCounters.RETRANSMITTED);
            }
            else
            {
                counters.increment(SprayCounters.TX_PACKETS);
                counters.add(SprayCounters.TX_BYTES, payload);
                pathCounters[path].increment(SprayCounters.TX_PACKETS);
                pathCounters[path].add(SprayCounters.TX_BYTES, payload);
                if (scheduler.countSent(path) && scheduler.endLossSample(path))
                {
                    repath(path);
                }
            }
            if (moved)
            {
                resend.dropMove();
            }
            else
            {
                slots.nextPacket[slot]++;
                slots.outstanding[slot]++;
            }
            sent++;
        }
        return sent;
    }

    /**
     * @return the rate the pacer lets new data out at now, bytes per nanosecond on the wire (S8.4): the sum over
     * live paths of cwnd x MTU / srtt, no more than the peer's share for this end and this end's own line rate.
     */
    public double pacingRate()
    {
        double rate = scheduler.windowRate(mtu);
        if (peerRateHintMbps > 0)
        {
            rate = Math.min(rate, peerRateHintMbps / 8000.0);
        }
        return Math.min(rate, config.capacityMbps / 8000.0);
    }

    // =====================================================================================================
    // Frames
    // =====================================================================================================

    /**
     * Writes a data packet on path {@code path}: a new one ({@code psnOrNew < 0}: takes the path's next PSN) or a
     * retransmission with its PSN (S6.6).
     */
    private boolean writeData(
        final int path, final long handle, final int psnOrNew, final boolean retransmit, final long now)
    {
        final int slot = SendSlots.slotOf(handle);
        final int payload = slots.payloadOf(slot, SendSlots.packetOf(handle));
        if (payload > 0 && !slots.region[slot].isRegistered())
        {
            localError = true; // its memory was deregistered: not a byte is read, the connection fails
            return false;
        }
        return frames.data(path, handle, payload, psnOrNew, retransmit, now);
    }

    // S8.3.2: when this receiver's share for a sender that is still sending to it (a message partly delivered,
    // or a start announced by a probe and no data yet) fell by more than an eighth since the last ACK told it,
    // tell it now on the uncongested reverse path, rather than when its next packets have crossed the (in an
    // incast, full) queue towards this end. A rise is not urgent, and a sender with nothing more to send gains
    // nothing from either: thousands of one-packet senders starting at once would draw an ACK each per step
    private int pushRateHint(final long now)
    {
        if (!startAnnounced && inboundMessagesInUse() == 0)
        {
            return 0;
        }
        final long share = engine.rateHint().hintMbps();
        if (share * 8 >= (long)advertisedHintMbps * 7)
        {
            return 0;
        }
        final int path = scheduler.controlPath(0);
        if (!sendAck(path, now))
        {
            return 0;
        }
        counters.increment(SprayCounters.HINT_UPDATES_SENT);
        return 1;
    }

    private boolean sendAck(final int path, final long now)
    {
        if (!frames.claimControl(scheduler.controlPath(path), SprayOpcodes.ACK))
        {
            return false;
        }
        advertisedHintMbps = engine.rateHint().hintMbps();
        frames.ack(path, rxCeSinceAck[path], receiveWindows[path], advertisedHintMbps, ++rxAckSequence[path],
            refusals.made());
        rxSinceAck[path] = 0;
        rxCeSinceAck[path] = 0;
        rxFirstUnackedAt[path] = NONE;
        counters.increment(SprayCounters.ACKS_SENT);
        pathCounters[path].increment(SprayCounters.ACKS_SENT);
        return true;
    }

    void sendNack(final int path, final int syndrome, final int streamId, final int msn, final int refusal)
    {
        if (!frames.claimControl(scheduler.controlPath(path), SprayOpcodes.NACK))
        {
            return;
        }
        frames.negativeAck(syndrome, streamId, msn,
            syndrome == NegativeAckHeader.SYNDROME_RNR ? config.rnrTimerMicros : 0, refusal);
        counters.increment(SprayCounters.NACKS_SENT);
    }

    private boolean writeQuery(final int streamId, final int msn)
    {
        if (!frames.claimControl(scheduler.controlPath(0), SprayOpcodes.QUERY))
        {
            return false;
        }
        frames.negativeAck(NegativeAckHeader.SYNDROME_ACCEPTED, streamId, msn, 0, 0);
        counters.increment(SprayCounters.QUERIES_SENT);
        return true;
    }

    // =====================================================================================================
    // Helpers and reporting
    // =====================================================================================================

    private static long key(final int streamId, final int msn)
    {
        return SendSlots.key(streamId, msn);
    }

    // a completion queue overran or a region in use was deregistered: the connection fails on the next tick
    void localError()
    {
        localError = true;
    }

    PacketAuthenticator authenticator()
    {
        return auth;
    }

    /** @return this end's CID (what the peer's packets carry in DestQP). */
    /**
     * Binds the connection to a tenant's protection domain (control path, on the engine's thread, before the
     * application posts): its work requests and its peer's rkeys then name only that domain's regions.
     */
    public void protectionDomain(final ProtectionDomain domain)
    {
        this.pd = domain;
        inbound.protectionDomain(domain);
    }

    public int localCid()
    {
        return localCid;
    }

    /** @return the peer's CID. */
    public int remoteCid()
    {
        return remoteCid;
    }

    int index()
    {
        return index;
    }

    /** @return the peer's IPv4 address on {@code plane} (0 when that plane speaks IPv6). */
    public int remoteIpv4(final int plane)
    {
        return frames.remoteIpv4(plane);
    }

    /** @return the planes this connection sends on. */
    public int planes()
    {
        return planes;
    }

    /**
     * Sends the frames of {@code plane} to another MAC from now on: the next hop's, as the NIC's neighbour table
     * resolved it (the peer's on-link, the gateway's off-link), or a new one it announced. Engine thread.
     */
    public void nextHopMac(final int plane, final long mac)
    {
        frames.nextHopMac(plane, mac);
    }

    /** @return the MAC frames of {@code plane} go to. */
    public long nextHopMac(final int plane)
    {
        return frames.nextHopMac(plane);
    }

    /** @return paths per direction. */
    public int paths()
    {
        return paths;
    }

    /** @return streams per direction. */
    public int streams()
    {
        return streams;
    }

    /** @return the MTU. */
    public int mtu()
    {
        return mtu;
    }

    /** @return the connection's counters (sum over its paths, and message-level events). */
    public TransportCounters counters()
    {
        return counters;
    }

    /** @return the counters of path {@code p} (both directions of that index). */
    public TransportCounters pathCounters(final int path)
    {
        return pathCounters[path];
    }

    /** @return {@link #ACTIVE} or {@link #FAILED}. */
    public int pathState(final int path)
    {
        return scheduler.pathStates[path];
    }

    /** @return the UDP source port path {@code p} uses now. */
    public int sourcePort(final int path)
    {
        return scheduler.sourcePorts[path];
    }

    /** @return the send window of path {@code p} (for tests and tools). */
    public PathSendWindow sendWindow(final int path)
    {
        return sendWindows[path];
    }

    /** @return the receive window of inbound path {@code p}. */
    public PathReceiveWindow receiveWindow(final int path)
    {
        return receiveWindows[path];
    }

    /** @return the congestion control of path {@code p}. */
    public PathCongestionControl congestionControl(final int path)
    {
        return windows[path];
    }

    /** @return the RTT estimator of path {@code p}. */
    public RttEstimator rtt(final int path)
    {
        return rtts[path];
    }

    /** @return the last rate hint the peer sent, Mb/s (0: none). */
    public int peerRateHintMbps()
    {
        return peerRateHintMbps;
    }

    /**
     * @return true when the connection has nothing to do until a packet arrives or a request is posted: no
     * packet outstanding or queued, no ACK pending, no RNR wait, no failed path to probe.
     */
    public boolean isIdle()
    {
        if (state == State.CLOSED)
        {
            return true;
        }
        if (state != State.ESTABLISHED)
        {
            return false; // closing: its timers run
        }
        if (slots.sendQueueSize() > 0 || resend.retransmissions() > 0 || resend.moves() > 0 ||
            slots.rnrWaitingCount() > 0 || slots.heldCount() > 0)
        {
            return false;
        }
        for (int path = 0; path < paths; path++)
        {
            if (sendWindows[path].outstanding() > 0 || rxFirstUnackedAt[path] != NONE ||
                scheduler.pathStates[path] == FAILED)
            {
                return false;
            }
        }
        return true;
    }

    /** @return send work requests (and READ responses) not yet finished. */
    public int sendSlotsInUse()
    {
        return slots.inUse();
    }

    /** @return inbound messages tracked. */
    public int inboundMessagesInUse()
    {
        return inbound.inUse();
    }

    /**
     * S10.1: bytes of state of one path, both directions: the send window's 256 records, the receive
     * bitmap, estimators, congestion control, per-path scalars and counters.
     */
    public static int pathStateBytes()
    {
        final int sendWindow = PathSendWindow.CAPACITY * (Long.BYTES + Long.BYTES + Integer.BYTES + 1) + 32;
        final int receiveWindow = PathReceiveWindow.WORDS * Long.BYTES + 24;
        final int rtt = 48;
        final int cc = 64;
        final int scalars = 4 * Integer.BYTES + 3 * Long.BYTES + 2 + 4 * Integer.BYTES + // sender side
            3 * Integer.BYTES + Long.BYTES + 1 + // receiver side
            Long.BYTES * 3; // array references
        return sendWindow + receiveWindow + rtt + cc + scalars + SprayCounters.stateBytes();
    }

    /**
     * S10.1: bytes of state of one stream: next MSN to send, completion list head and tail, error flag; next
     * MSN to complete, receives posted, error flag, MSN, syndrome and refusal number (S9.3); next RSN to send (S4.5).
     */
    public static int streamStateBytes()
    {
        return 9 * Integer.BYTES + 2;
    }

    /**
     * S10.1: bytes of this connection's state apart from its paths and streams: the fixed tables sized when
     * it was opened (send slots, receives, inbound messages, their hash maps, the retransmit and move
     * queues). Constant for the connection's life: nothing grows with the messages it carries.
     */
    public long fixedStateBytes()
    {
        final long slot = 1 + 8 + 4 + 4 + 8 + 8 + 4 + 8 + 4 + 4 + 1 + 1 + 4 * 6 + 1 + 1 + 4 + 4 + 4 + 1 + 4 + 8 +
            4 + 4 +
            1 + 8 + 8 + 4; // held, queryAt, heldAt (S9.3), rsn (S4.5)
        final long maps = 16L * slots.mapCapacity();
        return 256 + slot * slots.capacity + inbound.stateBytes() + maps + resend.stateBytes() + marks.stateBytes() +
            SprayCounters.stateBytes();
    }

    /** @return every byte of this connection: fixed part, paths and streams (S10.1). */
    public long stateBytes()
    {
        return fixedStateBytes() + (long)paths * pathStateBytes() + (long)streams * streamStateBytes();
    }

    public String toString()
    {
        return "SprayConnection{cid=" + localCid + ", remoteCid=" + remoteCid + ", paths=" + paths + ", mtu=" + mtu +
            ", streams=" + streams + ", " + counters + '}';
    }
}
