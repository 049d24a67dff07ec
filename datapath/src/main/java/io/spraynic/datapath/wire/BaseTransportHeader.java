package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the InfiniBand Base Transport Header (BTH), 12 bytes, present in every RoCEv2 packet.
 * <pre>
 *  0                   1                   2                   3
 *  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |    OpCode     |S|M|Pad| TVer  |        Partition Key          |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |F|B|  resv6a   |             Destination QP                    |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * |A|   resv7     |        Packet Sequence Number                 |
 * +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
 * </pre>
 * S = solicited event, M = migration request, Pad = pad count (bytes added to align the payload to 4),
 * TVer = transport header version (0). Byte 4 is "resv8a" in the RoCEv2 annex; InfiniBand uses its two
 * top bits as FECN/BECN. It is masked to all ones in the ICRC.
 *
 * @see <a href="https://www.infinibandta.org/ibta-specification/">InfiniBand Architecture Specification
 * Volume 1, section 9.2 (BTH) and Annex A17 (RoCEv2)</a>
 */
public final class BaseTransportHeader
{
    /** Offset of the opcode. */
    public static final int OPCODE_OFFSET = 0;
    /** Offset of the byte holding S, M, pad count and TVer. */
    public static final int FLAGS_OFFSET = 1;
    /** Offset of the partition key. */
    public static final int PKEY_OFFSET = 2;
    /** Offset of resv8a (FECN/BECN in InfiniBand). */
    public static final int RESV8A_OFFSET = 4;
    /** Offset of the 24-bit destination QP. */
    public static final int DEST_QP_OFFSET = 5;
    /** Offset of the byte holding the ack-request bit and resv7. */
    public static final int ACK_REQ_OFFSET = 8;
    /** Offset of the 24-bit packet sequence number. */
    public static final int PSN_OFFSET = 9;
    /** Length of the header. */
    public static final int LENGTH = 12;

    /** Solicited-event bit in the flags byte. */
    public static final int SOLICITED_FLAG = 0x80;
    /** Migration-request bit in the flags byte. */
    public static final int MIG_REQ_FLAG = 0x40;
    /** Ack-request bit in its byte. */
    public static final int ACK_REQ_FLAG = 0x80;
    /** FECN bit in resv8a. */
    public static final int FECN_FLAG = 0x80;
    /** BECN bit in resv8a. */
    public static final int BECN_FLAG = 0x40;
    /** Default partition key (full membership of the default partition). */
    public static final int DEFAULT_PKEY = 0xFFFF;
    /** Mask of a 24-bit PSN. */
    public static final int PSN_MASK = 0xFF_FFFF;
    /** Mask of a 24-bit QP number. */
    public static final int QP_MASK = 0xFF_FFFF;

    private BaseTransportHeader()
    {
    }

    /** @param s frame memory. @param o offset of the BTH. @return the opcode (0-255). */
    public static int opcode(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + OPCODE_OFFSET);
    }

    /** @param s frame memory. @param o offset of the BTH. @param opcode the opcode. */
    public static void opcode(final MemorySegment s, final long o, final int opcode)
    {
        Wire.put8(s, o + OPCODE_OFFSET, opcode);
    }

    /** @param s frame memory. @param o offset of the BTH. @return the flags byte (S, M, pad count, TVer). */
    public static int flags(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + FLAGS_OFFSET);
    }

    /**
     * @param s         frame memory.
     * @param o         offset of the BTH.
     * @param solicited solicited event.
     * @param migReq    migration request.
     * @param padCount  pad count (0-3).
     * @param tver      transport header version (0-15).
     */
    public static void flags(final MemorySegment s, final long o, final boolean solicited, final boolean migReq,
        final int padCount, final int tver)
    {
        Wire.put8(s, o + FLAGS_OFFSET, (solicited ? SOLICITED_FLAG : 0) | (migReq ? MIG_REQ_FLAG : 0) |
            ((padCount & 0x3) << 4) | (tver & 0xF));
    }

    /** @param s frame memory. @param o offset of the BTH. @return the solicited-event bit. */
    public static boolean solicited(final MemorySegment s, final long o)
    {
        return (flags(s, o) & SOLICITED_FLAG) != 0;
    }

    /** @param s frame memory. @param o offset of the BTH. @return the migration-request bit. */
    public static boolean migReq(final MemorySegment s, final long o)
    {
        return (flags(s, o) & MIG_REQ_FLAG) != 0;
    }

    /** @param s frame memory. @param o offset of the BTH. @return the pad count (0-3). */
    public static int padCount(final MemorySegment s, final long o)
    {
        return (flags(s, o) >>> 4) & 0x3;
    }

    /** @param s frame memory. @param o offset of the BTH. @return the transport header version (0-15). */
    public static int tver(final MemorySegment s, final long o)
    {
        return flags(s, o) & 0xF;
    }

    /** @param s frame memory. @param o offset of the BTH. @return the partition key. */
    public static int pkey(final MemorySegment s, final long o)
    {
        return Wire.u16(s, o + PKEY_OFFSET);
    }

    /** @param s frame memory. @param o offset of the BTH. @param pkey the partition key. */
    public static void pkey(final MemorySegment s, final long o, final int pkey)
    {
        Wire.put16(s, o + PKEY_OFFSET, pkey);
    }

    /** @param s frame memory. @param o offset of the BTH. @return resv8a (FECN bit 7, BECN bit 6 in InfiniBand). */
    public static int resv8a(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + RESV8A_OFFSET);
    }

    /** @param s frame memory. @param o offset of the BTH. @param value resv8a. */
    public static void resv8a(final MemorySegment s, final long o, final int value)
    {
        Wire.put8(s, o + RESV8A_OFFSET, value);
    }

    /** @param s frame memory. @param o offset of the BTH. @return the 24-bit destination QP. */
    public static int destQp(final MemorySegment s, final long o)
    {
        return Wire.u24(s, o + DEST_QP_OFFSET);
    }

    /** @param s frame memory. @param o offset of the BTH. @param qp the 24-bit destination QP. */
    public static void destQp(final MemorySegment s, final long o, final int qp)
    {
        Wire.put24(s, o + DEST_QP_OFFSET, qp);
    }

    /** @param s frame memory. @param o offset of the BTH. @return the ack-request bit. */
    public static boolean ackReq(final MemorySegment s, final long o)
    {
        return (Wire.u8(s, o + ACK_REQ_OFFSET) & ACK_REQ_FLAG) != 0;
    }

    /**
     * Sets the ack-request bit and clears resv7.
     *
     * @param s      frame memory.
     * @param o      offset of the BTH.
     * @param ackReq the ack-request bit.
     */
    public static void ackReq(final MemorySegment s, final long o, final boolean ackReq)
    {
        Wire.put8(s, o + ACK_REQ_OFFSET, ackReq ? ACK_REQ_FLAG : 0);
    }

    /** @param s frame memory. @param o offset of the BTH. @return resv7, the 7 bits after the ack-request bit. */
    public static int resv7(final MemorySegment s, final long o)
    {
        return Wire.u8(s, o + ACK_REQ_OFFSET) & 0x7F;
    }

    /** @param s frame memory. @param o offset of the BTH. @return the 24-bit packet sequence number. */
    public static int psn(final MemorySegment s, final long o)
    {
        return Wire.u24(s, o + PSN_OFFSET);
    }

    /** @param s frame memory. @param o offset of the BTH. @param psn the 24-bit packet sequence number. */
    public static void psn(final MemorySegment s, final long o, final int psn)
    {
        Wire.put24(s, o + PSN_OFFSET, psn);
    }

    /**
     * Writes a whole BTH.
     *
     * @param s         frame memory.
     * @param o         offset of the BTH.
     * @param opcode    opcode.
     * @param solicited solicited event.
     * @param migReq    migration request.
     * @param padCount  pad count (0-3).
     * @param pkey      partition key.
     * @param destQp    24-bit destination QP.
     * @param ackReq    ack request.
     * @param psn       24-bit packet sequence number.
     */
    public static void write(final MemorySegment s, final long o, final int opcode, final boolean solicited,
        final boolean migReq, final int padCount, final int pkey, final int destQp, final boolean ackReq, final int psn)
    {
        opcode(s, o, opcode);
        flags(s, o, solicited, migReq, padCount, 0);
        pkey(s, o, pkey);
        Wire.put32(s, o + RESV8A_OFFSET, destQp & QP_MASK);
        Wire.put32(s, o + ACK_REQ_OFFSET, (ackReq ? 0x8000_0000 : 0) | (psn & PSN_MASK));
    }

    /**
     * Describes a header for debugging.
     *
     * @param s frame memory.
     * @param o offset of the BTH (at least {@link #LENGTH} bytes).
     * @return the header's fields as text.
     */
    public static String toString(final MemorySegment s, final long o)
    {
        return "BTH{opcode=" + Opcode.name(opcode(s, o)) + "(0x" + Integer.toHexString(opcode(s, o)) +
            "), se=" + solicited(s, o) + ", m=" + migReq(s, o) + ", pad=" + padCount(s, o) + ", tver=" + tver(s, o) +
            ", pkey=0x" + Integer.toHexString(pkey(s, o)) + ", resv8a=0x" + Integer.toHexString(resv8a(s, o)) +
            ", destQp=0x" + Integer.toHexString(destQp(s, o)) + ", ackReq=" + ackReq(s, o) + ", psn=" + psn(s, o) + "}";
    }
}
