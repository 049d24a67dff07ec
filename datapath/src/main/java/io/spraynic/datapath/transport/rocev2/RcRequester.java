package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.AccessCheck;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.AckExtendedTransportHeader;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;

import java.lang.foreign.MemorySegment;

/**
 * The requester of one RC queue pair (InfiniBand Vol 1, 9.7): its send queue, PSNs, ACK and NAK handling,
 * go-back-N retransmission with its retry counts and timers, and the READ responses it receives.
 * <p>
 * Each posted request gets its PSN range when posted (a READ takes one PSN per response packet). Packets leave
 * while the window ({@link RcEngineConfig#maxInflightPackets()}) and the DCQCN rate allow; the last of each
 * message asks for an ACK. ACKs and READ responses are cumulative: everything before their PSN is done, and
 * requests complete in order. A NAK "PSN sequence error", a retransmission timeout, or a gap in READ responses
 * rewinds transmission to the first unacknowledged PSN (go-back-N), spending one retry; progress restores the
 * retry count, and running out completes with RETRY_EXC_ERR and fails the queue pair. An RNR NAK rewinds and
 * waits the RNR timer (RNR_RETRY_EXC_ERR when retries run out). A NAK remote access error, invalid request or
 * remote operational error completes the request with REM_ACCESS_ERR, REM_INV_REQ_ERR or REM_OP_ERR and fails
 * the queue pair.
 */
final class RcRequester
{
    /** A message longer than this many packets could not be told apart from a wrapped PSN. */
    private static final int MAX_PACKETS_PER_MESSAGE = Psn.HALF / 2;

    private static final int SEND = WorkRequestOpcode.SEND.ordinal();
    private static final int SEND_WITH_IMM = WorkRequestOpcode.SEND_WITH_IMM.ordinal();
    private static final int RDMA_WRITE_WITH_IMM = WorkRequestOpcode.RDMA_WRITE_WITH_IMM.ordinal();
    private static final WorkCompletionStatus[] STATUSES = WorkCompletionStatus.values();

    private final RcEngineConfig config;
    private final TransportCounters counters;
    private final RcStateMachine states;
    private final RcFrameOutput output;
    private final RoceFrameWriter writer;
    private final DcqcnRateLimiter rateLimiter;
    private final CompletionQueue sendCq;
    private final int qpNumber;
    private final RcFailureHandler failures;
    private final RcSendQueue queue;
    private ProtectionDomain protectionDomain;

    private RcConnectionAttributes attributes;
    private int mtu;
    private long nowNanos;

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

    RcRequester(
        final RcEngineConfig config,
        final TransportCounters counters,
        final RcStateMachine states,
        final RcFrameOutput output,
        final DcqcnRateLimiter rateLimiter,
        final CompletionQueue sendCq,
        final int qpNumber,
        final RcFailureHandler failures,
        final ProtectionDomain protectionDomain,
        final int sendQueueDepth)
    {
        this.config = config;
        this.counters = counters;
        this.states = states;
        this.output = output;
        this.writer = output.writer();
        this.rateLimiter = rateLimiter;
        this.sendCq = sendCq;
        this.qpNumber = qpNumber;
        this.failures = failures;
        this.protectionDomain = protectionDomain;
        this.queue = new RcSendQueue(sendQueueDepth);
    }

    void protectionDomain(final ProtectionDomain domain)
    {
        protectionDomain = domain;
    }

    /** At RTR: the path's MTU and timers. */
    void connect(final RcConnectionAttributes attributes)
    {
        this.attributes = attributes;
        this.mtu = attributes.pathMtu();
    }

    /** At RTS from RTR: transmission starts at the attributes' send PSN, with full retry counts. */
    void start()
    {
        sendPsn = attributes.sendPsn();
        nextPostPsn = sendPsn;
        unackedPsn = sendPsn;
        highestSentPsn = sendPsn;
        retriesLeft = attributes.retryCount();
        rnrRetriesLeft = attributes.rnrRetryCount();
    }

    /** At RESET: the send queue empties without completions. */
    void reset()
    {
        queue.clear();
        timerArmed = false;
        rnrWaiting = false;
        rewoundForGapAt = -1;
    }

    int sendPsn()
    {
        return sendPsn;
    }

    int unackedPsn()
    {
        return unackedPsn;
    }

    int outstanding()
    {
        return queue.size();
    }

    /** @return true when a request still outstanding names {@code region}. */
    boolean uses(final MemoryRegion region)
    {
        return queue.uses(region);
    }

    // ---- posting ----

    int postSend(final SendWorkRequest request)
    {
        if (!states.acceptsSendPosts())
        {
            return PostResult.INVALID_STATE;
        }
        final int length = request.length();
        final WorkRequestOpcode opcode = request.opcode();
        if (length < 0 || null == opcode)
        {
            return PostResult.INVALID_ARGUMENT;
        }
        if (queue.isFull())
        {
            return PostResult.QUEUE_FULL;
        }
        if (states.isError())
        {
            if (sendCq.hasOverrun())
            {
                return PostResult.COMPLETION_QUEUE_OVERRUN;
            }
            return complete(request.wrId(), opcode, WorkCompletionStatus.WR_FLUSH_ERR, 0, true) ?
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

        final MemoryRegion region = request.localRegion();
        int localError = RcSendQueue.NO_LOCAL_ERROR;
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
        final int psnCount = localError == RcSendQueue.NO_LOCAL_ERROR ? packets : 0;
        queue.add(request, length > 0 ? region : null,
            length > 0 && null != region ? region.offsetOf(request.localAddress()) : 0, localError, nextPostPsn, psnCount);
        nextPostPsn = Psn.add(nextPostPsn, psnCount);
        return PostResult.OK;
    }

    // ---- responses ----

    /** An ACK, NAK or RNR NAK (AETH {@code syndrome}) for {@code psn}. */
    void onAcknowledge(final int psn, final int syndrome, final long nowNanos)
    {
        this.nowNanos = nowNanos;
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
                if (!states.isError() && Psn.diff(psn, unackedPsn) == 0)
                {
                    onRnrNak(AckExtendedTransportHeader.value(syndrome));
                }
                break;
            case AckExtendedTransportHeader.KIND_NAK:
                counters.increment(RcCounters.RX_NAKS);
                acknowledge(Psn.add(psn, -1));
                if (states.isError() || Psn.diff(psn, unackedPsn) != 0)
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
        return states.requesterRuns() && Psn.diff(psn, Psn.add(unackedPsn, -1)) >= 0 &&
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

    /** A READ response packet: placed when it is the next one the head READ lacks. */
    void onReadResponse(final RoceFrame frame, final int opcode, final long nowNanos)
    {
        this.nowNanos = nowNanos;
        final int psn = frame.psn();
        if (!states.requesterRuns() || Psn.diff(psn, unackedPsn) < 0 || Psn.diff(psn, highestSentPsn) >= 0)
        {
            counters.increment(RcCounters.RX_RESPONSES_DROPPED);
            return;
        }
        // a response acknowledges every request before it
        acknowledge(Psn.add(psn, -1));
        if (queue.isEmpty() || states.isError())
        {
            counters.increment(RcCounters.RX_RESPONSES_DROPPED);
            return;
        }
        final int slot = queue.index(queue.head);
        if (!queue.isRead(slot) || !Psn.inRange(psn, queue.firstPsn[slot], queue.packetCount[slot]))
        {
            counters.increment(RcCounters.RX_RESPONSES_DROPPED);
            return;
        }
        final int expected = Psn.add(queue.firstPsn[slot], queue.readResponsesReceived[slot]);
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
        final int remaining = queue.length[slot] - queue.readResponsesReceived[slot] * mtu;
        final boolean last = opcode == Opcode.RC_RDMA_READ_RESPONSE_LAST || opcode == Opcode.RC_RDMA_READ_RESPONSE_ONLY;
        final int payload = frame.payloadLength();
        if (last ? payload != remaining : payload != mtu || remaining <= mtu)
        {
            fail(WorkCompletionStatus.BAD_RESP_ERR);
            return;
        }
        final MemoryRegion region = queue.region[slot];
        if (payload > 0 && !region.isRegistered())
        {
            failures.revoke(region);
            return;
        }
        if (payload > 0)
        {
            MemorySegment.copy(frame.segment(), frame.payloadOffset(), region.segment(),
                queue.localOffset[slot] + (long)queue.readResponsesReceived[slot] * mtu, payload);
            counters.add(RcCounters.BYTES_PLACED, payload);
        }
        queue.readResponsesReceived[slot]++;
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
        final RcSendQueue queue = this.queue;
        while (!queue.isEmpty() && !states.isError())
        {
            final int slot = queue.index(queue.head);
            if (queue.localError[slot] != RcSendQueue.NO_LOCAL_ERROR)
            {
                if (queue.head == queue.next)
                {
                    fail(STATUSES[queue.localError[slot]]);
                }
                return;
            }
            final int count = queue.packetCount[slot];
            final int lastPsn = Psn.add(queue.firstPsn[slot], count - 1);
            if (Psn.diff(lastPsn, psn) > 0)
            {
                break;
            }
            if (queue.isRead(slot) && queue.readResponsesReceived[slot] < count)
            {
                // implied NAK: later requests were acknowledged, so these responses are not coming
                final int missing = Psn.add(queue.firstPsn[slot], queue.readResponsesReceived[slot]);
                onProgress(missing);
                if (rewoundForGapAt != missing)
                {
                    retransmit(WorkCompletionStatus.RETRY_EXC_ERR);
                }
                return;
            }
            if (queue.signaled[slot] &&
                !complete(queue.wrId[slot], queue.workRequestOpcode(slot), WorkCompletionStatus.SUCCESS, queue.length[slot], false))
            {
                return; // completion queue overrun: the QP went to ERROR and flushed this request too
            }
            queue.removeHead();
            if (queue.head > queue.next)
            {
                // the peer had it all although we had gone back: skip what it has
                queue.next = queue.head;
                sendPsn = Psn.next(lastPsn);
            }
        }
        if (states.isError())
        {
            return;
        }
        int progress = Psn.next(psn);
        if (!queue.isEmpty())
        {
            final int slot = queue.index(queue.head);
            if (queue.isRead(slot) && queue.localError[slot] == RcSendQueue.NO_LOCAL_ERROR)
            {
                // an ACK or a later response inside a READ's range covers only the responses that arrived
                final int firstMissing = Psn.add(queue.firstPsn[slot], queue.readResponsesReceived[slot]);
                if (Psn.diff(progress, firstMissing) > 0)
                {
                    progress = firstMissing;
                }
            }
        }
        onProgress(progress);
        if (!queue.isEmpty() && queue.head == queue.next &&
            queue.localError[queue.index(queue.head)] != RcSendQueue.NO_LOCAL_ERROR)
        {
            fail(STATUSES[queue.localError[queue.index(queue.head)]]);
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
        long position = queue.head;
        while (position < queue.next)
        {
            final int slot = queue.index(position);
            if (Psn.diff(psn, Psn.add(queue.firstPsn[slot], queue.packetCount[slot])) < 0)
            {
                break;
            }
            position++;
        }
        queue.next = position;
        sendPsn = psn;
    }

    // ---- transmission and timers ----

    /**
     * Ends an RNR wait that is over, and goes back on a retransmission timeout.
     *
     * @return 1 when the timer fired, else 0.
     */
    int onTimers(final long nowNanos)
    {
        this.nowNanos = nowNanos;
        if (states.isError())
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

    /**
     * Sends request packets from the transmission position while the window, the rate and the sink allow.
     *
     * @return packets sent.
     */
    int sendRequests(final int budget, final long nowNanos)
    {
        this.nowNanos = nowNanos;
        final RcSendQueue queue = this.queue;
        int sent = 0;
        while (sent < budget && queue.next != queue.tail && !rnrWaiting && !states.isError())
        {
            final int slot = queue.index(queue.next);
            if (queue.localError[slot] != RcSendQueue.NO_LOCAL_ERROR)
            {
                if (queue.head == queue.next)
                {
                    fail(STATUSES[queue.localError[slot]]);
                }
                break;
            }
            if (states.isDraining() && Psn.diff(sendPsn, queue.firstPsn[slot]) == 0 &&
                Psn.diff(sendPsn, highestSentPsn) >= 0)
            {
                break; // drained: no new request starts
            }
            if (Psn.diff(sendPsn, unackedPsn) >= config.maxInflightPackets() || !rateLimiter.canSend(nowNanos))
            {
                break;
            }
            final MemoryRegion region = queue.region[slot];
            if (null != region && !region.isRegistered())
            {
                failures.revoke(region); // its memory was deregistered under it: the QP fails, nothing is read
                break;
            }
            final boolean retransmission = Psn.diff(sendPsn, highestSentPsn) < 0;
            if (!(queue.isRead(slot) ? sendReadRequest(slot) : sendWritePacket(slot)))
            {
                break;
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

    /** One READ request for the rest of the READ at {@code slot}, from the PSN transmission is at. */
    private boolean sendReadRequest(final int slot)
    {
        if (queue.readsBefore(queue.next) >= config.maxReadsInFlight())
        {
            return false;
        }
        final long offset = (long)Psn.diff(sendPsn, queue.firstPsn[slot]) * mtu;
        writer.reth(queue.remoteAddress[slot] + offset, queue.rkey[slot], (int)(queue.length[slot] - offset));
        if (output.emit(Opcode.RC_RDMA_READ_REQUEST, sendPsn, false, false, null, 0, 0, true, nowNanos) < 0)
        {
            return false;
        }
        sendPsn = Psn.add(queue.firstPsn[slot], queue.packetCount[slot]);
        queue.next++;
        return true;
    }

    /** The packet of the SEND or WRITE at {@code slot} that transmission is at. */
    private boolean sendWritePacket(final int slot)
    {
        final int packetIndex = Psn.diff(sendPsn, queue.firstPsn[slot]);
        final int count = queue.packetCount[slot];
        final int opcode = queue.opcode[slot];
        final long offset = (long)packetIndex * mtu;
        final int payload = (int)Math.min(mtu, queue.length[slot] - offset);
        final boolean isFirst = packetIndex == 0;
        final boolean isLast = packetIndex == count - 1;
        final boolean send = opcode == SEND || opcode == SEND_WITH_IMM;
        final boolean immediate = opcode == SEND_WITH_IMM || opcode == RDMA_WRITE_WITH_IMM;
        final int wireOpcode = requestOpcode(send, immediate, isFirst, isLast);
        if (!send && isFirst)
        {
            writer.reth(queue.remoteAddress[slot], queue.rkey[slot], queue.length[slot]);
        }
        if (immediate && isLast)
        {
            writer.immediate(queue.immediateData[slot]);
        }
        final boolean ackReq = isLast || Psn.diff(Psn.next(sendPsn), unackedPsn) >= config.maxInflightPackets();
        final MemoryRegion region = queue.region[slot];
        if (output.emit(wireOpcode, sendPsn, ackReq, isLast && queue.solicited[slot],
            null == region ? null : region.segment(), queue.localOffset[slot] + offset, payload, true, nowNanos) < 0)
        {
            return false;
        }
        sendPsn = Psn.next(sendPsn);
        if (isLast)
        {
            queue.next++;
        }
        return true;
    }

    /** @return the BTH opcode of a SEND or RDMA WRITE packet, by its place in the message. */
    static int requestOpcode(final boolean send, final boolean immediate, final boolean first, final boolean last)
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

    // ---- completions and errors ----

    private boolean complete(
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
                failures.enterError();
            }
            return false;
        }
        return true;
    }

    /**
     * The head request failed: complete it with {@code status}, then the QP goes to ERROR.
     */
    private void fail(final WorkCompletionStatus status)
    {
        if (!queue.isEmpty())
        {
            final int slot = queue.index(queue.head);
            complete(queue.wrId[slot], queue.workRequestOpcode(slot), status, 0, true);
            queue.removeHead();
        }
        failures.enterError();
    }

    /**
     * The queue pair went to ERROR: timers stop and every request completes, with WR_FLUSH_ERR or, where its memory
     * is gone, LOC_PROT_ERR.
     *
     * @param revoked the region whose deregistration failed the queue pair, or null.
     */
    void flush(final MemoryRegion revoked)
    {
        timerArmed = false;
        rnrWaiting = false;
        while (!queue.isEmpty())
        {
            final int slot = queue.index(queue.head);
            complete(queue.wrId[slot], queue.workRequestOpcode(slot), RcStateMachine.flushStatus(queue.region[slot], revoked), 0,
                true);
            queue.removeHead();
        }
        queue.next = queue.head;
    }
}
