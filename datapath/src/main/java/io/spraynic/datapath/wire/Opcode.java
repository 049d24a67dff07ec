package io.spraynic.datapath.wire;

/**
 * BTH opcodes of RoCEv2 (InfiniBand Architecture Specification Volume 1, table 38 and Annex A17).
 * <p>
 * The top three bits select the transport service ({@link #RC} 000, {@link #UC} 001, RD 010, {@link #UD} 011,
 * CNP 100, XRC 101, manufacturer-specific 110 and 111), the low five bits the operation. Which extension
 * headers each opcode carries is in {@link OpcodeTable}. RD and XRC opcodes are not registered (no RoCEv2
 * NIC we interoperate with speaks them): they parse as {@link MalformedReason#UNKNOWN_OPCODE}.
 * Manufacturer-specific opcodes {@link #MANUFACTURER_FIRST}..{@link #MANUFACTURER_LAST} are reserved for
 * our spray transport and are registered with {@link OpcodeTable#withManufacturerOpcode}.
 */
public final class Opcode
{
    /** Transport service prefix: Reliable Connection. */
    public static final int RC = 0x00;
    /** Transport service prefix: Unreliable Connection. */
    public static final int UC = 0x20;
    /** Transport service prefix: Reliable Datagram (not supported). */
    public static final int RD = 0x40;
    /** Transport service prefix: Unreliable Datagram. */
    public static final int UD = 0x60;
    /** Transport service prefix: Congestion Notification. */
    public static final int CNP_SERVICE = 0x80;
    /** Transport service prefix: Extended Reliable Connection (not supported). */
    public static final int XRC = 0xA0;

    /** Operation: SEND First. */
    public static final int SEND_FIRST = 0x00;
    /** Operation: SEND Middle. */
    public static final int SEND_MIDDLE = 0x01;
    /** Operation: SEND Last. */
    public static final int SEND_LAST = 0x02;
    /** Operation: SEND Last with Immediate (ImmDt). */
    public static final int SEND_LAST_WITH_IMMEDIATE = 0x03;
    /** Operation: SEND Only. */
    public static final int SEND_ONLY = 0x04;
    /** Operation: SEND Only with Immediate (ImmDt). */
    public static final int SEND_ONLY_WITH_IMMEDIATE = 0x05;
    /** Operation: RDMA WRITE First (RETH). */
    public static final int RDMA_WRITE_FIRST = 0x06;
    /** Operation: RDMA WRITE Middle. */
    public static final int RDMA_WRITE_MIDDLE = 0x07;
    /** Operation: RDMA WRITE Last. */
    public static final int RDMA_WRITE_LAST = 0x08;
    /** Operation: RDMA WRITE Last with Immediate (ImmDt). */
    public static final int RDMA_WRITE_LAST_WITH_IMMEDIATE = 0x09;
    /** Operation: RDMA WRITE Only (RETH). */
    public static final int RDMA_WRITE_ONLY = 0x0A;
    /** Operation: RDMA WRITE Only with Immediate (RETH, ImmDt). */
    public static final int RDMA_WRITE_ONLY_WITH_IMMEDIATE = 0x0B;
    /** Operation: RDMA READ Request (RETH, no payload). */
    public static final int RDMA_READ_REQUEST = 0x0C;
    /** Operation: RDMA READ Response First (AETH). */
    public static final int RDMA_READ_RESPONSE_FIRST = 0x0D;
    /** Operation: RDMA READ Response Middle. */
    public static final int RDMA_READ_RESPONSE_MIDDLE = 0x0E;
    /** Operation: RDMA READ Response Last (AETH). */
    public static final int RDMA_READ_RESPONSE_LAST = 0x0F;
    /** Operation: RDMA READ Response Only (AETH). */
    public static final int RDMA_READ_RESPONSE_ONLY = 0x10;
    /** Operation: Acknowledge (AETH, no payload). */
    public static final int ACKNOWLEDGE = 0x11;
    /** Operation: ATOMIC Acknowledge (AETH, AtomicAckETH, no payload). */
    public static final int ATOMIC_ACKNOWLEDGE = 0x12;
    /** Operation: CmpSwap (AtomicETH, no payload). */
    public static final int COMPARE_SWAP = 0x13;
    /** Operation: FetchAdd (AtomicETH, no payload). */
    public static final int FETCH_ADD = 0x14;
    /** Operation: SEND Last with Invalidate (IETH). */
    public static final int SEND_LAST_WITH_INVALIDATE = 0x16;
    /** Operation: SEND Only with Invalidate (IETH). */
    public static final int SEND_ONLY_WITH_INVALIDATE = 0x17;

    /** RC SEND First. */
    public static final int RC_SEND_FIRST = RC | SEND_FIRST;
    /** RC SEND Middle. */
    public static final int RC_SEND_MIDDLE = RC | SEND_MIDDLE;
    /** RC SEND Last. */
    public static final int RC_SEND_LAST = RC | SEND_LAST;
    /** RC SEND Last with Immediate. */
    public static final int RC_SEND_LAST_WITH_IMMEDIATE = RC | SEND_LAST_WITH_IMMEDIATE;
    /** RC SEND Only. */
    public static final int RC_SEND_ONLY = RC | SEND_ONLY;
    /** RC SEND Only with Immediate. */
    public static final int RC_SEND_ONLY_WITH_IMMEDIATE = RC | SEND_ONLY_WITH_IMMEDIATE;
    /** RC RDMA WRITE First. */
    public static final int RC_RDMA_WRITE_FIRST = RC | RDMA_WRITE_FIRST;
    /** RC RDMA WRITE Middle. */
    public static final int RC_RDMA_WRITE_MIDDLE = RC | RDMA_WRITE_MIDDLE;
    /** RC RDMA WRITE Last. */
    public static final int RC_RDMA_WRITE_LAST = RC | RDMA_WRITE_LAST;
    /** RC RDMA WRITE Last with Immediate. */
    public static final int RC_RDMA_WRITE_LAST_WITH_IMMEDIATE = RC | RDMA_WRITE_LAST_WITH_IMMEDIATE;
    /** RC RDMA WRITE Only. */
    public static final int RC_RDMA_WRITE_ONLY = RC | RDMA_WRITE_ONLY;
    /** RC RDMA WRITE Only with Immediate. */
    public static final int RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE = RC | RDMA_WRITE_ONLY_WITH_IMMEDIATE;
    /** RC RDMA READ Request. */
    public static final int RC_RDMA_READ_REQUEST = RC | RDMA_READ_REQUEST;
    /** RC RDMA READ Response First. */
    public static final int RC_RDMA_READ_RESPONSE_FIRST = RC | RDMA_READ_RESPONSE_FIRST;
    /** RC RDMA READ Response Middle. */
    public static final int RC_RDMA_READ_RESPONSE_MIDDLE = RC | RDMA_READ_RESPONSE_MIDDLE;
    /** RC RDMA READ Response Last. */
    public static final int RC_RDMA_READ_RESPONSE_LAST = RC | RDMA_READ_RESPONSE_LAST;
    /** RC RDMA READ Response Only. */
    public static final int RC_RDMA_READ_RESPONSE_ONLY = RC | RDMA_READ_RESPONSE_ONLY;
    /** RC Acknowledge. */
    public static final int RC_ACKNOWLEDGE = RC | ACKNOWLEDGE;
    /** RC ATOMIC Acknowledge. */
    public static final int RC_ATOMIC_ACKNOWLEDGE = RC | ATOMIC_ACKNOWLEDGE;
    /** RC CmpSwap. */
    public static final int RC_COMPARE_SWAP = RC | COMPARE_SWAP;
    /** RC FetchAdd. */
    public static final int RC_FETCH_ADD = RC | FETCH_ADD;
    /** RC SEND Last with Invalidate. */
    public static final int RC_SEND_LAST_WITH_INVALIDATE = RC | SEND_LAST_WITH_INVALIDATE;
    /** RC SEND Only with Invalidate. */
    public static final int RC_SEND_ONLY_WITH_INVALIDATE = RC | SEND_ONLY_WITH_INVALIDATE;
    /** UD SEND Only (DETH). */
    public static final int UD_SEND_ONLY = UD | SEND_ONLY;
    /** UD SEND Only with Immediate (DETH, ImmDt). */
    public static final int UD_SEND_ONLY_WITH_IMMEDIATE = UD | SEND_ONLY_WITH_IMMEDIATE;
    /** RoCEv2 Congestion Notification Packet (16 reserved bytes after the BTH). */
    public static final int CNP = 0x81;

    /** First manufacturer-specific opcode. */
    public static final int MANUFACTURER_FIRST = 0xC0;
    /** Last manufacturer-specific opcode. */
    public static final int MANUFACTURER_LAST = 0xFF;

    private static final String[] OPERATION_NAMES = {
        "SEND_FIRST", "SEND_MIDDLE", "SEND_LAST", "SEND_LAST_WITH_IMMEDIATE", "SEND_ONLY", "SEND_ONLY_WITH_IMMEDIATE",
        "RDMA_WRITE_FIRST", "RDMA_WRITE_MIDDLE", "RDMA_WRITE_LAST", "RDMA_WRITE_LAST_WITH_IMMEDIATE",
        "RDMA_WRITE_ONLY", "RDMA_WRITE_ONLY_WITH_IMMEDIATE", "RDMA_READ_REQUEST", "RDMA_READ_RESPONSE_FIRST",
        "RDMA_READ_RESPONSE_MIDDLE", "RDMA_READ_RESPONSE_LAST", "RDMA_READ_RESPONSE_ONLY", "ACKNOWLEDGE",
        "ATOMIC_ACKNOWLEDGE", "COMPARE_SWAP", "FETCH_ADD", "RESERVED_15", "SEND_LAST_WITH_INVALIDATE",
        "SEND_ONLY_WITH_INVALIDATE",
    };

    private Opcode()
    {
    }

    /**
     * @param opcode an opcode (0-255).
     * @return the transport service prefix (top three bits), e.g. {@link #RC}.
     */
    public static int service(final int opcode)
    {
        return opcode & 0xE0;
    }

    /**
     * @param opcode an opcode (0-255).
     * @return the operation (low five bits), e.g. {@link #SEND_ONLY}.
     */
    public static int operation(final int opcode)
    {
        return opcode & 0x1F;
    }

    /**
     * @param opcode an opcode.
     * @return true if it is in the manufacturer-specific range 0xC0-0xFF.
     */
    public static boolean isManufacturerSpecific(final int opcode)
    {
        return opcode >= MANUFACTURER_FIRST && opcode <= MANUFACTURER_LAST;
    }

    /**
     * Names an opcode for humans, e.g. "RC_SEND_ONLY", "CNP", "MANUFACTURER_0xc1", "UNKNOWN_0x5f".
     * Allocates: not for the fast path.
     *
     * @param opcode an opcode (0-255).
     * @return its name.
     */
    public static String name(final int opcode)
    {
        if (opcode == CNP)
        {
            return "CNP";
        }
        if (isManufacturerSpecific(opcode))
        {
            return "MANUFACTURER_0x" + Integer.toHexString(opcode);
        }
        final String prefix = switch (service(opcode))
        {
            case RC -> "RC_";
            case UC -> "UC_";
            case RD -> "RD_";
            case UD -> "UD_";
            case XRC -> "XRC_";
            default -> null;
        };
        final int operation = operation(opcode);
        if (prefix == null || operation >= OPERATION_NAMES.length)
        {
            return "UNKNOWN_0x" + Integer.toHexString(opcode);
        }
        return prefix + OPERATION_NAMES[operation];
    }
}
