package io.spraynic.conformance;

import java.io.IOException;
import java.util.List;

/**
 * The receiver's RNR attempts (S9.3-3): a two-packet SEND the target refuses for want of a receive, sent as a
 * sender would send it when packets arrive twice and late: a copy of the refused attempt's first packet on another
 * path (as a packet moved at its RTO, S7.4.1, whose original arrived too), then a packet of the retry (the next
 * attempt in SETH flag bits 2-4), then a late copy of the refused attempt's last packet, then the retry's last
 * packet. Judged by the refusal numbers of the target's NACKs and ACKs (S9.3.1): every copy of the refused attempt
 * keeps its number, the retry is a new attempt (refused again, with a new number: no receive was posted), and the
 * late copy draws no new number.
 */
final class RnrChecks extends Checks
{
    private static final int STREAM = 1;

    RnrChecks(final Target target, final UdpLink link, final List<CheckResult> results)
    {
        super(target, link, results);
    }

    void run(final ConnectRequest request) throws IOException
    {
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        must("errors.rnr-attempt", "S9.3-3", "copies of an RNR-refused attempt keep its refusal, a packet of the next " +
            "attempt is refused as a new attempt (new number), and a late copy of the refused attempt after it draws " +
            "no new refusal", () ->
        {
            DataChecks.requireConnection(why);
            if (c.streams < 2)
            {
                throw new NotTested("the connection has one stream");
            }
            final int length = c.mtu + 64; // two packets
            final ScriptedPeer.Message m = new ScriptedPeer.Message(SprayWire.SEND, STREAM, c.takeMsn(STREAM), length,
                0, 0, 0, 0);
            final int other = c.paths > 1 ? 1 : 0;
            final List<String> f = newFailures();

            final int firstPsn = c.peekPsn(0);
            final Packet first = send(c, m, 0, 0, 0);
            if (null == first)
            {
                final int after = (firstPsn + 1) & SprayWire.PSN_MASK;
                if (c.received.stream().anyMatch(a -> c.isAckOf(a, 0) && SprayWire.psnDistance(after, a.h24(5)) >= 0))
                {
                    throw new NotTested("the target accepted the SEND without a NACK: it had a receive posted");
                }
                return "no NACK and no ACK of the SEND's first packet (attempt 0)";
            }
            if (first.h8(0) != SprayWire.SYNDROME_RNR || first.h32(12) < 1)
            {
                throw new NotTested("the SEND was not refused RNR with a refusal number (syndrome " + first.h8(0) +
                    ", refusal " + first.h32(12) + "): errors.rnr judges that");
            }
            final int refused = first.h32(12);
            expect(f, "the refused attempt's last packet", send(c, m, 0, c.mtu, 0), refused);
            expect(f, "a copy of the refused attempt's first packet on path " + other, send(c, m, other, 0, 0), refused);
            final Packet retry = send(c, m, 0, 0, 1);
            final int retried;
            if (null == retry || retry.h8(0) != SprayWire.SYNDROME_RNR)
            {
                f.add("the retry's first packet (attempt 1) drew " + describe(retry) + ", not a NACK RNR (no receive " +
                    "is posted)");
                retried = refused;
            }
            else
            {
                retried = retry.h32(12);
                if (Integer.compareUnsigned(retried, refused) <= 0)
                {
                    f.add("the retry's first packet (attempt 1) was refused under the refused attempt's number " +
                        retried + ": not taken as a new attempt");
                }
            }
            // the late copy: no new refusal, whether or not the target answers it
            c.send(c.dataPacket(m, other, c.takePsn(other), c.mtu, new byte[length - c.mtu],
                SprayWire.SETH_LAST | attempt(0), true, c.tag(m)));
            for (final Packet p : c.collect(SILENCE_NANOS))
            {
                if (isNackOf(c, p, m) && p.h32(12) != refused && p.h32(12) != retried)
                {
                    f.add("a late copy of the refused attempt (attempt 0) after the retry drew refusal " + p.h32(12));
                }
                if (c.isAckOf(p, other) && Integer.compareUnsigned(p.h32(48), retried) > 0)
                {
                    f.add("the ACK of a late copy of attempt 0 counts " + p.h32(48) + " refusals, more than the " +
                        retried + " of the attempts refused");
                }
            }
            expect(f, "the retry's last packet", send(c, m, 0, c.mtu, 1), retried);
            return failures(f);
        });
        closeQuietly(c);
    }

    /** Sends the packet of {@code m} at {@code offset} on {@code path} in attempt {@code attempt}; its NACK or null. */
    private static Packet send(final ScriptedPeer c, final ScriptedPeer.Message m, final int path, final int offset,
        final int attempt) throws IOException
    {
        final boolean last = offset + c.mtu >= m.length();
        c.send(c.dataPacket(m, path, c.takePsn(path), offset, new byte[Math.min(c.mtu, m.length() - offset)],
            (last ? SprayWire.SETH_LAST : 0) | attempt(attempt), true, c.tag(m, attempt)));
        return c.awaitPacket(ANSWER_NANOS, p -> isNackOf(c, p, m));
    }

    private static void expect(final List<String> f, final String what, final Packet nack, final int refusal)
    {
        if (null == nack || nack.h8(0) != SprayWire.SYNDROME_RNR || nack.h32(12) != refusal)
        {
            f.add(what + " drew " + describe(nack) + ", not the NACK RNR of refusal " + refusal);
        }
    }

    private static boolean isNackOf(final ScriptedPeer c, final Packet p, final ScriptedPeer.Message m)
    {
        return p.icrcValid && p.opcode() == SprayWire.NACK && p.destQp() == c.localCid() && p.wholeHeaders() &&
            p.h16(2) == m.stream() && p.h32(4) == m.msn() && p.controlTagValid(c.receiveKey);
    }

    private static String describe(final Packet nack)
    {
        return null == nack ? "no NACK" : "a NACK of syndrome " + nack.h8(0) + ", refusal " + nack.h32(12);
    }

    private static int attempt(final int attempt)
    {
        return (attempt & SprayWire.SETH_ATTEMPT_MASK) << SprayWire.SETH_ATTEMPT_SHIFT;
    }
}
