package io.spraynic.conformance;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

/**
 * The target as a receiver of the suite's data (S4.2, S5.1, S5.2, S6.3, S6.4) and of malformed packets (S2.5,
 * S2.6, S3.1, S3.2, S12.3, S12.4): what it acknowledges, what lands in the memory it exposes (read back with RDMA
 * READs, S4.6), and what it must drop without changing anything.
 */
final class DataChecks extends Checks
{
    private static final int STREAM = 0;

    private final long base;
    private final int rkey;

    /**
     * @param regionOffset where in the target's region this group writes (its own slice).
     */
    DataChecks(final Target target, final UdpLink link, final List<CheckResult> results, final long regionOffset)
    {
        super(target, link, results);
        this.base = target.regionAddress() + regionOffset;
        this.rkey = target.rkey();
    }

    void runData(final ConnectRequest request) throws IOException
    {
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        final byte[] first = pattern(4 * 1024, 1);
        final int[] psns = new int[4];
        must("data.in-order-ack", "S6.4-1", "in-order data with AckReq on the last packet draws an ACK of its path " +
            "covering every packet, SACK empty", () ->
        {
            requireConnection(why);
            final ScriptedPeer.Message m = write(c, first.length, 0);
            final int before = c.received.size();
            for (final byte[] p : c.writePackets(m, first, null, psns))
            {
                c.send(p);
            }
            final int expect = (psns[3] + 1) & SprayWire.PSN_MASK;
            final Packet ack = c.awaitPacket(ANSWER_NANOS, p -> c.isAckOf(p, 0) && p.h24(5) == expect);
            if (null == ack)
            {
                final Packet last = c.lastAck(c.received.subList(before, c.received.size()), 0);
                return "no ACK of path 0 with cumulativePsn " + expect + "; last: " + describeAck(last);
            }
            return ScriptedPeer.sackBits(ack).isEmpty() ? null : "SACK bits set: " + ScriptedPeer.sackBits(ack);
        });
        must("data.read-back", "S4.6-1", "an RDMA READ returns the bytes written, in READ_RESPONSE packets tagged " +
            "as S12.4 says", () ->
        {
            requireConnection(why);
            return readEquals(c, 0, first, "the WRITE's bytes");
        });
        must("data.ack-sequence", "S5.1-2", "the ACKs of a path number themselves 1, 2, 3, ... (ackSequence)", () ->
        {
            requireConnection(why);
            int previous = 0;
            int acks = 0;
            for (final Packet p : c.received)
            {
                if (c.isAckOf(p, 0))
                {
                    acks++;
                    if (p.h32(44) != previous + 1)
                    {
                        return "ackSequence " + p.h32(44) + " after " + previous;
                    }
                    previous = p.h32(44);
                }
            }
            return acks == 0 ? "no ACK of path 0 seen" : null;
        });
        final byte[] second = pattern(4 * 1024, 2);
        must("data.gap-sack", "S6.4-2", "a gap on a path draws an ACK at once whose SACK bits show the packets " +
            "above it; the packet that fills it draws an ACK covering all", () ->
        {
            requireConnection(why);
            if (c.paths < 2)
            {
                throw new NotTested("the connection has one path");
            }
            final ScriptedPeer.Message m = write(c, second.length, 4 * 1024);
            final int[] q = new int[4];
            final List<byte[]> packets = c.writePackets(m, second, i -> true, q);
            for (int i = 1; i < 4; i++)
            {
                c.send(withoutAckReq(packets.get(i)));
            }
            final Packet gap = c.awaitPacket(ANSWER_NANOS, p -> c.isAckOf(p, 1) && p.h24(5) == q[0] &&
                ScriptedPeer.sackBits(p).equals(List.of(1, 2, 3)));
            final List<String> f = newFailures();
            if (null == gap)
            {
                f.add("no ACK of path 1 with cumulativePsn " + q[0] + " and SACK bits [1, 2, 3]; last: " +
                    describeAck(c.lastAck(c.received, 1)));
            }
            c.send(withoutAckReq(packets.get(0)));
            final int all = (q[3] + 1) & SprayWire.PSN_MASK;
            final Packet filled = c.awaitPacket(ANSWER_NANOS, p -> c.isAckOf(p, 1) && p.h24(5) == all);
            if (null == filled)
            {
                f.add("no ACK of path 1 with cumulativePsn " + all + " after the gap was filled; last: " +
                    describeAck(c.lastAck(c.received, 1)));
            }
            else if (!ScriptedPeer.sackBits(filled).isEmpty())
            {
                f.add("SACK bits after the gap was filled: " + ScriptedPeer.sackBits(filled));
            }
            return failures(f);
        });
        must("data.out-of-order-placement", "S4.2-1", "packets placed in any order land at their own offsets", () ->
        {
            requireConnection(why);
            return readEquals(c, 4 * 1024, second, "the WRITE sent out of order");
        });
        must("data.probe", "S5.2-1", "a PROBE draws an ACK of its path at once that counts the probe's PSN received",
            () ->
            {
                requireConnection(why);
                final int psn = c.takePsn(0);
                c.send(c.probe(0, psn, 0, c.sendKey));
                final int expect = (psn + 1) & SprayWire.PSN_MASK;
                return null != c.awaitPacket(ANSWER_NANOS, p -> c.isAckOf(p, 0) && p.h24(5) == expect) ? null :
                    "no ACK of path 0 with cumulativePsn " + expect + "; last: " + describeAck(c.lastAck(c.received, 0));
            });
        must("data.duplicate", "S6.3-2", "a duplicate packet (a PSN already received) is not placed again, and the " +
            "path's cumulative PSN does not move back", () ->
        {
            requireConnection(why);
            final ScriptedPeer.Message m = write(c, first.length, 0);
            final byte[] other = new byte[1024];
            Arrays.fill(other, (byte)0xEE);
            c.send(c.dataPacket(m, 0, psns[1], 1024, other, SprayWire.SETH_RETRANSMIT, true, c.tag(m)));
            final List<Packet> seen = c.collect(SILENCE_NANOS);
            final Packet last = c.lastAck(seen, 0);
            final List<String> f = newFailures();
            if (null != last && SprayWire.psnDistance(c.peekPsn(0), last.h24(5)) < 0)
            {
                f.add("cumulativePsn moved back to " + last.h24(5));
            }
            final String read = readEquals(c, 0, first, "the original bytes");
            if (null != read)
            {
                f.add(read);
            }
            return failures(f);
        });
        must("data.duplicate-report", "S5.1-3", "a data packet received twice is reported, once, in the SACKH " +
            "duplicates of its path's ACKs", () ->
        {
            requireConnection(why);
            final byte[] data = pattern(512, 5);
            final ScriptedPeer.Message m = write(c, data.length, 12 * 1024);
            final int psn = c.takePsn(0);
            final byte[] p = c.dataPacket(m, 0, psn, 0, data, SprayWire.SETH_LAST, true, c.tag(m));
            final int before = c.received.size();
            c.send(p);
            c.send(p); // the same packet again: its PSN had arrived
            final int expect = (psn + 1) & SprayWire.PSN_MASK;
            final Packet report = c.awaitPacket(ANSWER_NANOS, a -> c.isAckOf(a, 0) && a.h8(4) > 0);
            c.collect(SILENCE_NANOS); // the ACKs that follow must not report it again
            int reported = 0;
            Packet covering = null;
            for (final Packet a : c.received.subList(before, c.received.size()))
            {
                if (c.isAckOf(a, 0))
                {
                    reported += a.h8(4);
                    covering = a.h24(5) == expect ? a : covering;
                }
            }
            if (null == report)
            {
                return "no ACK of path 0 reports the duplicate (SACKH duplicates 0 in each); last: " +
                    describeAck(c.lastAck(c.received.subList(before, c.received.size()), 0));
            }
            if (null == covering)
            {
                return "no ACK of path 0 with cumulativePsn " + expect + "; last: " + describeAck(report);
            }
            return reported == 1 ? null : "the ACKs of path 0 reported " + reported + " duplicates for the one sent";
        });
        must("data.reserved-bits", "S2.5-1", "a packet with reserved bits set (BTH resv7, SETH flag bits 5-7) is " +
            "processed as if they were zero", () ->
        {
            requireConnection(why);
            final byte[] data = pattern(512, 3);
            final ScriptedPeer.Message m = write(c, data.length, 8 * 1024);
            final int psn = c.takePsn(0);
            final byte[] p = c.dataPacket(m, 0, psn, 0, data, SprayWire.SETH_LAST | SprayWire.SETH_RESERVED, true,
                c.tag(m));
            p[8] |= 0x7F; // BTH resv7
            c.send(p);
            final int expect = (psn + 1) & SprayWire.PSN_MASK;
            if (null == c.awaitPacket(ANSWER_NANOS, a -> c.isAckOf(a, 0) && a.h24(5) == expect))
            {
                return "the packet was not acknowledged (dropped?); last ACK: " + describeAck(c.lastAck(c.received, 0));
            }
            return readEquals(c, 8 * 1024, data, "the packet's bytes");
        });
        must("wire.control-tags", "S12.3-2", "every ACK, NACK and PROBE the target sent on the connection carries a " +
            "tag that verifies with its send key", () ->
        {
            requireConnection(why);
            return controlTagFailures(c);
        });
        closeQuietly(c);
    }

    void runMalformed(final ConnectRequest request) throws IOException
    {
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        malformed(c, why, "malformed.bad-icrc", "S2.6-1", "a data packet with a wrong ICRC", 0,
            (psn, m, data) -> new Sent(c.dataPacket(m, 0, psn, 0, data, SprayWire.SETH_LAST, true, c.tag(m)), true));
        malformed(c, why, "malformed.truncated", "S3.1-2", "a WRITE cut short inside its headers", 1,
            (psn, m, data) -> new Sent(Arrays.copyOf(c.dataPacket(m, 0, psn, 0, data, SprayWire.SETH_LAST, true,
                c.tag(m)), SprayWire.BTH_LENGTH + 20), false));
        malformed(c, why, "malformed.unknown-opcode", "S3.1-1", "a packet with an unassigned opcode of the spray " +
            "range (0xD0)", 2, (psn, m, data) ->
        {
            final byte[] p = c.dataPacket(m, 0, psn, 0, data, SprayWire.SETH_LAST, true, c.tag(m));
            p[0] = (byte)SprayWire.UNASSIGNED;
            return new Sent(p, false);
        });
        malformed(c, why, "malformed.tver", "S3.2-1", "a data packet with BTH TVer 1", 3, (psn, m, data) ->
        {
            final byte[] p = c.dataPacket(m, 0, psn, 0, data, SprayWire.SETH_LAST, true, c.tag(m));
            p[1] |= 0x01;
            return new Sent(p, false);
        });
        malformed(c, why, "malformed.pad", "S3.1-3", "a data packet whose payload plus pad is not a multiple of 4 " +
            "bytes", 4, (psn, m, data) ->
        {
            final ScriptedPeer.Message odd = new ScriptedPeer.Message(m.opcode(), m.stream(), m.msn(), data.length - 2,
                0, m.base(), m.rkey(), 0);
            final byte[] body = c.dataPacket(odd, 0, psn, 0, Arrays.copyOf(data, data.length - 2), SprayWire.SETH_LAST,
                true, c.tag(odd));
            return new Sent(body, false); // FrameBuilder padded it: the pad is cut off below
        });
        malformed(c, why, "malformed.message-tag", "S12.4-1", "a data packet whose message tag does not verify", 5,
            (psn, m, data) -> new Sent(c.dataPacket(m, 0, psn, 0, data, SprayWire.SETH_LAST, true, c.tag(m) ^ 1),
                false));
        malformed(c, why, "malformed.attempt-tag", "S12.4-1", "a data packet whose SETH attempt was changed after it " +
            "was tagged (attempt 1, the tag of attempt 0: an on-path writer's RNR retry or late copy, S9.3-3)", 6,
            (psn, m, data) -> new Sent(c.dataPacket(m, 0, psn, 0, data, SprayWire.SETH_LAST |
                1 << SprayWire.SETH_ATTEMPT_SHIFT, true, c.tag(m)), false));
        must("malformed.control-tag", "S12.3-1", "a PROBE whose tag does not verify draws no ACK and its PSN is " +
            "not recorded", () ->
        {
            requireConnection(why);
            return notRecorded(c, c.link(), psn -> new Sent(c.probe(0, psn, 0,
                new long[]{c.sendKey[0] ^ 1, c.sendKey[1]}), false));
        });
        must("wire.icrc", "S2.6-2", "every packet the target sent carries a valid ICRC", () ->
        {
            requireConnection(why);
            for (final Packet p : c.received)
            {
                if (!p.icrcValid)
                {
                    return "wrong ICRC on " + p;
                }
            }
            return null;
        });
        must("wire.reserved-zero", "S2.5-2", "every packet the target sent on the connection has BTH resv8a and " +
            "resv7 zero, and the reserved fields and flag bits of its SETH, SACKH, PRBH and CONH zero", () ->
        {
            requireConnection(why);
            return reservedFailures(c.received, c.localCid());
        });
        closeQuietly(c);
    }

    /**
     * S2.5-2 over what the target sent to {@code cid}: the BTH's reserved fields (byte 4, and byte 8 below AckReq),
     * the data packets' reserved SETH flag bits (5-7; 2-4 are the attempt, S9.3-3), and the reserved rows and flag
     * bits of the SACKH (flags 1-7; its byte 4 is {@code duplicates}, S5.1-3), PRBH (flags 1-7, {@code reserved2},
     * {@code reserved4}) and
     * CONH (flags 1-7, {@code reserved8}, {@code reserved12}); the NAKH has none.
     *
     * @return null when every one was zero, else the first few that were not.
     */
    static String reservedFailures(final List<Packet> received, final int cid) throws NotTested
    {
        final List<String> f = newFailures();
        int judged = 0;
        int data = 0;
        for (final Packet p : received)
        {
            if (!p.icrcValid || p.length() < SprayWire.BTH_LENGTH || p.destQp() != cid)
            {
                continue;
            }
            judged++;
            final int resv8a = p.bytes[4] & 0xFF;
            final int resv7 = p.bytes[8] & 0x7F;
            if ((resv8a | resv7) != 0 && f.size() < 3)
            {
                f.add("BTH resv8a 0x" + Integer.toHexString(resv8a) + " resv7 0x" + Integer.toHexString(resv7) +
                    " on " + p);
            }
            if (SprayWire.isData(p.opcode()) && p.wholeHeaders())
            {
                data++;
                if ((p.h8(1) & SprayWire.SETH_RESERVED) != 0 && f.size() < 3)
                {
                    f.add("SETH flags 0x" + Integer.toHexString(p.h8(1)) + " (bits 5-7 reserved) on " + p);
                }
            }
            else if (p.wholeHeaders() && f.size() < 3)
            {
                final String control = controlReserved(p);
                if (null != control)
                {
                    f.add(control + " on " + p);
                }
            }
        }
        if (judged == 0)
        {
            throw new NotTested("the target sent nothing on the connection");
        }
        return f.isEmpty() ? null : failures(f) + " (of " + judged + " packets, " + data + " of them data)";
    }

    /** @return which reserved field or flag bit of a control header (S5.1, S5.2, S5.4) is not zero, or null. */
    static String controlReserved(final Packet p)
    {
        final int flags = p.h8(1) & 0xFE; // SACKH, PRBH and CONH: bits 1-7 of their flags are reserved
        return switch (p.opcode())
        {
            case SprayWire.ACK -> flags != 0 ? "SACKH flags 0x" + Integer.toHexString(p.h8(1)) + " (bits 1-7 reserved)" :
                null; // byte 4 was reserved4 until S5.1-3 made it the duplicates count
            case SprayWire.PROBE -> flags != 0 ? "PRBH flags 0x" + Integer.toHexString(p.h8(1)) + " (bits 1-7 reserved)" :
                p.h16(2) != 0 ? "PRBH reserved2 0x" + Integer.toHexString(p.h16(2)) :
                p.h8(4) != 0 ? "PRBH reserved4 0x" + Integer.toHexString(p.h8(4)) : null;
            case SprayWire.CONNECT, SprayWire.CONNECT_RETRY, SprayWire.CONNECT_ACK, SprayWire.CONNECT_REJECT,
                SprayWire.CLOSE, SprayWire.CLOSE_ACK ->
                flags != 0 ? "CONH flags 0x" + Integer.toHexString(p.h8(1)) + " (bits 1-7 reserved)" :
                p.h8(8) != 0 ? "CONH reserved8 0x" + Integer.toHexString(p.h8(8)) :
                p.h8(12) != 0 ? "CONH reserved12 0x" + Integer.toHexString(p.h8(12)) : null;
            default -> null;
        };
    }

    /** One packet as a malformed check sends it: its bytes (before the ICRC) and whether to corrupt its ICRC. */
    record Sent(byte[] body, boolean corruptIcrc)
    {
    }

    @FunctionalInterface
    interface Malformer
    {
        Sent build(int psn, ScriptedPeer.Message message, byte[] data);
    }

    /**
     * A malformed WRITE of 256 bytes to its own slot: not recorded at the path layer (S6.3: the PSN stays missing)
     * and not placed (the slot reads back as the zeros written there first).
     */
    private void malformed(final ScriptedPeer c, final String why, final String id, final String clause,
        final String what, final int slot, final Malformer malformer)
    {
        must(id, clause, what + " is dropped: no answer, PSN not recorded, nothing placed", () ->
        {
            requireConnection(why);
            final long offset = 16 * 1024 + slot * 512L;
            final byte[] zeros = new byte[256];
            if (!writeAcked(c, write(c, zeros.length, offset), zeros))
            {
                throw new NotTested("could not clear the slot first: the WRITE of zeros was not acknowledged");
            }
            final byte[] data = pattern(256, 10 + slot);
            final ScriptedPeer.Message m = write(c, data.length, offset);
            final String recorded = notRecorded(c, c.link(), psn ->
            {
                final Sent sent = malformer.build(psn, m, data);
                if (id.equals("malformed.pad"))
                {
                    final byte[] body = Arrays.copyOf(sent.body(), sent.body().length - 2); // drop the pad bytes
                    body[1] &= (byte)0xCF; // PadCnt 0: payload + pad = 254 bytes
                    return new Sent(body, false);
                }
                return sent;
            });
            final List<String> f = newFailures();
            if (null != recorded)
            {
                f.add(recorded);
            }
            final String read = readEquals(c, offset, zeros, "the zeros written before");
            if (null != read)
            {
                f.add("placed: " + read);
            }
            return failures(f);
        });
    }

    private ScriptedPeer.Message write(final ScriptedPeer c, final int length, final long offset)
    {
        return new ScriptedPeer.Message(SprayWire.WRITE, STREAM, c.takeMsn(STREAM), length, 0, base + offset, rkey, 0);
    }

    /** READs {@code expected.length} bytes at {@code offset} (stream 1); null when they are {@code expected}. */
    private String readEquals(final ScriptedPeer c, final long offset, final byte[] expected, final String what)
        throws IOException
    {
        return readBack(c, 1, base + offset, rkey, expected, what);
    }

    static String controlTagFailures(final ScriptedPeer c)
    {
        final List<String> f = newFailures();
        for (final Packet p : c.received)
        {
            final int op = p.opcode();
            if (p.icrcValid && p.wholeHeaders() && p.destQp() == c.localCid() &&
                (op == SprayWire.ACK || op == SprayWire.NACK || op == SprayWire.PROBE || op == SprayWire.CLOSE_ACK) &&
                !p.controlTagValid(c.receiveKey))
            {
                f.add("tag of " + p + " does not verify");
            }
        }
        f.addAll(c.tagFailures);
        return failures(f);
    }

    private static byte[] withoutAckReq(final byte[] packet)
    {
        final byte[] p = packet.clone();
        p[8] &= 0x7F;
        return p;
    }

    static void requireConnection(final String why) throws NotTested
    {
        if (null != why)
        {
            throw new NotTested(why);
        }
    }

    static String describeAck(final Packet ack)
    {
        return null == ack ? "none" : "path " + ack.h8(0) + " cumulativePsn " + ack.h24(5) + " SACK " +
            ScriptedPeer.sackBits(ack) + " ackSequence " + ack.h32(44);
    }
}
