package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.AccessCheck;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.ProbeHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.MemorySegment;

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
 * The connection keeps dispatch, the verbs entry points and the timers' order; its state lives in parts it owns.
 * Send side: {@link SendSlots} (the outbound message table), {@link DataSender} (posting, READ responses,
 * pacing and sending, S4, S8), {@link SendCompletions} (how sent messages finish: S4.8, S9.3, S9.4),
 * {@link LossDetector} (ACKs packet by packet, timeouts, relocation, failure: S6.5-S6.8, S7.3-S7.5),
 * {@link PathScheduler} (the outbound paths: S6.8, S7), {@link RetransmitQueues} (S6.6, S7.4).
 * Receive side: {@link DataReceiver} (admitting data and probe packets: S4.3, S12.4-S12.7, S10.2, S8.3.1),
 * {@link AckScheduler} (the inbound paths' windows and when their ACKs are due: S6.3, S6.4),
 * {@link InboundMessages} (inbound records, placement and refusals) with its {@link PostedReceives} and
 * {@link InboundWindow} (S4.5, S10.2), {@link PlacementMarks} (S4.4). Both: {@link Refusals} (S9.3) and
 * {@link ReadResponseRefusals} (S9.3.2), {@link CloseHandshake} (S9.1, S9.2), {@link SprayFrames} (every frame
 * it writes, and S12.5 addressing), {@link ControlPackets} (its ACKs, NACKs, queries and CLOSEs),
 * {@link PacketAuthenticator} (S12), {@link Liveness} (S12.10) and {@link ConnectionTeardown} (how it ends, and
 * what it flushes).
 * <p>
 * Protocol state is allocated when the connection is opened; nothing grows with the number of messages (S10.1,
 * see {@link #stateBytes()} and {@link ConnectionFootprint}; the kinds of message in {@link MessageKinds}). The tables only traffic needs (send slots, inbound records and receives, placement
 * marks, retransmit queues, the paths' send windows) are a {@link ConnectionStorage} borrowed from the engine's
 * {@link ConnectionStoragePool} when the connection gets traffic and given back once it is idle
 * ({@link BorrowedTables}), so an idle connection holds only its protocol state.
 */
public final class SprayConnection
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

    final SprayEngine engine;
    private final int index;
    private final int localCid;
    final int remoteCid;
    private final int paths;
    private final int planes;
    private final int mtu;
    private final int streams;
    private ProtectionDomain pd; // the engine's, unless bound to a tenant's (control path, before use)
    final SprayConfig config;
    final TransportCounters counters = SprayCounters.createForConnection();
    private final PacketAuthenticator auth;
    private final SprayFrames frames;
    final ControlPackets control;

    // ---- send side
    final SendSlots slots;
    final PathScheduler scheduler;
    final RetransmitQueues resend;
    final SendCompletions completions;
    final LossDetector loss;
    final DataSender sender;

    // ---- receive side
    private final AckScheduler acks;
    final PlacementMarks marks;
    final InboundMessages inbound;
    private final DataReceiver receiver;

    // ---- both: S9.3 refusals made here (carried in every SACKH) and those of the peer this end learned of;
    // S9.1, S9.2 state; how the connection ends (S9.2 close, S7.6, S12.10 idle timeout and keepalive, errors)
    private final Refusals refusals = new Refusals();
    private final ReadResponseRefusals readResponseRefusals;
    final CloseHandshake close;
    /** A region in use was deregistered: the connection fails on the next tick. */
    private boolean localError;

    /** The tables borrowed while the connection has traffic. */
    final BorrowedTables tables;
    private final ConnectionTeardown teardown;

    /** The parameters a handshake opened this connection with (responder side, for repeated CONNECT_ACKs). */
    SprayConnectionConfig handshakeConfig;

    SprayConnection(final SprayEngine engine, final int index, final SprayConnectionConfig c)
    {
        final SprayConfig config = engine.config();
        c.validate();
        this.engine = engine;
        this.config = config;
        this.index = index;
        this.localCid = c.localCid;
        this.remoteCid = c.remoteCid;
        this.paths = c.paths;
        this.planes = config.planes;
        this.mtu = c.mtu;
        this.streams = c.streams;
        this.pd = engine.protectionDomain();
        this.auth = new PacketAuthenticator(c);

        final ConnectionStoragePool.Bucket bucket = engine.storagePool().bucket(ConnectionStorage.Shape.of(c));
        // each path's counters, both directions of its index, shared by the parts that count: the borrowed sets
        // while there is traffic, the bucket's sink while idle (filled by BorrowedTables, made below, before any use)
        final TransportCounters[] pathCounters = new TransportCounters[paths];
        close = new CloseHandshake(config.connectionTimeoutNanos, engine.secrets(), counters);

        scheduler = new PathScheduler(paths, config, engine.random(), c.sendInitialPsn, c.sourcePortBase,
            bucket.idleWindows, bucket.idleTimes, engine.pathSchedulers(), c.remoteHigh(0), c.remoteLow(0));
        slots = new SendSlots(c.sendQueueDepth, streams, mtu, null);
        frames = new SprayFrames(engine, c, auth, counters, pathCounters, slots, scheduler);
        resend = new RetransmitQueues(paths * PathSendWindow.CAPACITY, null);
        marks = new PlacementMarks(c.placementChunks, null);
        acks = new AckScheduler(paths, c.receiveInitialPsn, config, counters, pathCounters);
        control = new ControlPackets(frames, scheduler, acks, engine.rateHint(), refusals, counters, pathCounters,
            config.rnrTimerMicros, streams, localCid);
        readResponseRefusals = new ReadResponseRefusals(refusals, control, config.connectionTimeoutNanos);
        inbound = new InboundMessages(this, control, engine, c, counters, pathCounters, auth, marks, refusals);
        completions = new SendCompletions(slots, marks, inbound.capacity, refusals, c.sendCq, localCid, mtu, config,
            scheduler, counters, engine.counters(), control::sendQuery);
        loss = new LossDetector(scheduler, resend, completions, refusals, config, counters, pathCounters,
            bucket.idleTimeouts);
        sender = new DataSender(slots, scheduler, resend, completions, loss, frames, auth, config, mtu, counters,
            pathCounters, readResponseRefusals, c.peerWindow, c.peerReads);
        tables = new BorrowedTables(bucket, this, pathCounters);
        final Liveness liveness = new Liveness(config);
        receiver = new DataReceiver(this, engine, c, frames, auth, acks, control, inbound, slots, completions, tables,
            counters);
        teardown = new ConnectionTeardown(this, liveness, c);
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
        engine.markHot(this);
        if (close.state() != State.ESTABLISHED)
        {
            return PostResult.INVALID_STATE; // S9.2: a closing connection takes no new work
        }
        if (streamId < 0 || streamId >= streams || null == request.opcode() || request.length() < 0)
        {
            return PostResult.INVALID_ARGUMENT;
        }
        final byte messageKind = switch (request.opcode())
        {
            case RDMA_WRITE -> MessageKinds.WRITE;
            case RDMA_WRITE_WITH_IMM -> MessageKinds.WRITE_IMM;
            case SEND -> MessageKinds.SEND;
            case SEND_WITH_IMM -> MessageKinds.SEND_IMM;
            case RDMA_READ -> MessageKinds.READ;
        };
        final int messageLength = request.length();
        if (messageLength > 0)
        {
            final MemoryRegion source = request.localRegion();
            if (null == source || source.protectionDomain() != pd ||
                pd.checkLocalAccess(source.lkey(), request.localAddress(), messageLength,
                    messageKind == MessageKinds.READ ? AccessFlags.LOCAL_WRITE : AccessFlags.NONE) != AccessCheck.OK)
            {
                return PostResult.INVALID_ARGUMENT;
            }
        }
        if (!tables.borrow() || !slots.hasFree())
        {
            return PostResult.QUEUE_FULL; // no tables to lend at the pool's limit: the application retries
        }
        sender.post(streamId, messageKind, request);
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
        engine.markHot(this);
        if (close.state() != State.ESTABLISHED)
        {
            return PostResult.INVALID_STATE;
        }
        if (streamId < 0 || streamId >= streams || request.length() < 0)
        {
            return PostResult.INVALID_ARGUMENT;
        }
        if (!tables.borrow())
        {
            return PostResult.QUEUE_FULL;
        }
        return inbound.post(streamId, request);
    }

    // =====================================================================================================
    // Receiving
    // =====================================================================================================

    /** @return the receive side of its data and probe packets (its unit test hands it packets directly). */
    DataReceiver receiver()
    {
        return receiver;
    }

    /** @return its ACKs and NACKs (a message layer built beside the connection's, in a test, sends through it). */
    ControlPackets control()
    {
        return control;
    }

    /** @return how it ends (its unit test hands it CLOSEs directly). */
    ConnectionTeardown teardown()
    {
        return teardown;
    }

    // S12.5, S12.3: a packet from elsewhere than the peer, or a control packet whose tag fails, is dropped before
    // anything of it is used; data packets are checked by their message tag once their SETH is validated (their
    // source, against their path's plane, in DataReceiver: only the SETH's fields are read before, to change nothing)
    void onFrame(final RoceFrame frame, final long now)
    {
        if (SprayOpcodes.isData(frame.opcode()))
        {
            // issue 13: a data packet's source is checked once, against its path's plane, which implies this
            // any-plane check (S12.5); DataReceiver counts the two refusals as this order did
            receiver.onDataPacket(frame, now);
            return;
        }
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
            case SprayOpcodes.PROBE -> receiver.onProbePacket(frame, now);
            case SprayOpcodes.CLOSE ->
            {
                control.sendOwedAcks(); // S6.4-2: what arrived before the CLOSE is acknowledged before it is answered
                teardown.onClosePacket(frame);
            }
            case SprayOpcodes.CLOSE_ACK ->
            {
                control.sendOwedAcks();
                teardown.onCloseAckPacket(frame);
            }
            default -> engine.counters().increment(SprayCounters.MALFORMED); // a CONNECT_ACK nobody asked for
        }
    }

    /**
     * S6.4-2: the receive burst ended: the ACKs its packets called for go out, one per path (none once closed).
     *
     * @return how many went out.
     */
    int sendOwedAcks()
    {
        if (isClosed())
        {
            control.forgetOwedAcks();
            return 0;
        }
        return control.sendOwedAcks();
    }

    // S12: a packet refused by a check of S12 counts at the connection and in the engine's totals
    void refused(final int counter)
    {
        counters.increment(counter);
        engine.counters().increment(counter);
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

    void queueReadResponse(
        final int streamId, final int msn, final MemoryRegion source, final long address, final int messageLength)
    {
        sender.queueReadResponse(streamId, msn, source, address, messageLength); // room checked before the path layer
    }

    // =====================================================================================================
    // ACKs and NACKs at the sender
    // =====================================================================================================

    private void onAckPacket(final RoceFrame frame, final long now)
    {
        final MemorySegment buffer = frame.segment();
        final long sack = frame.customHeaderOffset();
        if (SelectiveAckHeader.path(buffer, sack) >= paths)
        {
            engine.counters().increment(SprayCounters.MALFORMED);
            return;
        }
        if (loss.onAckPacket(buffer, sack, now) == LossDetector.ACK_TAKEN)
        {
            sender.onShare(SelectiveAckHeader.rateHintMbps(buffer, sack), now);
            sender.drainRetransmissions(now);
        }
    }

    private void onNackPacket(final RoceFrame frame, final long now)
    {
        final MemorySegment buffer = frame.segment();
        final long nakh = frame.customHeaderOffset();
        final int streamId = NegativeAckHeader.stream(buffer, nakh);
        if (streamId >= streams)
        {
            engine.counters().increment(SprayCounters.MALFORMED);
            return;
        }
        if (!completions.onNack(streamId, NegativeAckHeader.msn(buffer, nakh), NegativeAckHeader.syndrome(buffer, nakh),
            NegativeAckHeader.refusal(buffer, nakh), NegativeAckHeader.rnrTimerMicros(buffer, nakh), now))
        {
            refused(SprayCounters.NACKS_UNMATCHED); // S12.8: names no message this end sent
        }
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
        readResponseRefusals.tellAgain(streamId, msn); // S9.3.2: those of READs it may have completed
    }

    // =====================================================================================================
    // Timers
    // =====================================================================================================

    int onTick(final long now)
    {
        if (close.state() == State.CLOSED)
        {
            return 0;
        }
        if (teardown.endsOnTick(localError, now))
        {
            return 1;
        }
        scheduler.refreshSiblingEstimates();
        int work = 0;
        for (int path = 0; path < paths; path++)
        {
            if (acks.isDue(path, now))
            {
                work += control.sendAck(path) ? 1 : 0;
            }
        }
        work += control.pushRateHint(receiver.peerSending());
        for (int path = 0; path < paths; path++)
        {
            work += pathTimer(path, now);
        }
        work += sender.drainRetransmissions(now);
        work += completions.retryRnrWaits(now);
        work += completions.sendQueries(now);
        work += sender.sendData(now);
        if (close.state() != State.ESTABLISHED)
        {
            work += teardown.closeTimers(now);
        }
        else
        {
            tables.giveBackWhenIdle(now);
        }
        return work;
    }

    /** @return whether the connection holds borrowed tables now (it has, or lately had, traffic). */
    public boolean holdsStorage()
    {
        return tables.holds();
    }

    private int pathTimer(final int path, final long now)
    {
        final int action = loss.onTimer(path, now);
        if (action == LossDetector.RESYNC)
        {
            frames.newProbe(path, ProbeHeader.FLAG_RESYNC, now);
        }
        else if (action == LossDetector.PROBE)
        {
            frames.newProbe(path, 0, now);
        }
        else if (action == LossDetector.PROBE_SIBLING)
        {
            frames.newProbe(loss.siblingToProbe(), 0, now);
        }
        return action == LossDetector.NOTHING ? 0 : 1;
    }

    /**
     * @return true once closed: gracefully (S9.2), forcefully ({@link SprayEngine#close(SprayConnection)}), or
     * after every path failed for {@code connectionTimeout} (S7.6).
     */
    public boolean isClosed()
    {
        return close.state() == State.CLOSED;
    }

    /** @return the connection's state (S9.1, S9.2). */
    public State state()
    {
        return close.state();
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
        engine.markHot(this);
        return close.begin(now);
    }

    /** Forceful close: everything unfinished completes with WR_FLUSH_ERR at once; nothing goes on the wire. */
    void abort()
    {
        teardown.abort();
    }

    /**
     * @return the rate the pacer lets new data out at now, bytes per nanosecond on the wire (S8.4): the sum over
     * live paths of cwnd x MTU / srtt, no more than the peer's share for this end and this end's own line rate.
     */
    public double pacingRate()
    {
        return sender.pacingRate();
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
        engine.markHot(this);
        localError = true;
    }

    PacketAuthenticator authenticator()
    {
        return auth;
    }

    /**
     * Binds the connection to a tenant's protection domain (control path, on the engine's thread, before the
     * application posts): its work requests and its peer's rkeys then name only that domain's regions.
     */
    public void protectionDomain(final ProtectionDomain domain)
    {
        this.pd = domain;
        inbound.protectionDomain(domain);
    }

    /** @return this end's CID (what the peer's packets carry in DestQP). */
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

    /**
     * @return the counters of path {@code path} (both directions of that index) for the current traffic period: lent
     * with the tables (issue 13), so zeros while the connection is idle ({@link #holdsStorage()} false); every event
     * is in {@link #counters()} as well, which keep everything. Read it again each time: do not keep the set, it is
     * lent to another connection once this one goes idle.
     */
    public TransportCounters pathCounters(final int path)
    {
        return tables.pathCounters(path);
    }

    /**
     * @param fold told each path's counters at the end of every traffic period, before they are zeroed and given
     *             back (control path, before traffic; one at a time, null for none).
     */
    public void foldPathCountersInto(final PathCountersFold fold)
    {
        tables.foldPathCountersInto(fold);
    }

    /**
     * @return the pool bucket this connection borrows from, whose idle objects (path counters' sink, empty send
     * window, timeouts) all its idle connections share: a memory walk skips them.
     */
    ConnectionStoragePool.Bucket storageBucket()
    {
        return tables.bucket();
    }

    /** @return {@link #ACTIVE} or {@link #FAILED}. */
    public int pathState(final int path)
    {
        return scheduler.state(path);
    }

    /** @return the UDP source port path {@code p} uses now. */
    public int sourcePort(final int path)
    {
        return scheduler.sourcePort(path);
    }

    /**
     * @return the send window of path {@code p} (for tests and tools): while the connection holds no tables, the
     * empty one all idle connections' paths name ({@link #nextPsn} tells the path's next PSN either way).
     */
    public PathSendWindow sendWindow(final int path)
    {
        return scheduler.sendWindows[path];
    }

    /** @return the PSN of path {@code p}'s next new packet (S6.1), whether or not the connection has traffic. */
    public int nextPsn(final int path)
    {
        return scheduler.nextPsn(path);
    }

    /** @return the receive windows of the inbound paths, read by path ({@code receiveWindows().cumulativePsn(path)}). */
    public PathReceiveWindow receiveWindows()
    {
        return acks.windows();
    }

    /** @return the congestion windows of the paths, read by path ({@code congestionControl().window(path)}). */
    public PathCongestionControl congestionControl()
    {
        return scheduler.congestionWindows;
    }

    /** @return the RTT estimates of the paths, read by path ({@code rtt().srttNanos(path)}). */
    public RttEstimator rtt()
    {
        return scheduler.rtt;
    }

    /**
     * @return the retransmission timeout path {@code p}'s timer uses now (S6.8): backed off, with the late margin unless
     * a sibling shows the path silent alone (S6.8-3), from a sibling's estimate while it has no sample of its own.
     */
    public long rtoNanos(final int path)
    {
        return scheduler.rtoNanos(path);
    }

    /** @return the last rate hint the peer sent, Mb/s (0: none). */
    public int peerRateHintMbps()
    {
        return sender.peerRateHintMbps();
    }

    /**
     * @return true when the connection has nothing to do until a packet arrives or a request is posted: no
     * packet outstanding or queued, no ACK pending, no RNR wait, no failed path to probe.
     */
    public boolean isIdle()
    {
        if (close.state() == State.CLOSED)
        {
            return true;
        }
        if (close.state() != State.ESTABLISHED)
        {
            return false; // closing: its timers run
        }
        if (slots.sendQueueSize() > 0 || resend.retransmissions() > 0 || resend.moves() > 0 ||
            slots.rnrWaitingCount() > 0 || slots.heldCount() > 0)
        {
            return false;
        }
        if (!scheduler.nothingOutstanding() || acks.anyUnacknowledged())
        {
            return false;
        }
        for (int path = 0; path < paths; path++)
        {
            if (!scheduler.isActive(path))
            {
                return false;
            }
        }
        return true;
    }

    /** @return messages started towards the peer and not completed: held to the peer's window (S10.2). */
    int messagesStarted()
    {
        return slots.messagesStarted();
    }

    /** @return READs started towards the peer and not completed: held to the peer's READ limit (S10.2). */
    int readsStarted()
    {
        return slots.readsStarted();
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
     * S10.1: bytes of this connection's state apart from its paths and streams: the fixed tables sized when
     * it was opened (send slots, receives, inbound messages, their hash maps, the retransmit and move
     * queues), which it borrows from its engine's pool only while it has traffic. Constant for the connection's
     * life: nothing grows with the messages it carries.
     */
    public long fixedStateBytes()
    {
        return 256 + slots.stateBytes() + inbound.stateBytes() + resend.stateBytes() + marks.stateBytes() +
            SprayCounters.stateBytes();
    }

    /** @return every byte of this connection: fixed part, paths and streams (S10.1). */
    public long stateBytes()
    {
        return fixedStateBytes() + (long)paths * ConnectionFootprint.pathStateBytes() +
            (long)streams * ConnectionFootprint.streamStateBytes();
    }

    public String toString()
    {
        return "SprayConnection{cid=" + localCid + ", remoteCid=" + remoteCid + ", paths=" + paths + ", mtu=" + mtu +
            ", streams=" + streams + ", " + counters + '}';
    }
}
