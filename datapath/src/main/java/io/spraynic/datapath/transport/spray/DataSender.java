package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.wire.SprayOpcodes;

import static io.spraynic.datapath.transport.spray.SprayConnection.PROBE_HANDLE;
import static io.spraynic.datapath.transport.spray.MessageKinds.READ;
import static io.spraynic.datapath.transport.spray.MessageKinds.READ_RESPONSE;
import static io.spraynic.datapath.transport.spray.MessageKinds.SEND;
import static io.spraynic.datapath.transport.spray.MessageKinds.SEND_IMM;
import static io.spraynic.datapath.transport.spray.MessageKinds.WRITE;
import static io.spraynic.datapath.transport.spray.MessageKinds.WRITE_IMM;

/**
 * The send side of one spray connection (docs/PROTOCOL.md S4, S6.6, S7.2, S8.3, S8.4): posted messages and the
 * READ responses this end serves take send slots; their packets are made one at a time, retransmissions first
 * (on the path and at the PSN they were lost at), then moved packets and new data on the path the scheduler picks
 * while the pacer has tokens, no faster than the pacing rate: the live paths' windows over their RTTs, capped by
 * the peer's share for this end (S8.3.2) and the line rate. A start after a pause is announced by a probe and
 * limited to the start budget until the first ACK brings a share (S8.3.1).
 * <p>
 * Owns the {@link Pacer}, the peer's last rate hint and the flag of a local error (a message's source memory
 * was deregistered: not a byte is read, the connection fails). A READ response whose region was deregistered is
 * refused instead (S9.3.2): the rest of it is never read, its unacknowledged packets are answered by placeholder
 * probes at their PSNs, and the connection carries on. Allocation-free.
 */
final class DataSender
{
    /** Refuses a READ response this end cannot finish (S9.3.2): numbers the refusal and NACKs it. */
    interface ResponseRefuser
    {
        /** @return false if the refusal cannot be kept to answer queries with: the connection must fail. */
        boolean refuse(int streamId, int msn, long now);
    }

    private static final int REFUSED = WorkCompletionStatus.REM_ACCESS_ERR.ordinal();

    private final SendSlots slots;
    private final PathScheduler scheduler;
    private final RetransmitQueues resend;
    private final SendCompletions completions;
    private final LossDetector loss;
    private final SprayFrames frames;
    private final PacketAuthenticator auth;
    private final SprayConfig config;
    private final int mtu;
    private final TransportCounters counters;
    private final TransportCounters[] pathCounters;
    private final Pacer pacer;
    private final ResponseRefuser refuser;
    private final int peerWindow;
    private final int peerReads;
    private int peerRateHintMbps;
    private boolean localError;

    DataSender(
        final SendSlots slots,
        final PathScheduler scheduler,
        final RetransmitQueues resend,
        final SendCompletions completions,
        final LossDetector loss,
        final SprayFrames frames,
        final PacketAuthenticator auth,
        final SprayConfig config,
        final int mtu,
        final TransportCounters counters,
        final TransportCounters[] pathCounters,
        final ResponseRefuser refuser,
        final int peerWindow,
        final int peerReads)
    {
        this.peerWindow = peerWindow;
        this.peerReads = peerReads;
        this.slots = slots;
        this.scheduler = scheduler;
        this.resend = resend;
        this.completions = completions;
        this.loss = loss;
        this.frames = frames;
        this.auth = auth;
        this.config = config;
        this.mtu = mtu;
        this.counters = counters;
        this.pathCounters = pathCounters;
        this.pacer = new Pacer(config, mtu);
        this.refuser = refuser;
    }

    /** @return whether a message's source memory was deregistered while it was being sent. */
    boolean localError()
    {
        return localError;
    }

    // ---- what is sent

    /**
     * Takes a slot for a checked work request (there is a free one) and queues its packets; on a stream in
     * error (S9.4) it completes at once with WR_FLUSH_ERR instead.
     */
    void post(final int streamId, final byte messageKind, final SendWorkRequest request)
    {
        final int slot = slots.take();
        final int messageLength = request.length();
        final int msn = slots.takeMsn(streamId);
        final boolean consumesReceive = messageKind == SEND || messageKind == SEND_IMM || messageKind == WRITE_IMM;
        final boolean rdma = messageKind == WRITE || messageKind == WRITE_IMM || messageKind == READ;
        final int rsn = consumesReceive ? slots.takeRsn(streamId) : 0; // S4.5
        slots.kind(slot, messageKind);
        slots.wrId(slot, request.wrId());
        slots.stream(slot, streamId);
        slots.msn(slot, msn);
        slots.rsn(slot, rsn);
        slots.region(slot, messageLength > 0 ? request.localRegion() : null);
        slots.localAddress(slot, request.localAddress());
        slots.length(slot, messageLength);
        slots.remoteAddress(slot, request.remoteAddress());
        slots.rkey(slot, request.rkey());
        slots.immediate(slot, request.immediateData());
        slots.signaled(slot, request.signaled());
        slots.solicited(slot, request.solicited());
        slots.messageTag(slot, auth.sendTag(MessageKinds.opcodeOf(messageKind), streamId, msn, messageLength, rsn,
            rdma ? request.remoteAddress() : 0, rdma ? request.rkey() : 0,
            messageKind == WRITE_IMM || messageKind == SEND_IMM ? request.immediateData() : 0));
        slots.responseTag(slot, messageKind == READ ? auth.readResponseTag(streamId, msn, messageLength) : 0);
        final int dataPackets = SendSlots.packetsFor(messageLength, mtu);
        slots.packets(slot, messageKind == READ ? 1 : dataPackets);
        slots.readExpected(slot, messageKind == READ ? dataPackets : 0);
        slots.appendToStream(slot);
        if (slots.errored(streamId))
        {
            slots.status(slot, WorkCompletionStatus.WR_FLUSH_ERR.ordinal());
            slots.nextPacket(slot, slots.packets(slot));
            completions.deliver(streamId);
        }
        else
        {
            slots.enqueueSend(slot);
        }
    }

    /**
     * Queues the response to a READ the peer sent (the caller checked the access and made room: a slot is free).
     * Nothing is delivered for it: its slot is freed once every packet is acknowledged.
     */
    void queueReadResponse(
        final int streamId, final int msn, final MemoryRegion source, final long address, final int messageLength)
    {
        final int slot = slots.take();
        slots.kind(slot, READ_RESPONSE);
        slots.wrId(slot, 0);
        slots.stream(slot, streamId);
        slots.msn(slot, msn);
        slots.rsn(slot, 0);
        slots.region(slot, messageLength > 0 ? source : null);
        slots.localAddress(slot, address);
        slots.length(slot, messageLength);
        slots.remoteAddress(slot, 0);
        slots.rkey(slot, 0);
        slots.messageTag(slot, auth.sendTag(SprayOpcodes.READ_RESPONSE, streamId, msn, messageLength, 0, 0, 0, 0));
        slots.responseTag(slot, 0);
        slots.signaled(slot, false);
        slots.solicited(slot, false);
        slots.packets(slot, SendSlots.packetsFor(messageLength, mtu));
        slots.readExpected(slot, 0);
        slots.delivered(slot, true);
        slots.responseQueued();
        slots.enqueueSend(slot);
    }

    // ---- rate (S8.3, S8.4)

    /** An ACK brought the peer's share for this end (S8.3.2; 0: none). */
    void onShare(final int rateHintMbps, final long now)
    {
        peerRateHintMbps = rateHintMbps;
        pacer.onShare(now); // S8.3.1
    }

    int peerRateHintMbps()
    {
        return peerRateHintMbps;
    }

    /** @return bytes per nanosecond: see {@link SprayConnection#pacingRate()}. */
    double pacingRate()
    {
        double rate = scheduler.windowRate(mtu);
        if (peerRateHintMbps > 0)
        {
            rate = Math.min(rate, peerRateHintMbps / 8000.0);
        }
        return Math.min(rate, config.capacityMbps / 8000.0);
    }

    // ---- sending

    /**
     * Sends the queued retransmissions still outstanding on live paths, each at its PSN (S6.6), until the output
     * is full.
     *
     * @return packets sent.
     */
    int drainRetransmissions(final long now)
    {
        int sent = 0;
        while (resend.retransmissions() > 0)
        {
            final int path = resend.retransmissionPath();
            final int psn = resend.retransmissionPsn();
            final long handle = resend.retransmissionHandle();
            final PathSendWindow window = scheduler.sendWindows[path];
            if (scheduler.isActive(path) && Psn.inRange(psn, window.basePsn(), window.outstanding()))
            {
                final int payload = handle == PROBE_HANDLE ? 0 :
                    slots.payloadOf(SendSlots.slotOf(handle), SendSlots.packetOf(handle));
                final boolean ok = handle == PROBE_HANDLE ? frames.probe(path, psn, 0) :
                    writeData(path, handle, payload, psn, true, now);
                if (!ok)
                {
                    break;
                }
                if (handle != PROBE_HANDLE)
                {
                    counters.increment(SprayCounters.RETRANSMITTED);
                    pathCounters[path].increment(SprayCounters.RETRANSMITTED);
                    // sent at once, but paced all the same: new data waits for the tokens it took (S8.4)
                    pacer.take(payload);
                }
                sent++;
            }
            resend.dropRetransmission();
        }
        return sent;
    }

    /**
     * Sends moved packets, then new data, while the pacer has tokens and a path has window space, at most
     * {@code maxPacketsPerTick}.
     *
     * @return packets sent.
     */
    int sendData(final long now)
    {
        final long elapsed = pacer.advance(now);
        if (elapsed > 0)
        {
            pacer.refill(elapsed, pacingRate());
        }
        int sent = 0;
        // the connection's counts of new data packets, added once per call (issue 13): the paths' are per packet
        int newPackets = 0;
        long newBytes = 0;
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
                if (slots.nextPacket(slot) >= slots.packets(slot))
                {
                    slots.dequeueSend();
                    completions.freeIfFinished(slot);
                    continue;
                }
                if (slots.nextPacket(slot) == 0 && slots.kind(slot) != READ_RESPONSE &&
                    !slots.mayStart(slot, peerWindow, peerReads))
                {
                    break; // S10.2: it waits, queued in posting order, until a message the peer holds completes
                }
                handle = slots.handle(slot, slots.nextPacket(slot));
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
            if (!moved && SendSlots.packetOf(handle) == 0 && pacer.isStart(now) && scheduler.nothingOutstanding() &&
                slots.queuedPacketsAbove(config.startBudgetBytes / mtu))
            {
                // S8.3.1: starting after a pause, announce it with a header-only probe ahead of the data: the
                // receiver counts this sender (and tells the others still sending their smaller share, S8.3.2) as
                // soon as the probe arrives, before the data of an incast's first round trip has queued up ahead.
                // Only a message's first packet starts: one partly sent is one the receiver counts active (S8.3),
                // and a sender that waited for its ACKs (a descheduled receiver) has not paused
                if (frames.newProbe(path, 0, now))
                {
                    counters.increment(SprayCounters.START_PROBES_SENT);
                    pacer.startAnnounced();
                }
            }
            final int slot = SendSlots.slotOf(handle);
            final int payload = slots.payloadOf(slot, SendSlots.packetOf(handle));
            // a timeout's copy on another path is a retransmission (S7.4.1): flagged, so the receiver counts it
            if (!writeData(path, handle, payload, -1, lostOn >= 0, now))
            {
                break;
            }
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
                newPackets++;
                newBytes += payload;
                pathCounters[path].increment(SprayCounters.TX_PACKETS);
                pathCounters[path].add(SprayCounters.TX_BYTES, payload);
                if (scheduler.countSent(path) && scheduler.endLossSample(path))
                {
                    loss.repath(path);
                }
            }
            if (moved)
            {
                resend.dropMove();
            }
            else
            {
                if (slots.kind(slot) == READ_RESPONSE)
                {
                    if (slots.nextPacket(slot) + 1 == slots.packets(slot))
                    {
                        slots.responseSent();
                    }
                }
                else
                {
                    slots.start(slot);
                }
                slots.nextPacket(slot, slots.nextPacket(slot) + 1);
                slots.outstanding(slot, slots.outstanding(slot) + 1);
            }
            sent++;
        }
        counters.add(SprayCounters.TX_PACKETS, newPackets);
        counters.add(SprayCounters.TX_BYTES, newBytes);
        return sent;
    }

    /**
     * Writes a data packet on path {@code path}: a new one ({@code psnOrNew < 0}: takes the path's next PSN) or a
     * retransmission with its PSN (S6.6).
     *
     * @param payload the packet's payload bytes ({@link SendSlots#payloadOf}): its caller paces by them too.
     */
    private boolean writeData(
        final int path, final long handle, final int payload, final int psnOrNew, final boolean retransmit,
        final long now)
    {
        final int slot = SendSlots.slotOf(handle);
        if (payload > 0 && slots.kind(slot) == READ_RESPONSE &&
            (slots.status(slot) == REFUSED || !slots.region(slot).isRegistered()))
        {
            return refusedResponse(path, handle, psnOrNew, now);
        }
        if (payload > 0 && !slots.region(slot).isRegistered())
        {
            localError = true; // its memory was deregistered: not a byte is read, the connection fails
            return false;
        }
        return frames.data(path, handle, payload, psnOrNew, retransmit, now);
    }

    // S9.3.2: the region a READ response reads was deregistered (the requester may have had every byte, its ACKs
    // lost): the READ is refused with a NACK, repeated for every further packet; a packet already sent is stood in
    // for by a placeholder probe at its PSN (or a new one, for a moved packet), so the path layer accounts for it
    // as for the data; one never sent is not sent
    private boolean refusedResponse(final int path, final long handle, final int psnOrNew, final long now)
    {
        final int slot = SendSlots.slotOf(handle);
        final boolean neverSent = psnOrNew < 0 && SendSlots.packetOf(handle) == slots.nextPacket(slot);
        if (!refuser.refuse(slots.stream(slot), slots.msn(slot), now))
        {
            localError = true; // too many refusals to answer queries about: the connection fails (S9.3.2)
            return false;
        }
        if (slots.status(slot) != REFUSED)
        {
            slots.status(slot, REFUSED); // the slot is freed once its packets in flight are accounted for
            if (slots.nextPacket(slot) < slots.packets(slot))
            {
                slots.responseSent();
            }
            slots.nextPacket(slot, slots.packets(slot));
        }
        // a new packet of the head slot: nothing is sent now, the next pass takes the slot off the send queue
        return !neverSent && frames.placeholder(path, handle, psnOrNew, now);
    }
}
