package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.ImmediateDataHeader;
import io.spraynic.datapath.wire.RdmaExtendedTransportHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.SipHash;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.Wire;

import java.lang.foreign.MemorySegment;

/**
 * The tags of one spray connection (docs/PROTOCOL.md S12.3, S12.4): what this end sends is tagged with the key
 * of its sending direction, what it receives is checked with the key of the other. Immutable, allocation-free.
 * <ul>
 *     <li>Control packets (ACK, PROBE, NACK, QUERY, CLOSE, CLOSE_ACK): the last 8 bytes of their header are the
 *     SipHash-2-4 tag of the bytes from the BTH's first to the tag's first; written by the frame writer after the
 *     BTH ({@link RoceFrameWriter#tagNext}), checked first by the receiver.</li>
 *     <li>Data packets: the SETH's message tag, the same in every packet of a message, is SipHash-2-4 of the
 *     message's invariants and the packet's attempt (S9.3-4) as five words:
 *     {@code (opcode << 56 | attempt << 48 | stream << 32 | msn)},
 *     {@code (length << 32 | rsn)}, the message's base virtual address (RETH va minus the SETH offset; 0 without a
 *     RETH), {@code (rkey << 32 | the receiver's CID)} and the immediate data (0 without one). The same in every
 *     packet of an attempt: a message's RNR retry carries another.</li>
 * </ul>
 */
final class PacketAuthenticator
{
    private final long sendKey0;
    private final long sendKey1;
    private final long receiveKey0;
    private final long receiveKey1;
    private final int localCid;
    private final int remoteCid;

    PacketAuthenticator(final SprayConnectionConfig c)
    {
        this.sendKey0 = c.sendKey0;
        this.sendKey1 = c.sendKey1;
        this.receiveKey0 = c.receiveKey0;
        this.receiveKey1 = c.receiveKey1;
        this.localCid = c.localCid;
        this.remoteCid = c.remoteCid;
    }

    /** @return whether packets with this opcode carry the control tag of S12.3. */
    static boolean isTagged(final int opcode)
    {
        return switch (opcode)
        {
            case SprayOpcodes.ACK, SprayOpcodes.PROBE, SprayOpcodes.NACK, SprayOpcodes.QUERY, SprayOpcodes.CLOSE,
                SprayOpcodes.CLOSE_ACK -> true;
            default -> false;
        };
    }

    /** Arms {@code writer} to tag the next control frame it writes with this end's send key. */
    void tagNext(final RoceFrameWriter writer)
    {
        writer.tagNext(sendKey0, sendKey1);
    }

    /** @return whether the tag of a control packet (its header's last 8 bytes) verifies with the receive key. */
    boolean controlTagValid(final RoceFrame frame)
    {
        return controlTagValid(receiveKey0, receiveKey1, frame);
    }

    /**
     * @return whether the tag of a control packet verifies with the key {@code (k0, k1)}; false for a packet
     * whose header is too short to carry one.
     */
    static boolean controlTagValid(final long k0, final long k1, final RoceFrame frame)
    {
        final int headerLength = frame.customHeaderLength();
        if (headerLength < SipHash.TAG_LENGTH)
        {
            return false;
        }
        final MemorySegment seg = frame.segment();
        final long bth = frame.bthOffset();
        final int covered = BaseTransportHeader.LENGTH + headerLength - SipHash.TAG_LENGTH;
        return SipHash.tagsEqual(seg.get(Wire.LONG_BE, bth + covered), SipHash.hash(k0, k1, seg, bth, covered));
    }

    /** @return the message tag this end puts in every packet of a message's first attempt (S12.4). */
    long sendTag(
        final int opcode, final int stream, final int msn, final int length, final int rsn, final long base,
        final int rkey, final int immediate)
    {
        return messageTag(sendKey0, sendKey1, opcode, 0, stream, msn, length, rsn, base, rkey, remoteCid, immediate);
    }

    /**
     * @return the message tag of attempt {@code attempt} of the message in {@code slot} (S12.4, S9.3-4): computed for
     * each packet of an RNR retry, which is rare, rather than kept per slot.
     */
    long sendTag(final SendSlots slots, final int slot, final int attempt)
    {
        final byte kind = slots.kind(slot);
        final boolean rdma = kind == MessageKinds.WRITE || kind == MessageKinds.WRITE_IMM ||
            kind == MessageKinds.READ;
        final boolean immediate = kind == MessageKinds.WRITE_IMM || kind == MessageKinds.SEND_IMM;
        return messageTag(sendKey0, sendKey1, MessageKinds.opcodeOf(kind), attempt, slots.stream(slot),
            slots.msn(slot), slots.length(slot), slots.rsn(slot), rdma ? slots.remoteAddress(slot) : 0,
            rdma ? slots.rkey(slot) : 0, remoteCid, immediate ? slots.immediate(slot) : 0);
    }

    /** @return the message tag the peer's READ response to this end's READ (stream, msn, length) carries. */
    long readResponseTag(final int stream, final int msn, final int length)
    {
        return messageTag(receiveKey0, receiveKey1, SprayOpcodes.READ_RESPONSE, 0, stream, msn, length, 0, 0, 0, localCid,
            0);
    }

    /**
     * @return the message tag that a data packet addressed to this end must carry, from its own headers (its attempt
     * included) and the receive key (for a packet that would create message state, whose message has none any more,
     * or of another attempt than the one whose tag the state holds).
     */
    long expectedTag(final RoceFrame frame)
    {
        return expectedTag(frame, SprayExtendedTransportHeader.attempt(frame.segment(), frame.customHeaderOffset()));
    }

    /** @return as {@link #expectedTag(RoceFrame)}, for the packet's message's attempt {@code attempt}. */
    long expectedTag(final RoceFrame frame, final int attempt)
    {
        final MemorySegment seg = frame.segment();
        final long seth = frame.customHeaderOffset();
        final int opcode = frame.opcode();
        long base = 0;
        int rkey = 0;
        long at = seth + SprayExtendedTransportHeader.LENGTH;
        if (opcode == SprayOpcodes.WRITE || opcode == SprayOpcodes.WRITE_WITH_IMMEDIATE ||
            opcode == SprayOpcodes.READ_REQUEST)
        {
            base = RdmaExtendedTransportHeader.virtualAddress(seg, at) -
                (SprayExtendedTransportHeader.messageOffset(seg, seth) & 0xFFFF_FFFFL);
            rkey = RdmaExtendedTransportHeader.rkey(seg, at);
            at += RdmaExtendedTransportHeader.LENGTH;
        }
        final int immediate = opcode == SprayOpcodes.WRITE_WITH_IMMEDIATE || opcode == SprayOpcodes.SEND_WITH_IMMEDIATE ?
            ImmediateDataHeader.immediateData(seg, at) : 0;
        return messageTag(receiveKey0, receiveKey1, opcode, attempt, SprayExtendedTransportHeader.stream(seg, seth),
            SprayExtendedTransportHeader.msn(seg, seth), SprayExtendedTransportHeader.messageLength(seg, seth),
            SprayExtendedTransportHeader.rsn(seg, seth), base, rkey, localCid, immediate);
    }

    /** The message tag of S12.4 (one definition for both ends); {@code attempt} taken modulo 8 (S9.3-4). */
    static long messageTag(
        final long k0, final long k1, final int opcode, final int attempt, final int stream, final int msn,
        final int length, final int rsn, final long base, final int rkey, final int destCid, final int immediate)
    {
        return SipHash.hash5(k0, k1,
            (long)(opcode & 0xFF) << 56 | (long)(attempt & SprayExtendedTransportHeader.ATTEMPT_MASK) << 48 |
                (long)(stream & 0xFFFF) << 32 | (msn & 0xFFFF_FFFFL),
            (long)length << 32 | (rsn & 0xFFFF_FFFFL),
            base,
            (long)rkey << 32 | (destCid & 0xFF_FFFFL),
            immediate & 0xFFFF_FFFFL);
    }

    long sendKey0()
    {
        return sendKey0;
    }

    long sendKey1()
    {
        return sendKey1;
    }

    long receiveKey0()
    {
        return receiveKey0;
    }

    long receiveKey1()
    {
        return receiveKey1;
    }
}
