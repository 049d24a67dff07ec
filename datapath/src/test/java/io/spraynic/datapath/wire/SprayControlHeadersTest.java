package io.spraynic.datapath.wire;

import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.HexFormat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S5.2 (PRBH) and S5.3 (NAKH): every field round-trips at an odd offset and lands on the
 * wire big-endian where the table puts it; both fit the lengths {@link SprayOpcodes} registers.
 */
class SprayControlHeadersTest
{
    private static final long AT = 3;

    private final MemorySegment s = MemorySegment.ofArray(new byte[64]);

    private String hex(final long offset, final int length)
    {
        return HexFormat.of().formatHex(s.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE));
    }

    @Test
    void shouldRoundTripTheProbeHeaderS52()
    {
        s.fill((byte)0xEE);
        ProbeHeader.path(s, AT, 63);
        ProbeHeader.flags(s, AT, ProbeHeader.FLAG_RESYNC);
        ProbeHeader.nextPsn(s, AT, 0xFFABCDEF); // only 24 bits travel
        assertEquals(63, ProbeHeader.path(s, AT));
        assertEquals(ProbeHeader.FLAG_RESYNC, ProbeHeader.flags(s, AT));
        assertEquals(0xABCDEF, ProbeHeader.nextPsn(s, AT));
        ProbeHeader.tag(s, AT, 0x1122334455667788L);
        assertEquals(0x1122334455667788L, ProbeHeader.tag(s, AT));
        assertEquals("3f01000000abcdef" + "1122334455667788", hex(AT, ProbeHeader.LENGTH)); // S12.3: the tag last
        assertEquals(SprayOpcodes.PROBE_HEADER_LENGTH, ProbeHeader.LENGTH);
        assertEquals("PRBH{path=63, flags=0x1, nextPsn=11259375}", ProbeHeader.toString(s, AT));
    }

    @Test
    void shouldRoundTripTheNegativeAckHeaderS53()
    {
        s.fill((byte)0xEE);
        NegativeAckHeader.syndrome(s, AT, NegativeAckHeader.SYNDROME_RNR);
        NegativeAckHeader.stream(s, AT, 0xFFFF);
        NegativeAckHeader.msn(s, AT, 0x89ABCDEF);
        NegativeAckHeader.rnrTimerMicros(s, AT, 655);
        NegativeAckHeader.refusal(s, AT, 0x01020304);
        assertEquals(1, NegativeAckHeader.syndrome(s, AT));
        assertEquals(0x01020304, NegativeAckHeader.refusal(s, AT));
        assertEquals(0xFFFF, NegativeAckHeader.stream(s, AT));
        assertEquals(0x89ABCDEF, NegativeAckHeader.msn(s, AT));
        assertEquals(655, NegativeAckHeader.rnrTimerMicros(s, AT));
        NegativeAckHeader.tag(s, AT, 0x8877665544332211L);
        assertEquals(0x8877665544332211L, NegativeAckHeader.tag(s, AT));
        assertEquals("0100ffff89abcdef0000028f01020304" + "8877665544332211", hex(AT, NegativeAckHeader.LENGTH));
        assertEquals(SprayOpcodes.NACK_HEADER_LENGTH, NegativeAckHeader.LENGTH);
        assertEquals("NAKH{syndrome=RNR, reason=NO_RECEIVE, stream=65535, msn=2309737967, rnrTimerMicros=655, refusal=16909060}",
            NegativeAckHeader.toString(s, AT));
        NegativeAckHeader.reason(s, AT, NegativeAckHeader.RNR_REASON_NO_RESOURCES);
        assertEquals(1, NegativeAckHeader.reason(s, AT));
        assertEquals("0101ffff", hex(AT, 4));
        assertEquals("NO_RESOURCES", NegativeAckHeader.reasonName(1));
        assertEquals("ACCEPTED", NegativeAckHeader.syndromeName(0));
        assertEquals("REMOTE_ACCESS_ERROR", NegativeAckHeader.syndromeName(2));
        assertEquals("REMOTE_INVALID_REQUEST", NegativeAckHeader.syndromeName(3));
        assertEquals("REMOTE_OPERATION_ERROR", NegativeAckHeader.syndromeName(4));
    }

    @Test
    void shouldRoundTripTheConnectionHeaderS54()
    {
        s.fill((byte)0xEE);
        ConnectionHeader.write(s, AT, 0, 8, 4, 4096, 65536, 0xABCDEF, 0x123456, 400_000, 0x0102030405060708L);
        assertEquals(ConnectionHeader.VERSION, ConnectionHeader.version(s, AT));
        assertEquals(8, ConnectionHeader.paths(s, AT));
        assertEquals(4, ConnectionHeader.planes(s, AT));
        assertEquals(4096, ConnectionHeader.mtu(s, AT));
        assertEquals(65536, ConnectionHeader.streams(s, AT));
        assertEquals(0xABCDEF, ConnectionHeader.senderCid(s, AT));
        assertEquals(0x123456, ConnectionHeader.initialPsn(s, AT));
        assertEquals(400_000, ConnectionHeader.ingressMbps(s, AT));
        assertEquals(0x0102030405060708L, ConnectionHeader.token(s, AT));
        assertEquals(0, ConnectionHeader.reason(s, AT));
        assertEquals(0, ConnectionHeader.tag(s, AT));
        assertEquals("0200080410000000" + "00abcdef" + "00123456" + "00061a80" + "0102030405060708" + "00000000" +
            "0000000000000000", hex(AT, ConnectionHeader.LENGTH));
        ConnectionHeader.reason(s, AT, 5);
        ConnectionHeader.tag(s, AT, 0xA1A2A3A4A5A6A7A8L);
        assertEquals(5, ConnectionHeader.reason(s, AT));
        assertEquals(0xA1A2A3A4A5A6A7A8L, ConnectionHeader.tag(s, AT));
        assertEquals("05000000" + "a1a2a3a4a5a6a7a8", hex(AT + ConnectionHeader.REASON_OFFSET, 12));
        assertEquals(SprayOpcodes.CONNECTION_HEADER_LENGTH, ConnectionHeader.LENGTH);
        // S5.4, S10.2: the limits a CONNECT or CONNECT_ACK advertises, in what were reserved bytes 29..31
        ConnectionHeader.limits(s, AT, 65535, 255);
        assertEquals(65535, ConnectionHeader.window(s, AT));
        assertEquals(255, ConnectionHeader.reads(s, AT));
        assertEquals(5, ConnectionHeader.reason(s, AT));
        ConnectionHeader.limits(s, AT, 896, 16);
        assertEquals("05100380", hex(AT + ConnectionHeader.REASON_OFFSET, 4));
        assertTrue(ConnectionHeader.toString(s, AT).contains("reason=5, reads=16, window=896, tag=0xa1a2a3a4a5a6a7a8"));
    }

    @Test
    void theWholeSethInWideStoresIsTheBytesOfItsFieldSetters()
    {
        final java.util.SplittableRandom random = new java.util.SplittableRandom(28);
        final MemorySegment expected = MemorySegment.ofArray(new byte[64]);
        for (int round = 0; round < 10_000; round++)
        {
            final int path = random.nextInt();
            final int flags = random.nextInt();
            final int stream = random.nextInt();
            final int msn = random.nextInt();
            final int offset = random.nextInt();
            final int length = random.nextInt();
            final int rsn = random.nextInt();
            final long tag = random.nextLong();
            s.fill((byte)round);
            expected.fill((byte)round);
            SprayExtendedTransportHeader.path(expected, AT, path);
            SprayExtendedTransportHeader.flags(expected, AT, flags);
            SprayExtendedTransportHeader.stream(expected, AT, stream);
            SprayExtendedTransportHeader.msn(expected, AT, msn);
            SprayExtendedTransportHeader.messageOffset(expected, AT, offset);
            SprayExtendedTransportHeader.messageLength(expected, AT, length);
            SprayExtendedTransportHeader.rsn(expected, AT, rsn);
            SprayExtendedTransportHeader.messageTag(expected, AT, tag);
            SprayExtendedTransportHeader.write(s, AT, path, flags, stream, msn, offset, length, rsn, tag);
            org.junit.jupiter.api.Assertions.assertArrayEquals(expected.toArray(ValueLayout.JAVA_BYTE),
                s.toArray(ValueLayout.JAVA_BYTE), "round " + round);
        }
    }

    /** Issue 13: the receiver's two wide reads of the SETH give each field its accessor gives. */
    @Test
    void theSethReadInTwoWordsGivesTheFieldsOfItsAccessors()
    {
        final java.util.SplittableRandom random = new java.util.SplittableRandom(13);
        for (int round = 0; round < 10_000; round++)
        {
            s.fill((byte)random.nextInt());
            SprayExtendedTransportHeader.write(s, AT, random.nextInt(), random.nextInt(), random.nextInt(),
                random.nextInt(), random.nextInt(), random.nextInt(), random.nextInt(), random.nextLong());
            final long first = SprayExtendedTransportHeader.firstWord(s, AT);
            final long second = SprayExtendedTransportHeader.secondWord(s, AT);
            assertEquals(SprayExtendedTransportHeader.path(s, AT), SprayExtendedTransportHeader.pathOf(first));
            assertEquals(SprayExtendedTransportHeader.attempt(s, AT), SprayExtendedTransportHeader.attemptOf(first));
            assertEquals(SprayExtendedTransportHeader.flags(s, AT), SprayExtendedTransportHeader.flagsOf(first));
            assertEquals(SprayExtendedTransportHeader.stream(s, AT), SprayExtendedTransportHeader.streamOf(first));
            assertEquals(SprayExtendedTransportHeader.msn(s, AT), SprayExtendedTransportHeader.msnOf(first));
            assertEquals(SprayExtendedTransportHeader.messageOffset(s, AT),
                SprayExtendedTransportHeader.messageOffsetOf(second));
            assertEquals(SprayExtendedTransportHeader.messageLength(s, AT),
                SprayExtendedTransportHeader.messageLengthOf(second));
        }
    }

    @Test
    void shouldCarryTheAttemptInSethFlagBits2To4AndOrderAttemptsModulo8S933()
    {
        SprayExtendedTransportHeader.flags(s, AT, SprayExtendedTransportHeader.FLAG_LAST |
            SprayExtendedTransportHeader.attemptFlags(5));
        assertEquals(0x16, Byte.toUnsignedInt(s.get(ValueLayout.JAVA_BYTE, AT + 1)), "bits 2-4 = 5, bit 1 LAST");
        assertEquals(5, SprayExtendedTransportHeader.attempt(s, AT));
        SprayExtendedTransportHeader.flags(s, AT, 0xE3); // reserved bits 5-7, RETRANSMIT and LAST: attempt 0
        assertEquals(0, SprayExtendedTransportHeader.attempt(s, AT));
        assertEquals(0, SprayExtendedTransportHeader.attemptFlags(8), "attempt 8 travels as 0");
        assertEquals(SprayExtendedTransportHeader.attemptFlags(1), SprayExtendedTransportHeader.attemptFlags(9));
        for (int than = 0; than < 8; than++)
        {
            for (int ahead = 0; ahead < 8; ahead++)
            {
                final int attempt = (than + ahead) & 7;
                assertEquals(ahead >= 1 && ahead <= 3, SprayExtendedTransportHeader.isLaterAttempt(attempt, than),
                    attempt + " against " + than);
            }
        }
    }
}
