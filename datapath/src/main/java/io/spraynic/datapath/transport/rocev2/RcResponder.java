package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.AccessCheck;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.wire.AckExtendedTransportHeader;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrame;

import java.lang.foreign.MemorySegment;

/**
 * The responder of one RC queue pair (InfiniBand Vol 1, 9.7): its receive queue, the expected PSN, placement of
 * SENDs and RDMA WRITEs, READ responses, and the ACKs and NAKs it owes.
 * <p>
 * A packet at the expected PSN is checked (opcode sequence, lengths, rkey, bounds and rights, a posted receive)
 * before a byte is placed; a refused one is answered by a NAK (remote access error, invalid request, or RNR when no
 * receive is posted) and places nothing. A duplicate (a PSN behind the expected one) never draws a NAK: a SEND or
 * WRITE is re-ACKed, a READ that repeats one of the last READs served (same PSN range, or its tail as go-back-N
 * re-issues it, same address, rkey and length) is served again from the PSN asked, and any other is dropped and
 * counted, so a forged duplicate cannot fail a live QP. A packet ahead of the expected PSN is dropped with one NAK
 * "PSN sequence error" per gap, as IB specifies. ACKs are coalesced: one per
 * {@link RcEngineConfig#ackCoalescePackets()} packets, or when asked. ACKs and NAKs wait behind READ responses
 * already queued, so the peer sees everything in PSN order.
 */
final class RcResponder
{
    /**
     * The longest message IB allows (2^31 bytes): a READ or WRITE past it spans more than half the PSN space (at its
     * longest, all of it), where the signed PSN distances of duplicates and gaps stop meaning anything.
     */
    static final long MAX_MESSAGE_BYTES = 1L << 31;

    private static final int IN_NONE = 0;
    private static final int IN_SEND = 1;
    private static final int IN_WRITE = 2;

    private static final int CONTROL_NONE = 0;
    private static final int CONTROL_ACK = 1;
    private static final int CONTROL_NAK = 2;
    /** A NAK after which the queue pair goes to ERROR (IB class B and C responder errors). */
    private static final int CONTROL_FATAL_NAK = 3;

    static final int ACK_SYNDROME = AckExtendedTransportHeader.syndrome(
        AckExtendedTransportHeader.KIND_ACK, AckExtendedTransportHeader.CREDITS_INVALID);
    static final int NAK_SEQUENCE_SYNDROME = AckExtendedTransportHeader.syndrome(
        AckExtendedTransportHeader.KIND_NAK, AckExtendedTransportHeader.NAK_PSN_SEQUENCE_ERROR);
    static final int NAK_ACCESS_SYNDROME = AckExtendedTransportHeader.syndrome(
        AckExtendedTransportHeader.KIND_NAK, AckExtendedTransportHeader.NAK_REMOTE_ACCESS_ERROR);
    static final int NAK_INVALID_SYNDROME = AckExtendedTransportHeader.syndrome(
        AckExtendedTransportHeader.KIND_NAK, AckExtendedTransportHeader.NAK_INVALID_REQUEST);

    private final RcEngineConfig config;
    private final TransportCounters counters;
    private final RcStateMachine states;
    private final RcFrameOutput output;
    private final CompletionQueue receiveCq;
    private final int qpNumber;
    private final RcFailureHandler failures;
    private final RcReceiveQueue receives;
    private final RcReadResponseQueue readResponses;
    /** READs served lately, which a duplicate READ must repeat to be served again. */
    private final RcServedReads servedReads;
    private ProtectionDomain protectionDomain;
    private int accessFlags;

    private RcConnectionAttributes attributes;
    private int mtu;

    private int expectedPsn;
    private int msn;
    private boolean nakSentForGap;
    private boolean failed;
    private int inMessage = IN_NONE;
    private long receivedBytes;
    private boolean receiveTooLong;
    private MemoryRegion writeRegion;
    private long writeOffset;
    private long writeRemaining;
    private long writeTotal;
    private int packetsSinceAck;
    private int controlKind = CONTROL_NONE;
    private int controlPsn;
    private int controlSyndrome;

    RcResponder(
        final RcEngineConfig config,
        final TransportCounters counters,
        final RcStateMachine states,
        final RcFrameOutput output,
        final CompletionQueue receiveCq,
        final int qpNumber,
        final RcFailureHandler failures,
        final ProtectionDomain protectionDomain,
        final int receiveQueueDepth)
    {
        this.config = config;
        this.counters = counters;
        this.states = states;
        this.output = output;
        this.receiveCq = receiveCq;
        this.qpNumber = qpNumber;
        this.failures = failures;
        this.protectionDomain = protectionDomain;
        this.receives = new RcReceiveQueue(receiveQueueDepth);
        this.readResponses = new RcReadResponseQueue(config.maxReadsInFlight());
        // twice the READs a requester may have outstanding: each one it may re-issue is still remembered
        this.servedReads = new RcServedReads(readResponses.capacity() * 2);
    }

    void protectionDomain(final ProtectionDomain domain)
    {
        protectionDomain = domain;
    }

    /** At INIT: the remote access this queue pair allows. */
    void accessFlags(final int flags)
    {
        accessFlags = flags;
    }

    /** At RTR: the responder starts at the attributes' receive PSN. */
    void connect(final RcConnectionAttributes attributes)
    {
        this.attributes = attributes;
        this.mtu = attributes.pathMtu();
        this.expectedPsn = attributes.receivePsn();
        this.msn = 0;
    }

    /** At RESET: receives and READs are forgotten without completions. */
    void reset()
    {
        receives.clear();
        readResponses.clear();
        servedReads.clear();
        inMessage = IN_NONE;
        writeRegion = null;
        controlKind = CONTROL_NONE;
        failed = false;
        nakSentForGap = false;
        packetsSinceAck = 0;
    }

    int expectedPsn()
    {
        return expectedPsn;
    }

    int postedReceives()
    {
        return receives.size();
    }

    // ---- posting ----

    int postReceive(final ReceiveWorkRequest request)
    {
        if (!states.acceptsReceivePosts())
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
        if (receives.isFull())
        {
            return PostResult.QUEUE_FULL;
        }
        if (states.isError())
        {
            if (receiveCq.hasOverrun())
            {
                return PostResult.COMPLETION_QUEUE_OVERRUN;
            }
            return complete(request.wrId(), WorkCompletionStatus.WR_FLUSH_ERR, WorkCompletionOpcode.RECV, 0,
                false, 0) ? PostResult.OK : PostResult.COMPLETION_QUEUE_OVERRUN;
        }
        receives.add(request.wrId(), length > 0 ? region : null, length > 0 ? region.offsetOf(request.address()) : 0,
            length);
        return PostResult.OK;
    }

    // ---- requests ----

    /** A request packet (SEND, RDMA WRITE or READ request, or an opcode this responder refuses). */
    void onRequest(final RoceFrame frame, final int opcode)
    {
        if (failed)
        {
            counters.increment(RcCounters.RX_INVALID_STATE);
            return;
        }
        final int psn = frame.psn();
        final int distance = Psn.diff(psn, expectedPsn);
        if (distance < 0)
        {
            onDuplicate(frame, opcode, psn);
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
                if (receives.isEmpty())
                {
                    receiverNotReady(psn);
                    return;
                }
                if (receiveRevoked())
                {
                    return;
                }
                receivedBytes = 0;
                receiveTooLong = false;
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
                if (inMessage != IN_NONE || dmaLength > MAX_MESSAGE_BYTES ||
                    (only ? payload != dmaLength || payload > mtu : payload != mtu || dmaLength <= mtu))
                {
                    invalidRequest(psn);
                    return;
                }
                final boolean immediate = opcode == Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
                if (immediate && receives.isEmpty())
                {
                    receiverNotReady(psn);
                    return;
                }
                if (!checkRemoteAccess(frame, dmaLength, AccessFlags.REMOTE_WRITE, psn))
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
                    fail(psn, NAK_ACCESS_SYNDROME);
                    return;
                }
                final boolean immediate = opcode == Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE;
                if (immediate && receives.isEmpty())
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
                if (inMessage != IN_NONE || readResponses.isFull() || dmaLength > MAX_MESSAGE_BYTES)
                {
                    // more READs than max_dest_rd_atomic, or a message IB does not allow: the peer broke the contract
                    invalidRequest(psn);
                    return;
                }
                if (!checkRemoteAccess(frame, dmaLength, AccessFlags.REMOTE_READ, psn))
                {
                    return;
                }
                final int packets = PathMtu.packetCount(dmaLength, mtu);
                queueReadResponses(psn, frame, dmaLength, packets);
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
        if (failed || states.isError())
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

    private boolean checkRemoteAccess(final RoceFrame frame, final long dmaLength, final int right, final int psn)
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
            fail(psn, NAK_ACCESS_SYNDROME);
            return false;
        }
        return true;
    }

    private void placeSend(final RoceFrame frame, final int payload)
    {
        final int slot = receives.headIndex();
        if (receivedBytes + payload > receives.length[slot])
        {
            receiveTooLong = true; // the rest of the message is dropped; LOC_LEN_ERR at its end
            return;
        }
        if (payload > 0)
        {
            MemorySegment.copy(frame.segment(), frame.payloadOffset(), receives.region[slot].segment(),
                receives.offset[slot] + receivedBytes, payload);
            counters.add(RcCounters.BYTES_PLACED, payload);
        }
        receivedBytes += payload;
    }

    private void finishSend(final boolean immediate, final int immediateData)
    {
        inMessage = IN_NONE;
        msn = Psn.next(msn);
        final long wrId = receives.consumeHead();
        if (receiveTooLong)
        {
            complete(wrId, WorkCompletionStatus.LOC_LEN_ERR, WorkCompletionOpcode.RECV, (int)receivedBytes,
                immediate, immediateData);
            counters.increment(RcCounters.TX_NAK_INVALID);
            fail(expectedPsn, NAK_INVALID_SYNDROME);
            return;
        }
        complete(wrId, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.RECV, (int)receivedBytes, immediate,
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
            final long wrId = receives.consumeHead();
            complete(wrId, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.RECV_RDMA_WITH_IMM, (int)writeTotal, true,
                immediateData);
        }
    }

    /** A posted receive's memory was deregistered: the QP fails before a byte is placed. */
    private boolean receiveRevoked()
    {
        final MemoryRegion region = receives.region[receives.headIndex()];
        if (null != region && !region.isRegistered())
        {
            failures.revoke(region);
            return true;
        }
        return false;
    }

    private void onDuplicate(final RoceFrame frame, final int opcode, final int psn)
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
            if (!checkRemoteAccess(frame, dmaLength, AccessFlags.REMOTE_READ, psn))
            {
                return;
            }
            final int packets = PathMtu.packetCount(dmaLength, mtu);
            // The requester has every response before this PSN and resends every request from it on, in
            // order: responses queued for PSNs from here are about to be asked for again, so they go (a READ
            // re-issued from its middle replaces the rest of the original); those wholly before stay.
            readResponses.dropFrom(psn);
            if (readResponses.isFull())
            {
                return; // no room: the requester times out and asks again
            }
            queueReadResponses(psn, frame, dmaLength, packets);
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

    private void queueReadResponses(final int psn, final RoceFrame frame, final long dmaLength, final int packets)
    {
        final MemoryRegion region = dmaLength > 0 ? protectionDomain.regionByRkey(frame.rethRkey()) : null;
        readResponses.add(psn, region, dmaLength > 0 ? region.offsetOf(frame.rethVirtualAddress()) : 0, dmaLength,
            packets);
    }

    // ---- ACKs and NAKs ----

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
        if (inMessage == IN_SEND)
        {
            // IB class C: the receive a SEND under way was filling completes in error, with what was placed;
            // flushed, it would look untouched
            inMessage = IN_NONE;
            complete(receives.consumeHead(), WorkCompletionStatus.REM_INV_REQ_ERR, WorkCompletionOpcode.RECV,
                (int)receivedBytes, false, 0);
        }
        fail(psn, NAK_INVALID_SYNDROME);
    }

    private void fail(final int psn, final int syndrome)
    {
        // IB class B/C responder errors: NAK, then the QP goes to the error state once the NAK is out
        failed = true;
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

    // ---- transmission ----

    /** @return true when a NAK that fails the queue pair waits to be sent. */
    boolean owesFatalNak()
    {
        return controlKind == CONTROL_FATAL_NAK;
    }

    /** @return true when READ responses wait to be sent. */
    boolean hasReadResponses()
    {
        return !readResponses.isEmpty();
    }

    /**
     * Sends the next READ response packet.
     *
     * @return false when nothing was sent (the sink is full, or the READ's memory was deregistered).
     */
    boolean sendReadResponse(final long nowNanos)
    {
        final RcReadResponseQueue reads = readResponses;
        final int slot = reads.index(reads.head);
        final int index = reads.packetsSent[slot];
        final int count = reads.packetCount[slot];
        final long offset = (long)index * mtu;
        final int payload = (int)Math.min(mtu, reads.length[slot] - offset);
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
        final MemoryRegion region = reads.region[slot];
        if (null != region && !region.isRegistered())
        {
            revokeReadsFrom(reads.head); // deregistered since the READ was accepted: not a byte of it leaves
            return false;
        }
        output.writer().aeth(ACK_SYNDROME, msn);
        if (output.emit(opcode, Psn.add(reads.startPsn[slot], index), false, false, null == region ? null : region.segment(),
            reads.offset[slot] + offset, payload, true, nowNanos) < 0)
        {
            return false;
        }
        counters.increment(RcCounters.TX_READ_RESPONSES);
        if (++reads.packetsSent[slot] == count)
        {
            reads.removeHead();
            packetsSinceAck = 0; // the last response acknowledges everything up to it
        }
        return true;
    }

    /**
     * Sends the ACK or NAK owed, once the READ responses queued before it are out; after a fatal NAK the queue
     * pair goes to ERROR.
     *
     * @return true when one was sent.
     */
    boolean sendControl(final long nowNanos)
    {
        if (controlKind == CONTROL_NONE || !readResponses.isEmpty() ||
            !output.acknowledge(controlSyndrome, msn, controlPsn, nowNanos))
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
            failures.enterError();
        }
        return true;
    }

    // ---- completions, errors, revocation ----

    private boolean complete(
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
            failures.enterError();
            return false;
        }
        return true;
    }

    /**
     * The queue pair went to ERROR: every receive completes, with WR_FLUSH_ERR or, where its memory is gone,
     * LOC_PROT_ERR; READs not yet answered are dropped.
     *
     * @param revoked the region whose deregistration failed the queue pair, or null.
     */
    void flush(final MemoryRegion revoked)
    {
        while (!receives.isEmpty())
        {
            final MemoryRegion region = receives.region[receives.headIndex()];
            final long wrId = receives.consumeHead();
            complete(wrId, RcStateMachine.flushStatus(region, revoked), WorkCompletionOpcode.RECV, 0, false, 0);
        }
        readResponses.flush();
        writeRegion = null;
    }

    /** @return true when a receive still posted names {@code region}. */
    boolean receivesUse(final MemoryRegion region)
    {
        return receives.uses(region);
    }

    /**
     * Cuts short what the peer does to {@code region}, being deregistered: a WRITE under way into it is refused at
     * its next packet, READ responses not yet sent from it are replaced by a NAK remote access error.
     *
     * @return true when a remote operation used it.
     */
    boolean revokeRemoteAccess(final MemoryRegion region)
    {
        boolean hit = false;
        if (inMessage == IN_WRITE && writeRegion == region)
        {
            // refused at its next packet, which the requester has sent or will: the NAK then names a PSN it knows
            writeRegion = null;
            hit = true;
        }
        final long position = readResponses.positionOf(region);
        if (position >= 0)
        {
            revokeReadsFrom(position);
            hit = true;
        }
        return hit;
    }

    /**
     * READ responses from {@code position} on are not sent: their region is gone. The requester gets a NAK remote
     * access error at the first response it lacks, after the responses queued before it.
     */
    private void revokeReadsFrom(final long position)
    {
        final int nakPsn = readResponses.nextResponsePsn(position);
        readResponses.truncate(position);
        counters.increment(RcCounters.REVOKED);
        counters.increment(RcCounters.TX_NAK_ACCESS);
        fail(nakPsn, NAK_ACCESS_SYNDROME);
    }
}
