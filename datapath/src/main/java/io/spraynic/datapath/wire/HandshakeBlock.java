package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the handshake block (HSB), the first 64 bytes of the payload of {@code SPRAY_CONNECT},
 * {@code SPRAY_CONNECT_RETRY} and {@code SPRAY_CONNECT_ACK} (docs/PROTOCOL.md S5.6, S12): the responder's
 * stateless cookie, the sender's ephemeral X25519 public key, and, with a pre-shared key, a MAC that proves
 * the sender holds it. In a CONNECT the address list (S5.5) follows the block.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                         cookie (128)                          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |              X25519 public key (256, RFC 7748 bytes)          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |                pre-shared-key proof (128)                     |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 */
public final class HandshakeBlock
{
    public static final int COOKIE_OFFSET = 0;
    public static final int COOKIE_LENGTH = 16;
    public static final int PUBLIC_KEY_OFFSET = 16;
    public static final int PUBLIC_KEY_LENGTH = 32;
    public static final int PROOF_OFFSET = 48;
    public static final int PROOF_LENGTH = 16;
    public static final int LENGTH = 64;

    private HandshakeBlock()
    {
    }

    public static void cookie(final MemorySegment s, final long o, final byte[] into)
    {
        MemorySegment.copy(s, Wire.BYTE, o + COOKIE_OFFSET, into, 0, COOKIE_LENGTH);
    }

    public static void writeCookie(final MemorySegment s, final long o, final byte[] cookie)
    {
        MemorySegment.copy(cookie, 0, s, Wire.BYTE, o + COOKIE_OFFSET, COOKIE_LENGTH);
    }

    public static void publicKey(final MemorySegment s, final long o, final byte[] into)
    {
        MemorySegment.copy(s, Wire.BYTE, o + PUBLIC_KEY_OFFSET, into, 0, PUBLIC_KEY_LENGTH);
    }

    public static void writePublicKey(final MemorySegment s, final long o, final byte[] key)
    {
        MemorySegment.copy(key, 0, s, Wire.BYTE, o + PUBLIC_KEY_OFFSET, PUBLIC_KEY_LENGTH);
    }

    public static void proof(final MemorySegment s, final long o, final byte[] into)
    {
        MemorySegment.copy(s, Wire.BYTE, o + PROOF_OFFSET, into, 0, PROOF_LENGTH);
    }

    public static void writeProof(final MemorySegment s, final long o, final byte[] proof)
    {
        MemorySegment.copy(proof, 0, s, Wire.BYTE, o + PROOF_OFFSET, PROOF_LENGTH);
    }
}
