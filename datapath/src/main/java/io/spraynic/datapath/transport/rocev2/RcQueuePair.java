package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.QueuePair;
import io.spraynic.datapath.verbs.QueuePairState;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrame;

/**
 * One RoCEv2 Reliable Connection queue pair: requester and responder of InfiniBand Vol 1 chapter 9 over one
 * path, in order, with go-back-N recovery. Runs inside an {@link RcEngine}, on its thread, with no
 * allocation, lock or exception per packet: work queues are preallocated arrays indexed by ever-growing
 * positions.
 * <p>
 * This class holds the verbs (state transitions, posting) and dispatch; the work is done by the parts it owns:
 * <ul>
 *     <li>{@link RcStateMachine}: the state and what each state allows;</li>
 *     <li>{@link RcRequester}: the send queue, PSNs, ACK/NAK handling, go-back-N, timers, READ responses
 *     received;</li>
 *     <li>{@link RcResponder}: the receive queue, the expected PSN, duplicates, placement, READ responses served,
 *     ACKs and NAKs;</li>
 *     <li>{@link RcFrameOutput}: the headers of every frame to the peer, written into the engine's sink.</li>
 * </ul>
 * A fatal error of either half (retries exhausted, a NAK, a refused request, a completion queue overrun) moves
 * the queue pair to ERROR, which flushes both work queues (WR_FLUSH_ERR, or LOC_PROT_ERR where the memory was
 * deregistered) and drops every reference to registered memory.
 * <p>
 * <b>Revocation.</b> Every region a work request or a request in progress uses is checked to be still
 * registered where the QP touches it, and {@link RcEngine#revoke} cuts short every operation on a region being
 * deregistered: nothing is placed into or read from a region once its deregistration returned. A CQ overrun
 * (this QP's or another's on the same queue) moves the QP to ERROR; posts then answer
 * {@link PostResult#COMPLETION_QUEUE_OVERRUN}. A CE-marked packet makes the QP send a CNP, at most one per
 * {@link DcqcnConfig#cnpIntervalNanos()}.
 */
public final class RcQueuePair implements QueuePair
{
    private final RcEngine engine;
    private final RcEngineConfig config;
    private final TransportCounters counters;
    private final int qpNumber;
    private final CompletionQueue sendCq;
    private final CompletionQueue receiveCq;
    private final DcqcnRateLimiter rateLimiter;
    private final RcStateMachine states = new RcStateMachine();
    private final RcFrameOutput output;
    private final RcRequester requester;
    private final RcResponder responder;

    private RcConnectionAttributes attributes;

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
        this.qpNumber = qpNumber;
        this.sendCq = sendCq;
        this.receiveCq = receiveCq;
        this.rateLimiter = new DcqcnRateLimiter(config.dcqcn());
        this.output = new RcFrameOutput(config, counters, engine.writer(), engine.sink(), rateLimiter);
        final RcFailureHandler failures = new Failures();
        this.requester = new RcRequester(config, counters, states, output, rateLimiter, sendCq, qpNumber, failures,
            engine.protectionDomain(), sendQueueDepth);
        this.responder = new RcResponder(config, counters, states, output, receiveCq, qpNumber, failures,
            engine.protectionDomain(), receiveQueueDepth);
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
        requester.protectionDomain(domain);
        responder.protectionDomain(domain);
    }

    public int qpNumber()
    {
        return qpNumber;
    }

    /** Sends to another MAC from now on: the next hop's, as the NIC's neighbour table resolved it. Engine thread. */
    public void nextHopMac(final long mac)
    {
        output.nextHopMac(mac);
    }

    /** @return the MAC frames go to. */
    public long nextHopMac()
    {
        return output.nextHopMac();
    }

    public QueuePairState state()
    {
        return states.state();
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
        return responder.expectedPsn();
    }

    /** @return the next PSN the requester will transmit. */
    public int sendPsn()
    {
        return requester.sendPsn();
    }

    /** @return the oldest PSN sent and not acknowledged. */
    public int unackedPsn()
    {
        return requester.unackedPsn();
    }

    /** @return send requests posted and not completed. */
    public int outstandingSends()
    {
        return requester.outstanding();
    }

    /** @return receives posted and not consumed. */
    public int postedReceives()
    {
        return responder.postedReceives();
    }

    /**
     * RESET to INIT (or INIT to INIT): set the remote access this QP allows.
     *
     * @param accessFlags {@link AccessFlags#REMOTE_WRITE}, {@link AccessFlags#REMOTE_READ}.
     */
    public void toInit(final int accessFlags)
    {
        states.checkTransitionTo(QueuePairState.INIT);
        responder.accessFlags(AccessFlags.validate(accessFlags | AccessFlags.LOCAL_WRITE));
        states.moveTo(QueuePairState.INIT);
    }

    /**
     * INIT to RTR: connect to the peer; the responder starts.
     *
     * @param attributes the path and PSNs.
     * @throws IllegalArgumentException when the path MTU's frames do not fit the sink's buffers.
     */
    public void toRtr(final RcConnectionAttributes attributes)
    {
        states.checkTransitionTo(QueuePairState.RTR);
        if (PathMtu.maxFrameLength(attributes.pathMtu()) > output.maxFrameLength())
        {
            throw new IllegalArgumentException("path MTU " + attributes.pathMtu() + " needs frames of up to " +
                PathMtu.maxFrameLength(attributes.pathMtu()) + " B; the port's buffers hold " + output.maxFrameLength());
        }
        this.attributes = attributes;
        output.connect(attributes);
        requester.connect(attributes);
        responder.connect(attributes);
        states.moveTo(QueuePairState.RTR);
    }

    /**
     * RTR to RTS (or SQD to RTS): the requester starts at the attributes' send PSN.
     */
    public void toRts()
    {
        states.checkTransitionTo(QueuePairState.RTS);
        if (states.state() == QueuePairState.RTR)
        {
            requester.start();
        }
        states.moveTo(QueuePairState.RTS);
    }

    /**
     * RTS to SQD: no new request starts; those under way finish.
     */
    public void toSqd()
    {
        states.checkTransitionTo(QueuePairState.SQD);
        states.moveTo(QueuePairState.SQD);
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
        states.checkTransitionTo(QueuePairState.RESET);
        requester.reset();
        responder.reset();
        cnpPending = false;
        cnpSentEver = false;
        rateLimiter.reset();
        attributes = null;
        states.moveTo(QueuePairState.RESET);
    }

    // ------------------------------------------------------------------------------------------------
    // posting
    // ------------------------------------------------------------------------------------------------

    public int postSend(final SendWorkRequest request)
    {
        return requester.postSend(request);
    }

    public int postReceive(final ReceiveWorkRequest request)
    {
        return responder.postReceive(request);
    }

    // ------------------------------------------------------------------------------------------------
    // receive path
    // ------------------------------------------------------------------------------------------------

    void onFrame(final RoceFrame frame, final long nowNanos)
    {
        if (!fromPeer(frame))
        {
            // a DestQP is in clear text in every packet: from any other address, a forged CNP would throttle the QP,
            // an ACK complete requests the peer never received, a request at the expected PSN fail the QP
            counters.increment(RcCounters.RX_WRONG_SOURCE);
            return;
        }
        final int opcode = frame.opcode();
        if (opcode == Opcode.CNP)
        {
            counters.increment(RcCounters.RX_CNP);
            if (states.receives())
            {
                rateLimiter.onCnp(nowNanos);
            }
            return;
        }
        if (!states.receives())
        {
            counters.increment(RcCounters.RX_INVALID_STATE);
            return;
        }
        if (frame.ecn() == RcEngineConfig.ECN_CE)
        {
            onCongestionExperienced(nowNanos);
        }
        switch (opcode)
        {
            case Opcode.RC_ACKNOWLEDGE:
                requester.onAcknowledge(frame.psn(), frame.aethSyndrome(), nowNanos);
                break;
            case Opcode.RC_RDMA_READ_RESPONSE_FIRST:
            case Opcode.RC_RDMA_READ_RESPONSE_MIDDLE:
            case Opcode.RC_RDMA_READ_RESPONSE_LAST:
            case Opcode.RC_RDMA_READ_RESPONSE_ONLY:
                requester.onReadResponse(frame, opcode, nowNanos);
                break;
            default:
                responder.onRequest(frame, opcode);
                break;
        }
    }

    /** @return whether {@code frame} came from the peer set at RTR (none before it), in its IP version. */
    private boolean fromPeer(final RoceFrame frame)
    {
        final RcConnectionAttributes peer = attributes;
        if (null == peer || !frame.hasIp() || frame.ipVersion() != peer.ipVersion())
        {
            return false;
        }
        return peer.ipVersion() == 4 ? frame.ipv4Source() == peer.remoteIpv4() :
            frame.ipv6SourceHigh() == peer.remoteIpv6High() && frame.ipv6SourceLow() == peer.remoteIpv6Low();
    }

    private void onCongestionExperienced(final long nowNanos)
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
        if (states.isIdle())
        {
            return 0;
        }
        if (states.isError())
        {
            // IB Vol 1, 10.3.1: a queue pair in ERROR transmits nothing (an ACK or CNP owed from before is dropped);
            // only the NAK that announces the responder's own fatal error still goes, as the error's last act
            return responder.owesFatalNak() && responder.sendControl(nowNanos) ? 1 : 0;
        }
        if (sendCq.hasOverrun() || receiveCq.hasOverrun())
        {
            enterError(); // a queue it shares overran (maybe for another QP): every QP using it is in error, as IB
            return 1;
        }
        rateLimiter.onTick(nowNanos);
        int work = requester.onTimers(nowNanos);
        if (states.isError())
        {
            return work; // the retries ran out: nothing more leaves
        }

        if (cnpPending && output.congestionNotification(nowNanos))
        {
            cnpPending = false;
            work++;
        }
        int budget = config.packetsPerQpPerTick();
        while (budget > 0 && responder.hasReadResponses() && !states.isError() && rateLimiter.canSend(nowNanos))
        {
            if (!responder.sendReadResponse(nowNanos))
            {
                break;
            }
            budget--;
            work++;
        }
        if (responder.sendControl(nowNanos))
        {
            work++;
        }
        if (states.requesterRuns())
        {
            work += requester.sendRequests(budget, nowNanos);
        }
        return work;
    }

    // ------------------------------------------------------------------------------------------------
    // errors and revocation
    // ------------------------------------------------------------------------------------------------

    /** Goes to ERROR and completes everything outstanding, dropping every reference to registered memory. */
    private void enterError()
    {
        if (!states.enterError())
        {
            return;
        }
        flush();
        engine.onQueuePairError(this);
    }

    private void flush()
    {
        requester.flush(revokedRegion);
        responder.flush(revokedRegion);
    }

    /**
     * Destroyed by its engine (control path): everything outstanding completes with WR_FLUSH_ERR (LOC_PROT_ERR
     * where its memory was deregistered) and no reference to registered memory is kept.
     */
    void destroy()
    {
        final QueuePairState state = states.state();
        if (state != QueuePairState.RESET && states.enterError())
        {
            flush();
        }
        states.moveTo(QueuePairState.ERROR);
    }

    /**
     * Cuts short every operation that uses {@code region}, being deregistered (engine thread). See
     * {@link RcEngine#revoke}.
     *
     * @return true when one used it.
     */
    boolean revoke(final MemoryRegion region)
    {
        boolean hit = responder.revokeRemoteAccess(region);
        final boolean local = requester.uses(region) || responder.receivesUse(region);
        if (local && !states.isError())
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

    public String toString()
    {
        return "RcQueuePair{qp=" + qpNumber + ", state=" + states + ", sendPsn=" + requester.sendPsn() + ", unacked=" +
            requester.unackedPsn() + ", expected=" + responder.expectedPsn() + ", sq=" + requester.outstanding() +
            ", rq=" + responder.postedReceives() + '}';
    }

    /** The halves' way to fail the whole queue pair. */
    private final class Failures implements RcFailureHandler
    {
        public void enterError()
        {
            RcQueuePair.this.enterError();
        }

        public boolean revoke(final MemoryRegion region)
        {
            return RcQueuePair.this.revoke(region);
        }
    }
}
