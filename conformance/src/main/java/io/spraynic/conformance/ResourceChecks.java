package io.spraynic.conformance;

import java.io.IOException;
import java.util.List;

/**
 * The target out of inbound message records (S10.2): a message beyond the window it advertised in its CONNECT_ACK
 * is refused with a NACK {@code RNR} of reason {@code NO_RESOURCES}, and its packet is acknowledged at the path
 * layer (it arrived), not dropped as a loss. Runs on a connection of its own, closed afterwards: the messages that
 * hold the window are never finished.
 */
final class ResourceChecks extends Checks
{
    private static final int STREAM = 0;
    private static final int BATCH = 32; // packets sent before waiting for the ACK that covers them

    private final long base;
    private final int rkey;

    /**
     * @param regionOffset where in the target's region the held WRITEs' first packets land (8 KiB).
     */
    ResourceChecks(final Target target, final UdpLink link, final List<CheckResult> results, final long regionOffset)
    {
        super(target, link, results);
        this.base = target.regionAddress() + regionOffset;
        this.rkey = target.rkey();
    }

    void run(final ConnectRequest request)
    {
        must("resources.no-resources-nack", "S10.2-1", "a message beyond the advertised inbound window draws a NACK " +
            "RNR of reason NO_RESOURCES and its packet is acknowledged", () ->
        {
            final ScriptedPeer c = connect(request);
            try
            {
                return refusedBeyondWindow(c);
            }
            finally
            {
                closeQuietly(c);
            }
        });
    }

    // the first packet of `window` two-packet WRITEs holds a record each; the next message's first packet must be
    // refused for want of one
    private String refusedBeyondWindow(final ScriptedPeer c) throws IOException, NotTested
    {
        if (!c.windowAdvertised)
        {
            throw new NotTested("the CONNECT_ACK advertises no window (CONH window 0)");
        }
        final byte[] payload = new byte[c.mtu];
        for (int i = 0; i <= c.peerWindow; i++)
        {
            final ScriptedPeer.Message m = new ScriptedPeer.Message(SprayWire.WRITE, STREAM, c.takeMsn(STREAM),
                2 * c.mtu, 0, base, rkey, 0);
            final int psn = c.takePsn(0);
            final boolean last = i == c.peerWindow;
            final boolean ackReq = last || (i + 1) % BATCH == 0;
            c.send(c.dataPacket(m, 0, psn, 0, payload, 0, ackReq, c.tag(m)));
            if (last)
            {
                return answered(c, m, psn);
            }
            if (ackReq)
            {
                final int next = (psn + 1) & SprayWire.PSN_MASK;
                if (null == c.awaitPacket(ANSWER_NANOS, p -> c.isAckOf(p, 0) &&
                    SprayWire.psnDistance(next, p.h24(5)) >= 0))
                {
                    return "no ACK covering the first " + (i + 1) + " messages' packets; last: " +
                        DataChecks.describeAck(c.lastAck(c.received, 0));
                }
            }
        }
        return "unreachable";
    }

    private static String answered(final ScriptedPeer c, final ScriptedPeer.Message m, final int psn)
        throws IOException
    {
        final int next = (psn + 1) & SprayWire.PSN_MASK;
        final List<String> f = newFailures();
        final Packet nack = c.awaitPacket(ANSWER_NANOS, p -> p.icrcValid && p.opcode() == SprayWire.NACK &&
            p.wholeHeaders() && p.destQp() == c.localCid() && p.h16(2) == m.stream() && p.h32(4) == m.msn());
        if (null == nack)
        {
            f.add("no NACK of message " + m.msn() + " (the window is " + c.peerWindow + ")");
        }
        else if (!nack.controlTagValid(c.receiveKey))
        {
            f.add("its NACK's tag does not verify");
        }
        else if (nack.h8(0) != SprayWire.SYNDROME_RNR || nack.h8(SprayWire.NAKH_REASON) != SprayWire.RNR_REASON_NO_RESOURCES)
        {
            f.add("NACK syndrome " + nack.h8(0) + " reason " + nack.h8(SprayWire.NAKH_REASON) +
                ", not RNR (1) NO_RESOURCES (1)");
        }
        else if (nack.h32(8) == 0 || nack.h32(12) == 0)
        {
            f.add("NACK rnrTimerMicros " + nack.h32(8) + " refusal " + nack.h32(12) + ": both must be nonzero");
        }
        final boolean acked = c.received.stream().anyMatch(p -> c.isAckOf(p, 0) &&
            SprayWire.psnDistance(next, p.h24(5)) >= 0) || null != c.awaitPacket(ANSWER_NANOS, p -> c.isAckOf(p, 0) &&
            SprayWire.psnDistance(next, p.h24(5)) >= 0);
        if (!acked)
        {
            f.add("the refused packet (PSN " + psn + ") was not acknowledged: dropped as a loss; last ACK: " +
                DataChecks.describeAck(c.lastAck(c.received, 0)));
        }
        return failures(f);
    }
}
