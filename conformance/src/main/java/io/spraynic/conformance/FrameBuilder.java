package io.spraynic.conformance;

import java.io.ByteArrayOutputStream;

/**
 * Writes a spray packet (BTH onwards, before pad and ICRC) field by field, big-endian (S2.5); the link adds pad and
 * ICRC. Deliberately lenient: it writes whatever it is told, so a check can build a malformed packet as easily as
 * a valid one. Control path: allocates.
 */
final class FrameBuilder
{
    private final ByteArrayOutputStream out = new ByteArrayOutputStream(128);
    private int padCount = -1; // -1: the pad that makes the payload a multiple of 4

    /**
     * The BTH (S3.2): SE, M 0, pad (filled in by {@link #bytes}), TVer, P_Key 0xFFFF, resv8a 0, DestQP, AckReq,
     * resv7 0, PSN.
     */
    static FrameBuilder bth(final int opcode, final int destQp, final int psn, final boolean ackReq)
    {
        return bth(opcode, destQp, psn, ackReq, 0, 0);
    }

    static FrameBuilder bth(final int opcode, final int destQp, final int psn, final boolean ackReq, final int tver,
        final int resv7)
    {
        final FrameBuilder b = new FrameBuilder();
        b.u8(opcode).u8(tver & 0xF).u16(SprayWire.PKEY_DEFAULT).u8(0).u24(destQp);
        b.u8((ackReq ? 0x80 : 0) | (resv7 & 0x7F)).u24(psn);
        return b;
    }

    FrameBuilder u8(final int v)
    {
        out.write(v);
        return this;
    }

    FrameBuilder u16(final int v)
    {
        return u8(v >>> 8).u8(v);
    }

    FrameBuilder u24(final int v)
    {
        return u8(v >>> 16).u16(v);
    }

    FrameBuilder u32(final int v)
    {
        return u16(v >>> 16).u16(v);
    }

    FrameBuilder u64(final long v)
    {
        return u32((int)(v >>> 32)).u32((int)v);
    }

    FrameBuilder bytes(final byte[] v)
    {
        out.writeBytes(v);
        return this;
    }

    FrameBuilder zeros(final int n)
    {
        return bytes(new byte[n]);
    }

    /** Forces the BTH pad count (default: what makes the payload a multiple of 4, pad bytes zero). */
    FrameBuilder padCount(final int pad)
    {
        this.padCount = pad;
        return this;
    }

    /** Appends the S12.3 tag of everything written so far, with {@code key}. */
    FrameBuilder controlTag(final long[] key)
    {
        final byte[] soFar = out.toByteArray();
        return u64(SipHash24.hash(key[0], key[1], soFar, 0, soFar.length));
    }

    /**
     * @return the packet with its pad bytes (PadCnt written into the BTH), without the ICRC.
     */
    byte[] bytes()
    {
        final byte[] body = out.toByteArray();
        final int pad = padCount >= 0 ? padCount : (4 - (body.length & 3)) & 3;
        final byte[] padded = java.util.Arrays.copyOf(body, body.length + (padCount >= 0 ? 0 : pad));
        padded[1] = (byte)((padded[1] & 0xCF) | (pad & 3) << 4);
        return padded;
    }
}
