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
    /** S10.2-3: the READs this end serves at once and its inbound message window; 0: not advertised (the suite's). */
    int reads;
    int window;
    long token = RANDOM.nextLong();
    byte[] cookie = new byte[16];
    HandshakeKeys keys = HandshakeKeys.generate();
    /** Bytes of payload: the 64-byte handshake block, or fewer to send it cut short. */
    int payloadLength = SprayWire.HSB_LENGTH;
    /** The pre-shared key (S12.2): the CONNECT carries a proof made with it; null: no proof (zeros). */
    byte[] psk;
    /** Bits to flip in the proof: a CONNECT whose proof does not verify. */
    int proofCorruption;

    /** @return the packet before its ICRC. */
    byte[] frame()
    {
        final FrameBuilder b = FrameBuilder.bth(SprayWire.CONNECT, destQp, 0, false)
            .u8(version).u8(flags).u8(paths).u8(planes).u16(mtu).u16(streams & 0xFFFF)
            .u8(0).u24(senderCid).u8(0).u24(initialPsn).u32(ingressMbps).u64(token).u8(0).u8(reads).u16(window).u64(0);
        final byte[] hsb = new byte[SprayWire.HSB_LENGTH];
        System.arraycopy(cookie, 0, hsb, 0, 16);
        System.arraycopy(keys.publicKey, 0, hsb, 16, HandshakeKeys.PUBLIC_KEY_LENGTH);
        b.bytes(java.util.Arrays.copyOf(hsb, payloadLength));
        final byte[] frame = b.bytes();
        if (null != psk && payloadLength >= SprayWire.HSB_LENGTH)
        {
            final byte[] proof = proof(psk, frame, frame.length);
            proof[0] ^= (byte)proofCorruption;
            System.arraycopy(proof, 0, frame, PROOF_AT, PROOF_LENGTH);
        }
        return frame;
    }

    /** Where the HSB's proof lies in a CONNECT or CONNECT_ACK (S5.6): after the BTH, the CONH, cookie and key. */
    static final int PROOF_AT = SprayWire.BTH_LENGTH + SprayWire.CONH_LENGTH + 48;
    static final int PROOF_LENGTH = 16;

    /**
     * S12.2, S5.6: the first 16 bytes of HMAC-SHA256(PSK, the packet from the BTH's first byte to the payload's
     * last, with the proof zeroed; pad and ICRC excluded).
     *
     * @param end where the payload ends in {@code packet} (before pad and ICRC).
     */
    static byte[] proof(final byte[] psk, final byte[] packet, final int end)
    {
        final byte[] covered = java.util.Arrays.copyOf(packet, end);
        java.util.Arrays.fill(covered, PROOF_AT, PROOF_AT + PROOF_LENGTH, (byte)0);
        return java.util.Arrays.copyOf(HandshakeKeys.hmac(psk, covered), PROOF_LENGTH);
    }

    static long randomLong()
    {
        return RANDOM.nextLong();
    }
}
