package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.transport.FrameSink;

import io.spraynic.datapath.verbs.AccessCheck;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.QueuePair;
import io.spraynic.datapath.verbs.QueuePairState;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.AckExtendedTransportHeader;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import org.agrona.BitUtil;

import java.lang.foreign.MemorySegment;

/**
 * One RoCEv2 Reliable Connection queue pair: requester and responder of InfiniBand Vol 1 chapter 9 over one
 * path, in order, with go-back-N recovery. Runs inside an {@link RcEngine}, on its thread, with no
 * allocation, lock or exception per packet: work queues are preallocated arrays indexed by ever-growing
 * positions.
 * <p>
 * <b>Requester.</b> Each posted request gets its PSN range when posted (a READ takes one PSN per response
 * packet). Packets leave while the window ({@link RcEngineConfig#maxInflightPackets()}) and the DCQCN rate
 * allow; the last of each message asks for an ACK. ACKs and READ responses are cumulative: everything before
 * their PSN is done, and requests complete in order. A NAK "PSN sequence error", a retransmission timeout, or
 * a gap in READ responses rewinds transmission to the first unacknowledged PSN (go-back-N), spending one
 * retry; progress restores the retry count, and running out completes with RETRY_EXC_ERR and moves the QP to
 * ERROR. An RNR NAK rewinds and waits the RNR timer (RNR_RETRY_EXC_ERR when retries run out). A NAK remote
 * access error, invalid request or remote operational error completes the request with REM_ACCESS_ERR,
 * REM_INV_REQ_ERR or REM_OP_ERR and moves the QP to ERROR, which flushes everything else (WR_FLUSH_ERR).
 * <p>
 * <b>Responder.</b> A packet at the expected PSN is checked (opcode sequence, lengths, rkey, bounds and
 * rights, a posted receive) before a byte is placed; a refused one is answered by a NAK (remote access error,
 * invalid request, or RNR when no receive is posted) and places nothing. A duplicate (a PSN behind the expected
 * one) never draws a NAK: a SEND or WRITE is re-ACKed, a READ that repeats one of the last READs
 * served (same PSN range, or its tail as go-back-N re-issues it, same address, rkey and length) is served again
 * from the PSN asked, and any other is dropped and counted, so a forged duplicate cannot fail a live QP. A packet
 * ahead of the expected PSN is dropped with one NAK "PSN sequence error" per gap, as IB specifies.
 * <p>
 * <b>Revocation.</b> Every region a work request or a request in progress uses is checked to be still
 * registered where the QP touches it, and {@link RcEngine#revoke} cuts short every operation on a region being
 * deregistered: nothing is placed into or read from a region once its deregistration returned. A CQ overrun
 * (this QP's or another's on the same queue) moves the QP to ERROR; posts then answer
 * {@link PostResult#COMPLETION_QUEUE_OVERRUN}. ACKs are coalesced: one per {@link
 * RcEngineConfig#ackCoalescePackets()} packets, or when asked. Control packets wait behind READ responses
 * already queued, so the peer sees everything in PSN order. A CE-marked packet makes the QP send a CNP, at
 * most one per {@link DcqcnConfig#cnpIntervalNanos()}.
 */
public final class RcQueuePair implements QueuePair
{
    private static final int NO_LOCAL_ERROR = -1;

    private static final int IN_NONE = 0;
    private static final int IN_SEND = 1;
    private static final int IN_WRITE = 2;

    private static final int CONTROL_NONE = 0;
    private static final int CONTROL_ACK = 1;
    private static final int CONTROL_NAK = 2;
    private static final int CONTROL_FATAL_NAK = 3;

    private static final int ACK_SYNDROME = AckExtendedTransportHeader.syndrome(
        AckExtendedTransportHeader.KIND_ACK, AckExtendedTransportHeader.CREDITS_INVALID);
    private static final int NAK_SEQUENCE_SYNDROME = AckExtendedTransportHeader.syndrome(
        AckExtendedTransportHeader.KIND_NAK, AckExtendedTransportHeader.NAK_PSN_SEQUENCE_ERROR);
    private static final int NAK_ACCESS_SYNDROME = AckExtendedTransportHeader.syndrome(
        AckExtendedTransportHeader.KIND_NAK, AckExtendedTransportHeader.NAK_REMOTE_ACCESS_ERROR);
    private static final int NAK_INVALID_SYNDROME = AckExtendedTransportHeader.syndrome(
        AckExtendedTransportHeader.KIND_NAK, AckExtendedTransportHeader.NAK_INVALID_REQUEST);

    /** A message longer than this many packets could not be told apart from a wrapped PSN. */
    private static final int MAX_PACKETS_PER_MESSAGE = Psn.HALF / 2;

    /** Ethernet preamble and start delimiter (8), FCS (4) and inter-frame gap (12): wire bytes besides the frame. */
    private static final int WIRE_OVERHEAD_BYTES = 24;

    private static final WorkRequestOpcode[] WR_OPCODES = WorkRequestOpcode.values();
    private static final WorkCompletionStatus[] STATUSES = WorkCompletionStatus.values();

    private final RcEngine engine;
    private final RcEngineConfig config;
    private final TransportCounters counters;
    private ProtectionDomain protectionDomain; // the engine's, unless bound to a tenant's (control path, before use)
    private final RoceFrameWriter writer;
    private final FrameSink sink;
    private final int qpNumber;
    private final CompletionQueue sendCq;
    private final CompletionQueue receiveCq;
    private final DcqcnRateLimiter rateLimiter;

    private QueuePairState state = QueuePairState.RESET;
    private int accessFlags;
    private RcConnectionAttributes attributes;
    private int mtu;
    private int remoteQpNumber;
    private long remoteMac;
    private int remoteIpv4;
    private int udpSourcePort;
    private boolean ipv6;
    private long nowNanos;

    // ---- send queue (requester) ----
    private final int sqMask;
    private final long[] sqWrId;
    private final byte[] sqOpcode;
    private final MemoryRegion[] sqRegion;
    private final long[] sqLocalOffset;
    private final int[] sqLength;
    private final long[] sqRemoteAddress;
    private final int[] sqRkey;
    private final int[] sqImmediate;
    private final boolean[] sqSignaled;
    private final boolean[] sqSolicited;
    private final int[] sqFirstPsn;
    private final int[] sqPacketCount;
    private final int[] sqReadReceived;
    private final int[] sqLocalError;
    private long sqHead;
    private long sqSend;
    private long sqTail;
    private int sendPsn;
    private int nextPostPsn;
    private int unackedPsn;
    private int highestSentPsn;
    private int retriesLeft;
    private int rnrRetriesLeft;
    private boolean timerArmed;
    private long retransmitDeadline;
    private long rnrWaitUntil;
    private boolean rnrWaiting;
    /** The PSN go-back-N last went back to, until progress: one retransmission per loss. */
    private int rewoundForGapAt = -1;

    // ---- receive queue and responder ----
    private final int rqMask;
    private final long[] rqWrId;
    private final MemoryRegion[] rqRegion;
    private final long[] rqOffset;
    private final int[] rqLength;
    private long rqHead;
    private long rqTail;
    private int expectedPsn;
    private int msn;
    private boolean nakSentForGap;
    private int inMessage = IN_NONE;
    private long receivedBytes;
    private boolean receiveFailed;
    private MemoryRegion writeRegion;
    private long writeOffset;
    private long writeRemaining;
    private long writeTotal;
    private int packetsSinceAck;
    private int controlKind = CONTROL_NONE;
    private int controlPsn;
    private int controlSyndrome;
    private boolean responderFailed;

    // READ responses to send, a ring of contexts
    private final int readMask;
    private final int[] readStartPsn;
    private final MemoryRegion[] readRegion;
    private final long[] readOffset;
    private final long[] readLength;
    private final int[] readPacketCount;
    private final int[] readPacketsSent;
    private long readHead;
    private long readTail;

    // READs served lately, which a duplicate READ must repeat to be served again
    private final RcServedReads servedReads;

    /** While flushing after a revocation: requests naming this region complete with LOC_PROT_ERR. */
    private MemoryRegion revokedRegion;

    // notification point
    private long lastCnpNanos;
    private boolean cnpSentEver;
    private boolean cnpPending;

    RcQueuePair(
        final RcEngine engine,
        final int qpNumber,
        final CompletionQueue sendCq,
        final CompletionQueue receiveCq,
        final int sendQueueDepth,
        final int receiveQueueDepth)
    {
        if (sendQueueDepth < 1 || receiveQueueDepth < 1)
        {
            throw new IllegalArgumentException("queue depths must be positive");
        }
        this.engine = engine;
        this.config = engine.config();
        this.counters = engine.counters();
        this.protectionDomain = engine.protectionDomain();
        this.writer = engine.writer();
        this.sink = engine.sink();
        this.qpNumber = qpNumber;
        this.sendCq = sendCq;
        this.receiveCq = receiveCq;
        this.rateLimiter = new DcqcnRateLimiter(config.dcqcn());

        final int sq = BitUtil.findNextPositivePowerOfTwo(sendQueueDepth);
        sqMask = sq - 1;
        sqWrId = new long[sq];
        sqOpcode = new byte[sq];
        sqRegion = new MemoryRegion[sq];
        sqLocalOffset = new long[sq];
        sqLength = new int[sq];
        sqRemoteAddress = new long[sq];
        sqRkey = new int[sq];
        sqImmediate = new int[sq];
        sqSignaled = new boolean[sq];
        sqSolicited = new boolean[sq];
        sqFirstPsn = new int[sq];
        sqPacketCount = new int[sq];
        sqReadReceived = new int[sq];
        sqLocalError = new int[sq];

        final int rq = BitUtil.findNextPositivePowerOfTwo(receiveQueueDepth);
        rqMask = rq - 1;
        rqWrId = new long[rq];
        rqRegion = new MemoryRegion[rq];
        rqOffset = new long[rq];
        rqLength = new int[rq];

        final int reads = BitUtil.findNextPositivePowerOfTwo(config.maxReadsInFlight());
        readMask = reads - 1;
        readStartPsn = new int[reads];
        readRegion = new MemoryRegion[reads];
        readOffset = new long[reads];
        readLength = new long[reads];
        readPacketCount = new int[reads];
        readPacketsSent = new int[reads];

        // twice the READs a requester may have outstanding: each one it may re-issue is still remembered
        servedReads = new RcServedReads(reads * 2);
    }

    // ------------------------------------------------------------------------------------------------
    // control path: state machine
    // ------------------------------------------------------------------------------------------------

    /**
     * Binds the queue pair to a tenant's protection domain (control path, on the engine's thread, before the queue
     * pair carries traffic): its work requests and its peer's rkeys then name only that domain's regions.
     */
    public void protectionDomain(final ProtectionDomain domain)
    {
        this.protectionDomain = domain;
    }

    public int qpNumber()
    {
        return qpNumber;
    }

    /** Sends to another MAC from now on: the next hop's, as the NIC's neighbour table resolved it. Engine thread. */
    public void nextHopMac(final long mac)
    {
        remoteMac = mac;
    }

    /** @return the MAC frames go to. */
    public long nextHopMac()
    {
        return remoteMac;
    }

    public QueuePairState state()
    {
        return state;
    }

    public CompletionQueue sendCompletionQueue()
    {
        return sendCq;
    }

    public CompletionQueue receiveCompletionQueue()
    {
        return receiveCq;
    }

    /** @return the connection attributes set at RTR, or null before. */
    public RcConnectionAttributes attributes()
    {
        return attributes;
    }

    /** @return the DCQCN reaction point of this QP. */
    public DcqcnRateLimiter rateLimiter()
    {
        return rateLimiter;
    }

    /** @return the next PSN the responder expects. */
    public int expectedPsn()
    {
        return expectedPsn;
    }

    /** @return the next PSN the requester will transmit. */
    public int sendPsn()
    {
        return sendPsn;
    }

    /** @return the oldest PSN sent and not acknowledged. */
    public int unackedPsn()
    {
        return unackedPsn;
    }

    /** @return send requests posted and not completed. */
    public int outstandingSends()
    {
        return (int)(sqTail - sqHead);
    }

    /** @return receives posted and not consumed. */
    public int postedReceives()
    {
        return (int)(rqTail - rqHead);
    }

    /**
     * RESET to INIT (or INIT to INIT): set the remote access this QP allows.
     *
     * @param accessFlags {@link AccessFlags#REMOTE_WRITE}, {@link AccessFlags#REMOTE_READ}.
     */
    public void toInit(final int accessFlags)
    {
        state.checkTransitionTo(QueuePairState.INIT);
        this.accessFlags = AccessFlags.validate(accessFlags | AccessFlags.LOCAL_WRITE);
        state = QueuePairState.INIT;
    }

    /**
     * INIT to RTR: connect to the peer; the responder starts.
     *
     * @param attributes the path and PSNs.
     * @throws IllegalArgumentException when the path MTU's frames do not fit the sink's buffers.
     */
    public void toRtr(final RcConnectionAttributes attributes)
    {
        state.checkTransitionTo(QueuePairState.RTR);
        if (PathMtu.maxFrameLength(attributes.pathMtu()) > sink.maxFrameLength())
        {
            throw new IllegalArgumentException("path MTU " + attributes.pathMtu() + " needs frames of up to " +
                PathMtu.maxFrameLength(attributes.pathMtu()) + " B; the port's buffers hold " + sink.maxFrameLength());
        }
        this.attributes = attributes;
        this.mtu = attributes.pathMtu();
        this.remoteQpNumber = attributes.remoteQpNumber();
        this.remoteMac = attributes.remoteMac();
        this.remoteIpv4 = attributes.remoteIpv4();
        this.udpSourcePort = attributes.udpSourcePort();
        this.ipv6 = attributes.ipVersion() == 6;
        this.expectedPsn = attributes.receivePsn();
        this.msn = 0;
        state = QueuePairState.RTR;
    }

    /**
     * RTR to RTS (or SQD to RTS): the requester starts at the attributes' send PSN.
     */
    public void toRts()
    {
        state.checkTransitionTo(QueuePairState.RTS);
        if (state == QueuePairState.RTR)
        {
            sendPsn = attributes.sendPsn();
            nextPostPsn = sendPsn;
            unackedPsn = sendPsn;
            highestSentPsn = sendPsn;
            retriesLeft = attributes.retryCount();
            rnrRetriesLeft = attributes.rnrRetryCount();
        }
        state = QueuePairState.RTS;
    }

    /**
     * RTS to SQD: no new request starts; those under way finish.
     */
    public void toSqd()
    {
        state.checkTransitionTo(QueuePairState.SQD);
        state = QueuePairState.SQD;
    }

    /**
     * Any state to ERROR: every outstanding request completes with WR_FLUSH_ERR.
     */
    public void toError()
    {
        enterError();
    }

    /**
     * Any state to RESET: queues are emptied without completions, as {@code ibv_modify_qp} does.
     */
    public void toReset()
    {
        state.checkTransitionTo(QueuePairState.RESET);
        for (int i = 0; i <= sqMask; i++)
        {
            sqRegion[i] = null;
        }
        for (int i = 0; i <= rqMask; i++)
        {
            rqRegion[i] = null;
        }
        for (int i = 0; i <= readMask; i++)
        {
            readRegion[i] = null;
        }
        sqHead = sqSend = sqTail = 0;
        rqHead = rqTail = 0;
        readHead = readTail = 0;
        servedReads.clear();
        timerArmed = false;
        rnrWaiting = false;
        rewoundForGapAt = -1;
        inMessage = IN_NONE;
        writeRegion = null;
        controlKind = CONTROL_NONE;
        responderFailed = false;
        nakSentForGap = false;
        packetsSinceAck = 0;
        cnpPending = false;
        cnpSentEver = false;
        rateLimiter.reset();
        attributes = null;
        state = QueuePairState.RESET;
    }

    // ------------------------------------------------------------------------------------------------
    // posting
    // ------------------------------------------------------------------------------------------------

    public int postSend(final SendWorkRequest request)
    {
        if (state != QueuePairState.RTS && state != QueuePairState.SQD && state != QueuePairState.ERROR)
        {
            return PostResult.INVALID_STATE;
        }
        final int length = request.length();
        final WorkRequestOpcode opcode = request.opcode();
        if (length < 0 || null == opcode)
        {
            return PostResult.INVALID_ARGUMENT;
        }
        if (sqTail - sqHead > sqMask)
        {
            return PostResult.QUEUE_FULL;
        }
        if (state == QueuePairState.ERROR)
        {
            if (sendCq.hasOverrun())
            {
                return PostResult.COMPLETION_QUEUE_OVERRUN;
            }
            return completeSend(request.wrId(), opcode, WorkCompletionStatus.WR_FLUSH_ERR, 0, true) ?
                PostResult.OK : PostResult.COMPLETION_QUEUE_OVERRUN;
        }
        final int packets = PathMtu.packetCount(length, mtu);
        if (packets > MAX_PACKETS_PER_MESSAGE)
        {
            return PostResult.INVALID_ARGUMENT;
        }
        if (Psn.diff(Psn.add(nextPostPsn, packets), unackedPsn) >= Psn.HALF - 1 ||
            Psn.diff(Psn.add(nextPostPsn, packets), unackedPsn) < 0)
        {
            return PostResult.QUEUE_FULL; // the PSNs in flight would span half the space
        }

        final int i = (int)sqTail & sqMask;
        final MemoryRegion region = request.localRegion();
        int localError = NO_LOCAL_ERROR;
        if (length > 0)
        {
            final int required = opcode == WorkRequestOpcode.RDMA_READ ? AccessFlags.LOCAL_WRITE : AccessFlags.NONE;
            if (null == region || !region.isRegistered() ||
                protectionDomain.checkLocalAccess(region.lkey(), request.localAddress(), length, required) !=
                AccessCheck.OK)
            {
                // as a NIC does: the bad request completes with an error in its turn, and the QP fails
                localError = WorkCompletionStatus.LOC_PROT_ERR.ordinal();
            }
        }
        sqWrId[i] = request.wrId();
        sqOpcode[i] = (byte)opcode.ordinal();
        sqRegion[i] = length > 0 ? region : null;
        sqLocalOffset[i] = length > 0 && null != region ? region.offsetOf(request.localAddress()) : 0;
        sqLength[i] = length;
        sqRemoteAddress[i] = request.remoteAddress();
        sqRkey[i] = request.rkey();
        sqImmediate[i] = request.immediateData();
        sqSignaled[i] = request.signaled();
        sqSolicited[i] = request.solicited();
        sqReadReceived[i] = 0;
        sqLocalError[i] = localError;
        sqFirstPsn[i] = nextPostPsn;
        sqPacketCount[i] = localError == NO_LOCAL_ERROR ? packets : 0;
        nextPostPsn = Psn.add(nextPostPsn, sqPacketCount[i]);
        sqTail++;
        return PostResult.OK;
    }

    public int postReceive(final ReceiveWorkRequest request)
    {
        if (state == QueuePairState.RESET)
        {
            return PostResult.INVALID_STATE;
        }
        final int length = request.length();
        if (length < 0)
        {
            return PostResult.INVALID_ARGUMENT;
        }
        final MemoryRegion region = request.region();
        if (length > 0 && (null == region || !region.isRegistered() || protectionDomain.checkLocalAccess(
            region.lkey(), request.address(), length, AccessFlags.LOCAL_WRITE) != AccessCheck.OK))
        {
            return PostResult.INVALID_ARGUMENT;
        }
        if (rqTail - rqHead > rqMask)
        {
            return PostResult.QUEUE_FULL;
        }
        if (state == QueuePairState.ERROR)
        {
            if (receiveCq.hasOverrun())
            {
                return PostResult.COMPLETION_QUEUE_OVERRUN;
            }
            return offerReceive(request.wrId(), WorkCompletionStatus.WR_FLUSH_ERR, WorkCompletionOpcode.RECV, 0,
                false, 0) ? PostResult.OK : PostResult.COMPLETION_QUEUE_OVERRUN;
        }
        final int i = (int)rqTail & rqMask;
        rqWrId[i] = request.wrId();
        rqRegion[i] = length > 0 ? region : null;
        rqOffset[i] = length > 0 ? region.offsetOf(request.address()) : 0;
        rqLength[i] = length;
        rqTail++;
        return PostResult.OK;
    }

    // ------------------------------------------------------------------------------------------------
    // receive path
    // ------------------------------------------------------------------------------------------------

    void onFrame(final RoceFrame frame, final long nowNanos)
    {
        this.nowNanos = nowNanos;
        final int opcode = frame.opcode();
        if (opcode == Opcode.CNP)
        {
            counters.increment(RcCounters.RX_CNP);
            if (state.canReceive())
            {
                rateLimiter.onCnp(nowNanos);
            }
            return;
        }
        if (!state.canReceive())
        {
            counters.increment(RcCounters.RX_INVALID_STATE);
            return;
        }
        if (frame.ecn() == RcEngineConfig.ECN_CE)
        {
            onCongestionExperienced();
        }
        switch (opcode)
        {
            case Opcode.RC_ACKNOWLEDGE:
                onAcknowledge(frame.psn(), frame.aethSyndrome());
                break;
            case Opcode.RC_RDMA_READ_RESPONSE_FIRST:
            case Opcode.RC_RDMA_READ_RESPONSE_MIDDLE:
            case Opcode.RC_RDMA_READ_RESPONSE_LAST:
            case Opcode.RC_RDMA_READ_RESPONSE_ONLY:
                onReadResponse(frame, opcode);
                break;
            default:
                onRequest(frame, opcode);
                break;
        }
    }

    private void onCongestionExperienced()
    {
        if (!config.dcqcn().enabled())
        {
            return;
        }
        if (!cnpSentEver || nowNanos - lastCnpNanos >= config.dcqcn().cnpIntervalNanos())
        {
            cnpPending = true;
            cnpSentEver = true;
            lastCnpNanos = nowNanos;
        }
    }

    // ---- responder ----

    private void onRequest(final RoceFrame frame, final int opcode)
    {
        if (responderFailed)
        {
            counters.increment(RcCounters.RX_INVALID_STATE);
            return;
        }
        final int psn = frame.psn();
        final int distance = Psn.diff(psn, expectedPsn);
        if (distance < 0)
        {
            onDuplicateRequest(frame, opcode, psn);
            return;
        }
        if (distance > 0)
        {
            counters.increment(RcCounters.RX_OUT_OF_SEQUENCE);
            if (!nakSentForGap)
            {
                nakSentForGap = true;
                scheduleControl(CONTROL_NAK, expectedPsn, NAK_SEQUENCE_SYNDROME);
            }
            return;
        }

        final int payload = frame.payloadLength();
        switch (opcode)
        {
            case Opcode.RC_SEND_FIRST:
            case Opcode.RC_SEND_ONLY:
            case Opcode.RC_SEND_ONLY_WITH_IMMEDIATE:
            {
                final boolean only = opcode != Opcode.RC_SEND_FIRST;
                if (inMessage != IN_NONE || (only ? payload > mtu : payload != mtu))
                {
                    invalidRequest(psn);
                    return;
                }
                if (rqHead == rqTail)
                {
                    receiverNotReady(psn);
                    return;
                }
                if (receiveRevoked())
                {
                    return;
                }
                receivedBytes = 0;
                receiveFailed = false;
                placeSend(frame, payload);
                if (only)
                {
                    finishSend(opcode == Opcode.RC_SEND_ONLY_WITH_IMMEDIATE, frame.immediateData());
                }
                else
                {
                    inMessage = IN_SEND;
                }
                break;
            }
            case Opcode.RC_SEND_MIDDLE:
            case Opcode.RC_SEND_LAST:
            case Opcode.RC_SEND_LAST_WITH_IMMEDIATE:
            {
                final boolean last = opcode != Opcode.RC_SEND_MIDDLE;
                if (inMessage != IN_SEND || (last ? payload < 1 || payload > mtu : payload != mtu))
                {
                    invalidRequest(psn);
                    return;
                }
                if (receiveRevoked())
                {
                    return;
                }
                placeSend(frame, payload);
                if (last)
                {
                    finishSend(opcode == Opcode.RC_SEND_LAST_WITH_IMMEDIATE, frame.immediateData());
                }
                break;
            }
            case Opcode.RC_RDMA_WRITE_FIRST:
            case Opcode.RC_RDMA_WRITE_ONLY:
            case Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE:
            {
                final boolean only = opcode != Opcode.RC_RDMA_WRITE_FIRST;
                final long dmaLength = Integer.toUnsignedLong(frame.rethDmaLength());
                if (inMessage != IN_NONE ||
                    (only ? payload != dmaLength || payload > mtu : payload != mtu || dmaLength <= mtu))
                {
                    invalidRequest(psn);
                    return;
                }
                final boolean immediate = opcode == Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
                if (immediate && rqHead == rqTail)
                {
                    receiverNotReady(psn);
                    return;
                }
                if (!startRemoteAccess(frame, dmaLength, AccessFlags.REMOTE_WRITE, psn))
                {
                    return;
                }
                writeRegion = dmaLength > 0 ? protectionDomain.regionByRkey(frame.rethRkey()) : null;
                writeOffset = dmaLength > 0 ? writeRegion.offsetOf(frame.rethVirtualAddress()) : 0;
                writeRemaining = dmaLength;
                writeTotal = dmaLength;
                placeWrite(frame, payload);
                if (only)
                {
                    finishWrite(immediate, frame.immediateData());
                }
                else
                {
                    inMessage = IN_WRITE;
                }
                break;
            }
            case Opcode.RC_RDMA_WRITE_MIDDLE:
            case Opcode.RC_RDMA_WRITE_LAST:
            case Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE:
            {
                final boolean last = opcode != Opcode.RC_RDMA_WRITE_MIDDLE;
                if (inMessage != IN_WRITE || (last ? payload != writeRemaining : payload != mtu || writeRemaining <= mtu))
                {
                    invalidRequest(psn);
                    return;
                }
                if (null == writeRegion || !writeRegion.isRegistered())
                {
                    // the region was deregistered since the WRITE began: refused as its rkey would be now
                    counters.increment(RcCounters.REVOKED);
                    writeRegion = null;
                    counters.increment(RcCounters.TX_NAK_ACCESS);
                    failResponder(psn, NAK_ACCESS_SYNDROME);
                    return;
                }
                final boolean immediate = opcode == Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE;
                if (immediate && rqHead == rqTail)
                {
                    receiverNotReady(psn);
                    return;
                }
                placeWrite(frame, payload);
                if (last)
                {
                    finishWrite(immediate, frame.immediateData());
                }
                break;
            }
            case Opcode.RC_RDMA_READ_REQUEST:
            {
                final long dmaLength = Integer.toUnsignedLong(frame.rethDmaLength());
                if (inMessage != IN_NONE || readTail - readHead > readMask)
                {
                    invalidRequest(psn); // more READs than max_dest_rd_atomic: the peer broke the contract
                    return;
                }
                if (!startRemoteAccess(frame, dmaLength, AccessFlags.REMOTE_READ, psn))
                {
                    return;
                }
                final int packets = PathMtu.packetCount(dmaLength, mtu);
                queueReadResponse(psn, frame, dmaLength, packets);
                servedReads.add(psn, packets, frame.rethVirtualAddress(), frame.rethRkey(), dmaLength);
                msn = Psn.next(msn);
                expectedPsn = Psn.add(expectedPsn, packets);
                nakSentForGap = false;
                return; // the responses acknowledge it
            }
            default:
                counters.increment(RcCounters.RX_UNSUPPORTED_OPCODE);
                invalidRequest(psn);
                return;
        }
        if (responderFailed || state == QueuePairState.ERROR)
        {
            return;
        }
        expectedPsn = Psn.next(expectedPsn);
        nakSentForGap = false;
        if (frame.ackReq() || ++packetsSinceAck >= config.ackCoalescePackets())
        {
            scheduleControl(CONTROL_ACK, Psn.add(expectedPsn, -1), ACK_SYNDROME);
        }
    }

    private boolean startRemoteAccess(final RoceFrame frame, final long dmaLength, final int right, final int psn)
    {
        if (dmaLength == 0)
        {
            return true; // IB: a zero-length RDMA does not check the R_Key
        }
        final int check = (accessFlags & right) == 0 ? AccessCheck.ACCESS_DENIED :
            protectionDomain.checkRemoteAccess(frame.rethRkey(), frame.rethVirtualAddress(), dmaLength, right);
        if (check != AccessCheck.OK)
        {
            counters.increment(RcCounters.TX_NAK_ACCESS);
            failResponder(psn, NAK_ACCESS_SYNDROME);
            return false;
        }
        return true;
    }

    private void placeSend(final RoceFrame frame, final int payload)
    {
        final int i = (int)rqHead & rqMask;
        if (receivedBytes + payload > rqLength[i])
        {
            receiveFailed = true; // the rest of the message is dropped; LOC_LEN_ERR at its end
            return;
        }
        if (payload > 0)
        {
            MemorySegment.copy(frame.segment(), frame.payloadOffset(), rqRegion[i].segment(),
                rqOffset[i] + receivedBytes, payload);
            counters.add(RcCounters.BYTES_PLACED, payload);
        }
        receivedBytes += payload;
    }

    private void finishSend(final boolean immediate, final int immediateData)
    {
        inMessage = IN_NONE;
        msn = Psn.next(msn);
        final long wrId = rqWrId[(int)rqHead & rqMask];
        rqRegion[(int)rqHead & rqMask] = null;
        rqHead++;
        if (receiveFailed)
        {
            offerReceive(wrId, WorkCompletionStatus.LOC_LEN_ERR, WorkCompletionOpcode.RECV, (int)receivedBytes,
                immediate, immediateData);
            counters.increment(RcCounters.TX_NAK_INVALID);
            failResponder(expectedPsn, NAK_INVALID_SYNDROME);
            return;
        }
        offerReceive(wrId, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.RECV, (int)receivedBytes, immediate,
            immediateData);
    }

    private void placeWrite(final RoceFrame frame, final int payload)
    {
        if (payload > 0)
        {
            MemorySegment.copy(frame.segment(), frame.payloadOffset(), writeRegion.segment(), writeOffset, payload);
            counters.add(RcCounters.BYTES_PLACED, payload);
        }
        writeOffset += payload;
        writeRemaining -= payload;
    }

    private void finishWrite(final boolean immediate, final int immediateData)
    {
        inMessage = IN_NONE;
        writeRegion = null;
        msn = Psn.next(msn);
        if (immediate)
        {
            final long wrId = rqWrId[(int)rqHead & rqMask];
            rqRegion[(int)rqHead & rqMask] = null;
            rqHead++;
            offerReceive(wrId, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.RECV_RDMA_WITH_IMM,
                (int)writeTotal, true, immediateData);
        }
    }

    private void onDuplicateRequest(final RoceFrame frame, final int opcode, final int psn)
    {
        if (opcode == Opcode.RC_RDMA_READ_REQUEST)
        {
            // A re-issued READ (its responses were lost, or go-back-N resent it) is served again from the PSN
            // asked, but only when it repeats a READ this responder served: anything else behind the expected PSN
            // is dropped, never NAKed, so a forged duplicate (a bad rkey, a made-up range) cannot fail the QP.
            final long dmaLength = Integer.toUnsignedLong(frame.rethDmaLength());
            if (!servedReads.repeats(psn, frame.rethVirtualAddress(), frame.rethRkey(), dmaLength, mtu))
            {
                counters.increment(RcCounters.RX_DUPLICATES_DROPPED);
                return;
            }
            counters.increment(RcCounters.RX_DUPLICATES);
            // checked again: the region may have been deregistered since it was first served
            if (!startRemoteAccess(frame, dmaLength, AccessFlags.REMOTE_READ, psn))
            {
                return;
            }
            final int packets = PathMtu.packetCount(dmaLength, mtu);
            // The requester has every response before this PSN and resends every request from it on, in
            // order: responses queued for PSNs from here are about to be asked for again, so they go (a READ
            // re-issued from its middle replaces the rest of the original); those wholly before stay.
            while (readTail != readHead && Psn.diff(lastReadPsn((int)(readTail - 1) & readMask), psn) >= 0)
            {
                readTail--;
                readRegion[(int)readTail & readMask] = null;
            }
            if (readTail - readHead > readMask)
            {
                return; // no room: the requester times out and asks again
            }
            queueReadResponse(psn, frame, dmaLength, packets);
            return;
        }
        if (!isRequestOpcode(opcode))
        {
            counters.increment(RcCounters.RX_DUPLICATES_DROPPED);
            return;
        }
        // a SEND or WRITE already placed: its ACK was lost, so acknowledge again; nothing is placed
        counters.increment(RcCounters.RX_DUPLICATES);
        scheduleControl(CONTROL_ACK, Psn.add(expectedPsn, -1), ACK_SYNDROME);
    }

    private static boolean isRequestOpcode(final int opcode)
    {
        return opcode >= Opcode.RC_SEND_FIRST && opcode <= Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
    }

    private int lastReadPsn(final int context)
    {
        return Psn.add(readStartPsn[context], readPacketCount[context] - 1);
    }

    private void queueReadResponse(final int psn, final RoceFrame frame, final long dmaLength, final int packets)
    {
        final int r = (int)readTail & readMask;
        readStartPsn[r] = psn;
        readRegion[r] = dmaLength > 0 ? protectionDomain.regionByRkey(frame.rethRkey()) : null;
        readOffset[r] = dmaLength > 0 ? readRegion[r].offsetOf(frame.rethVirtualAddress()) : 0;
        readLength[r] = dmaLength;
        readPacketCount[r] = packets;
        readPacketsSent[r] = 0;
        readTail++;
    }

    private void receiverNotReady(final int psn)
    {
        counters.increment(RcCounters.TX_RNR_NAK);
        // the packets behind this one are expected to arrive out of sequence: the RNR NAK covers them
        nakSentForGap = true;
        scheduleControl(CONTROL_NAK, psn, AckExtendedTransportHeader.syndrome(
            AckExtendedTransportHeader.KIND_RNR_NAK, attributes.minRnrTimer()));
    }

    private void invalidRequest(final int psn)
    {
        counters.increment(RcCounters.TX_NAK_INVALID);
        failResponder(psn, NAK_INVALID_SYNDROME);
    }

    private void failResponder(final int psn, final int syndrome)
    {
        // IB class B/C responder errors: NAK, then the QP goes to the error state once the NAK is out
        responderFailed = true;
        scheduleControl(CONTROL_FATAL_NAK, psn, syndrome);
    }

    private void scheduleControl(final int kind, final int psn, final int syndrome)
    {
        if (controlKind == CONTROL_FATAL_NAK)
        {
            return;
        }
        if (controlKind == CONTROL_NAK && kind == CONTROL_ACK && Psn.diff(psn, controlPsn) < 0)
        {
            return; // a NAK already acknowledges everything before its PSN
        }
        controlKind = kind;
        controlPsn = psn;
        controlSyndrome = syndrome;
    }

    // ---- requester ----

    private void onAcknowledge(final int psn, final int syndrome)
    {
        if (!hasOutstanding(psn))
        {
            counters.increment(RcCounters.RX_RESPONSES_DROPPED);
            return;
        }
        switch (AckExtendedTransportHeader.kind(syndrome))
        {
            case AckExtendedTransportHeader.KIND_ACK:
                counters.increment(RcCounters.RX_ACKS);
                acknowledge(psn);
                break;
            case AckExtendedTransportHeader.KIND_RNR_NAK:
                counters.increment(RcCounters.RX_RNR_NAKS);
                acknowledge(Psn.add(psn, -1));
                if (state != QueuePairState.ERROR && Psn.diff(psn, unackedPsn) == 0)
                {
                    onRnrNak(AckExtendedTransportHeader.value(syndrome));
                }
                break;
            case AckExtendedTransportHeader.KIND_NAK:
                counters.increment(RcCounters.RX_NAKS);
                acknowledge(Psn.add(psn, -1));
                if (state == QueuePairState.ERROR || Psn.diff(psn, unackedPsn) != 0)
                {
                    break; // a NAK for a PSN already behind us (or stopped at an incomplete READ)
                }
                switch (AckExtendedTransportHeader.value(syndrome))
                {
                    case AckExtendedTransportHeader.NAK_PSN_SEQUENCE_ERROR:
                        if (rewoundForGapAt != psn)
                        {
                            retransmit(WorkCompletionStatus.RETRY_EXC_ERR);
                        }
                        break;
                    case AckExtendedTransportHeader.NAK_REMOTE_ACCESS_ERROR:
                        fail(WorkCompletionStatus.REM_ACCESS_ERR);
                        break;
                    case AckExtendedTransportHeader.NAK_REMOTE_OPERATIONAL_ERROR:
                        fail(WorkCompletionStatus.REM_OP_ERR);
                        break;
                    default:
                        fail(WorkCompletionStatus.REM_INV_REQ_ERR);
                        break;
                }
                break;
            default:
                counters.increment(RcCounters.RX_RESPONSES_DROPPED);
                break;
        }
    }

    /**
     * @return true when {@code psn} names a packet sent and not yet acknowledged, or the one just before
     * (a duplicate ACK).
     */
    private boolean hasOutstanding(final int psn)
    {
        return (state == QueuePairState.RTS || state == QueuePairState.SQD) && Psn.diff(psn, Psn.add(unackedPsn, -1)) >= 0 &&
            Psn.diff(psn, highestSentPsn) < 0;
    }

    private void onRnrNak(final int timerCode)
    {
        if (attributes.rnrRetryCount() != RcConnectionAttributes.RNR_RETRY_INFINITE)
        {
            if (rnrRetriesLeft == 0)
            {
                fail(WorkCompletionStatus.RNR_RETRY_EXC_ERR);
                return;
            }
            rnrRetriesLeft--;
        }
        rewind(unackedPsn);
        rnrWaiting = true;
        rnrWaitUntil = nowNanos + RnrTimer.nanos(timerCode);
        timerArmed = true;
        retransmitDeadline = rnrWaitUntil + attributes.ackTimeoutNanos();
    }

    private void onReadResponse(final RoceFrame frame, final int opcode)
    {
        final int psn = frame.psn();
        if ((state != QueuePairState.RTS && state != QueuePairState.SQD) || Psn.diff(psn, unackedPsn) < 0 || Psn.diff(psn, highestSentPsn) >= 0)
        {
            counters.increment(RcCounters.RX_RESPONSES_DROPPED);
            return;
        }
        // a response acknowledges every request before it
        acknowledge(Psn.add(psn, -1));
        if (sqHead == sqTail || state == QueuePairState.ERROR)
        {
            counters.increment(RcCounters.RX_RESPONSES_DROPPED);
            return;
        }
        final int i = (int)sqHead & sqMask;
        if (sqOpcode[i] != WorkRequestOpcode.RDMA_READ.ordinal() ||
            !Psn.inRange(psn, sqFirstPsn[i], sqPacketCount[i]))
        {
            counters.increment(RcCounters.RX_RESPONSES_DROPPED);
            return;
        }
        final int expected = Psn.add(sqFirstPsn[i], sqReadReceived[i]);
        final int distance = Psn.diff(psn, expected);
        if (distance < 0)
        {
            counters.increment(RcCounters.RX_RESPONSES_DROPPED);
            return;
        }
        if (distance > 0)
        {
            // a READ response was lost: ask again from it, once per gap
            counters.increment(RcCounters.RX_RESPONSES_DROPPED);
            if (rewoundForGapAt != expected)
            {
                retransmit(WorkCompletionStatus.RETRY_EXC_ERR);
            }
            return;
        }
        final int remaining = sqLength[i] - sqReadReceived[i] * mtu;
        final boolean last = opcode == Opcode.RC_RDMA_READ_RESPONSE_LAST || opcode == Opcode.RC_RDMA_READ_RESPONSE_ONLY;
        final int payload = frame.payloadLength();
        if (last ? payload != remaining : payload != mtu || remaining <= mtu)
        {
            fail(WorkCompletionStatus.BAD_RESP_ERR);
            return;
        }
        if (payload > 0 && !sqRegion[i].isRegistered())
        {
            revoke(sqRegion[i]);
            return;
        }
        if (payload > 0)
        {
            MemorySegment.copy(frame.segment(), frame.payloadOffset(), sqRegion[i].segment(),
                sqLocalOffset[i] + (long)sqReadReceived[i] * mtu, payload);
            counters.add(RcCounters.BYTES_PLACED, payload);
        }
        sqReadReceived[i]++;
        onProgress(Psn.next(psn));
        if (last)
        {
            acknowledge(psn);
        }
    }

    /**
     * Everything up to and including {@code psn} is acknowledged: complete the requests it covers, in order.
     * A READ it covers whose responses are not all in means they were lost: go back to the first missing one.
     */
    private void acknowledge(final int psn)
    {
        while (sqHead != sqTail && state != QueuePairState.ERROR)
        {
            final int i = (int)sqHead & sqMask;
            if (sqLocalError[i] != NO_LOCAL_ERROR)
            {
                if (sqHead == sqSend)
                {
                    fail(STATUSES[sqLocalError[i]]);
                }
                return;
            }
            final int count = sqPacketCount[i];
            final int lastPsn = Psn.add(sqFirstPsn[i], count - 1);
            if (Psn.diff(lastPsn, psn) > 0)
            {
                break;
            }
            if (sqOpcode[i] == WorkRequestOpcode.RDMA_READ.ordinal() && sqReadReceived[i] < count)
            {
                // implied NAK: later requests were acknowledged, so these responses are not coming
                onProgress(Psn.add(sqFirstPsn[i], sqReadReceived[i]));
                final int missing = Psn.add(sqFirstPsn[i], sqReadReceived[i]);
                if (rewoundForGapAt != missing)
                {
                    retransmit(WorkCompletionStatus.RETRY_EXC_ERR);
                }
                return;
            }
            final WorkRequestOpcode opcode = WR_OPCODES[sqOpcode[i]];
            if (sqSignaled[i] && !completeSend(sqWrId[i], opcode, WorkCompletionStatus.SUCCESS, sqLength[i], false))
            {
                return; // completion queue overrun: the QP went to ERROR and flushed this request too
            }
            sqRegion[i] = null;
            sqHead++;
            if (sqHead > sqSend)
            {
                // the peer had it all although we had gone back: skip what it has
                sqSend = sqHead;
                sendPsn = Psn.next(lastPsn);
            }
        }
        if (state == QueuePairState.ERROR)
        {
            return;
        }
        int progress = Psn.next(psn);
        if (sqHead != sqTail)
        {
            final int i = (int)sqHead & sqMask;
            if (sqOpcode[i] == WorkRequestOpcode.RDMA_READ.ordinal() && sqLocalError[i] == NO_LOCAL_ERROR)
            {
                // an ACK or a later response inside a READ's range covers only the responses that arrived
                final int firstMissing = Psn.add(sqFirstPsn[i], sqReadReceived[i]);
                if (Psn.diff(progress, firstMissing) > 0)
                {
                    progress = firstMissing;
                }
            }
        }
        onProgress(progress);
        if (sqHead != sqTail && sqHead == sqSend && sqLocalError[(int)sqHead & sqMask] != NO_LOCAL_ERROR)
        {
            fail(STATUSES[sqLocalError[(int)sqHead & sqMask]]);
        }
    }

    /**
     * The peer has every PSN before {@code newUnacked}: restore the retry counts and restart the timer.
     */
    private void onProgress(final int newUnacked)
    {
        if (Psn.diff(newUnacked, unackedPsn) <= 0)
        {
            return;
        }
        unackedPsn = newUnacked;
        if (Psn.diff(sendPsn, unackedPsn) < 0)
        {
            sendPsn = unackedPsn;
        }
        retriesLeft = attributes.retryCount();
        rnrRetriesLeft = attributes.rnrRetryCount();
        rewoundForGapAt = -1;
        if (Psn.diff(highestSentPsn, unackedPsn) > 0)
        {
            timerArmed = true;
            retransmitDeadline = nowNanos + attributes.ackTimeoutNanos();
        }
        else
        {
            timerArmed = false;
        }
    }

    /**
     * Go-back-N from the oldest unacknowledged PSN, spending a retry.
     *
     * @param exhausted the status when no retry is left.
     */
    private void retransmit(final WorkCompletionStatus exhausted)
    {
        if (retriesLeft == 0)
        {
            fail(exhausted);
            return;
        }
        retriesLeft--;
        rewind(unackedPsn);
        // until progress, a NAK or a gap pointing at this same PSN reports the loss just acted on
        rewoundForGapAt = unackedPsn;
        timerArmed = true;
        retransmitDeadline = nowNanos + attributes.ackTimeoutNanos();
    }

    /**
     * Points transmission at {@code psn}: the request holding it, from its packet.
     */
    private void rewind(final int psn)
    {
        long w = sqHead;
        while (w < sqSend)
        {
            final int i = (int)w & sqMask;
            if (Psn.diff(psn, Psn.add(sqFirstPsn[i], sqPacketCount[i])) < 0)
            {
                break;
            }
            w++;
        }
        sqSend = w;
        sendPsn = psn;
    }

    // ------------------------------------------------------------------------------------------------
    // transmit path and timers
    // ------------------------------------------------------------------------------------------------

    /**
     * Runs timers and sends what is due: a CNP, READ responses, an ACK or NAK, then requests.
     *
     * @return packets sent plus timer events.
     */
    int doWork(final long nowNanos)
    {
        this.nowNanos = nowNanos;
        int work = 0;
        if (state == QueuePairState.RESET || state == QueuePairState.INIT)
        {
            return 0;
        }
        if (state != QueuePairState.ERROR && (sendCq.hasOverrun() || receiveCq.hasOverrun()))
        {
            enterError(); // a queue it shares overran (maybe for another QP): every QP using it is in error, as IB
            return 1;
        }
        rateLimiter.onTick(nowNanos);
        work += onTimers();

        if (cnpPending && sendCnp())
        {
            cnpPending = false;
            work++;
        }
        int budget = config.packetsPerQpPerTick();
        while (budget > 0 && readHead != readTail && state != QueuePairState.ERROR && rateLimiter.canSend(nowNanos))
        {
            if (!sendReadResponse())
            {
                break;
            }
            budget--;
            work++;
        }
        if (controlKind != CONTROL_NONE && readHead == readTail && sendControl())
        {
            work++;
        }
        if (state == QueuePairState.RTS || state == QueuePairState.SQD)
        {
            work += sendRequests(budget);
        }
        return work;
    }

    private int onTimers()
    {
        if (state == QueuePairState.ERROR)
        {
            return 0;
        }
        if (rnrWaiting && nowNanos - rnrWaitUntil >= 0)
        {
            rnrWaiting = false;
        }
        if (timerArmed && nowNanos - retransmitDeadline >= 0)
        {
            if (Psn.diff(highestSentPsn, unackedPsn) <= 0)
            {
                timerArmed = false;
                return 0;
            }
            counters.increment(RcCounters.TIMEOUTS);
            retransmit(WorkCompletionStatus.RETRY_EXC_ERR);
            return 1;
        }
        return 0;
    }

    private int sendRequests(final int budget)
    {
        int sent = 0;
        while (sent < budget && sqSend != sqTail && !rnrWaiting && state != QueuePairState.ERROR)
        {
            final int i = (int)sqSend & sqMask;
            if (sqLocalError[i] != NO_LOCAL_ERROR)
            {
                if (sqHead == sqSend)
                {
                    fail(STATUSES[sqLocalError[i]]);
                }
                break;
            }
            if (state == QueuePairState.SQD && Psn.diff(sendPsn, sqFirstPsn[i]) == 0 &&
                Psn.diff(sendPsn, highestSentPsn) >= 0)
            {
                break; // drained: no new request starts
            }
            if (Psn.diff(sendPsn, unackedPsn) >= config.maxInflightPackets() || !rateLimiter.canSend(nowNanos))
            {
                break;
            }
            if (null != sqRegion[i] && !sqRegion[i].isRegistered())
            {
                revoke(sqRegion[i]); // its memory was deregistered under it: the QP fails, nothing is read
                break;
            }
            final int first = sqFirstPsn[i];
            final int packetIndex = Psn.diff(sendPsn, first);
            final int count = sqPacketCount[i];
            final boolean retransmission = Psn.diff(sendPsn, highestSentPsn) < 0;
            final int opcode = sqOpcode[i];
            final int length;
            if (opcode == WorkRequestOpcode.RDMA_READ.ordinal())
            {
                if (outstandingReadsBefore(sqSend) >= config.maxReadsInFlight())
                {
                    break;
                }
                final long offset = (long)packetIndex * mtu;
                writer.reth(sqRemoteAddress[i] + offset, sqRkey[i], (int)(sqLength[i] - offset));
                length = emit(Opcode.RC_RDMA_READ_REQUEST, sendPsn, false, false, null, 0, 0, true);
                if (length < 0)
                {
                    break;
                }
                sendPsn = Psn.add(first, count);
                sqSend++;
            }
            else
            {
                final long offset = (long)packetIndex * mtu;
                final int payload = (int)Math.min(mtu, sqLength[i] - offset);
                final boolean isFirst = packetIndex == 0;
                final boolean isLast = packetIndex == count - 1;
                final boolean send = opcode == WorkRequestOpcode.SEND.ordinal() ||
                    opcode == WorkRequestOpcode.SEND_WITH_IMM.ordinal();
                final boolean immediate = opcode == WorkRequestOpcode.SEND_WITH_IMM.ordinal() ||
                    opcode == WorkRequestOpcode.RDMA_WRITE_WITH_IMM.ordinal();
                final int wireOpcode = requestOpcode(send, immediate, isFirst, isLast);
                if (!send && isFirst)
                {
                    writer.reth(sqRemoteAddress[i], sqRkey[i], sqLength[i]);
                }
                if (immediate && isLast)
                {
                    writer.immediate(sqImmediate[i]);
                }
                final boolean ackReq = isLast ||
                    Psn.diff(Psn.next(sendPsn), unackedPsn) >= config.maxInflightPackets();
                length = emit(wireOpcode, sendPsn, ackReq, isLast && sqSolicited[i],
                    null == sqRegion[i] ? null : sqRegion[i].segment(), sqLocalOffset[i] + offset, payload, true);
                if (length < 0)
                {
                    break;
                }
                sendPsn = Psn.next(sendPsn);
                if (isLast)
                {
                    sqSend++;
                }
            }
            counters.increment(retransmission ? RcCounters.RETRANSMITTED : RcCounters.TX_REQUESTS);
            if (Psn.diff(sendPsn, highestSentPsn) > 0)
            {
                highestSentPsn = sendPsn;
            }
            if (!timerArmed)
            {
                timerArmed = true;
                retransmitDeadline = nowNanos + attributes.ackTimeoutNanos();
            }
            sent++;
        }
        return sent;
    }

    private int outstandingReadsBefore(final long position)
    {
        int reads = 0;
        for (long w = sqHead; w < position; w++)
        {
            if (sqOpcode[(int)w & sqMask] == WorkRequestOpcode.RDMA_READ.ordinal())
            {
                reads++;
            }
        }
        return reads;
    }

    private static int requestOpcode(final boolean send, final boolean immediate, final boolean first, final boolean last)
    {
        if (send)
        {
            if (first && last)
            {
                return immediate ? Opcode.RC_SEND_ONLY_WITH_IMMEDIATE : Opcode.RC_SEND_ONLY;
            }
            if (first)
            {
                return Opcode.RC_SEND_FIRST;
            }
            if (last)
            {
                return immediate ? Opcode.RC_SEND_LAST_WITH_IMMEDIATE : Opcode.RC_SEND_LAST;
            }
            return Opcode.RC_SEND_MIDDLE;
        }
        if (first && last)
        {
            return immediate ? Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE : Opcode.RC_RDMA_WRITE_ONLY;
        }
        if (first)
        {
            return Opcode.RC_RDMA_WRITE_FIRST;
        }
        if (last)
        {
            return immediate ? Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE : Opcode.RC_RDMA_WRITE_LAST;
        }
        return Opcode.RC_RDMA_WRITE_MIDDLE;
    }

    private boolean sendReadResponse()
    {
        final int r = (int)readHead & readMask;
        final int index = readPacketsSent[r];
        final int count = readPacketCount[r];
        final long offset = (long)index * mtu;
        final int payload = (int)Math.min(mtu, readLength[r] - offset);
        final int opcode;
        if (count == 1)
        {
            opcode = Opcode.RC_RDMA_READ_RESPONSE_ONLY;
        }
        else if (index == 0)
        {
            opcode = Opcode.RC_RDMA_READ_RESPONSE_FIRST;
        }
        else if (index == count - 1)
        {
            opcode = Opcode.RC_RDMA_READ_RESPONSE_LAST;
        }
        else
        {
            opcode = Opcode.RC_RDMA_READ_RESPONSE_MIDDLE;
        }
        final MemoryRegion region = readRegion[r];
        if (null != region && !region.isRegistered())
        {
            revokeReadsFrom(readHead); // deregistered since the READ was accepted: not a byte of it leaves
            return false;
        }
        writer.aeth(ACK_SYNDROME, msn);
        if (emit(opcode, Psn.add(readStartPsn[r], index), false, false, null == region ? null : region.segment(),
            readOffset[r] + offset, payload, true) < 0)
        {
            return false;
        }
        counters.increment(RcCounters.TX_READ_RESPONSES);
        if (++readPacketsSent[r] == count)
        {
            readRegion[r] = null;
            readHead++;
            packetsSinceAck = 0; // the last response acknowledges everything up to it
        }
        return true;
    }

    private boolean sendControl()
    {
        writer.aeth(controlSyndrome, msn);
        if (emit(Opcode.RC_ACKNOWLEDGE, controlPsn, false, false, null, 0, 0, false) < 0)
        {
            return false;
        }
        final int kind = controlKind;
        controlKind = CONTROL_NONE;
        if (kind == CONTROL_ACK)
        {
            counters.increment(RcCounters.TX_ACKS);
            packetsSinceAck = 0;
        }
        else if (controlSyndrome == NAK_SEQUENCE_SYNDROME)
        {
            counters.increment(RcCounters.TX_NAK_SEQUENCE);
        }
        if (kind == CONTROL_FATAL_NAK)
        {
            enterError();
        }
        return true;
    }

    private boolean sendCnp()
    {
        writer.resv8a(BaseTransportHeader.BECN_FLAG);
        final int length = emit(Opcode.CNP, 0, false, false, null, 0, 0, false);
        writer.resv8a(0);
        if (length < 0)
        {
            return false;
        }
        counters.increment(RcCounters.TX_CNP);
        return true;
    }

    /**
     * Writes one frame to the sink; the caller has set the opcode's extension headers on the writer.
     *
     * @return the frame length, or -1 when the sink had no buffer.
     */
    private int emit(
        final int opcode,
        final int psn,
        final boolean ackReq,
        final boolean solicited,
        final MemorySegment payload,
        final long payloadOffset,
        final int payloadLength,
        final boolean data)
    {
        writer.ethernet(config.localMac(), remoteMac);
        if (ipv6)
        {
            writer.ipv6(attributes.localIpv6High(), attributes.localIpv6Low(), attributes.remoteIpv6High(),
                attributes.remoteIpv6Low());
        }
        else
        {
            writer.ipv4(config.localIpv4(), remoteIpv4);
        }
        writer.udpSourcePort(udpSourcePort)
            .ecn(data ? config.dataEcn() : 0)
            .opcode(opcode)
            .destQp(remoteQpNumber)
            .psn(psn)
            .ackReq(ackReq)
            .solicited(solicited);
        final int maxLength = writer.frameLength(payloadLength);
        if (!sink.claim(maxLength))
        {
            counters.increment(RcCounters.SINK_FULL);
            return -1;
        }
        final int length = payloadLength > 0 ?
            writer.writeFrame(sink.buffer(), sink.offset(), payload, payloadOffset, payloadLength) :
            writer.writeFrame(sink.buffer(), sink.offset(), 0);
        sink.commit(length);
        counters.increment(RcCounters.TX_PACKETS);
        if (data)
        {
            // paced by wire time: the frame plus preamble, FCS and inter-frame gap, or pacing at line rate overruns the line
            rateLimiter.onSent(length + WIRE_OVERHEAD_BYTES, nowNanos);
        }
        return length;
    }

    // ------------------------------------------------------------------------------------------------
    // completions and errors
    // ------------------------------------------------------------------------------------------------

    private boolean completeSend(
        final long wrId,
        final WorkRequestOpcode opcode,
        final WorkCompletionStatus status,
        final int byteLength,
        final boolean force)
    {
        if (!sendCq.offer(wrId, status, opcode.completionOpcode(), byteLength, false, 0, qpNumber))
        {
            counters.increment(RcCounters.CQ_OVERRUNS);
            if (!force)
            {
                enterError();
            }
            return false;
        }
        return true;
    }

    private boolean offerReceive(
        final long wrId,
        final WorkCompletionStatus status,
        final WorkCompletionOpcode opcode,
        final int byteLength,
        final boolean immediate,
        final int immediateData)
    {
        if (!receiveCq.offer(wrId, status, opcode, byteLength, immediate, immediateData, qpNumber))
        {
            counters.increment(RcCounters.CQ_OVERRUNS);
            // as IB: a CQ overrun is an error of the QPs using it (unless already flushing into it)
            enterError();
            return false;
        }
        return true;
    }

    /**
     * The head request failed: complete it with {@code status}, then the QP goes to ERROR.
     */
    private void fail(final WorkCompletionStatus status)
    {
        if (sqHead != sqTail)
        {
            final int i = (int)sqHead & sqMask;
            completeSend(sqWrId[i], WR_OPCODES[sqOpcode[i]], status, 0, true);
            sqRegion[i] = null;
            sqHead++;
        }
        enterError();
    }

    private void enterError()
    {
        if (state == QueuePairState.ERROR)
        {
            return;
        }
        flushAll();
        engine.onQueuePairError(this);
    }

    /** Goes to ERROR and completes everything outstanding, dropping every reference to registered memory. */
    private void flushAll()
    {
        state = QueuePairState.ERROR;
        timerArmed = false;
        rnrWaiting = false;
        while (sqHead != sqTail)
        {
            final int i = (int)sqHead & sqMask;
            completeSend(sqWrId[i], WR_OPCODES[sqOpcode[i]], flushStatus(sqRegion[i]), 0, true);
            sqRegion[i] = null;
            sqHead++;
        }
        sqSend = sqHead;
        while (rqHead != rqTail)
        {
            final int i = (int)rqHead & rqMask;
            offerReceive(rqWrId[i], flushStatus(rqRegion[i]), WorkCompletionOpcode.RECV, 0, false, 0);
            rqRegion[i] = null;
            rqHead++;
        }
        for (long r = readHead; r < readTail; r++)
        {
            readRegion[(int)r & readMask] = null;
        }
        readHead = readTail;
        writeRegion = null;
    }

    private WorkCompletionStatus flushStatus(final MemoryRegion region)
    {
        return null != region && (region == revokedRegion || !region.isRegistered()) ?
            WorkCompletionStatus.LOC_PROT_ERR : WorkCompletionStatus.WR_FLUSH_ERR;
    }

    /**
     * Destroyed by its engine (control path): everything outstanding completes with WR_FLUSH_ERR (LOC_PROT_ERR
     * where its memory was deregistered) and no reference to registered memory is kept.
     */
    void destroy()
    {
        if (state != QueuePairState.RESET && state != QueuePairState.ERROR)
        {
            flushAll();
        }
        state = QueuePairState.ERROR;
    }

    /**
     * Cuts short every operation that uses {@code region}, being deregistered (engine thread). See
     * {@link RcEngine#revoke}.
     *
     * @return true when one used it.
     */
    boolean revoke(final MemoryRegion region)
    {
        boolean hit = false;
        if (inMessage == IN_WRITE && writeRegion == region)
        {
            // refused at its next packet, which the requester has sent or will: the NAK then names a PSN it knows
            writeRegion = null;
            hit = true;
        }
        for (long r = readHead; r < readTail; r++)
        {
            if (readRegion[(int)r & readMask] == region)
            {
                revokeReadsFrom(r);
                hit = true;
                break;
            }
        }
        boolean local = false;
        for (long w = sqHead; w != sqTail && !local; w++)
        {
            local = sqRegion[(int)w & sqMask] == region;
        }
        for (long w = rqHead; w != rqTail && !local; w++)
        {
            local = rqRegion[(int)w & rqMask] == region;
        }
        if (local && state != QueuePairState.ERROR)
        {
            // as a NIC finding a work request's memory gone: a local protection error, fatal to the QP
            counters.increment(RcCounters.REVOKED);
            revokedRegion = region;
            enterError();
            revokedRegion = null;
            hit = true;
        }
        return hit;
    }

    /** A posted receive's memory was deregistered: the QP fails before a byte is placed. */
    private boolean receiveRevoked()
    {
        final MemoryRegion region = rqRegion[(int)rqHead & rqMask];
        if (null != region && !region.isRegistered())
        {
            revoke(region);
            return true;
        }
        return false;
    }

    /**
     * READ responses from context {@code from} on are not sent: their region is gone. The requester gets a NAK
     * remote access error at the first response it lacks, after the responses queued before it.
     */
    private void revokeReadsFrom(final long from)
    {
        final int c = (int)from & readMask;
        final int nakPsn = Psn.add(readStartPsn[c], readPacketsSent[c]);
        for (long r = from; r < readTail; r++)
        {
            readRegion[(int)r & readMask] = null;
        }
        readTail = from;
        counters.increment(RcCounters.REVOKED);
        counters.increment(RcCounters.TX_NAK_ACCESS);
        failResponder(nakPsn, NAK_ACCESS_SYNDROME);
    }

    public String toString()
    {
        return "RcQueuePair{qp=" + qpNumber + ", state=" + state + ", sendPsn=" + sendPsn + ", unacked=" +
            unackedPsn + ", expected=" + expectedPsn + ", sq=" + (sqTail - sqHead) + ", rq=" + (rqTail - rqHead) + '}';
    }
}
