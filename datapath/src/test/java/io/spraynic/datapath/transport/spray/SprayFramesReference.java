package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.FrameSink;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.wire.ImmediateDataHeader;
import io.spraynic.datapath.wire.RdmaExtendedTransportHeader;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.MemorySegment;

/**
 * The data frame as {@link SprayFrames#data} wrote it before its frame template (main acab4c1, issue 13): every
 * field of the plane's writer set per packet, then the writer's {@code writeFrame}. Kept verbatim (the methods
 * {@code data}, {@code address}, {@code addressFrom}, {@code claim}, {@code planeOf}, with the connection's
 * addresses copied as {@link SprayFrames} copies them) as the reference {@link SprayFramesDataTemplateTest}
 * compares the template's frames with.
 */
final class SprayFramesReference
{
    private static final int ECT0 = 2;

    private final SprayEngine engine;
    private final SprayConfig config;
    private final FrameSink output;
    private final TransportCounters counters;
    private final SendSlots slots;
    private final PathScheduler scheduler;
    private final int planes;
    private final int mtu;
    private final int remoteCid;
    private final int[] remoteIpv4;
    private final long[] remoteMac;
    private final long[] remoteIpv6High;
    private final long[] remoteIpv6Low;
    private final boolean[] remoteIsIpv6;
    private RoceFrameWriter writer;
    private final PacketAuthenticator auth;

    SprayFramesReference(
        final SprayEngine engine,
        final SprayConnectionConfig connection,
        final TransportCounters counters,
        final SendSlots slots,
        final PathScheduler scheduler,
        final PacketAuthenticator auth)
    {
        this.auth = auth;
        final SprayConfig config = engine.config();
        this.engine = engine;
        this.config = config;
        this.planes = config.planes;
        this.mtu = connection.mtu;
        this.remoteCid = connection.remoteCid;
        this.output = engine.output();
        this.counters = counters;
        this.slots = slots;
        this.scheduler = scheduler;
        this.remoteIpv4 = java.util.Arrays.copyOf(connection.remoteIpv4, planes);
        this.remoteMac = java.util.Arrays.copyOf(connection.remoteMac, planes);
        this.remoteIpv6High = java.util.Arrays.copyOf(connection.remoteIpv6High, planes);
        this.remoteIpv6Low = java.util.Arrays.copyOf(connection.remoteIpv6Low, planes);
        this.remoteIsIpv6 = java.util.Arrays.copyOf(connection.remoteIsIpv6, planes);
    }

    void nextHopMac(final int plane, final long mac)
    {
        remoteMac[plane] = mac;
    }

    // ---- verbatim from SprayFrames of main acab4c1

    // S7.1: path p runs on plane p mod planes; a mask for the power-of-two plane counts, not a division per packet
    private int planeOf(final int path)
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
        writer.ethernet(config.localMac[plane], remoteMac[plane]).vlan(config.vlanTci[plane]);
        if (remoteIsIpv6[plane])
        {
            // S2.4: the UDP checksum RFC 8200 requires: hosts and middleboxes drop UDP over IPv6 without one
            // (unless the port's kernel writes it: SprayConfig.ipv6UdpChecksum)
            writer.ipv6(config.localIpv6High[plane], config.localIpv6Low[plane], remoteIpv6High[plane],
                remoteIpv6Low[plane])
                .ipv6UdpChecksum(config.ipv6UdpChecksum[plane]);
        }
        else
        {
            writer.ipv4(config.localIpv4[plane], remoteIpv4[plane]).ipv4Identification(0); // S2.4: identification 0
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
        final int plane = planeOf(path);
        address(path, plane);
        final PathSendWindow window = scheduler.sendWindows[path];
        writer.opcode(opcode).ecn(ECT0).solicited(last && slots.solicited(slot))
            .ackReq(last || window.outstanding() + 1 >= scheduler.congestionWindows.window(path) ||
                scheduler.endsPortRun(path)); // S7.7: the port's last packet, so that the path drains soon
        if (!claim(plane, payload))
        {
            return false;
        }
        final int psn = psnOrNew < 0 ? window.send(handle, now) : psnOrNew;
        writer.psn(psn);
        final MemorySegment buffer = output.buffer();
        final long base = output.offset();
        final long payloadAt = base + writer.payloadOffset();
        final long seth = payloadAt - SprayOpcodes.TABLE.extensionHeadersLength(opcode);
        SprayExtendedTransportHeader.write(buffer, seth, path,
            (retransmit ? SprayExtendedTransportHeader.FLAG_RETRANSMIT : 0) |
            (last ? SprayExtendedTransportHeader.FLAG_LAST : 0) |
            SprayExtendedTransportHeader.attemptFlags(slots.attempt(slot)),
            slots.stream(slot), slots.msn(slot), offset, slots.length(slot), slots.rsn(slot),
            // the one change since: S12.4's tag covers the attempt (a later merge, applied to both sides alike)
            slots.attempt(slot) == 0 ? slots.messageTag(slot) : auth.sendTag(slots, slot, slots.attempt(slot)));
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
            MemorySegment.copy(source.segment(), source.offsetOf(slots.localAddress(slot)) + offset, buffer, payloadAt,
                payload);
        }
        output.commit(writer.writeFrame(buffer, base, payload));
        return true;
    }
}
