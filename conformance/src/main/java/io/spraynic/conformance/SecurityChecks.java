package io.spraynic.conformance;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.List;

/**
 * The receiver's checks of S12 that a peer can see from the wire: packets from another address (S12.5), the
 * RESYNC bound (S12.6), the MSN window (S12.7), and an RNR refusal (S9.3) for a SEND with no receive posted.
 */
final class SecurityChecks extends Checks
{
    private final long base;
    private final int rkey;

    SecurityChecks(final Target target, final UdpLink link, final List<CheckResult> results, final long regionOffset)
    {
        super(target, link, results);
        this.base = target.regionAddress() + regionOffset;
        this.rkey = target.rkey();
    }

    void run(final ConnectRequest request) throws IOException
    {
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        must("security.source-address", "S12.5-1", "a valid WRITE of the connection sent from another address is " +
            "dropped: PSN not recorded, nothing placed", () ->
        {
            DataChecks.requireConnection(why);
            final byte[] zeros = new byte[256];
            if (!writeAcked(c, message(c, zeros.length, 0), zeros))
            {
                throw new NotTested("the WRITE of zeros was not acknowledged");
            }
            final InetSocketAddress other = otherAddress();
            final List<String> f = newFailures();
            try (UdpLink stranger = new UdpLink(other, target.address()))
            {
                final byte[] data = pattern(256, 40);
                final ScriptedPeer.Message m = message(c, data.length, 0);
                final String recorded = notRecorded(c, stranger, psn -> new DataChecks.Sent(c.dataPacket(m, 0, psn, 0,
                    data, SprayWire.SETH_LAST, true, c.tag(m)), false));
                if (null != recorded)
                {
                    f.add(recorded);
                }
            }
            catch (final java.net.BindException e)
            {
                throw new NotTested("cannot bind " + other + " to send from: " + e.getMessage());
            }
            final String read = readBack(c, 1, base, rkey, zeros, "the zeros written before");
            if (null != read)
            {
                f.add("placed: " + read);
            }
            return failures(f);
        });
        must("security.resync-mismatch", "S12.6-1", "a RESYNC probe whose nextPsn differs from its BTH PSN is " +
            "dropped", () ->
        {
            DataChecks.requireConnection(why);
            return notRecorded(c, link, psn -> new DataChecks.Sent(FrameBuilder.bth(SprayWire.PROBE, c.remoteCid, psn,
                false).u8(0).u8(SprayWire.PRBH_RESYNC).u16(0).u8(0).u24(psn + 3).controlTag(c.sendKey).bytes(), false));
        });
        must("security.resync-behind", "S12.6-1", "a RESYNC probe behind what the path received (a replay) is " +
            "dropped: the path's cumulative PSN does not move back", () ->
        {
            DataChecks.requireConnection(why);
            final int behind = (c.peekPsn(0) - 10) & SprayWire.PSN_MASK;
            c.send(FrameBuilder.bth(SprayWire.PROBE, c.remoteCid, behind, false).u8(0).u8(SprayWire.PRBH_RESYNC).u16(0)
                .u8(0).u24(behind).controlTag(c.sendKey).bytes());
            final List<String> f = newFailures();
            for (final Packet a : c.collect(SILENCE_NANOS))
            {
                if (c.isAckOf(a, 0) && SprayWire.psnDistance(c.peekPsn(0), a.h24(5)) < 0)
                {
                    f.add("an ACK moved cumulativePsn back to " + a.h24(5));
                }
            }
            final int psn = c.takePsn(0);
            c.send(c.probe(0, psn, 0, c.sendKey));
            final int expect = (psn + 1) & SprayWire.PSN_MASK;
            if (null == c.awaitPacket(ANSWER_NANOS, a -> c.isAckOf(a, 0) && a.h24(5) == expect))
            {
                f.add("the next PROBE's ACK does not show cumulativePsn " + expect + "; last: " +
                    DataChecks.describeAck(c.lastAck(c.received, 0)));
            }
            return failures(f);
        });
        must("security.resync-ahead", "S5.2-2", "a RESYNC probe ahead of the path makes the receiver expect its " +
            "PSN: its ACK counts everything up to it", () ->
        {
            DataChecks.requireConnection(why);
            final int ahead = (c.peekPsn(0) + 20) & SprayWire.PSN_MASK;
            c.send(FrameBuilder.bth(SprayWire.PROBE, c.remoteCid, ahead, false).u8(0).u8(SprayWire.PRBH_RESYNC).u16(0)
                .u8(0).u24(ahead).controlTag(c.sendKey).bytes());
            final int expect = (ahead + 1) & SprayWire.PSN_MASK;
            final Packet ack = c.awaitPacket(ANSWER_NANOS, a -> c.isAckOf(a, 0) && a.h24(5) == expect);
            c.resumeAt(0, expect);
            return null != ack ? null : "no ACK of path 0 with cumulativePsn " + expect + "; last: " +
                DataChecks.describeAck(c.lastAck(c.received, 0));
        });
        must("security.msn-window", "S12.7-1", "a WRITE whose MSN lies far beyond the stream's window is dropped: " +
            "PSN not recorded, nothing placed", () ->
        {
            DataChecks.requireConnection(why);
            final byte[] zeros = new byte[256];
            if (!writeAcked(c, message(c, zeros.length, 512), zeros))
            {
                throw new NotTested("the WRITE of zeros was not acknowledged");
            }
            final byte[] data = pattern(256, 41);
            final ScriptedPeer.Message m = new ScriptedPeer.Message(SprayWire.WRITE, 0, c.takeMsn(0) + (1 << 20),
                data.length, 0, base + 512, rkey, 0);
            final List<String> f = newFailures();
            final String recorded = notRecorded(c, link, psn -> new DataChecks.Sent(c.dataPacket(m, 0, psn, 0, data,
                SprayWire.SETH_LAST, true, c.tag(m)), false));
            if (null != recorded)
            {
                f.add(recorded);
            }
            final String read = readBack(c, 1, base + 512, rkey, zeros, "the zeros written before");
            if (null != read)
            {
                f.add("placed: " + read);
            }
            return failures(f);
        });
        must("errors.rnr", "S9.3-2", "a SEND with no receive posted on its stream draws a NACK RNR with a retry time", () ->
        {
            DataChecks.requireConnection(why);
            final byte[] data = pattern(64, 42);
            final ScriptedPeer.Message m = new ScriptedPeer.Message(SprayWire.SEND, 0, c.takeMsn(0), data.length, 0, 0,
                0, 0);
            final int psn = c.takePsn(0);
            c.send(c.dataPacket(m, 0, psn, 0, data, SprayWire.SETH_LAST, true, c.tag(m)));
            final Packet nack = c.awaitPacket(ANSWER_NANOS, p -> p.icrcValid && p.opcode() == SprayWire.NACK &&
                p.destQp() == c.localCid() && p.wholeHeaders() && p.h32(4) == m.msn());
            if (null == nack)
            {
                final int after = (psn + 1) & SprayWire.PSN_MASK;
                if (c.received.stream().anyMatch(a -> c.isAckOf(a, 0) && a.h24(5) == after))
                {
                    throw new NotTested("the target accepted the SEND without a NACK: it had a receive posted");
                }
                return "no NACK and no ACK of the SEND";
            }
            final List<String> f = newFailures();
            if (nack.h8(0) != SprayWire.SYNDROME_RNR)
            {
                f.add("syndrome " + nack.h8(0) + ", not 1 (RNR)");
            }
            if (nack.h32(8) == 0)
            {
                f.add("rnrTimerMicros is 0");
            }
            if (nack.h32(12) < 1)
            {
                f.add("refusal number " + nack.h32(12));
            }
            if (!nack.controlTagValid(c.receiveKey))
            {
                f.add("the NACK's tag does not verify");
            }
            return failures(f);
        });
        closeQuietly(c);
    }

    /** @return the suite's address with the last octet changed: another address on the same host. */
    private InetSocketAddress otherAddress() throws IOException
    {
        final byte[] ip = target.local().getAddress().getAddress();
        final int last = ip.length - 1; // IPv4 or IPv6: the address's last byte
        ip[last] = (byte)(ip[last] == (byte)0xFE ? 0x01 : ip[last] + 1);
        return new InetSocketAddress(InetAddress.getByAddress(ip), target.local().getPort());
    }

    private ScriptedPeer.Message message(final ScriptedPeer c, final int length, final long offset)
    {
        return new ScriptedPeer.Message(SprayWire.WRITE, 0, c.takeMsn(0), length, 0, base + offset, rkey, 0);
    }

}
