package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.UdpHeader;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.Wire;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The receive side of a connection's data packets (docs/PROTOCOL.md S4.3, S12.4, S6.3): real data packets of a
 * WRITE that A sent B, copied off the wire, are handed to B's {@link DataReceiver} again, as they are or made
 * hostile. Malformed ones are counted and touch nothing, a forged tag is refused before the path layer sees the
 * packet, a replay is a duplicate that is acknowledged and placed nowhere, and a PSN beyond the path's receive
 * window is dropped at the path layer.
 */
@Timeout(60)
class DataReceiverTest
{
    private static final int SIZE = 3 * 4096;
    private static final long SETH = SprayTestBed.DATA_OFFSET_BTH + BaseTransportHeader.LENGTH;

    private final List<byte[]> sent = new ArrayList<>();
    private final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), false);
    private SprayTestBed bed;
    private MemoryRegion dst;

    @BeforeEach
    void writeFromAToB()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options().wrapA((plane, port) ->
        {
            final SprayTestBed.SwitchablePort watched = new SprayTestBed.SwitchablePort(port);
            watched.corrupt = (memory, offset, length) ->
            {
                if (length > SETH && SprayOpcodes.isData(BaseTransportHeader.opcode(memory,
                    offset + SprayTestBed.DATA_OFFSET_BTH)))
                {
                    sent.add(memory.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
                }
                return false;
            };
            return watched;
        });
        bed = new SprayTestBed(options);
        final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 7);
        dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
        assertEquals(PostResult.OK, bed.a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(src, src.address(), SIZE).remote(dst.address(), dst.rkey())));
        assertEquals(WorkCompletionStatus.SUCCESS, bed.sendCompletionsA(1).get(0).status());
        assertEquals(-1L, src.segment().mismatch(dst.segment()));
        assertTrue(sent.size() >= 3, "the WRITE's packets were seen: " + sent.size());
        dst.segment().fill((byte)0); // from here on, whatever is placed again shows
    }

    @AfterEach
    void close()
    {
        bed.close();
    }

    /** A copy of the first packet A sent, changed by {@code change} before it is parsed. */
    private RoceFrame replay(final Consumer<MemorySegment> change)
    {
        final byte[] bytes = sent.get(0);
        final MemorySegment copy = Arena.ofAuto().allocate(bytes.length);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, copy, 0, bytes.length);
        change.accept(copy);
        final RoceFrame frame = new RoceFrame();
        assertEquals(FrameClass.ROCE, parser.parse(copy, 0, bytes.length, frame));
        return frame;
    }

    /** The first packet A sent, its payload cut off and its offset set to {@code offset}. */
    private RoceFrame replayEmptyAt(final int offset)
    {
        final byte[] whole = sent.get(0);
        final RoceFrame original = replay(f -> { });
        final int headers = (int)original.payloadOffset();
        final byte[] bytes = new byte[headers + Integer.BYTES]; // the headers and the ICRC, no payload
        System.arraycopy(whole, 0, bytes, 0, headers);
        final MemorySegment copy = Arena.ofAuto().allocate(bytes.length);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, copy, 0, bytes.length);
        SprayExtendedTransportHeader.messageOffset(copy, SETH, offset);
        final long ip = original.ipOffset();
        Ipv4Header.totalLength(copy, ip, (int)(bytes.length - ip));
        UdpHeader.length(copy, original.udpOffset(), (int)(bytes.length - original.udpOffset()));
        Ipv4Header.updateChecksum(copy, ip, Ipv4Header.LENGTH);
        final RoceFrame frame = new RoceFrame();
        assertEquals(FrameClass.ROCE, parser.parse(copy, 0, bytes.length, frame));
        assertEquals(0, frame.payloadLength());
        return frame;
    }

    private long b(final int slot)
    {
        return bed.b.counters().get(slot);
    }

    private boolean nothingPlaced()
    {
        return dst.segment().mismatch(MemorySegment.ofArray(new byte[SIZE])) == -1;
    }

    @Test
    void shouldCountMalformedPacketsAndTouchNothingS43()
    {
        final long rx = b(SprayCounters.RX_PACKETS);
        final long malformed = bed.engineB.counters().get(SprayCounters.MALFORMED);
        final DataReceiver receiver = bed.b.receiver();
        receiver.onDataPacket(replay(f -> SprayExtendedTransportHeader.path(f, SETH, 200)), bed.now); // no such path
        receiver.onDataPacket(replay(f -> SprayExtendedTransportHeader.messageOffset(f, SETH, 1)), bed.now); // not at an MTU
        receiver.onDataPacket(replay(f -> SprayExtendedTransportHeader.messageLength(f, SETH, 100)), bed.now); // past the end
        receiver.onDataPacket(replay(f -> SprayExtendedTransportHeader.messageLength(f, SETH, -1)), bed.now);
        // an empty packet at the message's end (the tag does not cover the offset): before, counted as one of the
        // message's packets, which then completed with one never placed
        receiver.onDataPacket(replayEmptyAt(SIZE), bed.now);
        assertEquals(malformed + 5, bed.engineB.counters().get(SprayCounters.MALFORMED));
        assertEquals(rx, b(SprayCounters.RX_PACKETS), "the path layer saw none of them");
        assertTrue(nothingPlaced());
    }

    /**
     * S12.5 through the connection's dispatch: a data packet's source is checked once, against its path's plane
     * (issue 13), and a packet from elsewhere is refused as such even when its SETH is malformed too, as when the
     * connection checked every packet against the peer's planes first.
     */
    @Test
    void shouldRefuseDataPacketsFromElsewhereThanTheirPathsPlaneS125()
    {
        final long rx = b(SprayCounters.RX_PACKETS);
        final long mismatches = b(SprayCounters.ADDRESS_MISMATCHES);
        final long malformed = bed.engineB.counters().get(SprayCounters.MALFORMED);
        final long ip = replay(f -> { }).ipOffset();
        // the source's two halves swapped: no address of the peer's, and the IPv4 checksum still holds
        final Consumer<MemorySegment> elsewhere = f -> f.set(Wire.INT_BE, ip + Ipv4Header.SOURCE_ADDRESS_OFFSET,
            Integer.rotateLeft(f.get(Wire.INT_BE, ip + Ipv4Header.SOURCE_ADDRESS_OFFSET), 16));
        bed.b.onFrame(replay(elsewhere), bed.now);
        bed.b.onFrame(replay(elsewhere.andThen(f -> SprayExtendedTransportHeader.path(f, SETH, 200))), bed.now);
        // the peer's address, but on the other plane than the path's (plane p is 10.0.p.1 here)
        bed.b.onFrame(replay(f ->
        {
            final long source = ip + Ipv4Header.SOURCE_ADDRESS_OFFSET;
            f.set(Wire.INT_BE, source, f.get(Wire.INT_BE, source) ^ (1 << 8));
            f.set(Wire.SHORT_BE, ip + Ipv4Header.CHECKSUM_OFFSET, (short)0);
            int sum = 0;
            for (int k = 0; k < Ipv4Header.LENGTH; k += 2)
            {
                sum += f.get(Wire.SHORT_BE, ip + k) & 0xFFFF;
            }
            sum = (sum & 0xFFFF) + (sum >>> 16);
            f.set(Wire.SHORT_BE, ip + Ipv4Header.CHECKSUM_OFFSET, (short)~((sum & 0xFFFF) + (sum >>> 16)));
        }), bed.now);
        assertEquals(mismatches + 3, b(SprayCounters.ADDRESS_MISMATCHES), "each counted as from elsewhere");
        assertEquals(malformed, bed.engineB.counters().get(SprayCounters.MALFORMED), "S12.5 before S4.3");
        assertEquals(rx, b(SprayCounters.RX_PACKETS), "the path layer saw none of them");
        assertTrue(nothingPlaced());
        bed.b.onFrame(replay(f -> SprayExtendedTransportHeader.path(f, SETH, 200)), bed.now); // from the peer
        assertEquals(malformed + 1, bed.engineB.counters().get(SprayCounters.MALFORMED));
        assertEquals(mismatches + 3, b(SprayCounters.ADDRESS_MISMATCHES));
    }

    @Test
    void shouldRefuseAForgedMessageTagBeforeThePathLayerS124()
    {
        final long rx = b(SprayCounters.RX_PACKETS);
        final long failures = b(SprayCounters.AUTH_FAILURES);
        bed.b.receiver().onDataPacket(replay(f -> SprayExtendedTransportHeader.messageTag(f, SETH,
            SprayExtendedTransportHeader.messageTag(f, SETH) ^ 1)), bed.now);
        assertEquals(failures + 1, b(SprayCounters.AUTH_FAILURES));
        assertEquals(rx, b(SprayCounters.RX_PACKETS));
        assertTrue(nothingPlaced());
    }

    @Test
    void shouldAcknowledgeAReplayAsADuplicateAndPlaceNothingAgainS63()
    {
        final long duplicates = b(SprayCounters.DUPLICATES);
        final long acks = b(SprayCounters.ACKS_SENT);
        bed.b.receiver().onDataPacket(replay(f ->
        {
        }), bed.now);
        assertEquals(duplicates + 1, b(SprayCounters.DUPLICATES));
        assertEquals(acks + 1, b(SprayCounters.ACKS_SENT), "a duplicate is acknowledged at once");
        assertTrue(nothingPlaced());
    }

    /** S6.4-2: within a receive burst, replays of packets of one path draw one ACK, at the end of the burst. */
    @Test
    void shouldAcknowledgeDuplicatesOfOneBurstOnceAtItsEndS643()
    {
        final long duplicates = b(SprayCounters.DUPLICATES);
        final long acks = b(SprayCounters.ACKS_SENT);
        bed.engineB.beginReceiveBurst();
        for (int i = 0; i < 3; i++)
        {
            bed.b.receiver().onDataPacket(replay(f ->
            {
            }), bed.now);
        }
        assertEquals(duplicates + 3, b(SprayCounters.DUPLICATES));
        assertEquals(acks, b(SprayCounters.ACKS_SENT), "held until the burst ends");
        assertEquals(1, bed.engineB.endReceiveBurst());
        assertEquals(acks + 1, b(SprayCounters.ACKS_SENT), "one ACK of the path for the three");
        assertEquals(0, bed.engineB.endReceiveBurst(), "owed once");
        assertTrue(nothingPlaced());
    }

    @Test
    void shouldDropAPacketBeyondThePathsReceiveWindowS63()
    {
        final long outOfWindow = b(SprayCounters.OUT_OF_WINDOW);
        final long failures = b(SprayCounters.AUTH_FAILURES);
        bed.b.receiver().onDataPacket(replay(f -> BaseTransportHeader.psn(f, SprayTestBed.DATA_OFFSET_BTH,
            (BaseTransportHeader.psn(f, SprayTestBed.DATA_OFFSET_BTH) + 5_000) & 0xFFFFFF)), bed.now);
        assertEquals(failures, b(SprayCounters.AUTH_FAILURES), "the message tag does not cover the PSN");
        assertEquals(outOfWindow + 1, b(SprayCounters.OUT_OF_WINDOW));
        assertTrue(nothingPlaced());
    }
}
