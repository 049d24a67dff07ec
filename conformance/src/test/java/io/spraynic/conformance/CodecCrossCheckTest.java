package io.spraynic.conformance;

import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.SipHash;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * The suite's own ICRC and SipHash (written from PROTOCOL.md and the papers) against published vectors and against
 * the implementation's: two independent codes that agree, so a disagreement the suite reports is the target's.
 */
class CodecCrossCheckTest
{
    @Test
    void shouldMatchTheSipHashPaperVector()
    {
        final byte[] message = new byte[15];
        for (int i = 0; i < message.length; i++)
        {
            message[i] = (byte)i;
        }
        // SipHash-2-4, key 00..0f, message 00..0e: a129ca6149be45e5 (Aumasson and Bernstein, appendix A)
        assertEquals(0xa129ca6149be45e5L, SipHash24.hash(0x0706050403020100L, 0x0f0e0d0c0b0a0908L, message, 0, 15));
        assertEquals(SipHash.hash(0x0706050403020100L, 0x0f0e0d0c0b0a0908L, MemorySegment.ofArray(message), 0, 15),
            SipHash24.hash(0x0706050403020100L, 0x0f0e0d0c0b0a0908L, message, 0, 15));
    }

    /**
     * The suite's message tag (S12.4) is SipHash-2-4 of the five words, byte for byte as the implementation's hash of
     * five words reads them, with the attempt in bits 48-50 of w0: a changed attempt changes the tag, and attempt 0
     * gives the tag of a word without it.
     */
    @Test
    void shouldPutTheAttemptInTheMessageTag()
    {
        final long[] key = {0x0706050403020100L, 0x0f0e0d0c0b0a0908L};
        final long w0 = (long)SprayWire.SEND << 56 | (long)7 << 32 | 0x8000_0001L;
        final long w1 = (long)4096 << 32 | 3;
        final long w3 = 0xABCDEFL;
        for (int attempt = 0; attempt < 8; attempt++)
        {
            assertEquals(SipHash.hash5(key[0], key[1], w0 | (long)attempt << 48, w1, 0, w3, 0),
                SprayWire.messageTag(key, SprayWire.SEND, attempt, 7, 0x8000_0001, 4096, 3, 0, 0, 0xABCDEF, 0));
        }
        assertEquals(SipHash.hash5(key[0], key[1], w0, w1, 0, w3, 0),
            SprayWire.messageTag(key, SprayWire.SEND, 8, 7, 0x8000_0001, 4096, 3, 0, 0, 0xABCDEF, 0), "modulo 8");
        assertNotEquals(SprayWire.messageTag(key, SprayWire.SEND, 0, 7, 1, 4096, 3, 0, 0, 0xABCDEF, 0),
            SprayWire.messageTag(key, SprayWire.SEND, 1, 7, 1, 4096, 3, 0, 0, 0xABCDEF, 0));
    }

    @Test
    void shouldComputeTheIcrcTheImplementationComputesOverTheCanonicalHeaders()
    {
        final byte[] body = FrameBuilder.bth(SprayWire.PROBE, 0xABCDEF, 77, true).u8(0).u8(0).u16(0).u8(0).u24(77)
            .u64(0x1122334455667788L).bytes();
        final int source = 0x7F000001;
        final int destination = 0x7F000002;
        final int sourcePort = 40_000;
        final int udpLength = 8 + body.length + 4;
        final ByteBuffer frame = ByteBuffer.allocate(20 + udpLength);
        frame.put((byte)0x45).put((byte)0x02).putShort((short)(20 + udpLength)).putShort((short)0).putShort((short)0x4000)
            .put((byte)64).put((byte)17).putShort((short)0x1234).putInt(source).putInt(destination);
        frame.putShort((short)sourcePort).putShort((short)4791).putShort((short)udpLength).putShort((short)0);
        frame.put(body);
        final MemorySegment s = MemorySegment.ofArray(frame.array());
        final int theirs = new Icrc().compute(s, 0, 4, 20, 20 + 8 + body.length);
        assertEquals(theirs, UdpLink.icrc(body, source, sourcePort, destination));
    }

    @Test
    void shouldComputeTheIcrcTheImplementationComputesOverAnIpv6Header() throws Exception
    {
        final byte[] body = FrameBuilder.bth(SprayWire.PROBE, 0xABCDEF, 77, true).u8(0).u8(0).u16(0).u8(0).u24(77)
            .u64(0x1122334455667788L).bytes();
        final byte[] source = java.net.InetAddress.getByName("fd00:95::2").getAddress();
        final byte[] destination = java.net.InetAddress.getByName("fd00:95::1").getAddress();
        final int sourcePort = 40_000;
        final int udpLength = 8 + body.length + 4;
        final ByteBuffer frame = ByteBuffer.allocate(40 + udpLength);
        // traffic class 0x02 (ECT(0)), a flow label, hop limit 64, a UDP checksum: S2.6 masks them all
        frame.putInt(0x6000_0000 | 0x02 << 20 | 0xBEEF5).putShort((short)udpLength).put((byte)17).put((byte)64)
            .put(source).put(destination);
        frame.putShort((short)sourcePort).putShort((short)4791).putShort((short)udpLength).putShort((short)0x5A5A);
        frame.put(body);
        final MemorySegment s = MemorySegment.ofArray(frame.array());
        final int theirs = new Icrc().compute(s, 0, 6, 40, 40 + 8 + body.length);
        assertEquals(theirs, UdpLink.icrc(body, source, sourcePort, destination));
    }
}
