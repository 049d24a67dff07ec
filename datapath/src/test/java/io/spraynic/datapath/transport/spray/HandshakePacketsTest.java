package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.RecordingFrameSink;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.PlaneAddress;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CONH packets {@link HandshakePackets} writes (S5.4, S5.5, S9.1) and the pre-shared-key proof (S12.2): a
 * CONNECT carries its block and address list and, with a key, a proof over BTH to the end of its payload that
 * {@link HandshakePackets#proofValid} accepts and that any changed byte in that range breaks, in a frame whose ICRC
 * is still right; a REJECT carries its reason and no block; a full output writes nothing.
 */
class HandshakePacketsTest
{
    private static final byte[] PSK = new byte[32];
    private static final byte[] PUBLIC_KEY = new byte[HandshakeCrypto.PUBLIC_KEY_LENGTH];
    private static final long TOKEN = 0x1122_3344_5566_7788L;

    static
    {
        Arrays.fill(PSK, (byte)7);
        Arrays.fill(PUBLIC_KEY, (byte)0x42);
    }

    private final RecordingFrameSink output = new RecordingFrameSink(4096);
    private final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), true);
    private final SprayConnectionConfig connection = new SprayConnectionConfig().cids(5, 6).keysFromCids()
        .paths(4).mtu(1024).streams(2).initialPsns(0x100, 0x200).depths(8, 8, 8)
        .remote(0, 0x0A000002, 0x020000000002L).remote(1, 0x0B000002, 0x020000000012L);

    private HandshakePackets packets(final byte[] psk)
    {
        final SprayConfig config = new SprayConfig().planes(2).local(0, 0x0A000001, 0x020000000001L)
            .local(1, 0x0B000001, 0x020000000011L).capacityMbps(100_000).seed(1).psk(psk);
        final SprayEngine engine = new SprayEngine(config, new ProtectionDomain(), output);
        return new HandshakePackets(engine, new HandshakeCrypto(engine.secrets()), config.psk);
    }

    private boolean writeConnect(final HandshakePackets packets)
    {
        packets.to(false, 0x0A000002, 0, 0, 0x020000000002L);
        return packets.writeHandshake(SprayOpcodes.CONNECT, 0, 49152, 4, 1024, 2, 5, 0x100, TOKEN, 0,
            new byte[CookieJar.LENGTH], PUBLIC_KEY, connection, connection);
    }

    private RoceFrame parse(final MemorySegment frame)
    {
        final RoceFrame parsed = new RoceFrame();
        assertEquals(FrameClass.ROCE, parser.parse(frame, 0, (int)frame.byteSize(), parsed),
            () -> "" + parsed.malformedReason());
        return parsed;
    }

    @Test
    void aConnectWithAKeyCarriesAProofOverBthToTheEndOfItsPayload()
    {
        final HandshakePackets packets = packets(PSK);
        assertTrue(writeConnect(packets));
        final MemorySegment frame = output.frame(0);
        final RoceFrame parsed = parse(frame); // the ICRC, computed again after the proof, is right
        final long conh = parsed.customHeaderOffset();
        final long hsb = parsed.payloadOffset();
        assertEquals(SprayOpcodes.CONNECT, parsed.opcode());
        assertEquals(TOKEN, ConnectionHeader.token(frame, conh));
        assertEquals(HandshakeBlock.LENGTH + 2 * PlaneAddress.LENGTH, parsed.payloadLength());
        assertEquals(0x0B000001, PlaneAddress.ipv4(frame, PlaneAddress.entry(hsb + HandshakeBlock.LENGTH, 1)));
        final byte[] key = new byte[HandshakeCrypto.PUBLIC_KEY_LENGTH];
        HandshakeBlock.publicKey(frame, hsb, key);
        assertArrayEquals(PUBLIC_KEY, key);
        assertTrue(packets.proofValid(frame, parsed.bthOffset(), hsb, parsed.payloadLength()));

        for (long at = parsed.bthOffset(); at < hsb + parsed.payloadLength(); at += 7)
        {
            final MemorySegment changed = copy(frame);
            changed.set(ValueLayout.JAVA_BYTE, at, (byte)(frame.get(ValueLayout.JAVA_BYTE, at) ^ 1));
            assertFalse(packets.proofValid(changed, parsed.bthOffset(), hsb, parsed.payloadLength()), "byte " + at);
        }
        final MemorySegment otherMac = copy(frame); // before the BTH: not covered (S12.2)
        EthernetHeader.destinationMac(otherMac, 0, 0x020000000099L);
        assertTrue(packets.proofValid(otherMac, parsed.bthOffset(), hsb, parsed.payloadLength()));
    }

    @Test
    void aConnectWithoutAKeyLeavesTheProofZero()
    {
        assertTrue(writeConnect(packets(null)));
        final MemorySegment frame = output.frame(0);
        final RoceFrame parsed = parse(frame);
        final byte[] proof = new byte[HandshakeBlock.PROOF_LENGTH];
        HandshakeBlock.proof(frame, parsed.payloadOffset(), proof);
        assertArrayEquals(new byte[HandshakeBlock.PROOF_LENGTH], proof);
        assertFalse(packets(PSK).proofValid(frame, parsed.bthOffset(), parsed.payloadOffset(), parsed.payloadLength()));
    }

    @Test
    void aRejectCarriesItsReasonAndNoBlock()
    {
        final HandshakePackets packets = packets(PSK);
        packets.to(false, 0x0A000002, 0, 0, 0x020000000002L);
        assertTrue(packets.writeHandshake(SprayOpcodes.CONNECT_REJECT, 9, 49152, 0, 0, 0, 0, 0, TOKEN,
            RejectReason.SOURCE_LIMIT, null, null, null, null));
        final MemorySegment frame = output.frame(0);
        final RoceFrame parsed = parse(frame);
        assertEquals(SprayOpcodes.CONNECT_REJECT, parsed.opcode());
        assertEquals(9, parsed.destQp());
        assertEquals(0, parsed.payloadLength());
        assertEquals(RejectReason.SOURCE_LIMIT, ConnectionHeader.reason(frame, parsed.customHeaderOffset()));
        assertEquals(TOKEN, ConnectionHeader.token(frame, parsed.customHeaderOffset()));
    }

    @Test
    void aFullOutputWritesNothing()
    {
        final HandshakePackets packets = packets(PSK);
        output.full = true;
        assertFalse(writeConnect(packets));
        packets.to(false, 0x0A000002, 0, 0, 0x020000000002L);
        assertFalse(packets.writeConnectionHeader(SprayOpcodes.CLOSE, 6, 49152, 4, 1024, 2, 5, 0, TOKEN));
        assertEquals(0, output.commits);
    }

    private static MemorySegment copy(final MemorySegment frame)
    {
        return MemorySegment.ofArray(frame.toArray(ValueLayout.JAVA_BYTE));
    }
}
