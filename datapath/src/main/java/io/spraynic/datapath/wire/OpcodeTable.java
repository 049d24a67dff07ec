package io.spraynic.datapath.wire;

import java.util.Arrays;

/**
 * Which opcodes the parser accepts and which extension headers each carries, in packet order:
 * DETH, RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH (IBA vol. 1 section 9.2 and table 38),
 * or for a manufacturer-specific opcode a fixed-length header of its own.
 * <p>
 * A table is immutable; {@link #withManufacturerOpcode} returns a copy with one more opcode. Lookups are
 * an array read: {@link #entry(int)} returns an int of {@code HAS_*} flags and, for manufacturer
 * opcodes, the custom header length in bits 16..23.
 * <pre>
 * opcode                              RETH AETH ImmDt others   payload
 * RC/UC SEND First/Middle/Last                                  yes
 * RC/UC SEND Last/Only with Immediate           x               yes
 * RC/UC SEND Only                                               yes
 * RC/UC RDMA WRITE First/Only          x                        yes
 * RC/UC RDMA WRITE Middle/Last                                  yes
 * RC/UC RDMA WRITE Last with Imm                x               yes
 * RC/UC RDMA WRITE Only with Imm       x        x               yes
 * RC RDMA READ Request                 x                        no
 * RC RDMA READ Response First/Last/Only     x                   yes
 * RC RDMA READ Response Middle                                  yes
 * RC Acknowledge                            x                   no
 * RC ATOMIC Acknowledge                     x        AtomicAck  no
 * RC CmpSwap / FetchAdd                              AtomicETH  no
 * RC SEND Last/Only with Invalidate                  IETH       yes
 * UD SEND Only                                       DETH       yes
 * UD SEND Only with Immediate                   x    DETH       yes
 * CNP (0x81)                                         16 B resv  no
 * </pre>
 */
public final class OpcodeTable
{
    /** The opcode is accepted. */
    public static final int REGISTERED = 1 << 31;
    /** A RETH follows the BTH (after any DETH). */
    public static final int HAS_RETH = 1;
    /** An AETH follows. */
    public static final int HAS_AETH = 1 << 1;
    /** An ImmDt follows. */
    public static final int HAS_IMMDT = 1 << 2;
    /** An IETH follows. */
    public static final int HAS_IETH = 1 << 3;
    /** A DETH follows the BTH. */
    public static final int HAS_DETH = 1 << 4;
    /** An AtomicETH follows. */
    public static final int HAS_ATOMIC_ETH = 1 << 5;
    /** An AtomicAckETH follows the AETH. */
    public static final int HAS_ATOMIC_ACK_ETH = 1 << 6;
    /** The packet may carry payload; if clear, payload and pad count must be zero. */
    public static final int HAS_PAYLOAD = 1 << 7;
    /** The 16 reserved bytes of a CNP follow the BTH. */
    public static final int HAS_CNP_BODY = 1 << 8;
    /** Shift of the custom header length (manufacturer opcodes) in an entry. */
    public static final int CUSTOM_LENGTH_SHIFT = 16;
    /** Mask of the custom header length after shifting. */
    public static final int CUSTOM_LENGTH_MASK = 0xFF;

    /** The standard RoCEv2 opcodes: RC, UC, UD and CNP. */
    public static final OpcodeTable ROCE_V2 = standard();

    private final int[] entries;

    private OpcodeTable(final int[] entries)
    {
        this.entries = entries;
    }

    private static OpcodeTable standard()
    {
        final int[] e = new int[256];
        for (final int service : new int[] {Opcode.RC, Opcode.UC})
        {
            e[service | Opcode.SEND_FIRST] = HAS_PAYLOAD;
            e[service | Opcode.SEND_MIDDLE] = HAS_PAYLOAD;
            e[service | Opcode.SEND_LAST] = HAS_PAYLOAD;
            e[service | Opcode.SEND_LAST_WITH_IMMEDIATE] = HAS_IMMDT | HAS_PAYLOAD;
            e[service | Opcode.SEND_ONLY] = HAS_PAYLOAD;
            e[service | Opcode.SEND_ONLY_WITH_IMMEDIATE] = HAS_IMMDT | HAS_PAYLOAD;
            e[service | Opcode.RDMA_WRITE_FIRST] = HAS_RETH | HAS_PAYLOAD;
            e[service | Opcode.RDMA_WRITE_MIDDLE] = HAS_PAYLOAD;
            e[service | Opcode.RDMA_WRITE_LAST] = HAS_PAYLOAD;
            e[service | Opcode.RDMA_WRITE_LAST_WITH_IMMEDIATE] = HAS_IMMDT | HAS_PAYLOAD;
            e[service | Opcode.RDMA_WRITE_ONLY] = HAS_RETH | HAS_PAYLOAD;
            e[service | Opcode.RDMA_WRITE_ONLY_WITH_IMMEDIATE] = HAS_RETH | HAS_IMMDT | HAS_PAYLOAD;
        }
        e[Opcode.RC_RDMA_READ_REQUEST] = HAS_RETH;
        e[Opcode.RC_RDMA_READ_RESPONSE_FIRST] = HAS_AETH | HAS_PAYLOAD;
        e[Opcode.RC_RDMA_READ_RESPONSE_MIDDLE] = HAS_PAYLOAD;
        e[Opcode.RC_RDMA_READ_RESPONSE_LAST] = HAS_AETH | HAS_PAYLOAD;
        e[Opcode.RC_RDMA_READ_RESPONSE_ONLY] = HAS_AETH | HAS_PAYLOAD;
        e[Opcode.RC_ACKNOWLEDGE] = HAS_AETH;
        e[Opcode.RC_ATOMIC_ACKNOWLEDGE] = HAS_AETH | HAS_ATOMIC_ACK_ETH;
        e[Opcode.RC_COMPARE_SWAP] = HAS_ATOMIC_ETH;
        e[Opcode.RC_FETCH_ADD] = HAS_ATOMIC_ETH;
        e[Opcode.RC_SEND_LAST_WITH_INVALIDATE] = HAS_IETH | HAS_PAYLOAD;
        e[Opcode.RC_SEND_ONLY_WITH_INVALIDATE] = HAS_IETH | HAS_PAYLOAD;
        e[Opcode.UD_SEND_ONLY] = HAS_DETH | HAS_PAYLOAD;
        e[Opcode.UD_SEND_ONLY_WITH_IMMEDIATE] = HAS_DETH | HAS_IMMDT | HAS_PAYLOAD;
        e[Opcode.CNP] = HAS_CNP_BODY;
        for (int i = 0; i < e.length; i++)
        {
            if (e[i] != 0)
            {
                e[i] |= REGISTERED;
            }
        }
        return new OpcodeTable(e);
    }

    /**
     * Returns a copy of this table that also accepts a manufacturer-specific opcode.
     *
     * @param opcode       0xC0-0xFF.
     * @param headerLength length of the opcode's own extension header after the BTH (0-252, a multiple of 4).
     * @param payload      whether packets with this opcode may carry payload.
     * @return the new table.
     */
    public OpcodeTable withManufacturerOpcode(final int opcode, final int headerLength, final boolean payload)
    {
        if (!Opcode.isManufacturerSpecific(opcode))
        {
            throw new IllegalArgumentException("not a manufacturer-specific opcode: 0x" + Integer.toHexString(opcode));
        }
        if (headerLength < 0 || headerLength > 252 || (headerLength & 3) != 0)
        {
            throw new IllegalArgumentException("header length must be a multiple of 4 in 0..252: " + headerLength);
        }
        final int[] copy = Arrays.copyOf(entries, entries.length);
        copy[opcode] = REGISTERED | (payload ? HAS_PAYLOAD : 0) | (headerLength << CUSTOM_LENGTH_SHIFT);
        return new OpcodeTable(copy);
    }

    /**
     * @param opcode 0-255.
     * @return the opcode's entry: {@code HAS_*} flags, 0 if not registered.
     */
    public int entry(final int opcode)
    {
        return entries[opcode & 0xFF];
    }

    /**
     * @param opcode 0-255.
     * @return true if the parser accepts it.
     */
    public boolean isRegistered(final int opcode)
    {
        return (entry(opcode) & REGISTERED) != 0;
    }

    /**
     * @param opcode a registered opcode.
     * @return total length of its extension headers after the BTH.
     */
    public int extensionHeadersLength(final int opcode)
    {
        return extensionHeadersLengthOf(entry(opcode));
    }

    /**
     * @param entry an entry from {@link #entry(int)}.
     * @return total length of the extension headers it describes.
     */
    public static int extensionHeadersLengthOf(final int entry)
    {
        int length = (entry >>> CUSTOM_LENGTH_SHIFT) & CUSTOM_LENGTH_MASK;
        if ((entry & HAS_DETH) != 0)
        {
            length += DatagramExtendedTransportHeader.LENGTH;
        }
        if ((entry & HAS_RETH) != 0)
        {
            length += RdmaExtendedTransportHeader.LENGTH;
        }
        if ((entry & HAS_ATOMIC_ETH) != 0)
        {
            length += AtomicExtendedTransportHeader.LENGTH;
        }
        if ((entry & HAS_AETH) != 0)
        {
            length += AckExtendedTransportHeader.LENGTH;
        }
        if ((entry & HAS_ATOMIC_ACK_ETH) != 0)
        {
            length += AtomicAckExtendedTransportHeader.LENGTH;
        }
        if ((entry & HAS_IMMDT) != 0)
        {
            length += ImmediateDataHeader.LENGTH;
        }
        if ((entry & HAS_IETH) != 0)
        {
            length += InvalidateExtendedTransportHeader.LENGTH;
        }
        if ((entry & HAS_CNP_BODY) != 0)
        {
            length += CongestionNotificationPacket.LENGTH;
        }
        return length;
    }
}
