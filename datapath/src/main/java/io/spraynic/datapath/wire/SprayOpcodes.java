package io.spraynic.datapath.wire;

/**
 * The spray transport's packet types: manufacturer-specific BTH opcodes (0xC0-0xDF) inside the
 * ordinary RoCEv2 encapsulation, so RoCEv2 tooling still frames them (docs/PROTOCOL.md S3.1), and
 * the opcode table that lets {@link RoceParser} accept them.
 */
public final class SprayOpcodes
{
    public static final int WRITE = 0xC0;
    public static final int WRITE_WITH_IMMEDIATE = 0xC1;
    public static final int SEND = 0xC2;
    public static final int SEND_WITH_IMMEDIATE = 0xC3;
    public static final int READ_REQUEST = 0xC4;
    public static final int READ_RESPONSE = 0xC5;
    /** The responder's stateless answer to a CONNECT without a valid cookie: CONH and a handshake block with the cookie (S9.1). */
    public static final int CONNECT_RETRY = 0xC6;
    /** The responder refuses a CONNECT: CONH with a reason (S9.1.1). */
    public static final int CONNECT_REJECT = 0xC7;
    public static final int ACK = 0xC8;
    public static final int PROBE = 0xC9;
    public static final int NACK = 0xCA;
    /** A sender asks the receiver whether a message was placed or refused (S9.3); carries a NAKH. */
    public static final int QUERY = 0xCB;
    public static final int CONNECT = 0xCC;
    public static final int CONNECT_ACK = 0xCD;
    public static final int CLOSE = 0xCE;
    public static final int CLOSE_ACK = 0xCF;

    /** Probe header: path, flags, reserved, next PSN (S5.2). */
    public static final int PROBE_HEADER_LENGTH = ProbeHeader.LENGTH;
    /** Negative acknowledgement header: syndrome, reserved, stream, MSN, RNR timer, refusal number (S5.3). */
    public static final int NACK_HEADER_LENGTH = NegativeAckHeader.LENGTH;
    /** Connection header (S5.4). */
    public static final int CONNECTION_HEADER_LENGTH = ConnectionHeader.LENGTH;

    /** Standard RoCEv2 plus every spray opcode with its header lengths (S3.1). */
    public static final OpcodeTable TABLE = OpcodeTable.ROCE_V2
        .withManufacturerOpcode(WRITE, SprayExtendedTransportHeader.LENGTH + RdmaExtendedTransportHeader.LENGTH, true)
        .withManufacturerOpcode(WRITE_WITH_IMMEDIATE,
            SprayExtendedTransportHeader.LENGTH + RdmaExtendedTransportHeader.LENGTH + ImmediateDataHeader.LENGTH, true)
        .withManufacturerOpcode(SEND, SprayExtendedTransportHeader.LENGTH, true)
        .withManufacturerOpcode(SEND_WITH_IMMEDIATE, SprayExtendedTransportHeader.LENGTH + ImmediateDataHeader.LENGTH, true)
        .withManufacturerOpcode(READ_REQUEST, SprayExtendedTransportHeader.LENGTH + RdmaExtendedTransportHeader.LENGTH, false)
        .withManufacturerOpcode(READ_RESPONSE, SprayExtendedTransportHeader.LENGTH, true)
        .withManufacturerOpcode(ACK, SelectiveAckHeader.LENGTH, false)
        .withManufacturerOpcode(PROBE, PROBE_HEADER_LENGTH, false)
        .withManufacturerOpcode(NACK, NACK_HEADER_LENGTH, false)
        .withManufacturerOpcode(QUERY, NACK_HEADER_LENGTH, false)
        .withManufacturerOpcode(CONNECT, CONNECTION_HEADER_LENGTH, true) // handshake block, addresses (S5.5, S5.6)
        .withManufacturerOpcode(CONNECT_ACK, CONNECTION_HEADER_LENGTH, true) // handshake block (S5.6)
        .withManufacturerOpcode(CONNECT_RETRY, CONNECTION_HEADER_LENGTH, true) // handshake block with the cookie
        .withManufacturerOpcode(CONNECT_REJECT, CONNECTION_HEADER_LENGTH, false)
        .withManufacturerOpcode(CLOSE, CONNECTION_HEADER_LENGTH, false)
        .withManufacturerOpcode(CLOSE_ACK, CONNECTION_HEADER_LENGTH, false);

    private SprayOpcodes()
    {
    }

    /**
     * @return whether {@code opcode} is one of the spray data opcodes (carries a SETH).
     */
    public static boolean isData(final int opcode)
    {
        return opcode >= WRITE && opcode <= READ_RESPONSE;
    }

    /**
     * @return the packet type's name as in docs/PROTOCOL.md, or null for other opcodes.
     */
    public static String name(final int opcode)
    {
        return switch (opcode)
        {
            case WRITE -> "SPRAY_WRITE";
            case WRITE_WITH_IMMEDIATE -> "SPRAY_WRITE_IMM";
            case SEND -> "SPRAY_SEND";
            case SEND_WITH_IMMEDIATE -> "SPRAY_SEND_IMM";
            case READ_REQUEST -> "SPRAY_READ_REQUEST";
            case READ_RESPONSE -> "SPRAY_READ_RESPONSE";
            case CONNECT_RETRY -> "SPRAY_CONNECT_RETRY";
            case CONNECT_REJECT -> "SPRAY_CONNECT_REJECT";
            case ACK -> "SPRAY_ACK";
            case PROBE -> "SPRAY_PROBE";
            case NACK -> "SPRAY_NACK";
            case QUERY -> "SPRAY_QUERY";
            case CONNECT -> "SPRAY_CONNECT";
            case CONNECT_ACK -> "SPRAY_CONNECT_ACK";
            case CLOSE -> "SPRAY_CLOSE";
            case CLOSE_ACK -> "SPRAY_CLOSE_ACK";
            default -> null;
        };
    }
}
