package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.SprayOpcodes;

/**
 * The control packets one spray connection writes (docs/PROTOCOL.md): ACKs with the receive window, ECN echo,
 * rate hint and the count of refusals made here (S6.3, S8.3, S9.3), NACKs and queries (S9.3, S10.2), CLOSE and
 * CLOSE_ACK (S9.2), and the early ACK that tells a sender its share fell (S8.3.2). Each goes out on the control
 * path of the path it concerns, or not at all when the TX burst has no room (the caller decides whether that
 * counts as work). Allocation-free.
 */
final class ControlPackets
{
    private final SprayFrames frames;
    private final PathScheduler scheduler;
    private final AckScheduler acks;
    private final FairShareRateHint rateHint;
    private final Refusals refusals;
    private final TransportCounters counters;
    private final TransportCounters[] pathCounters;
    private final int rnrTimerMicros;
    private final int paths;
    private final int streams;
    private final int localCid;

    ControlPackets(
        final SprayFrames frames,
        final PathScheduler scheduler,
        final AckScheduler acks,
        final FairShareRateHint rateHint,
        final Refusals refusals,
        final TransportCounters counters,
        final TransportCounters[] pathCounters,
        final int rnrTimerMicros,
        final int streams,
        final int localCid)
    {
        this.frames = frames;
        this.scheduler = scheduler;
        this.acks = acks;
        this.rateHint = rateHint;
        this.refusals = refusals;
        this.counters = counters;
        this.pathCounters = pathCounters;
        this.rnrTimerMicros = rnrTimerMicros;
        this.paths = pathCounters.length;
        this.streams = streams;
        this.localCid = localCid;
    }

    /** @return whether the ACK of inbound path {@code path} went out. */
    boolean sendAck(final int path)
    {
        if (!frames.claimControl(scheduler.controlPath(path), SprayOpcodes.ACK))
        {
            return false;
        }
        final int hintMbps = rateHint.hintMbps();
        final int ceCount = acks.ceSinceAck(path);
        final int duplicates = acks.duplicatesSinceAck(path);
        final int sequence = acks.ackSent(path, hintMbps);
        frames.ack(path, ceCount, duplicates, acks.windows(), hintMbps, sequence, refusals.made());
        counters.increment(SprayCounters.ACKS_SENT);
        pathCounters[path].increment(SprayCounters.ACKS_SENT);
        return true;
    }

    /**
     * S6.4-2: the ACKs the receive burst that just ended called for, one per path (a path acknowledged since, by a
     * probe's ACK or its delayed ACK, owes none). One that finds no room in the TX burst stays with the path's
     * delayed ACK ({@code ackDelay}), as an immediate one would.
     *
     * @return how many went out.
     */
    int sendOwedAcks()
    {
        acks.listedOwing(false);
        int sent = 0;
        for (int path = 0; path < paths; path++)
        {
            if (acks.takeOwedAck(path) && sendAck(path))
            {
                sent++;
            }
        }
        return sent;
    }

    /** The connection closed within the receive burst: it sends nothing more, the ACKs it owed included. */
    void forgetOwedAcks()
    {
        for (int path = 0; path < paths; path++)
        {
            acks.takeOwedAck(path);
        }
        acks.listedOwing(false);
    }

    // S8.3.2: when this receiver's share for a sender that is still sending to it (a message partly delivered,
    // or a start announced by a probe and no data yet) fell by more than an eighth since the last ACK told it,
    // tell it now on the uncongested reverse path, rather than when its next packets have crossed the (in an
    // incast, full) queue towards this end. A rise is not urgent, and a sender with nothing more to send gains
    // nothing from either: thousands of one-packet senders starting at once would draw an ACK each per step
    int pushRateHint(final boolean peerSending)
    {
        if (!peerSending || !acks.hintFellBelowAdvertised(rateHint.hintMbps()))
        {
            return 0;
        }
        if (!sendAck(scheduler.controlPath(0)))
        {
            return 0;
        }
        counters.increment(SprayCounters.HINT_UPDATES_SENT);
        return 1;
    }

    void sendNack(final int path, final int syndrome, final int streamId, final int msn, final int refusal)
    {
        sendNack(path, syndrome, NegativeAckHeader.RNR_REASON_NO_RECEIVE, streamId, msn, refusal);
    }

    // S9.3, S10.2: an RNR NACK says what the receiver is not ready for and asks for its RNR timer
    void sendNack(
        final int path, final int syndrome, final int reason, final int streamId, final int msn, final int refusal)
    {
        if (!frames.claimControl(scheduler.controlPath(path), SprayOpcodes.NACK))
        {
            return;
        }
        final boolean rnr = syndrome == NegativeAckHeader.SYNDROME_RNR;
        frames.negativeAck(syndrome, rnr ? reason : 0, streamId, msn, rnr ? rnrTimerMicros : 0, refusal);
        counters.increment(SprayCounters.NACKS_SENT);
    }

    /** S9.3: asks the receiver the fate of a message. @return whether the query went out. */
    boolean sendQuery(final int streamId, final int msn)
    {
        if (!frames.claimControl(scheduler.controlPath(0), SprayOpcodes.QUERY))
        {
            return false;
        }
        frames.negativeAck(NegativeAckHeader.SYNDROME_ACCEPTED, 0, streamId, msn, 0, 0);
        counters.increment(SprayCounters.QUERIES_SENT);
        return true;
    }

    /** S9.2: a CLOSE or CLOSE_ACK carrying {@code token}. @return whether it went out. */
    boolean sendConnectionPacket(final int opcode, final long token)
    {
        return frames.connectionPacket(opcode, paths, streams, localCid, token);
    }
}
