package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.ProbeHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.MemorySegment;

import static io.spraynic.datapath.transport.spray.MessageKinds.READ;
import static io.spraynic.datapath.transport.spray.MessageKinds.READ_RESPONSE;

/**
 * The receive side of one spray connection's data and probe packets (docs/PROTOCOL.md), as {@link DataSender} is
 * its send side: a data packet is admitted only well formed (S4.3), from the peer's address on its path's plane
 * (S12.5), authentic (S12.4, S12.7) and with the state it needs here (S10.2); then its inbound path takes it
 * ({@link AckScheduler}), then the message layer places it ({@link InboundMessages}, or the READ's send slot for
 * a READ response), before its ACK leaves (at the end of the receive burst, S6.4-2). A probe of an inbound path
 * is answered with an ACK and announces data (S8.3.1). The connection dispatches here by opcode. Allocation-free.
 */
final class DataReceiver
{
    private static final int MISSING = SendSlots.MISSING;
    private static final int CE = 3;

    private final SprayConnection connection; // packets refused by S12 checks
    private final SprayEngine engine;
    private final SprayFrames frames;
    private final PacketAuthenticator auth;
    private final AckScheduler acks;
    private final ControlPackets control;
    private final InboundMessages inbound;
    private final SendSlots slots;
    private final SendCompletions completions;
    private final BorrowedTables tables;
    private final TransportCounters counters;
    private final int index;
    private final int paths;
    private final int planes;
    private final int streams;
    private final int mtu;
    private final int mtuShift; // issue 13: the MTU is a power of two (S4.3), so no division per packet
    private final int responderReads; // S10.2: READs this end serves at once, as it advertised
    /** The peer announced a start with a probe (S8.3.1) and no data of it has arrived yet. */
    private boolean startAnnounced;

    DataReceiver(
        final SprayConnection connection,
        final SprayEngine engine,
        final SprayConnectionConfig config,
        final SprayFrames frames,
        final PacketAuthenticator auth,
        final AckScheduler acks,
        final ControlPackets control,
        final InboundMessages inbound,
        final SendSlots slots,
        final SendCompletions completions,
        final BorrowedTables tables,
        final TransportCounters counters)
    {
        this.connection = connection;
        this.engine = engine;
        this.frames = frames;
        this.auth = auth;
        this.acks = acks;
        this.control = control;
        this.inbound = inbound;
        this.slots = slots;
        this.completions = completions;
        this.tables = tables;
        this.counters = counters;
        this.index = connection.index();
        this.paths = config.paths;
        this.planes = engine.config().planes;
        this.streams = config.streams;
        this.mtu = config.mtu;
        if (Integer.bitCount(mtu) != 1)
        {
            throw new IllegalArgumentException("MTU must be a power of two: " + mtu);
        }
        this.mtuShift = Integer.numberOfTrailingZeros(mtu);
        this.responderReads = config.responderReads;
    }

    /** @return whether the peer is sending to this end: a message partly received, or a start announced (S8.3.2). */
    boolean peerSending()
    {
        return startAnnounced || inbound.inUse() != 0;
    }

    /** Admits a data packet (S4.3, S12.5, S12.4, S12.7, S10.2), then the path and message layers take it. */
    void onDataPacket(final RoceFrame frame, final long now)
    {
        final MemorySegment buffer = frame.segment();
        final long seth = frame.customHeaderOffset();
        // the parser checked that the SETH lies in the packet: its fields come from two wide reads
        final long first = SprayExtendedTransportHeader.firstWord(buffer, seth);
        final long second = SprayExtendedTransportHeader.secondWord(buffer, seth);
        final int path = SprayExtendedTransportHeader.pathOf(first);
        final int streamId = SprayExtendedTransportHeader.streamOf(first);
        final int msn = SprayExtendedTransportHeader.msnOf(first);
        final int offset = SprayExtendedTransportHeader.messageOffsetOf(second);
        final int messageLength = SprayExtendedTransportHeader.messageLengthOf(second);
        final int payloadLength = frame.payloadLength();
        final int opcode = frame.opcode();
        final byte messageKind = (byte)(opcode - SprayOpcodes.WRITE);
        if (path >= paths || streamId >= streams || messageLength < 0 || offset < 0 || (offset & (mtu - 1)) != 0 ||
            payloadLength > mtu || (long)offset + payloadLength > messageLength ||
            // inside the message: an empty packet at its end counted as one of its packets (the message tag does
            // not cover the offset), so the message completed with a packet never placed
            (offset >= messageLength && messageLength > 0) ||
            (payloadLength < mtu && offset + payloadLength != messageLength && messageKind != READ) ||
            (messageKind == READ && (payloadLength != 0 || offset != 0)))
        {
            if (!frames.fromPeer(frame, -1))
            {
                connection.refused(SprayCounters.ADDRESS_MISMATCHES); // S12.5 outranks S4.3, as before its split
                return;
            }
            engine.counters().increment(SprayCounters.MALFORMED); // S4.3 violated: nothing is placed (S9.5)
            return;
        }
        // S12.5: a path's packets use its plane (the connection's any-plane check is left to this one)
        if (!frames.fromPeer(frame, SprayFrames.planeOf(path, planes)))
        {
            connection.refused(SprayCounters.ADDRESS_MISMATCHES); // S12.5: a path's packets use its plane
            return;
        }
        final long key = SendSlots.key(streamId, msn);
        if (!messageAuthentic(frame, messageKind, streamId, msn, key, offset))
        {
            return; // S12.4, S12.7: counted; nothing changed, the path layer never saw it
        }

        // message state needed before the path layer accepts the packet: without tables or any record the packet
        // is dropped unseen, and the sender recovers it as a loss (tables borrowed only for an authentic packet);
        // with a record but no room the path layer accepts it and its attempt is refused, RNR (S10.2)
        final int room = tables.borrow() ? roomFor(messageKind, streamId, msn, key, offset >> mtuShift,
            SprayExtendedTransportHeader.attemptOf(first)) : InboundMessages.NO_ROOM;
        if (room == InboundMessages.NO_ROOM)
        {
            counters.increment(SprayCounters.NO_RESOURCES);
            refuseUnseen(path, messageKind, streamId, msn, now);
            return;
        }

        final boolean ce = frame.ecn() == CE;
        final int verdict = acks.onData(path, frame.psn(), ce, frame.ackReq(), now);
        if (verdict == AckScheduler.DROP)
        {
            return;
        }
        engine.rateHint().onData(index, now, ce);
        startAnnounced = false;
        if (verdict == AckScheduler.DUPLICATE)
        {
            acknowledge(path);
            return;
        }
        if ((SprayExtendedTransportHeader.flagsOf(first) & SprayExtendedTransportHeader.FLAG_RETRANSMIT) != 0)
        {
            counters.increment(SprayCounters.RX_RETRANSMITTED); // a lost packet's copy delivered (S6.6, S7.4.1)
        }

        // message layer, before the ACK, so that a NACK precedes the ACK of its packet on the reverse path
        if (messageKind == READ_RESPONSE)
        {
            completions.placeReadResponse(frame, slots.slotFor(key), offset, messageLength, payloadLength);
        }
        else
        {
            inbound.accept(frame, path, messageKind, streamId, msn, key, offset, messageLength, payloadLength, room, now);
        }
        if (verdict == AckScheduler.ACCEPT_ACK_NOW)
        {
            acknowledge(path);
        }
    }

    // S6.4-2: within a receive burst the ACK a packet calls for waits for the end of the burst, and one ACK of the
    // path acknowledges every packet of it the burst held (issue 13: at 64 B, an ACK per packet was most of the
    // cost of a message); outside one (a caller handing packets over directly), and when the engine can list no
    // more connections, it goes out now
    private void acknowledge(final int path)
    {
        if (engine.isReceivingBurst() && (acks.isListedOwing() || engine.listOwingAcks(connection)))
        {
            acks.listedOwing(true);
            acks.oweAck(path);
        }
        else
        {
            control.sendAck(path);
        }
    }

    // S10.2-1, S10.2-2: a packet dropped unseen for want of storage (the engine's pool at its limit, or no record
    // left to hold a refusal in) is told to its sender with an RNR NACK of reason NO_RESOURCES, within the engine's
    // response rate, as the other resource limits are. It carries refusal 0: no record here holds a refusal, so
    // none is numbered (a numbered refusal the sender could not learn by a query would hold its completions). The
    // sender waits its RNR timer before the message goes again, rather than only retransmitting into the limit. A
    // READ response is this end's own READ (a local limit): nothing is told
    private void refuseUnseen(final int path, final byte messageKind, final int streamId, final int msn, final long now)
    {
        if (messageKind != READ_RESPONSE && engine.tryRespond(now))
        {
            control.sendNack(path, NegativeAckHeader.SYNDROME_RNR, NegativeAckHeader.RNR_REASON_NO_RESOURCES,
                streamId, msn, 0); // counted nacks_sent; the drop itself no_resources
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
            // a READ response is never retried: its tag is of attempt 0 (S12.4)
            final boolean valid = slot != MISSING && slots.kind(slot) == READ ?
                tag == slots.responseTag(slot) && SprayExtendedTransportHeader.attempt(buffer, seth) == 0 :
                tag == auth.expectedTag(frame);
            if (!valid)
            {
                connection.refused(SprayCounters.AUTH_FAILURES);
            }
            return valid;
        }
        return inbound.authentic(frame, tag, messageKind, streamId, msn, key, offset);
    }

    private int roomFor(
        final byte messageKind, final int streamId, final int msn, final long key, final int packet, final int attempt)
    {
        if (messageKind == READ_RESPONSE)
        {
            // its own READ's slot: a local limit, never refused to the peer
            return completions.roomForReadResponse(slots.slotFor(key), packet) ? InboundMessages.ROOM :
                InboundMessages.NO_ROOM;
        }
        // S10.2: a READ needs a send slot for its response and, under the advertised limit, a response in progress
        // (asked of a READ only: no other kind's room depends on it)
        return inbound.roomFor(messageKind, streamId, msn, key, packet, attempt,
            messageKind == READ && slots.hasFree() && slots.responsesUnsent() < responderReads);
    }

    // S8.3.1, S7.5, S12.6: a probe of an inbound path, answered with an ACK
    void onProbePacket(final RoceFrame frame, final long now)
    {
        final MemorySegment buffer = frame.segment();
        final long prbh = frame.customHeaderOffset();
        final int path = ProbeHeader.path(buffer, prbh);
        if (path >= paths)
        {
            engine.counters().increment(SprayCounters.MALFORMED);
            return;
        }
        if (!frames.fromPeer(frame, SprayFrames.planeOf(path, planes)))
        {
            connection.refused(SprayCounters.ADDRESS_MISMATCHES);
            return;
        }
        final boolean resync = (ProbeHeader.flags(buffer, prbh) & ProbeHeader.FLAG_RESYNC) != 0;
        if (resync && !acks.isResyncValid(path, ProbeHeader.nextPsn(buffer, prbh), frame.psn()))
        {
            connection.refused(SprayCounters.RESYNCS_REFUSED); // S12.6
            return;
        }
        counters.increment(SprayCounters.PROBES_RECEIVED);
        // S8.3.1: a probe counts its sender active, so the ACK below has its share, and announces its data
        engine.rateHint().onData(index, now, frame.ecn() == CE);
        startAnnounced = true;
        acks.onProbe(path, frame.psn(), resync);
        acknowledge(path);
    }
}
