package io.spraynic.conformance;

import java.security.SecureRandom;

/**
 * The fields of one {@code SPRAY_CONNECT} (S5.4, S5.6) the suite sends: valid by default, each changeable so a
 * check can send exactly one thing wrong.
 */
final class ConnectRequest
{
    private static final SecureRandom RANDOM = new SecureRandom();

    int version = SprayWire.VERSION;
    int flags;
    int paths = 2;
    int planes = 1;
    int mtu = 1024;
    int streams = 2;
    int destQp;
    int senderCid = 1 + RANDOM.nextInt(SprayWire.PSN_MASK - 1);
    int initialPsn = RANDOM.nextInt(SprayWire.PSN_MASK + 1);
    int ingressMbps = 10_000;
    long token = RANDOM.nextLong();
    byte[] cookie = new byte[16];
    HandshakeKeys keys = HandshakeKeys.generate();
    /** Bytes of payload: the 64-byte handshake block, or fewer to send it cut short. */
    int payloadLength = SprayWire.HSB_LENGTH;

    /** @return the packet before its ICRC. */
    byte[] frame()
    {
        final FrameBuilder b = FrameBuilder.bth(SprayWire.CONNECT, destQp, 0, false)
            .u8(version).u8(flags).u8(paths).u8(planes).u16(mtu).u16(streams & 0xFFFF)
            .u8(0).u24(senderCid).u8(0).u24(initialPsn).u32(ingressMbps).u64(token).u8(0).zeros(3).u64(0);
        final byte[] hsb = new byte[SprayWire.HSB_LENGTH];
        System.arraycopy(cookie, 0, hsb, 0, 16);
        System.arraycopy(keys.publicKey, 0, hsb, 16, HandshakeKeys.PUBLIC_KEY_LENGTH);
        b.bytes(java.util.Arrays.copyOf(hsb, payloadLength));
        return b.bytes();
    }

    static long randomLong()
    {
        return RANDOM.nextLong();
    }
}
