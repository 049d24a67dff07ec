package io.spraynic.conformance;

/**
 * The spray protocol's numbers as docs/PROTOCOL.md registers them (S3.1 opcodes, S4.1-S5.6 header lengths and
 * flags, S9.1.1 reject reasons), written down here from the document, not taken from the implementation under
 * test, so that a number both got wrong the same way would at least have been written twice.
 */
final class SprayWire
{
    static final int BTH_LENGTH = 12;
    static final int ICRC_LENGTH = 4;
    static final int SETH_LENGTH = 28;
    static final int RETH_LENGTH = 16;
    static final int IMMDT_LENGTH = 4; // ImmDt (S3.3)
    static final int SACKH_LENGTH = 60;
    static final int PRBH_LENGTH = 16;
    static final int NAKH_LENGTH = 24;
    static final int CONH_LENGTH = 40;
    static final int HSB_LENGTH = 64;
    static final int TAG_LENGTH = 8;
    static final int SACK_BITS = 256;

    static final int WRITE = 0xC0;
    static final int WRITE_IMM = 0xC1;
    static final int SEND = 0xC2;
    static final int SEND_IMM = 0xC3;
    static final int READ_REQUEST = 0xC4;
    static final int READ_RESPONSE = 0xC5;
    static final int CONNECT_RETRY = 0xC6;
    static final int CONNECT_REJECT = 0xC7;
    static final int ACK = 0xC8;
    static final int PROBE = 0xC9;
    static final int NACK = 0xCA;
    static final int QUERY = 0xCB;
    static final int CONNECT = 0xCC;
    static final int CONNECT_ACK = 0xCD;
    static final int CLOSE = 0xCE;
    static final int CLOSE_ACK = 0xCF;
    /** An opcode of the spray range that S3.1 does not assign. */
    static final int UNASSIGNED = 0xD0;

    static final int VERSION = 2;
    static final int PKEY_DEFAULT = 0xFFFF;

    static final int SETH_RETRANSMIT = 0x01;
    static final int SETH_LAST = 0x02;
    /** S4.1, S9.3-3: flag bits 2-4 carry the message's attempt number, modulo 8. */
    static final int SETH_ATTEMPT_SHIFT = 2;
    static final int SETH_ATTEMPT_MASK = 0x07;
    /** S4.1: flag bits 5-7 are reserved. */
    static final int SETH_RESERVED = 0xE0;
    static final int PRBH_RESYNC = 0x01;
    static final int SACKH_ECE = 0x01;

    static final int SYNDROME_ACCEPTED = 0;
    static final int SYNDROME_RNR = 1;
    static final int SYNDROME_REMOTE_ACCESS_ERROR = 2;

    static final int NAKH_REASON = 1; // S5.3: the RNR reason
    static final int RNR_REASON_NO_RECEIVE = 0;
    static final int RNR_REASON_NO_RESOURCES = 1; // S10.2
    static final int CONH_READS = 29; // S5.4, S10.2: READs the sender serves at once (0: not advertised)
    static final int CONH_WINDOW = 30; // S5.4, S10.2: the sender's inbound message window (u16; 0: not advertised)
    static final int DEFAULT_WINDOW = 1024; // S10.2-3, S11: assumed of a peer advertising 0
    static final int DEFAULT_READS = 64;

    static final int REASON_NO_LISTENER = 1;
    static final int REASON_VERSION_UNSUPPORTED = 2;
    static final int REASON_BAD_PARAMETERS = 3;
    static final int REASON_NO_RESOURCES = 4;
    static final int REASON_SOURCE_LIMIT = 5;

    /** Path i of a direction starts at initialPsn + i * 2^18 (S5.4). */
    static final int PATH_PSN_STRIDE = 1 << 18;
    static final int PSN_MASK = 0xFF_FFFF;

    private SprayWire()
    {
    }

    /** @return the bytes of the headers after the BTH for a data or control opcode; -1 for any other. */
    static int headerBytes(final int opcode)
    {
        return switch (opcode)
        {
            case WRITE, READ_REQUEST -> SETH_LENGTH + RETH_LENGTH;
            case WRITE_IMM -> SETH_LENGTH + RETH_LENGTH + IMMDT_LENGTH;
            case SEND, READ_RESPONSE -> SETH_LENGTH;
            case SEND_IMM -> SETH_LENGTH + IMMDT_LENGTH;
            case ACK -> SACKH_LENGTH;
            case PROBE -> PRBH_LENGTH;
            case NACK, QUERY -> NAKH_LENGTH;
            case CONNECT, CONNECT_ACK, CONNECT_RETRY, CONNECT_REJECT, CLOSE, CLOSE_ACK -> CONH_LENGTH;
            default -> -1;
        };
    }

    static boolean isData(final int opcode)
    {
        return opcode >= WRITE && opcode <= READ_RESPONSE;
    }

    static String opcodeName(final int opcode)
    {
        return switch (opcode)
        {
            case WRITE -> "SPRAY_WRITE";
            case WRITE_IMM -> "SPRAY_WRITE_IMM";
            case SEND -> "SPRAY_SEND";
            case SEND_IMM -> "SPRAY_SEND_IMM";
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
            default -> String.format("opcode 0x%02X", opcode);
        };
    }

    /**
     * The S12.4 message tag of one attempt of a message: SipHash-2-4 with {@code key} of
     * {@code opcode << 56 | attempt << 48 | stream << 32 | msn}, {@code length << 32 | rsn}, {@code base},
     * {@code rkey << 32 | destCid} and {@code immediate}, each word 8 little-endian bytes.
     */
    static long messageTag(final long[] key, final int opcode, final int attempt, final int stream, final int msn,
        final int length, final int rsn, final long base, final int rkey, final int destCid, final int immediate)
    {
        return SipHash24.words(key,
            (long)(opcode & 0xFF) << 56 | (long)(attempt & SETH_ATTEMPT_MASK) << 48 | (long)(stream & 0xFFFF) << 32 |
                (msn & 0xFFFF_FFFFL),
            (long)length << 32 | (rsn & 0xFFFF_FFFFL),
            base,
            (long)rkey << 32 | (destCid & 0xFF_FFFFL),
            immediate & 0xFFFF_FFFFL);
    }

    /** @return the attempt (SETH flag bits 2-4, S9.3-3) of the data packet {@code p}. */
    static int attempt(final Packet p)
    {
        return (p.h8(1) >>> SETH_ATTEMPT_SHIFT) & SETH_ATTEMPT_MASK;
    }

    /** @return {@code b - a} in 24-bit serial arithmetic, as a signed distance (S1.6). */
    static int psnDistance(final int a, final int b)
    {
        return ((b - a) << 8) >> 8;
    }
}
