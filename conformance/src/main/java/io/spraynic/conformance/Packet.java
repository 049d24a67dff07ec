package io.spraynic.conformance;

import java.util.Arrays;

/**
 * One UDP payload (BTH to ICRC) as the suite received or built it, read by the offsets of docs/PROTOCOL.md's
 * tables: {@code h} is the offset of the first header after the BTH (S2.5), every integer big-endian.
 * Control path: allocates freely.
 */
final class Packet
{
    final byte[] bytes;
    /** Whether the ICRC the link recomputed matched the last four bytes. */
    final boolean icrcValid;
    /** The IPv4 TOS byte it arrived with (its low two bits the ECN field, S2.3), -1 when the socket did not say. */
    final int tos;
    /** When the ICRC is wrong: what else the link could tell about it (e.g. the IPv4 header it matches), or "". */
    String icrcNote = "";
    /** The UDP source port it came from (a path's route, S2.2, S7.7), -1 when not received from a socket. */
    int sourcePort = -1;
    /** When it arrived, on {@link System#nanoTime()}'s clock: the kernel's receive time for one from a socket. */
    long arrivalNanos = System.nanoTime();

    Packet(final byte[] bytes, final boolean icrcValid, final int tos)
    {
        this.bytes = bytes;
        this.icrcValid = icrcValid;
        this.tos = tos;
    }

    /** @return the ECN field it arrived with (0 Not-ECT, 1 ECT(1), 2 ECT(0), 3 CE), -1 when unknown. */
    int ecn()
    {
        return tos < 0 ? -1 : tos & 3;
    }

    int length()
    {
        return bytes.length;
    }

    int opcode()
    {
        return u8(bytes, 0);
    }

    int padCount()
    {
        return (u8(bytes, 1) >> 4) & 3;
    }

    int tver()
    {
        return u8(bytes, 1) & 0xF;
    }

    int destQp()
    {
        return u24(bytes, 5);
    }

    boolean ackReq()
    {
        return (u8(bytes, 8) & 0x80) != 0;
    }

    int psn()
    {
        return u24(bytes, 9);
    }

    /** @return whether the payload holds the opcode's headers (S3.1) and the ICRC. */
    boolean wholeHeaders()
    {
        final int headers = SprayWire.headerBytes(opcode());
        return headers >= 0 && bytes.length >= SprayWire.BTH_LENGTH + headers + SprayWire.ICRC_LENGTH;
    }

    /** @return a header field: {@code at} is its offset after the BTH. */
    int h8(final int at)
    {
        return u8(bytes, SprayWire.BTH_LENGTH + at);
    }

    int h16(final int at)
    {
        return u16(bytes, SprayWire.BTH_LENGTH + at);
    }

    int h24(final int at)
    {
        return u24(bytes, SprayWire.BTH_LENGTH + at);
    }

    int h32(final int at)
    {
        return u32(bytes, SprayWire.BTH_LENGTH + at);
    }

    long h64(final int at)
    {
        return u64(bytes, SprayWire.BTH_LENGTH + at);
    }

    /** @return {@code length} header bytes from {@code at}. */
    byte[] hBytes(final int at, final int length)
    {
        return Arrays.copyOfRange(bytes, SprayWire.BTH_LENGTH + at, SprayWire.BTH_LENGTH + at + length);
    }

    /** @return the payload (after the headers, before pad and ICRC). */
    byte[] payload()
    {
        final int from = SprayWire.BTH_LENGTH + SprayWire.headerBytes(opcode());
        final int to = bytes.length - SprayWire.ICRC_LENGTH - padCount();
        return to <= from ? new byte[0] : Arrays.copyOfRange(bytes, from, to);
    }

    /** @return the tag at the end of a control header (S12.3). */
    long controlTag()
    {
        return h64(SprayWire.headerBytes(opcode()) - SprayWire.TAG_LENGTH);
    }

    /** @return whether a control packet's tag is SipHash-2-4 of its BTH and header with {@code key}. */
    boolean controlTagValid(final long[] key)
    {
        final int covered = SprayWire.BTH_LENGTH + SprayWire.headerBytes(opcode()) - SprayWire.TAG_LENGTH;
        return SipHash24.hash(key[0], key[1], bytes, 0, covered) == controlTag();
    }

    @Override
    public String toString()
    {
        return SprayWire.opcodeName(opcode()) + "{destQp=0x" + Integer.toHexString(destQp()) + ", psn=" + psn() +
            ", length=" + bytes.length + (icrcValid ? "" : ", BAD ICRC" + (icrcNote.isEmpty() ? "" : ": " + icrcNote)) + "}";
    }

    static int u8(final byte[] b, final int at)
    {
        return b[at] & 0xFF;
    }

    static int u16(final byte[] b, final int at)
    {
        return (u8(b, at) << 8) | u8(b, at + 1);
    }

    static int u24(final byte[] b, final int at)
    {
        return (u8(b, at) << 16) | (u8(b, at + 1) << 8) | u8(b, at + 2);
    }

    static int u32(final byte[] b, final int at)
    {
        return (u16(b, at) << 16) | u16(b, at + 2);
    }

    static long u64(final byte[] b, final int at)
    {
        return ((long)u32(b, at) << 32) | (u32(b, at + 4) & 0xFFFF_FFFFL);
    }
}
