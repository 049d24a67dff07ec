package io.spraynic.conformance;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntFunction;

/**
 * What every group of checks shares: the target, the link, the results so far, and the way one check runs (its
 * body returns null for a pass or says what failed; {@link NotTested} says why it could not run; anything thrown
 * is a failure with the exception's words).
 */
abstract class Checks
{
    /** How long the suite waits for an answer the target owes (generous: a loaded CI host). */
    static final long ANSWER_NANOS = 1_000 * ScriptedPeer.MILLI;
    /** How long the suite listens to conclude that the target stays silent. */
    static final long SILENCE_NANOS = 200 * ScriptedPeer.MILLI;
    /** The most packets {@link #sentMeanwhile} lists. */
    static final int SENT_SHOWN = 12;

    final Target target;
    final UdpLink link;
    final List<CheckResult> results;
    /** What the running check measured, reported with a PASS (null: nothing to say); see {@link #measured}. */
    private String measured;

    /** A check that could not run, with the reason. */
    static final class NotTested extends Exception
    {
        NotTested(final String reason)
        {
            super(reason, null, false, false);
        }
    }

    @FunctionalInterface
    interface Body
    {
        /** @return null when the check passed, else what failed. */
        String run() throws Exception;
    }

    Checks(final Target target, final UdpLink link, final List<CheckResult> results)
    {
        this.target = target;
        this.link = link;
        this.results = results;
    }

    final void check(final String id, final String clause, final String level, final String title, final Body body)
    {
        CheckCatalog.require(id, clause, level);
        Verdict verdict;
        String reason;
        measured = null;
        final int truncatedBefore = link.truncatedPackets();
        try
        {
            reason = body.run();
            verdict = null == reason ? Verdict.PASS : Verdict.FAIL;
            if (null == reason)
            {
                reason = measured;
            }
        }
        catch (final NotTested e)
        {
            verdict = Verdict.NOT_TESTED;
            reason = e.getMessage();
        }
        catch (final Exception | AssertionError e)
        {
            verdict = Verdict.FAIL;
            reason = e.getClass().getSimpleName() + ": " + e.getMessage();
        }
        final int truncated = link.truncatedPackets() - truncatedBefore;
        if (truncated > 0)
        {
            // not a verdict of its own (the check judged what it awaited), but what a target's author must see
            reason = (null == reason ? "" : reason + "; ") + truncated + " packet(s) of the target shorter than " +
                "the fields read of them were skipped";
        }
        results.add(new CheckResult(id, clause, level, title, verdict, reason));
    }

    /**
     * Says what the running check measured (a threshold it found, say), which its report carries as the reason of a
     * PASS; a failure or a check not run says its own.
     */
    final void measured(final String what)
    {
        measured = what;
    }

    final void must(final String id, final String clause, final String title, final Body body)
    {
        check(id, clause, "MUST", title, body);
    }

    final void should(final String id, final String clause, final String title, final Body body)
    {
        check(id, clause, "SHOULD", title, body);
    }

    /** Records a check as not tested, with the reason (a group whose connection could not be set up). */
    final void notTested(final String id, final String clause, final String level, final String title, final String why)
    {
        CheckCatalog.require(id, clause, level);
        results.add(new CheckResult(id, clause, level, title, Verdict.NOT_TESTED, why));
    }

    /** A group's connection, or why there is none (its checks are then NOT_TESTED with that reason). */
    record Connection(ScriptedPeer peer, String why)
    {
    }

    /** @return the connection {@code request} sets up, or why it could not. */
    final Connection open(final ConnectRequest request) throws IOException
    {
        try
        {
            return new Connection(connect(request), null);
        }
        catch (final NotTested e)
        {
            return new Connection(null, e.getMessage());
        }
    }

    /**
     * @return the connection of a timer check: {@code paths} paths, MTU 256 (a held READ is one packet), the suite
     * acknowledging only when the check says so ({@link HeldReads#silence}).
     */
    final Connection openHeld(final ConnectRequest request, final int paths, final HeldReads holds) throws IOException
    {
        request.paths = paths;
        request.mtu = 256;
        final Connection connection = open(request);
        holds.silence(connection.peer());
        return connection;
    }

    /**
     * WRITEs {@code data} as message {@code m} on path 0, packets in offset order.
     *
     * @return whether an ACK of path 0 covered its last packet.
     */
    static boolean writeAcked(final ScriptedPeer c, final ScriptedPeer.Message m, final byte[] data) throws IOException
    {
        final int count = Math.max(1, (data.length + c.mtu - 1) / c.mtu);
        final int[] psns = new int[count];
        for (final byte[] p : c.writePackets(m, data, null, psns))
        {
            c.send(p);
        }
        final int expect = (psns[count - 1] + 1) & SprayWire.PSN_MASK;
        return null != c.awaitPacket(ANSWER_NANOS, a -> c.isAckOf(a, 0) && SprayWire.psnDistance(expect, a.h24(5)) >= 0);
    }

    /**
     * RDMA-READs {@code expected.length} bytes at {@code address} on {@code stream}.
     *
     * @return null when they are {@code expected}, else what went wrong ({@code what}: what they should have been).
     */
    static String readBack(final ScriptedPeer c, final int stream, final long address, final int rkey,
        final byte[] expected, final String what) throws IOException
    {
        final ScriptedPeer.InboundRead read = c.read(stream, address, rkey, expected.length, 2 * ANSWER_NANOS);
        if (!read.complete())
        {
            return "the READ of " + expected.length + " B did not complete (" + read.bytesPlaced + " B arrived" +
                (c.tagFailures.isEmpty() ? "" : "; " + c.tagFailures) + ")";
        }
        for (int i = 0; i < expected.length; i++)
        {
            if (read.data[i] != expected[i])
            {
                return "byte " + i + " read back is not " + what;
            }
        }
        return null;
    }

    /** @return a connection set up with {@code request}, or throws {@link NotTested} when the handshake fails. */
    final ScriptedPeer connect(final ConnectRequest request) throws IOException, NotTested
    {
        final ScriptedPeer peer = new ScriptedPeer(link, request);
        final String failure = peer.establish(4 * ANSWER_NANOS);
        if (null != failure)
        {
            throw new NotTested("no connection to run it on: " + failure);
        }
        return peer;
    }

    /** @return a valid CONNECT for the target: its planes, its pre-shared key, the rest the suite's defaults. */
    final ConnectRequest request()
    {
        final ConnectRequest r = new ConnectRequest();
        r.planes = target.planes();
        r.psk = target.psk();
        return r;
    }

    /**
     * A check passed by the target's silence shows compliance only while the target answers others: a target that
     * crashed on what it should have dropped is silent too. Called once the silence was heard.
     *
     * @return null when a valid cookie-less CONNECT made now draws a handshake answer (a RETRY, as S9.1 has it; a
     * REJECT, from a target at its connection limit, counts too: it is alive, and no state is made on it), else why
     * the silence shows nothing.
     */
    final String answersStill() throws IOException
    {
        final ConnectRequest r = request();
        final ScriptedPeer witness = new ScriptedPeer(link, r);
        for (int attempt = 0; attempt < 3; attempt++)
        {
            final Packet answer = witness.connectOnce(r, ANSWER_NANOS);
            if (null != answer && answer.icrcValid)
            {
                return null;
            }
        }
        return "silent, but a valid CONNECT made after it drew no answer either (3 tries, " +
            ANSWER_NANOS / ScriptedPeer.MILLI + " ms each): the target stopped answering, so its silence shows nothing";
    }

    /** Closes a connection on the wire (S9.2), best effort: a group's connection must not count against limits. */
    static void closeQuietly(final ScriptedPeer peer)
    {
        if (null == peer || null == peer.sendKey)
        {
            return;
        }
        try
        {
            final long token = ConnectRequest.randomLong();
            for (int attempt = 0; attempt < 3; attempt++)
            {
                peer.send(peer.close(token, peer.sendKey));
                if (null != peer.awaitPacket(ANSWER_NANOS / 2, p -> p.opcode() == SprayWire.CLOSE_ACK &&
                    p.destQp() == peer.localCid()))
                {
                    return;
                }
            }
        }
        catch (final IOException | RuntimeException ignored)
        {
            // the target forgets it after its idle timeout (S12.10)
        }
    }

    /** @return {@code length} bytes of a pattern that differs per seed. */
    static byte[] pattern(final int length, final int seed)
    {
        final byte[] data = new byte[length];
        int x = seed * 0x9E3779B1 + 1;
        for (int i = 0; i < length; i++)
        {
            x ^= x << 13;
            x ^= x >>> 17;
            x ^= x << 5;
            data[i] = (byte)x;
        }
        return data;
    }

    /** @return a list of failures joined, or null when there are none. */
    static String failures(final List<String> failures)
    {
        return failures.isEmpty() ? null : String.join("; ", failures);
    }

    static List<String> newFailures()
    {
        return new ArrayList<>();
    }

    /**
     * Sends the packet {@code bad} builds at the next PSN p of path 0, then a valid PROBE at p + 1: the ACK must
     * show p missing (cumulativePsn p, SACK bit 1). A valid PROBE at p then restores the path. The bad packet
     * goes through {@code via} (the connection's link, or another address's).
     *
     * @return null when p was not recorded, else what was seen.
     */
    static String notRecorded(final ScriptedPeer c, final UdpLink via, final IntFunction<DataChecks.Sent> bad)
        throws IOException
    {
        final int p = c.takePsn(0);
        final DataChecks.Sent sent = bad.apply(p);
        via.send(sent.body(), sent.corruptIcrc());
        final List<Packet> answers = c.collect(SILENCE_NANOS);
        final List<String> f = newFailures();
        for (final Packet a : answers)
        {
            if (a.destQp() == c.localCid() && a.opcode() != SprayWire.ACK && !SprayWire.isData(a.opcode()) &&
                a.opcode() != SprayWire.PROBE)
            {
                f.add("answered with " + a);
            }
            if (c.isAckOf(a, 0) && SprayWire.psnDistance(p, a.h24(5)) > 0)
            {
                f.add("an ACK counts its PSN received (cumulativePsn " + a.h24(5) + ")");
            }
        }
        final int above = c.takePsn(0);
        c.send(c.probe(0, above, 0, c.sendKey));
        final Packet ack = c.awaitPacket(ANSWER_NANOS, a -> c.isAckOf(a, 0) &&
            (a.h24(5) == p && ScriptedPeer.sackBit(a, 1) || SprayWire.psnDistance(p, a.h24(5)) > 0));
        if (null == ack)
        {
            f.add("no ACK of the PROBE that follows it; last: " + DataChecks.describeAck(c.lastAck(c.received, 0)));
        }
        else if (ack.h24(5) != p)
        {
            f.add("its PSN was recorded: the next ACK has cumulativePsn " + ack.h24(5) + ", not " + p);
        }
        c.send(c.probe(0, p, 0, c.sendKey)); // fills p: the path is whole again
        final int all = (above + 1) & SprayWire.PSN_MASK;
        c.awaitPacket(ANSWER_NANOS, a -> c.isAckOf(a, 0) && a.h24(5) == all);
        return failures(f);
    }

    /** @return the first packets the target sent since {@code from}: opcode, path, PSN, flags, ms after the first. */
    static String sentMeanwhile(final ScriptedPeer c, final int from)
    {
        final StringBuilder text = new StringBuilder();
        final List<Packet> packets = c.received.subList(from, c.received.size());
        for (int i = 0; i < Math.min(SENT_SHOWN, packets.size()); i++)
        {
            final Packet p = packets.get(i);
            text.append(i == 0 ? "" : ", ").append(SprayWire.opcodeName(p.opcode())).append(p.wholeHeaders() ?
                " path " + p.h8(0) + " psn " + p.psn() + " flags 0x" + Integer.toHexString(p.h8(1)) : "")
                .append(" at ").append(ms(p.arrivalNanos - packets.get(0).arrivalNanos));
        }
        final int more = packets.size() - SENT_SHOWN;
        return packets.isEmpty() ? "nothing" : text + (more > 0 ? " and " + more + " more" : "");
    }

    /** @return {@code nanos} in milliseconds, to a tenth. */
    static String ms(final long nanos)
    {
        return String.format("%.1f ms", nanos / 1e6);
    }

    /** @return whether the target acknowledges a probe (S5.2) of path 0 at the suite's next PSN, as a live one does. */
    static boolean probeAnswered(final ScriptedPeer c) throws IOException
    {
        final int psn = c.takePsn(0);
        c.send(c.probe(0, psn, 0, c.sendKey));
        final int expect = (psn + 1) & SprayWire.PSN_MASK;
        return null != c.awaitPacket(ANSWER_NANOS, p -> c.isAckOf(p, 0) && p.h24(5) == expect);
    }

    /**
     * S10.2-3: the limits a CONNECT or CONNECT_ACK advertises: a failure when either is 0 (not advertised; the
     * fields' widths bound them above, 255 and 65,535), else null, the values recorded as measured.
     */
    final String advertisedLimits(final Packet conh)
    {
        final int window = conh.h16(SprayWire.CONH_WINDOW);
        final int reads = conh.h8(SprayWire.CONH_READS);
        measured("window " + window + ", reads " + reads);
        final List<String> f = newFailures();
        if (window == 0)
        {
            f.add("window 0 (not advertised)");
        }
        if (reads == 0)
        {
            f.add("reads 0 (not advertised)");
        }
        return failures(f);
    }
}
