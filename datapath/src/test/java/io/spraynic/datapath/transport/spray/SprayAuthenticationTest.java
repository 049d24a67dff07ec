package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.ForwardingPort;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.ProbeHeader;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S12: an attacker who sees the traffic but holds no key injects frames built from the real
 * connection's own frames (copied, fields changed, IPv4 checksum and ICRC recomputed so that the parser accepts
 * them) while a transfer runs with every byte verified. Every hostile frame is refused before it changes any
 * state, and the counters account for each of them.
 */
@Timeout(60)
class SprayAuthenticationTest
{
    private static final long CUSTOM = SprayTestBed.DATA_OFFSET_BTH + BaseTransportHeader.LENGTH;
    private static final int ATTACKER_IP = SprayTestBed.ip(0, 66);
    private static final int WRITE_SIZE = 2 << 20;
    private static final int SEND_SIZE = 256 << 10;

    /** Keeps a copy of every frame a side transmits whose opcode the filter takes. */
    static final class Tap extends ForwardingPort
    {
        final IntPredicate opcodes;
        final List<byte[]> frames = new ArrayList<>();

        Tap(final PacketPort inner, final IntPredicate opcodes)
        {
            super(inner, "+tap");
            this.opcodes = opcodes;
        }

        public int transmit(final PacketBurst burst)
        {
            for (int i = 0; i < burst.size(); i++)
            {
                final long at = burst.offset(i);
                if (burst.length(i) > CUSTOM &&
                    opcodes.test(BaseTransportHeader.opcode(burst.memory(), at + SprayTestBed.DATA_OFFSET_BTH)))
                {
                    frames.add(burst.memory().asSlice(at, burst.length(i)).toArray(ValueLayout.JAVA_BYTE));
                }
            }
            return inner.transmit(burst);
        }

        public void onPollerStart()
        {
            inner.onPollerStart();
        }

        public void onPollerClose()
        {
            inner.onPollerClose();
        }
    }

    /** A running transfer A -> B: a WRITE on stream 0, a SEND on stream 1, and a decoy receive behind it. */
    private static final class Transfer
    {
        final SprayTestBed bed;
        final MemoryRegion srcWrite;
        final MemoryRegion dstWrite;
        final MemoryRegion srcSend;
        final MemoryRegion dstSend;
        final MemoryRegion decoy;
        final List<WorkCompletion> sent = new ArrayList<>();
        final List<WorkCompletion> received = new ArrayList<>();

        Transfer(final SprayTestBed bed)
        {
            this.bed = bed;
            srcWrite = bed.region(bed.pdA, WRITE_SIZE, AccessFlags.NONE, 7);
            dstWrite = bed.region(bed.pdB, WRITE_SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            srcSend = bed.region(bed.pdA, SEND_SIZE, AccessFlags.NONE, 8);
            dstSend = bed.region(bed.pdB, SEND_SIZE, AccessFlags.LOCAL_WRITE, 0);
            decoy = bed.region(bed.pdB, SEND_SIZE, AccessFlags.LOCAL_WRITE, 0);
            assertEquals(PostResult.OK, bed.b.postReceive(1, new ReceiveWorkRequest().wrId(10).buffer(dstSend,
                dstSend.address(), SEND_SIZE)));
            // only a forged SEND (RSN 1 of stream 1) could consume this one
            assertEquals(PostResult.OK, bed.b.postReceive(1, new ReceiveWorkRequest().wrId(99).buffer(decoy,
                decoy.address(), SEND_SIZE)));
            assertEquals(PostResult.OK, bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(srcWrite, srcWrite.address(), WRITE_SIZE).remote(dstWrite.address(), dstWrite.rkey())));
            assertEquals(PostResult.OK, bed.a.postSend(1, new SendWorkRequest().wrId(2).opcode(WorkRequestOpcode.SEND)
                .local(srcSend, srcSend.address(), SEND_SIZE)));
        }

        boolean done()
        {
            sent.addAll(SprayTestBed.drain(bed.sendCqA));
            received.addAll(SprayTestBed.drain(bed.receiveCqB));
            return sent.size() == 2 && received.size() == 1;
        }

        void verify()
        {
            bed.runUntil(this::done, 200_000);
            for (final WorkCompletion wc : sent)
            {
                assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc::toString);
            }
            assertEquals(10L, received.get(0).wrId());
            assertEquals(WorkCompletionStatus.SUCCESS, received.get(0).status());
            assertEquals(-1L, srcWrite.segment().mismatch(dstWrite.segment()), "every WRITE byte");
            assertEquals(-1L, srcSend.segment().mismatch(dstSend.segment()), "every SEND byte");
            bed.runToQuiet(500);
            assertTrue(SprayTestBed.drain(bed.receiveCqB).isEmpty(), "the decoy receive was not consumed");
            assertEquals(-1L, decoy.segment().mismatch(MemorySegment.ofArray(new byte[SEND_SIZE])), "decoy untouched");
            assertEquals(0, bed.b.inboundMessagesInUse(), "no inbound message record pinned");
            assertEquals(SprayConnection.State.ESTABLISHED, bed.a.state());
            assertEquals(SprayConnection.State.ESTABLISHED, bed.b.state());
        }
    }

    // ---- frame surgery

    private static MemorySegment copy(final SprayTestBed bed, final byte[] frame)
    {
        final MemorySegment f = bed.arena.allocate(frame.length, 64);
        MemorySegment.copy(MemorySegment.ofArray(frame), 0, f, 0, frame.length);
        return f;
    }

    /** Recomputes what the parser checks after a change: the IPv4 header checksum and the ICRC. */
    static void reseal(final MemorySegment f)
    {
        final long ip = EthernetHeader.LENGTH;
        Ipv4Header.updateChecksum(f, ip, Ipv4Header.LENGTH);
        final long icrc = ip + Ipv4Header.totalLength(f, ip) - Icrc.LENGTH;
        Icrc.write(f, icrc, new Icrc().compute(f, ip, 4, Ipv4Header.LENGTH, icrc));
    }

    private static void fromAttacker(final MemorySegment f)
    {
        Ipv4Header.sourceAddress(f, EthernetHeader.LENGTH, ATTACKER_IP);
    }

    /** Puts a frame on the wire of {@code plane} towards B ({@code toB}) or A, as if the other side sent it. */
    private static void inject(final SprayTestBed bed, final int plane, final boolean toB, final MemorySegment f,
        final int length)
    {
        final PacketPort port = bed.injector(plane, toB);
        try (PacketBurst burst = port.newBurst(1))
        {
            assertTrue(port.allocate(burst, 1));
            MemorySegment.copy(f, 0, burst.memory(), burst.offset(0), length);
            burst.length(0, length);
            assertEquals(1, port.transmit(burst));
        }
    }

    private static void inject(final SprayTestBed bed, final int plane, final boolean toB, final MemorySegment f)
    {
        inject(bed, plane, toB, f, (int)f.byteSize());
    }

    /** A writer addressed from one side to the other on plane 0, as that side's engine would. */
    private static RoceFrameWriter writer(final int fromHost, final int toHost, final int destCid, final int opcode)
    {
        return new RoceFrameWriter(SprayOpcodes.TABLE).ethernet(SprayTestBed.mac(0, fromHost), SprayTestBed.mac(0, toHost))
            .ipv4(SprayTestBed.ip(0, fromHost), SprayTestBed.ip(0, toHost)).udpSourcePort(0xC123).destQp(destCid)
            .opcode(opcode).psn(0);
    }

    private static SprayConnectionConfig keysOf(final int local, final int remote)
    {
        return new SprayConnectionConfig().cids(local, remote).keysFromCids();
    }

    private static long sum(final SprayTestBed bed, final int slot)
    {
        return bed.a.counters().get(slot) + bed.b.counters().get(slot) + bed.engineA.counters().get(slot) +
            bed.engineB.counters().get(slot);
    }

    private static boolean isData(final int opcode)
    {
        return SprayOpcodes.isData(opcode);
    }

    @Test
    void shouldRefuseForgedCloseProbeAndMessageStartsAtTheReceiverS123S124S125S126S127()
    {
        receiverSideForgeries(new SprayTestBed.Options(), (plane, port) -> port);
    }

    /**
     * (a) CLOSE, (b) RESYNC, (c) message starts, and S12.7 with a valid tag, injected towards B; {@code base} gives
     * A's port of a plane (the in-memory link's, or a DPDK port's).
     */
    static void receiverSideForgeries(final SprayTestBed.Options options, final SprayTestBed.Wrapper base)
    {
        final Tap[] tapsA = new Tap[options.planes];
        options.wrapA((plane, port) -> tapsA[plane] = new Tap(base.wrap(plane, port), o -> isData(o) || o == SprayOpcodes.PROBE));
        final int planes = options.planes;
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final Transfer t = new Transfer(bed);
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.TX_PACKETS) > 100 &&
                captured(tapsA, SprayOpcodes.SEND) && captured(tapsA, SprayOpcodes.WRITE), 10_000);

            // (a) CLOSE naming B's connection: from an address that is not A's, then from A's with a made-up tag
            final RoceFrameWriter close = writer(1, 2, SprayTestBed.CID_B, SprayOpcodes.CLOSE);
            final MemorySegment closeFrame = bed.arena.allocate(256);
            ConnectionHeader.write(closeFrame, close.payloadOffset() - ConnectionHeader.LENGTH, 0, 8, 2, 4096, 4,
                SprayTestBed.CID_A, 0, 100_000, 0x5EC2E7L);
            ConnectionHeader.tag(closeFrame, close.payloadOffset() - ConnectionHeader.LENGTH, 0x0123_4567_89AB_CDEFL);
            final int closeLength = close.writeFrame(closeFrame, 0, 0);
            final MemorySegment spoofedClose = copy(bed, closeFrame.asSlice(0, closeLength).toArray(ValueLayout.JAVA_BYTE));
            fromAttacker(spoofedClose);
            reseal(spoofedClose);
            inject(bed, 0, true, spoofedClose);
            inject(bed, 0, true, closeFrame, closeLength);

            // (b) A's start probe turned into a RESYNC to an arbitrary PSN: its tag no longer verifies; and the
            // same from the attacker's address
            final MemorySegment resync = copy(bed, firstData(tapsA, SprayOpcodes.PROBE));
            final int probedPath = ProbeHeader.path(resync, CUSTOM);
            final int probePlane = probedPath % planes;
            ProbeHeader.flags(resync, CUSTOM, ProbeHeader.FLAG_RESYNC);
            ProbeHeader.nextPsn(resync, CUSTOM, 0x00BEEF);
            BaseTransportHeader.psn(resync, SprayTestBed.DATA_OFFSET_BTH, 0x00BEEF);
            reseal(resync);
            inject(bed, probePlane, true, resync);
            fromAttacker(resync);
            reseal(resync);
            inject(bed, probePlane, true, resync);

            // (c) message starts with the right CID and a copied message tag: a WRITE of a message not yet sent
            // (MSN 5 of stream 0), a SEND that would consume the decoy receive (MSN 1, RSN 1 of stream 1)
            final byte[] realWrite = firstData(tapsA, SprayOpcodes.WRITE);
            final MemorySegment write = copy(bed, realWrite);
            SprayExtendedTransportHeader.msn(write, CUSTOM, 5);
            SprayExtendedTransportHeader.messageOffset(write, CUSTOM, 0);
            BaseTransportHeader.psn(write, SprayTestBed.DATA_OFFSET_BTH, 0x0FFFFF);
            write.asSlice(write.byteSize() - 256 - Icrc.LENGTH, 256).fill((byte)0xEE);
            reseal(write);
            inject(bed, SprayExtendedTransportHeader.path(write, CUSTOM) % planes, true, write);
            final MemorySegment send = copy(bed, firstData(tapsA, SprayOpcodes.SEND));
            SprayExtendedTransportHeader.msn(send, CUSTOM, 1);
            SprayExtendedTransportHeader.rsn(send, CUSTOM, 1);
            SprayExtendedTransportHeader.messageOffset(send, CUSTOM, 0);
            send.asSlice(CUSTOM + SprayExtendedTransportHeader.LENGTH, 256).fill((byte)0xEE);
            reseal(send);
            inject(bed, SprayExtendedTransportHeader.path(send, CUSTOM) % planes, true, send);

            // S12.7: even with a valid tag (a peer that holds the key), no message state far beyond the window
            final SprayConnectionConfig keysA = keysOf(SprayTestBed.CID_A, SprayTestBed.CID_B);
            final int far = 1 + bed.options.depth;
            final MemorySegment ahead = copy(bed, firstData(tapsA, SprayOpcodes.SEND));
            SprayExtendedTransportHeader.msn(ahead, CUSTOM, far);
            SprayExtendedTransportHeader.rsn(ahead, CUSTOM, 1);
            SprayExtendedTransportHeader.messageOffset(ahead, CUSTOM, 0);
            SprayExtendedTransportHeader.messageTag(ahead, CUSTOM, PacketAuthenticator.messageTag(keysA.sendKey0,
                keysA.sendKey1, SprayOpcodes.SEND, 0, 1, far, SEND_SIZE, 1, 0, 0, SprayTestBed.CID_B, 0));
            reseal(ahead);
            inject(bed, SprayExtendedTransportHeader.path(ahead, CUSTOM) % planes, true, ahead);

            bed.step();
            bed.step();
            assertEquals(SprayConnection.State.ESTABLISHED, bed.b.state(), "(a) no teardown");
            assertEquals(0, bed.b.counters().get(SprayCounters.CLOSES_RECEIVED));
            t.verify();

            assertEquals(2, bed.b.counters().get(SprayCounters.ADDRESS_MISMATCHES), "CLOSE and PROBE from elsewhere");
            assertEquals(1 + 1 + 2, bed.b.counters().get(SprayCounters.AUTH_FAILURES), "CLOSE, PROBE, WRITE, SEND");
            assertEquals(1, bed.b.counters().get(SprayCounters.MSN_OUT_OF_WINDOW));
            for (final int slot : new int[] {SprayCounters.ADDRESS_MISMATCHES, SprayCounters.AUTH_FAILURES,
                SprayCounters.MSN_OUT_OF_WINDOW})
            {
                assertEquals(bed.b.counters().get(slot), bed.engineB.counters().get(slot), "engine totals");
            }
            assertEquals(0, sum(bed, SprayCounters.RESYNCS_REFUSED), "refused by their tags already");
            assertEquals(0, bed.a.counters().get(SprayCounters.AUTH_FAILURES) + bed.a.counters().get(SprayCounters.ADDRESS_MISMATCHES));
            assertEquals(0, bed.engineB.counters().get(SprayCounters.MALFORMED));
            assertEquals(0, bed.parseB.malformed(), "every forged frame passed the parser");
            assertTrue(bed.b.receiveWindows().cumulativePsn(probedPath) != 0x00BEEF, "(b) no resync");
        }
    }

    @Test
    void shouldIgnoreForgedNacksAndAcksAndReplayedAcksAtTheSenderS123S128()
    {
        senderSideForgeries(new SprayTestBed.Options(), (plane, port) -> port);
    }

    /** (d) NACK, (e) ACK, (f) a replayed ACK, and S12.8 with a valid tag, injected towards A. */
    static void senderSideForgeries(final SprayTestBed.Options options, final SprayTestBed.Wrapper base)
    {
        final Tap[] tapsB = new Tap[options.planes];
        options.wrapB((plane, port) -> tapsB[plane] = new Tap(base.wrap(plane, port), o -> o == SprayOpcodes.ACK));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final Transfer t = new Transfer(bed);
            bed.runUntil(() -> tapsB[0].frames.size() > 4 && bed.a.counters().get(SprayCounters.TX_PACKETS) > 100, 10_000);
            final byte[] oldAck = tapsB[0].frames.get(0);

            // (d) a NACK failing the outstanding WRITE (stream 0, MSN 0) with REMOTE_ACCESS_ERROR, from B's address
            final RoceFrameWriter nack = writer(2, 1, SprayTestBed.CID_A, SprayOpcodes.NACK);
            final MemorySegment nackFrame = bed.arena.allocate(256);
            final long nakh = nack.payloadOffset() - NegativeAckHeader.LENGTH;
            NegativeAckHeader.syndrome(nackFrame, nakh, NegativeAckHeader.SYNDROME_REMOTE_ACCESS_ERROR);
            NegativeAckHeader.stream(nackFrame, nakh, 0);
            NegativeAckHeader.msn(nackFrame, nakh, 0);
            NegativeAckHeader.rnrTimerMicros(nackFrame, nakh, 0);
            NegativeAckHeader.refusal(nackFrame, nakh, 1);
            NegativeAckHeader.tag(nackFrame, nakh, 0x1111_2222_3333_4444L);
            inject(bed, 0, false, nackFrame, nack.writeFrame(nackFrame, 0, 0));
            // S12.8: a NACK with a valid tag (a peer that holds the key) that names a message never sent
            final SprayConnectionConfig keysB = keysOf(SprayTestBed.CID_B, SprayTestBed.CID_A);
            NegativeAckHeader.msn(nackFrame, nakh, 7);
            nack.tagNext(keysB.sendKey0, keysB.sendKey1);
            inject(bed, 0, false, nackFrame, nack.writeFrame(nackFrame, 0, 0));

            // (e) B's ACK made to acknowledge 200 PSNs A never sent, every SACK bit set, far ahead in sequence
            final MemorySegment ack = copy(bed, tapsB[0].frames.get(tapsB[0].frames.size() - 1));
            final int path = SelectiveAckHeader.path(ack, CUSTOM);
            SelectiveAckHeader.cumulativePsn(ack, CUSTOM, bed.a.nextPsn(path) + 200);
            for (int w = 0; w < 4; w++)
            {
                SelectiveAckHeader.sackWord(ack, CUSTOM, w, -1L);
            }
            SelectiveAckHeader.ackSequence(ack, CUSTOM, SelectiveAckHeader.ackSequence(ack, CUSTOM) + 1000);
            reseal(ack);
            inject(bed, 0, false, ack);

            // (f) B's first ACK, genuine, replayed: stale
            final long staleBefore = bed.a.counters().get(SprayCounters.ACKS_STALE);
            inject(bed, 0, false, copy(bed, oldAck));
            bed.step();
            assertTrue(bed.a.counters().get(SprayCounters.ACKS_STALE) > staleBefore, "(f) a replayed ACK is stale");

            t.verify();
            assertEquals(2, bed.a.counters().get(SprayCounters.AUTH_FAILURES), "NACK, ACK");
            assertEquals(1, bed.a.counters().get(SprayCounters.NACKS_UNMATCHED));
            assertEquals(1, bed.engineA.counters().get(SprayCounters.NACKS_UNMATCHED), "engine totals");
            assertEquals(2, bed.engineA.counters().get(SprayCounters.AUTH_FAILURES));
            assertEquals(0, bed.a.counters().get(SprayCounters.NACKS_RECEIVED), "no NACK took effect");
            assertEquals(0, bed.b.counters().get(SprayCounters.AUTH_FAILURES));
            assertEquals(0, bed.parseA.malformed(), "every forged frame passed the parser");
        }
    }

    @Test
    void shouldRefuseReplayedResyncProbesAfterAPathFailureS126()
    {
        final Tap[] tapsA = new Tap[2];
        final SprayTestBed.SwitchablePort[] switchesA = new SprayTestBed.SwitchablePort[2];
        final SprayTestBed.SwitchablePort[] switchesB = new SprayTestBed.SwitchablePort[2];
        final SprayTestBed.Options options = new SprayTestBed.Options().planes(2)
            .wrapA((plane, port) -> switchesA[plane] = new SprayTestBed.SwitchablePort(
                tapsA[plane] = new Tap(port, o -> o == SprayOpcodes.PROBE))) // sees only what the switch lets through
            .wrapB((plane, port) -> switchesB[plane] = new SprayTestBed.SwitchablePort(port));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final int size = 4 << 20;
            final MemoryRegion src = bed.region(bed.pdA, size, AccessFlags.NONE, 42);
            final MemoryRegion dst = bed.region(bed.pdB, size, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            assertEquals(PostResult.OK, bed.a.postSend(0, wr.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), size).remote(dst.address(), dst.rkey())));
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.TX_PACKETS) > 200, 10_000);
            switchesA[1].down = true;
            switchesB[1].down = true;
            assertEquals(WorkCompletionStatus.SUCCESS, bed.sendCompletionsA(1).get(0).status());
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.PATH_FAILURES) == 4, 100_000);
            switchesA[1].down = false;
            switchesB[1].down = false;
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.PATH_RESTORES) == 4, 10_000);
            bed.runToQuiet(500);

            // the genuine RESYNC probes that restored the paths, captured on the wire, replayed
            final List<byte[]> resyncs = new ArrayList<>();
            for (final byte[] f : tapsA[1].frames)
            {
                if ((ProbeHeader.flags(MemorySegment.ofArray(f), CUSTOM) & ProbeHeader.FLAG_RESYNC) != 0)
                {
                    resyncs.add(f);
                }
            }
            assertTrue(resyncs.size() >= 4, "a RESYNC per failed path: " + resyncs.size());
            final int[] cumulative = new int[8];
            final int[] frontier = new int[8];
            for (int p = 0; p < 8; p++)
            {
                cumulative[p] = bed.b.receiveWindows().cumulativePsn(p);
                frontier[p] = bed.b.receiveWindows().frontier(p);
            }
            assertEquals(0, bed.b.counters().get(SprayCounters.RESYNCS_REFUSED), "the genuine ones were accepted");
            for (final byte[] f : resyncs)
            {
                inject(bed, 1, true, copy(bed, f));
            }
            bed.step();
            bed.step();
            assertEquals(resyncs.size(), bed.b.counters().get(SprayCounters.RESYNCS_REFUSED), "(f) replays are stale");
            for (int p = 0; p < 8; p++)
            {
                assertEquals(cumulative[p], bed.b.receiveWindows().cumulativePsn(p), "path " + p + " not moved back");
                assertEquals(frontier[p], bed.b.receiveWindows().frontier(p), "path " + p);
            }

            // a RESYNC with a valid tag (a peer holding the key) half the PSN space away, or just behind what
            // arrived: refused too (S12.6)
            final SprayConnectionConfig keysA = keysOf(SprayTestBed.CID_A, SprayTestBed.CID_B);
            final RoceFrameWriter probe = new RoceFrameWriter(SprayOpcodes.TABLE)
                .ethernet(SprayTestBed.mac(1, 1), SprayTestBed.mac(1, 2)).ipv4(SprayTestBed.ip(1, 1), SprayTestBed.ip(1, 2))
                .destQp(SprayTestBed.CID_B).opcode(SprayOpcodes.PROBE);
            final MemorySegment frame = bed.arena.allocate(256);
            final long prbh = probe.payloadOffset() - ProbeHeader.LENGTH;
            for (final int psn : new int[] {cumulative[1] + (1 << 23) + 5, frontier[1] - 1})
            {
                ProbeHeader.path(frame, prbh, 1);
                ProbeHeader.flags(frame, prbh, ProbeHeader.FLAG_RESYNC);
                ProbeHeader.nextPsn(frame, prbh, psn);
                inject(bed, 1, true, frame, probe.psn(psn & 0xFF_FFFF).tagNext(keysA.sendKey0, keysA.sendKey1)
                    .writeFrame(frame, 0, 0));
            }
            bed.step();
            assertEquals(resyncs.size() + 2, bed.b.counters().get(SprayCounters.RESYNCS_REFUSED));
            assertEquals(cumulative[1], bed.b.receiveWindows().cumulativePsn(1));
            assertEquals(0, bed.b.counters().get(SprayCounters.AUTH_FAILURES), "their tags were valid");

            // the connection carries on: a second transfer, every byte verified, every path ACTIVE
            dst.segment().fill((byte)0);
            assertEquals(PostResult.OK, bed.a.postSend(0, wr.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), size).remote(dst.address(), dst.rkey())));
            assertEquals(WorkCompletionStatus.SUCCESS, bed.sendCompletionsA(1).get(0).status());
            assertEquals(-1L, src.segment().mismatch(dst.segment()));
            for (int p = 0; p < 8; p++)
            {
                assertEquals(SprayConnection.ACTIVE, bed.a.pathState(p), "path " + p);
            }
            assertEquals(0, bed.b.counters().get(SprayCounters.AUTH_FAILURES) + bed.a.counters().get(SprayCounters.AUTH_FAILURES));
        }
    }

    @Test
    void shouldAnswerARepeatedCloseForAClosedConnectionOnlyWhenItsTagVerifiesS92S123()
    {
        final Tap[] tapsA = new Tap[2];
        final Tap[] tapsB = new Tap[2];
        final SprayTestBed.Options options = new SprayTestBed.Options()
            .wrapA((plane, port) -> tapsA[plane] = new Tap(port, o -> o == SprayOpcodes.CLOSE))
            .wrapB((plane, port) -> tapsB[plane] = new Tap(port, o -> o == SprayOpcodes.CLOSE_ACK));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertTrue(bed.engineA.close(bed.a, bed.now));
            bed.runUntil(() -> bed.a.isClosed() && bed.b.isClosed(), 20_000);
            assertEquals(1, tapsB[0].frames.size(), "one CLOSE_ACK");
            final byte[] genuineClose = tapsA[0].frames.get(0);

            // a CLOSE with the closed CID and a made-up tag, from A's address: not answered
            final MemorySegment forged = copy(bed, genuineClose);
            ConnectionHeader.tag(forged, CUSTOM, ConnectionHeader.tag(forged, CUSTOM) ^ 1);
            reseal(forged);
            inject(bed, 0, true, forged);
            bed.step();
            assertEquals(1, bed.engineB.counters().get(SprayCounters.AUTH_FAILURES));
            assertEquals(1, tapsB[0].frames.size(), "never answer an unauthenticated CLOSE");

            // A's own CLOSE again (its CLOSE_ACK lost, S9.2): answered, with a CLOSE_ACK tagged with B's old key
            inject(bed, 0, true, copy(bed, genuineClose));
            bed.step();
            assertEquals(2, tapsB[0].frames.size(), "the repeated CLOSE is answered");
            final MemorySegment answer = MemorySegment.ofArray(tapsB[0].frames.get(1));
            final SprayConnectionConfig keysB = keysOf(SprayTestBed.CID_B, SprayTestBed.CID_A);
            final int covered = BaseTransportHeader.LENGTH + ConnectionHeader.TAG_OFFSET;
            assertEquals(io.spraynic.datapath.wire.SipHash.hash(keysB.sendKey0, keysB.sendKey1, answer,
                SprayTestBed.DATA_OFFSET_BTH, covered), ConnectionHeader.tag(answer, CUSTOM));
            assertEquals(ConnectionHeader.token(MemorySegment.ofArray(genuineClose), CUSTOM), ConnectionHeader.token(answer, CUSTOM));

            // a CLOSE naming a CID no connection ever had: counted as for an unknown connection, not answered
            final MemorySegment unknown = copy(bed, genuineClose);
            BaseTransportHeader.destQp(unknown, SprayTestBed.DATA_OFFSET_BTH, 0x0C0C0C);
            reseal(unknown);
            final long unknownBefore = bed.engineB.counters().get(SprayCounters.UNKNOWN_CONNECTION);
            inject(bed, 0, true, unknown);
            bed.step();
            assertEquals(unknownBefore + 1, bed.engineB.counters().get(SprayCounters.UNKNOWN_CONNECTION));
            assertEquals(2, tapsB[0].frames.size());
            assertEquals(1, bed.engineB.counters().get(SprayCounters.AUTH_FAILURES));

            // a well-formed RoCEv2 RC SEND ONLY (the CLOSE's 40 header bytes become its payload): not spray, and no
            // other transport runs here: counted, not dropped silently (S9.5)
            final MemorySegment rc = copy(bed, genuineClose);
            BaseTransportHeader.opcode(rc, SprayTestBed.DATA_OFFSET_BTH, 0x04);
            reseal(rc);
            final long notSprayBefore = bed.engineB.counters().get(SprayCounters.NOT_SPRAY);
            inject(bed, 0, true, rc);
            bed.step();
            assertEquals(notSprayBefore + 1, bed.engineB.counters().get(SprayCounters.NOT_SPRAY));
            assertEquals(2, tapsB[0].frames.size());
        }
    }

    @Test
    void shouldRefuseEveryBitFlipOfTheAuthenticatedBytesOfGenuineControlFramesS123()
    {
        final Tap[] tapsA = new Tap[2];
        final Tap[] tapsB = new Tap[2];
        final SprayTestBed.Options options = new SprayTestBed.Options()
            .wrapA((plane, port) -> tapsA[plane] = new Tap(port, o -> o == SprayOpcodes.PROBE))
            .wrapB((plane, port) -> tapsB[plane] = new Tap(port, o -> o == SprayOpcodes.ACK));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final Transfer t = new Transfer(bed);
            bed.runUntil(() -> !tapsB[0].frames.isEmpty() && captured(tapsA, SprayOpcodes.PROBE), 10_000);
            // every bit from the BTH's PSN word to the tag's last bit (opcode, pkey and DestQP route the frame
            // elsewhere: to another transport or connection, counted there)
            final long flipsToA = flipEveryBit(bed, tapsB[0].frames.get(0), 0, false);
            final byte[] probe = firstData(tapsA, SprayOpcodes.PROBE);
            final long flipsToB = flipEveryBit(bed, probe, ProbeHeader.path(MemorySegment.ofArray(probe), CUSTOM) % 2, true);
            bed.step();
            bed.step();
            t.verify();
            assertEquals(8 * (4 + SelectiveAckHeader.LENGTH), flipsToA);
            assertEquals(8 * (4 + ProbeHeader.LENGTH), flipsToB);
            assertEquals(flipsToA, bed.a.counters().get(SprayCounters.AUTH_FAILURES) + bed.parseA.malformed(),
                "each flipped ACK refused by its tag (or by the parser)");
            assertEquals(flipsToB, bed.b.counters().get(SprayCounters.AUTH_FAILURES) + bed.parseB.malformed(),
                "each flipped PROBE refused by its tag (or by the parser)");
            assertTrue(bed.a.counters().get(SprayCounters.AUTH_FAILURES) > flipsToA * 9 / 10);
            assertTrue(bed.b.counters().get(SprayCounters.AUTH_FAILURES) > flipsToB * 9 / 10);
        }
    }

    private static long flipEveryBit(final SprayTestBed bed, final byte[] genuine, final int plane, final boolean toB)
    {
        final int from = SprayTestBed.DATA_OFFSET_BTH + 8;
        final int to = (int)CUSTOM + ((genuine[SprayTestBed.DATA_OFFSET_BTH] & 0xFF) == SprayOpcodes.ACK ?
            SelectiveAckHeader.LENGTH : ProbeHeader.LENGTH);
        final MemorySegment f = copy(bed, genuine);
        long flips = 0;
        for (int bit = from * 8; bit < to * 8; bit++)
        {
            MemorySegment.copy(MemorySegment.ofArray(genuine), 0, f, 0, genuine.length);
            final long at = bit / 8;
            f.set(ValueLayout.JAVA_BYTE, at, (byte)(f.get(ValueLayout.JAVA_BYTE, at) ^ (1 << (bit % 8))));
            reseal(f);
            inject(bed, plane, toB, f);
            flips++;
            if (flips % 64 == 0)
            {
                bed.step();
            }
        }
        return flips;
    }

    private static boolean captured(final Tap[] taps, final int opcode)
    {
        for (final Tap tap : taps)
        {
            for (final byte[] f : tap.frames)
            {
                if ((f[SprayTestBed.DATA_OFFSET_BTH] & 0xFF) == opcode)
                {
                    return true;
                }
            }
        }
        return false;
    }

    private static byte[] firstData(final Tap[] taps, final int opcode)
    {
        for (final Tap tap : taps)
        {
            for (final byte[] f : tap.frames)
            {
                if ((f[SprayTestBed.DATA_OFFSET_BTH] & 0xFF) == opcode)
                {
                    return f;
                }
            }
        }
        throw new AssertionError("no frame 0x" + Integer.toHexString(opcode));
    }
}
