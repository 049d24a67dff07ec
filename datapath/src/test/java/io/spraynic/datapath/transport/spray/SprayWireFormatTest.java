package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.ForwardingPort;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.ProbeHeader;
import io.spraynic.datapath.wire.RdmaExtendedTransportHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.UdpHeader;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the engine puts on the wire, frame by frame, parsed back by {@link RoceParser}: RoceV2 framing with a
 * valid ICRC (S2.1), per-path source ports (S2.2), ECT(0) data (S2.3), DF and identification 0 (S2.4), BTH
 * use (S3.2), SETH and a RETH naming each packet's own address (S4.1, S4.2), segmentation (S4.3), per-path
 * consecutive PSNs from {@code initialPsn + i * 2^18} (S5.4, S6.1), one path per ACK (S5.1).
 */
class SprayWireFormatTest
{
    /** Copies every frame a side transmits, then lets it through. */
    static final class CapturingPort extends ForwardingPort
    {
        final List<byte[]> frames = new ArrayList<>();

        CapturingPort(final PacketPort inner)
        {
            super(inner, "");
        }

        public int transmit(final PacketBurst burst)
        {
            for (int i = 0; i < burst.size(); i++)
            {
                frames.add(burst.memory().asSlice(burst.offset(i), burst.length(i)).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE));
            }
            return inner.transmit(burst);
        }
    }

    @Test
    void shouldPutSelfDescribingRoceV2PacketsOnTheWire()
    {
        final CapturingPort[] capturedA = new CapturingPort[2];
        final CapturingPort[] capturedB = new CapturingPort[2];
        final SprayTestBed.Options options = new SprayTestBed.Options()
            .wrapA((plane, port) -> capturedA[plane] = new CapturingPort(port))
            .wrapB((plane, port) -> capturedB[plane] = new CapturingPort(port));
        try (SprayTestBed bed = new SprayTestBed(options); Arena arena = Arena.ofConfined())
        {
            final int size = 40 * 4096 + 3;
            final MemoryRegion src = bed.region(bed.pdA, size, AccessFlags.NONE, 1);
            final MemoryRegion dst = bed.region(bed.pdB, size, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            bed.a.postSend(2, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), size).remote(dst.address(), dst.rkey()));
            bed.runUntil(() -> !bed.sendCqA.isEmpty(), 10_000);

            final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), true);
            final RoceFrame frame = new RoceFrame();
            final int[] nextPsn = new int[8];
            for (int p = 0; p < 8; p++)
            {
                nextPsn[p] = Psn.add(0x1000, p << 18);
            }
            final boolean[] offsets = new boolean[41];
            int data = 0;
            int probes = 0;
            for (int plane = 0; plane < 2; plane++)
            {
                for (final byte[] bytes : capturedA[plane].frames)
                {
                    final MemorySegment seg = arena.allocate(bytes.length);
                    seg.copyFrom(MemorySegment.ofArray(bytes));
                    assertEquals(FrameClass.ROCE, parser.parse(seg, 0, bytes.length, frame), frame::toString);
                    assertTrue(frame.icrcValid());
                    assertEquals(UdpHeader.ROCE_V2_PORT, frame.udpDestinationPort());
                    assertEquals(0x4000, io.spraynic.datapath.wire.Ipv4Header.flagsAndFragmentOffset(seg, frame.ipOffset()));
                    assertEquals(0, io.spraynic.datapath.wire.Ipv4Header.identification(seg, frame.ipOffset()));
                    assertEquals(SprayTestBed.CID_B, frame.destQp());
                    assertEquals(BaseTransportHeader.DEFAULT_PKEY, frame.pkey());
                    assertEquals(0, frame.tver());
                    assertFalse(frame.migReq());
                    if (frame.opcode() == SprayOpcodes.PROBE)
                    {
                        // S8.3.1: the first data after the connection was idle is announced by a probe, which
                        // occupies a PSN of its path (S5.2)
                        final int path = ProbeHeader.path(seg, frame.customHeaderOffset());
                        assertEquals(nextPsn[path], frame.psn(), "S5.2: a probe takes the next PSN of its path");
                        assertEquals(frame.psn(), ProbeHeader.nextPsn(seg, frame.customHeaderOffset()));
                        nextPsn[path] = Psn.next(nextPsn[path]);
                        probes++;
                        continue;
                    }
                    if (!SprayOpcodes.isData(frame.opcode()))
                    {
                        continue;
                    }
                    data++;
                    final long seth = frame.customHeaderOffset();
                    final int path = SprayExtendedTransportHeader.path(seg, seth);
                    assertEquals(plane, path % 2, "S7.1: path i on plane i mod planes");
                    assertEquals(0xC200 + path, frame.udpSourcePort(), "S2.2");
                    assertEquals(2, frame.ecn(), "S2.3: ECT(0)");
                    assertEquals(nextPsn[path], frame.psn(), "S6.1: consecutive PSNs per path");
                    nextPsn[path] = Psn.next(nextPsn[path]);
                    assertEquals(SprayOpcodes.WRITE, frame.opcode());
                    assertEquals(2, SprayExtendedTransportHeader.stream(seg, seth));
                    assertEquals(0, SprayExtendedTransportHeader.msn(seg, seth));
                    assertEquals(size, SprayExtendedTransportHeader.messageLength(seg, seth));
                    final int offset = SprayExtendedTransportHeader.messageOffset(seg, seth);
                    final boolean last = offset == 40 * 4096;
                    assertEquals(last ? 3 : 4096, frame.payloadLength(), "S4.3");
                    assertEquals(last ? SprayExtendedTransportHeader.FLAG_LAST : 0, SprayExtendedTransportHeader.flags(seg, seth));
                    assertEquals(last, frame.ackReq());
                    final long reth = seth + SprayExtendedTransportHeader.LENGTH;
                    assertEquals(dst.address() + offset, RdmaExtendedTransportHeader.virtualAddress(seg, reth), "S4.2");
                    assertEquals(dst.rkey(), RdmaExtendedTransportHeader.rkey(seg, reth));
                    assertEquals(size, RdmaExtendedTransportHeader.dmaLength(seg, reth));
                    assertFalse(offsets[offset / 4096]);
                    offsets[offset / 4096] = true;
                }
            }
            assertEquals(41, data);
            assertEquals(1, probes, "S8.3.1: one start probe, ahead of the data");
            int acks = 0;
            for (int plane = 0; plane < 2; plane++)
            {
                for (final byte[] bytes : capturedB[plane].frames)
                {
                    final MemorySegment seg = arena.allocate(bytes.length);
                    seg.copyFrom(MemorySegment.ofArray(bytes));
                    assertEquals(FrameClass.ROCE, parser.parse(seg, 0, bytes.length, frame));
                    assertEquals(SprayOpcodes.ACK, frame.opcode());
                    assertEquals(SprayTestBed.CID_A, frame.destQp());
                    assertEquals(0, frame.psn(), "S3.2: PSN 0 in an ACK");
                    final int path = SelectiveAckHeader.path(seg, frame.customHeaderOffset());
                    assertEquals(plane, path % 2, "S6.4: the ACK of path i goes back on path i");
                    assertEquals(0xC100 + path, frame.udpSourcePort(), "S2.2");
                    assertFalse(SelectiveAckHeader.sackBit(seg, frame.customHeaderOffset(), 0), "S5.1: bit 0 is clear");
                    acks++;
                }
            }
            assertTrue(acks >= 8, "every path acknowledged: " + acks);
        }
    }

    @Test
    void shouldSendEveryHandshakeFrameWithIdentificationZeroAlsoWithAPreSharedKey()
    {
        // S2.4: the ICRC covers the IPv4 header with identification 0; with a PSK the CONNECT and CONNECT_ACK are
        // written twice (the proof covers the BTH of the first write), and the second write must not advance it
        final byte[] key = new byte[32];
        new java.util.SplittableRandom(11).nextBytes(key);
        final CapturingPort[] captured = new CapturingPort[4];
        final SprayTestBed.Options options = new SprayTestBed.Options()
            .wrapA((plane, port) -> captured[plane] = new CapturingPort(port))
            .wrapB((plane, port) -> captured[2 + plane] = new CapturingPort(port));
        options.handshake = true;
        options.configure = (host, config) -> config.psk(key);
        try (SprayTestBed bed = new SprayTestBed(options); Arena arena = Arena.ofConfined())
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state());
            final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), true);
            final RoceFrame frame = new RoceFrame();
            int connects = 0;
            int connectAcks = 0;
            for (final CapturingPort port : captured)
            {
                for (final byte[] bytes : port.frames)
                {
                    final MemorySegment seg = arena.allocate(bytes.length);
                    seg.copyFrom(MemorySegment.ofArray(bytes));
                    assertEquals(FrameClass.ROCE, parser.parse(seg, 0, bytes.length, frame), frame::toString);
                    assertEquals(0, io.spraynic.datapath.wire.Ipv4Header.identification(seg, frame.ipOffset()),
                        "S2.4: identification 0 in opcode " + frame.opcode());
                    connects += frame.opcode() == SprayOpcodes.CONNECT ? 1 : 0;
                    connectAcks += frame.opcode() == SprayOpcodes.CONNECT_ACK ? 1 : 0;
                }
            }
            assertTrue(connects >= 1 && connectAcks >= 1, "the handshake was captured: " + connects + "/" + connectAcks);
        }
    }
}
