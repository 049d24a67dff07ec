package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.FrameSink;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.wire.ImmediateDataHeader;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.ProbeHeader;
import io.spraynic.datapath.wire.RdmaExtendedTransportHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameTemplate;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The frames one spray connection sends (docs/PROTOCOL.md S2, S5, S6, S9) and the addresses it accepts frames
 * from (S12.5): Ethernet, IP and UDP of a path's plane and route, BTH, then the spray headers (SETH, RETH,
 * ImmDt of a data packet; PRBH of a probe; SACKH of an ACK; NAKH of a NACK or query), each written in place
 * in the output's buffer through the {@code wire} flyweights, the payload copied from registered memory, the
 * ICRC and S12.3 tag added by the writer. Every method claims room first and counts {@code OUTPUT_FULL} when
 * there is none; nothing is written then. Allocation-free.
 */
final class SprayFrames
{
    private static final int ECT0 = 2;
    // numbers the instances for the plane writers' frame templates (a number, not a reference: no closed
    // connection is kept alive by the template it last used)
    private static final AtomicLong FLOWS = new AtomicLong();
    // the spray headers' length after the BTH, by message kind (SprayConnection's WRITE .. READ_RESPONSE)
    private static final int[] EXTENSIONS_LENGTH = new int[6];

    static
    {
        for (byte messageKind = 0; messageKind < EXTENSIONS_LENGTH.length; messageKind++)
        {
            EXTENSIONS_LENGTH[messageKind] =
                SprayOpcodes.TABLE.extensionHeadersLength(MessageKinds.opcodeOf(messageKind));
        }
    }

    private static final int PEER_MAC = 0;
    private static final int PEER_IPV6_HIGH = 1;
    private static final int PEER_IPV6_LOW = 2;
    private static final int PEER_IPV4 = 3;
    private static final int PEER_STRIDE = 4;
    private static final long PEER_IS_IPV6 = 1L << 32;

    private final SprayEngine engine;
    private final SprayConfig config;
    private final FrameSink output;
    private final PacketAuthenticator auth;
    private final TransportCounters counters;
    private final TransportCounters[] pathCounters;
    private final SendSlots slots;
    private final PathScheduler scheduler;
    private final int planes;
    private final int mtu;
    private final int remoteCid;
    /**
     * The peer's addresses, plane-major in one array (issue 13: one array header, not five per connection): per plane
     * the next hop's MAC, the IPv6 address's high and low halves, and the IPv4 address in the low 32 bits of the
     * last with {@link #PEER_IS_IPV6} set when the plane speaks IPv6.
     */
    private final long[] peer;
    private final long flow = FLOWS.incrementAndGet();
    private RoceFrameWriter writer;

    SprayFrames(
        final SprayEngine engine,
        final SprayConnectionConfig connection,
        final PacketAuthenticator auth,
        final TransportCounters counters,
        final TransportCounters[] pathCounters,
        final SendSlots slots,
        final PathScheduler scheduler)
    {
        final SprayConfig config = engine.config();
        this.engine = engine;
        this.config = config;
        this.planes = config.planes;
        this.mtu = connection.mtu;
        this.remoteCid = connection.remoteCid;
        this.output = engine.output();
        this.auth = auth;
        this.counters = counters;
        this.pathCounters = pathCounters;
        this.slots = slots;
        this.scheduler = scheduler;
        this.peer = new long[planes * PEER_STRIDE];
        for (int plane = 0; plane < planes; plane++)
        {
            final int at = plane * PEER_STRIDE;
            final boolean ipv6 = plane < connection.remoteIsIpv6.length && connection.remoteIsIpv6[plane];
            peer[at + PEER_MAC] = plane < connection.remoteMac.length ? connection.remoteMac[plane] : 0;
            peer[at + PEER_IPV6_HIGH] = plane < connection.remoteIpv6High.length ? connection.remoteIpv6High[plane] : 0;
            peer[at + PEER_IPV6_LOW] = plane < connection.remoteIpv6Low.length ? connection.remoteIpv6Low[plane] : 0;
            final long ipv4 = plane < connection.remoteIpv4.length ? connection.remoteIpv4[plane] & 0xFFFF_FFFFL : 0;
            peer[at + PEER_IPV4] = ipv4 | (ipv6 ? PEER_IS_IPV6 : 0);
        }
    }

    private boolean remoteIsIpv6(final int plane)
    {
        return (peer[plane * PEER_STRIDE + PEER_IPV4] & PEER_IS_IPV6) != 0;
    }

    private int remoteIpv4Of(final int plane)
    {
        return (int)peer[plane * PEER_STRIDE + PEER_IPV4];
    }

    private long remoteIpv6High(final int plane)
    {
        return peer[plane * PEER_STRIDE + PEER_IPV6_HIGH];
    }

    private long remoteIpv6Low(final int plane)
    {
        return peer[plane * PEER_STRIDE + PEER_IPV6_LOW];
    }

    /** @return the peer's IPv4 address on {@code plane} (0 when that plane speaks IPv6). */
    int remoteIpv4(final int plane)
    {
        return remoteIsIpv6(plane) ? 0 : remoteIpv4Of(plane);
    }

    /** @return the MAC frames of {@code plane} go to. */
    long nextHopMac(final int plane)
    {
        return peer[plane * PEER_STRIDE + PEER_MAC];
    }

    /** Frames of {@code plane} go to {@code mac} from now on (the next hop as the neighbour table resolved it). */
    void nextHopMac(final int plane, final long mac)
    {
        peer[plane * PEER_STRIDE + PEER_MAC] = mac;
    }

    // S12.5: the source is the peer's address on the plane (-1: on any of its planes)
    boolean fromPeer(final RoceFrame frame, final int plane)
    {
        final boolean ipv6 = frame.ipVersion() == 6;
        for (int candidate = plane < 0 ? 0 : plane, end = plane < 0 ? planes : plane + 1; candidate < end; candidate++)
        {
            if (remoteIsIpv6(candidate) == ipv6 && (ipv6 ?
                frame.ipv6SourceHigh() == remoteIpv6High(candidate) &&
                    frame.ipv6SourceLow() == remoteIpv6Low(candidate) :
                frame.ipv4Source() == remoteIpv4Of(candidate)))
            {
                return true;
            }
        }
        return false;
    }

    private int planeOf(final int path)
    {
        return planeOf(path, planes);
    }

    /** S7.1: path p runs on plane p mod planes; a mask for the power-of-two plane counts, not a division per packet. */
    static int planeOf(final int path, final int planes)
    {
        return (planes & (planes - 1)) == 0 ? path & (planes - 1) : path % planes;
    }

    private void address(final int path, final int plane)
    {
        addressFrom(plane, scheduler.sourcePort(path));
    }

    private void addressFrom(final int plane, final int sourcePort)
    {
        writer = engine.writer(plane); // the engine's writer of the plane: one per plane, not per connection
        // this end's addresses are the engine's (its configuration's), not copied into every connection (issue 13)
        writer.ethernet(config.localMac[plane], nextHopMac(plane)).vlan(config.vlanTci[plane]);
        if (remoteIsIpv6(plane))
        {
            // S2.4: the UDP checksum RFC 8200 requires: hosts and middleboxes drop UDP over IPv6 without one
            // (unless the port's kernel writes it: SprayConfig.ipv6UdpChecksum)
            writer.ipv6(config.localIpv6High[plane], config.localIpv6Low[plane], remoteIpv6High(plane),
                remoteIpv6Low(plane))
                .ipv6UdpChecksum(config.ipv6UdpChecksum[plane]);
        }
        else
        {
            writer.ipv4(config.localIpv4[plane], remoteIpv4Of(plane)).ipv4Identification(0); // S2.4: identification 0
        }
        writer.dscp(config.dscp)
            .udpSourcePort(sourcePort)
            .destQp(remoteCid)
            .solicited(false)
            .ackReq(false)
            .ecn(0);
    }

    private boolean claim(final int plane, final int payload)
    {
        if (!output.claim(plane, writer.frameLength(payload)))
        {
            counters.increment(SprayCounters.OUTPUT_FULL);
            return false;
        }
        return true;
    }

    /**
     * Writes a data packet on a path: a new one ({@code psnOrNew < 0}: takes the path's next PSN) or a
     * retransmission with its PSN (S6.6). The caller checked that the source memory is still registered.
     *
     * @param payload the packet's payload bytes ({@link SendSlots#payloadOf}).
     */
    boolean data(
        final int path, final long handle, final int payload, final int psnOrNew, final boolean retransmit,
        final long now)
    {
        final int slot = SendSlots.slotOf(handle);
        final int packet = SendSlots.packetOf(handle);
        final byte messageKind = slots.kind(slot);
        final int offset = messageKind == MessageKinds.READ ? 0 : packet * mtu;
        final boolean last = messageKind == MessageKinds.READ || packet == slots.packets(slot) - 1;
        final int opcode = MessageKinds.opcodeOf(messageKind);
        final int extensions = EXTENSIONS_LENGTH[messageKind];
        final int plane = planeOf(path);
        final RoceFrameTemplate template = dataTemplate(plane, opcode);
        final PathSendWindow window = scheduler.sendWindows[path];
        final boolean ackReq = last || window.outstanding() + 1 >= scheduler.congestionWindows.window(path) ||
            scheduler.endsPortRun(path); // S7.7: the port's last packet, so that the path drains soon
        if (!output.claim(plane, template.frameLength(extensions, payload)))
        {
            counters.increment(SprayCounters.OUTPUT_FULL);
            return false;
        }
        final int psn = psnOrNew < 0 ? window.send(handle, now) : psnOrNew;
        final MemorySegment buffer = output.buffer();
        final long base = output.offset();
        final long seth = base + template.headerLength();
        final int attempt = slots.attempt(slot);
        SprayExtendedTransportHeader.write(buffer, seth, path,
            (retransmit ? SprayExtendedTransportHeader.FLAG_RETRANSMIT : 0) |
            (last ? SprayExtendedTransportHeader.FLAG_LAST : 0) |
            SprayExtendedTransportHeader.attemptFlags(attempt),
            slots.stream(slot), slots.msn(slot), offset, slots.length(slot), slots.rsn(slot),
            attempt == 0 ? slots.messageTag(slot) : auth.sendTag(slots, slot, attempt)); // S12.4: covers the attempt
        long at = seth + SprayExtendedTransportHeader.LENGTH;
        if (messageKind == MessageKinds.WRITE || messageKind == MessageKinds.WRITE_IMM ||
            messageKind == MessageKinds.READ)
        {
            RdmaExtendedTransportHeader.virtualAddress(buffer, at, slots.remoteAddress(slot) + offset);
            RdmaExtendedTransportHeader.rkey(buffer, at, slots.rkey(slot));
            RdmaExtendedTransportHeader.dmaLength(buffer, at, slots.length(slot));
            at += RdmaExtendedTransportHeader.LENGTH;
        }
        if (messageKind == MessageKinds.WRITE_IMM || messageKind == MessageKinds.SEND_IMM)
        {
            ImmediateDataHeader.immediateData(buffer, at, slots.immediate(slot));
        }
        if (payload > 0)
        {
            final MemoryRegion source = slots.region(slot);
            MemorySegment.copy(source.segment(), source.offsetOf(slots.localAddress(slot)) + offset, buffer,
                seth + extensions, payload);
        }
        output.commit(template.write(buffer, base, scheduler.sourcePort(path), opcode, last && slots.solicited(slot),
            ackReq, psn, extensions, payload));
        return true;
    }

    // The plane writer's frame template with this connection's data-frame headers (its addresses on the plane, the
    // DSCP with ECT(0), its CID), captured through the writer's setters as every frame was written before (issue
    // 13): again only when another connection took the template over or the plane's next hop changed
    private RoceFrameTemplate dataTemplate(final int plane, final int opcode)
    {
        final RoceFrameTemplate template = engine.writer(plane).template();
        final long nextHop = nextHopMac(plane);
        if (!template.heldBy(flow, nextHop))
        {
            addressFrom(plane, 0); // the source port is the path's, patched per frame
            writer.opcode(opcode).ecn(ECT0);
            template.capture(flow, nextHop);
        }
        return template;
    }

    /** Writes a probe (S6.5, S7.5) that takes the path's next PSN; false if the window or the output is full. */
    boolean newProbe(final int path, final int flags, final long now)
    {
        final PathSendWindow window = scheduler.sendWindows[path];
        if (window.isFull())
        {
            return false;
        }
        final int plane = planeOf(path);
        address(path, plane);
        writer.opcode(SprayOpcodes.PROBE);
        if (!claim(plane, 0))
        {
            return false;
        }
        final int psn = window.send(SprayConnection.PROBE_HANDLE, now);
        scheduler.times.lastProbeAt[path] = now;
        probeClaimed(path, psn, flags);
        return true;
    }

    /**
     * Writes a probe in place of data packet {@code handle} that cannot be sent (S9.3.2): at its PSN, or at the
     * path's next PSN ({@code psnOrNew < 0}: a moved packet), recorded for the packet, so its ACK accounts for it.
     */
    boolean placeholder(final int path, final long handle, final int psnOrNew, final long now)
    {
        final int plane = planeOf(path);
        address(path, plane);
        writer.opcode(SprayOpcodes.PROBE);
        if (!claim(plane, 0))
        {
            return false;
        }
        probeClaimed(path, psnOrNew < 0 ? scheduler.sendWindows[path].send(handle, now) : psnOrNew, 0);
        return true;
    }

    /** Writes a probe again at its PSN (a retransmitted placeholder, S7.4.1). */
    boolean probe(final int path, final int psn, final int flags)
    {
        final int plane = planeOf(path);
        address(path, plane);
        writer.opcode(SprayOpcodes.PROBE);
        if (!claim(plane, 0))
        {
            return false;
        }
        probeClaimed(path, psn, flags);
        return true;
    }

    private void probeClaimed(final int path, final int psn, final int flags)
    {
        writer.psn(psn);
        final MemorySegment buffer = output.buffer();
        final long base = output.offset();
        final long prbh = base + writer.payloadOffset() - ProbeHeader.LENGTH;
        ProbeHeader.path(buffer, prbh, path);
        ProbeHeader.flags(buffer, prbh, flags);
        ProbeHeader.nextPsn(buffer, prbh, psn);
        auth.tagNext(writer);
        output.commit(writer.writeFrame(buffer, base, 0));
        counters.increment(SprayCounters.PROBES_SENT);
        pathCounters[path].increment(SprayCounters.PROBES_SENT);
    }

    /**
     * Claims room for a control packet (ACK, NACK, query) on a path back to the peer; on success
     * {@link #ack}, {@link #nack} or {@link #query} fills and sends it.
     */
    boolean claimControl(final int controlPath, final int opcode)
    {
        final int plane = planeOf(controlPath);
        addressFrom(plane, scheduler.controlPort(controlPath)); // S7.7: control packets do not rotate
        writer.opcode(opcode).psn(0);
        return claim(plane, 0);
    }

    /** Fills and sends the ACK claimed by {@link #claimControl}: inbound path {@code path}'s SACKH (S6.3). */
    void ack(
        final int path, final int ceCount, final int duplicates, final PathReceiveWindow window,
        final int rateHintMbps, final int ackSequence, final int refusals)
    {
        final MemorySegment buffer = output.buffer();
        final long base = output.offset();
        final long sack = base + writer.payloadOffset() - SelectiveAckHeader.LENGTH;
        SelectiveAckHeader.path(buffer, sack, path);
        SelectiveAckHeader.flags(buffer, sack, ceCount > 0 ? SelectiveAckHeader.FLAG_ECE : 0);
        SelectiveAckHeader.ceCount(buffer, sack, ceCount);
        window.writeTo(path, buffer, sack);
        SelectiveAckHeader.duplicates(buffer, sack, duplicates); // after the cumulative PSN's word
        SelectiveAckHeader.rateHintMbps(buffer, sack, rateHintMbps);
        SelectiveAckHeader.ackSequence(buffer, sack, ackSequence);
        SelectiveAckHeader.refusals(buffer, sack, refusals);
        auth.tagNext(writer);
        output.commit(writer.writeFrame(buffer, base, 0));
    }

    /** Fills and sends the NACK (S9.3) or query claimed by {@link #claimControl}. */
    void negativeAck(
        final int syndrome, final int reason, final int streamId, final int msn, final int rnrTimerMicros,
        final int refusal)
    {
        final MemorySegment buffer = output.buffer();
        final long base = output.offset();
        final long nakh = base + writer.payloadOffset() - NegativeAckHeader.LENGTH;
        NegativeAckHeader.syndrome(buffer, nakh, syndrome);
        NegativeAckHeader.reason(buffer, nakh, reason);
        NegativeAckHeader.stream(buffer, nakh, streamId);
        NegativeAckHeader.msn(buffer, nakh, msn);
        NegativeAckHeader.rnrTimerMicros(buffer, nakh, rnrTimerMicros);
        NegativeAckHeader.refusal(buffer, nakh, refusal);
        auth.tagNext(writer);
        output.commit(writer.writeFrame(buffer, base, 0));
    }

    /** Writes a {@code SPRAY_CLOSE} or {@code SPRAY_CLOSE_ACK} (S9.2) on plane 0, tagged (S12.3). */
    boolean connectionPacket(
        final int opcode, final int paths, final int streams, final int localCid, final long token)
    {
        final SprayHandshake handshake = engine.handshake();
        handshake.to(remoteIsIpv6(0), remoteIpv4Of(0), remoteIpv6High(0), remoteIpv6Low(0), nextHopMac(0));
        final RoceFrameWriter conh = engine.writer(0);
        auth.tagNext(conh); // S12.3: CLOSE and CLOSE_ACK carry the tag in CONH
        final boolean written = handshake.writeConnectionHeader(opcode, remoteCid, scheduler.sourcePort(0), paths,
            mtu, streams, localCid, 0, token);
        conh.clearTag();
        return written;
    }
}
