package io.spraynic.conformance;

import java.io.IOException;
import java.util.List;

/**
 * The target out of inbound message records (S10.2): a message beyond the window it advertised in its CONNECT_ACK
 * is refused with a NACK {@code RNR} of reason {@code NO_RESOURCES}, and its packet is acknowledged at the path
 * layer (it arrived), not dropped as a loss (S10.2-1); a flood of packets of such a message draws those NACKs no
 * faster than the target's response bucket allows (S10.2-2). Each runs on a connection of its own, closed
 * afterwards: the messages that hold the window are never finished.
 */
final class ResourceChecks extends Checks
{
    private static final int STREAM = 0;
    private static final int BATCH = 32; // packets sent before waiting for the ACK that covers them
    /** The longest the suite takes to fill a target's advertised window, whatever the window and the target's pace. */
    static final long HOLD_NANOS = 60 * 1_000_000_000L;
    /**
     * Packets of the refused message the rate check sends (copies of its one packet, each at a new PSN): with CI's
     * bucket (500 a second, 32) a flood of them outruns it unless it takes over 2 s.
     */
    static final int FLOOD_PACKETS = 1_024;
    /** The flood's packets sent before waiting for the ACK that covers them: half a SACK window (S6.3). */
    private static final int FLOOD_BATCH = SprayWire.SACK_BITS / 2;
    /** The refused message's length: one small packet, so that a batch of them fits any socket's buffer. */
    private static final int FLOOD_MESSAGE_BYTES = 64;

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

    /** Runs the checks, each on a connection of its own that {@code handshake} sets up. */
    void run(final HandshakeChecks handshake) throws IOException
    {
        must("resources.no-resources-nack", "S10.2-1", "a message beyond the advertised inbound window draws a NACK " +
            "RNR of reason NO_RESOURCES and its packet is acknowledged", () ->
        {
            final ScriptedPeer c = connect(handshake.request());
            try
            {
                return refusedBeyondWindow(c);
            }
            finally
            {
                closeQuietly(c);
            }
        });
        final double rate = target.responseRate();
        final int burst = target.responseBurst();
        must("resources.no-resources-rate", "S10.2-2", FLOOD_PACKETS + " packets of a message refused for want of " +
            "records draw at most connectResponseBurst + connectResponseRate * T NACKs RNR NO_RESOURCES (" + burst +
            " + " + (long)rate + "/s; one engine)", () ->
        {
            final ScriptedPeer c = connect(handshake.request());
            try
            {
                return refusalRate(c, rate, burst);
            }
            finally
            {
                closeQuietly(c);
            }
        });
        FloodChecks.awaitRefill(link, rate, burst); // the checks after this one connect again
    }

    // the first packet of `window` two-packet WRITEs holds a record each; the next message's first packet must be
    // refused for want of one
    private String refusedBeyondWindow(final ScriptedPeer c) throws IOException, NotTested
    {
        final String held = holdWindow(c, HOLD_NANOS);
        if (null != held)
        {
            return held;
        }
        final ScriptedPeer.Message m = nextWrite(c);
        final int psn = c.takePsn(0);
        c.send(c.dataPacket(m, 0, psn, 0, new byte[c.mtu], 0, true, c.tag(m)));
        return answered(c, m, psn);
    }

    /**
     * S10.2-2: with the window held, the message beyond it (one packet) is refused, and every further packet of its
     * refused attempt (copies of that packet, each at a new PSN, as a sender's moves of S7.4.1 would send them) is
     * refused again. The NACKs RNR NO_RESOURCES of that message are counted over the T seconds from its first
     * packet sent to the last NACK received; judged only when the flood outran the bucket, so that a target
     * without one would fail. Upper bound only: the refusals the target withholds the sender learns from the
     * ACKs' refusals count (S9.3.1).
     */
    private String refusalRate(final ScriptedPeer c, final double rate, final int burst) throws IOException, NotTested
    {
        final String held = holdWindow(c, HOLD_NANOS);
        if (null != held)
        {
            return held;
        }
        final ScriptedPeer.Message m = new ScriptedPeer.Message(SprayWire.WRITE, STREAM, c.takeMsn(STREAM),
            FLOOD_MESSAGE_BYTES, 0, base, rkey, 0);
        final long tag = c.tag(m);
        final byte[] payload = new byte[FLOOD_MESSAGE_BYTES];
        final int[] nacks = new int[1];
        final long[] lastNack = new long[1];
        // counts the message's NACKs RNR NO_RESOURCES among whatever a wait receives
        final java.util.function.Consumer<Packet> count = p ->
        {
            if (null != p && p.icrcValid && p.opcode() == SprayWire.NACK && p.wholeHeaders() &&
                p.destQp() == c.localCid() && p.h16(2) == m.stream() && p.h32(4) == m.msn() &&
                p.h8(0) == SprayWire.SYNDROME_RNR &&
                p.h8(SprayWire.NAKH_REASON) == SprayWire.RNR_REASON_NO_RESOURCES && p.controlTagValid(c.receiveKey))
            {
                nacks[0]++;
                lastNack[0] = System.nanoTime();
            }
        };
        final long start = System.nanoTime();
        for (int i = 0; i < FLOOD_PACKETS; i++)
        {
            final int psn = c.takePsn(0);
            final boolean ackReq = i == FLOOD_PACKETS - 1 || (i + 1) % FLOOD_BATCH == 0;
            c.send(c.dataPacket(m, 0, psn, 0, payload, 0, ackReq, tag));
            if (ackReq)
            {
                // a batch at a time, so that neither socket drops the flood: every packet reaches the target
                final int next = (psn + 1) & SprayWire.PSN_MASK;
                if (null == c.awaitPacket(ANSWER_NANOS, p ->
                {
                    count.accept(p);
                    return c.isAckOf(p, 0) && SprayWire.psnDistance(next, p.h24(5)) >= 0;
                }))
                {
                    return "no ACK covering the first " + (i + 1) + " packets of the refused message; last: " +
                        DataChecks.describeAck(c.lastAck(c.received, 0));
                }
            }
        }
        final long sent = System.nanoTime();
        c.awaitPacket(SILENCE_NANOS, p ->
        {
            count.accept(p); // NACKs still on their way
            return false;
        });
        if (nacks[0] == 0)
        {
            throw new NotTested("no NACK RNR NO_RESOURCES of message " + m.msn() + " (beyond the window of " +
                c.peerWindow + ") answered any of its " + FLOOD_PACKETS + " packets");
        }
        final double seconds = (lastNack[0] - start) / 1e9;
        final double allowed = burst + rate * seconds;
        final String seen = String.format(java.util.Locale.ROOT, "%d NACKs RNR NO_RESOURCES to %d packets of the " +
            "refused message (sent in %.1f ms) within %.1f ms of the first, where the bucket allows %.0f", nacks[0],
            FLOOD_PACKETS, (sent - start) / 1e6, seconds * 1e3, allowed);
        if (nacks[0] > allowed * 1.05 + 8)
        {
            return seen;
        }
        if (FLOOD_PACKETS <= allowed)
        {
            throw new NotTested("the flood did not outrun the bucket (the packets went out, or were answered, no " +
                "faster than it refills), so even a target without one would pass: " + seen);
        }
        measured(seen);
        return null;
    }

    /**
     * Sends the first packet of {@code window} two-packet WRITEs, each holding a record, and waits for the ACKs that
     * cover them.
     *
     * @param holdNanos how long filling it may take ({@link #HOLD_NANOS}): a target that acknowledges each batch
     *                  just inside the wait must not hold the suite for half an hour.
     * @return null once the window is held, else what failed.
     */
    String holdWindow(final ScriptedPeer c, final long holdNanos) throws IOException, NotTested
    {
        if (!c.windowAdvertised)
        {
            throw new NotTested("the CONNECT_ACK advertises no window (CONH window 0)");
        }
        final byte[] payload = new byte[c.mtu];
        final long deadline = System.nanoTime() + holdNanos;
        for (int i = 0; i < c.peerWindow; i++)
        {
            if (i % BATCH == 0 && System.nanoTime() - deadline >= 0)
            {
                // a window of 65,535 messages whose every batch is acknowledged just inside the wait took 34 min
                throw new NotTested("the target's window of " + c.peerWindow + " messages was not held within " +
                    holdNanos / ScriptedPeer.MILLI + " ms (" + i + " sent)");
            }
            final ScriptedPeer.Message m = nextWrite(c);
            final int psn = c.takePsn(0);
            final boolean ackReq = i == c.peerWindow - 1 || (i + 1) % BATCH == 0;
            c.send(c.dataPacket(m, 0, psn, 0, payload, 0, ackReq, c.tag(m)));
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
        return null;
    }

    /** @return the stream's next two-packet WRITE (beyond the window once the window is held). */
    private ScriptedPeer.Message nextWrite(final ScriptedPeer c)
    {
        return new ScriptedPeer.Message(SprayWire.WRITE, STREAM, c.takeMsn(STREAM), 2 * c.mtu, 0, base, rkey, 0);
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
