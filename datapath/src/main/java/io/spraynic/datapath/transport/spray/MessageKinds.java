package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.wire.SprayOpcodes;

/**
 * The kinds of message a connection carries (S4), as the one byte its send slots and inbound message records keep,
 * and the first-packet opcode of each: a message's kind picks its opcode, its SETH and whether it consumes a
 * receive (S4.5).
 */
final class MessageKinds
{
    static final byte WRITE = 0;
    static final byte WRITE_IMM = 1;
    static final byte SEND = 2;
    static final byte SEND_IMM = 3;
    static final byte READ = 4;
    static final byte READ_RESPONSE = 5;

    private static final int[] OPCODES = {
        SprayOpcodes.WRITE, SprayOpcodes.WRITE_WITH_IMMEDIATE, SprayOpcodes.SEND, SprayOpcodes.SEND_WITH_IMMEDIATE,
        SprayOpcodes.READ_REQUEST, SprayOpcodes.READ_RESPONSE,
    };

    private MessageKinds()
    {
    }

    /** @return the spray opcode of a message of this kind (S3.1). */
    static int opcodeOf(final byte messageKind)
    {
        return OPCODES[messageKind];
    }
}
