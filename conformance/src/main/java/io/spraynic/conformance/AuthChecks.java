package io.spraynic.conformance;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The responder's authentication and resource rules as the wire shows them: pre-shared-key mode (S12.2: a CONNECT
 * whose proof fails draws nothing, an authenticated one a CONNECT_ACK with a proof), a tampered data packet (S12.4),
 * a NACK for a message the target never sent (S12.8), the per-source connection limit (S12.9), and liveness
 * (S12.10: keepalives, and the close of a connection that hears nothing).
 */
final class AuthChecks extends Checks
{
    private final long base;
    private final int rkey;

    AuthChecks(final Target target, final UdpLink link, final List<CheckResult> results, final long regionOffset)
    {
        super(target, link, results);
        this.base = target.regionAddress() + regionOffset;
        this.rkey = target.rkey();
    }

    void runPsk(final HandshakeChecks handshake) throws IOException
    {
        for (final int corruption : new int[]{1, -1})
        {
            final String id = corruption > 0 ? "psk.bad-proof" : "psk.no-proof";
            must(id, "S12.2-1", corruption > 0 ? "a CONNECT whose proof does not verify with the pre-shared key draws " +
                "no answer" : "a CONNECT without a proof (zeros) draws no answer", () ->
            {
                requirePsk();
                final ConnectRequest r = handshake.request();
                if (corruption < 0)
                {
                    r.psk = null; // no proof: the block's last 16 bytes stay zero
                }
                else
                {
                    r.proofCorruption = corruption;
                }
                final Packet answer = new ScriptedPeer(link, r).connectOnce(r, SILENCE_NANOS);
                return null == answer ? answersStill() : "answered with " + answer + " (S12.2: dropped silently, " +
                    "no REJECT)";
            });
        }
        must("psk.accept", "S12.2-2", "an authenticated CONNECT is accepted: the CONNECT_ACK's proof verifies and the " +
            "connection's keys are salted with the pre-shared key", () ->
        {
            requirePsk();
            final ScriptedPeer c = new ScriptedPeer(link, handshake.request());
            final String failure = c.establish(4 * ANSWER_NANOS);
            if (null != failure)
            {
                return failure;
            }
            try
            {
                final int psn = c.takePsn(0);
                c.send(c.probe(0, psn, 0, c.sendKey));
                final int expect = (psn + 1) & SprayWire.PSN_MASK;
                return null != c.awaitPacket(ANSWER_NANOS, a -> c.isAckOf(a, 0) && a.h24(5) == expect) ? null :
                    "a PROBE tagged with the PSK-salted key drew no ACK that verifies with it";
            }
            finally
            {
                closeQuietly(c);
            }
        });
    }

    private void requirePsk() throws NotTested
    {
        if (null == target.psk())
        {
            throw new NotTested("the target runs without a pre-shared key (give the suite its key: --psk-file)");
        }
    }

    void runMessages(final ConnectRequest request) throws IOException
    {
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        must("security.tampered-header", "S12.4-1", "a WRITE whose header was changed after it was tagged (another " +
            "address in the RETH) is dropped: PSN not recorded, nothing placed", () ->
        {
            DataChecks.requireConnection(why);
            final byte[] zeros = new byte[256];
            if (!writeAcked(c, write(c, zeros.length, 1024), zeros))
            {
                throw new NotTested("the WRITE of zeros was not acknowledged");
            }
            final byte[] data = pattern(256, 50);
            final ScriptedPeer.Message m = write(c, data.length, 0);
            final ScriptedPeer.Message moved = new ScriptedPeer.Message(m.opcode(), m.stream(), m.msn(), m.length(),
                m.rsn(), m.base() + 1024, m.rkey(), m.immediate());
            final List<String> f = newFailures();
            add(f, notRecorded(c, c.link(), psn -> new DataChecks.Sent(c.dataPacket(moved, 0, psn, 0, data,
                SprayWire.SETH_LAST, true, c.tag(m)), false)));
            add(f, readBack(c, 1, base + 1024, rkey, zeros, "the zeros written before"));
            return failures(f);
        });
        must("security.nack-unmatched", "S12.8-1", "a NACK (tag valid) naming a message the target never sent " +
            "changes nothing: the connection's WRITEs and READs go on", () ->
        {
            DataChecks.requireConnection(why);
            for (final int stream : new int[]{0, 1})
            {
                c.send(FrameBuilder.bth(SprayWire.NACK, c.remoteCid, 0, false)
                    .u8(SprayWire.SYNDROME_REMOTE_ACCESS_ERROR).u8(0).u16(stream).u32(1 << 20).u32(0).u32(1)
                    .controlTag(c.sendKey).bytes());
            }
            final List<String> f = newFailures();
            for (final Packet p : c.collect(SILENCE_NANOS))
            {
                if ((p.opcode() == SprayWire.CLOSE || p.opcode() == SprayWire.NACK) && p.length() >= SprayWire.BTH_LENGTH &&
                    p.destQp() == c.localCid()) // this connection's only, as in close.bad-tag
                {
                    f.add("answered with " + p);
                }
            }
            final byte[] data = pattern(2048, 51);
            if (!writeAcked(c, write(c, data.length, 2048), data))
            {
                f.add("a WRITE after the NACK was not acknowledged");
            }
            add(f, readBack(c, 0, base + 2048, rkey, data, "the WRITE's bytes (stream 0)"));
            add(f, readBack(c, 1, base + 2048, rkey, data, "the WRITE's bytes (stream 1)"));
            return failures(f);
        });
        closeQuietly(c);
    }

    void runLimits(final HandshakeChecks handshake) throws IOException
    {
        final List<ScriptedPeer> open = new ArrayList<>();
        final int limit = target.connectionLimit();
        must("limits.source", "S12.9-1", "a CONNECT beyond the target's connection limit (" + limit + " from one " +
            "source) is refused with CONNECT_REJECT SOURCE_LIMIT or NO_RESOURCES", () ->
        {
            for (int i = 0; i <= limit; i++)
            {
                final ScriptedPeer c = new ScriptedPeer(link, handshake.request());
                final String failure = c.establish(4 * ANSWER_NANOS);
                if (null == failure)
                {
                    open.add(c);
                    continue;
                }
                if (failure.equals("CONNECT_REJECT reason " + SprayWire.REASON_SOURCE_LIMIT) ||
                    failure.equals("CONNECT_REJECT reason " + SprayWire.REASON_NO_RESOURCES))
                {
                    return i == 0 ? "refused the first connection: " + failure : null;
                }
                return "connection " + (i + 1) + ": " + failure;
            }
            return (limit + 1) + " connections from one source accepted; the limit is " + limit;
        });
        must("limits.released", "S12.9-1", "a connection that closes stops counting: after a CLOSE the next CONNECT " +
            "is accepted", () ->
        {
            if (open.isEmpty())
            {
                throw new NotTested("no connection open to close");
            }
            closeQuietly(open.removeLast());
            final ScriptedPeer c = new ScriptedPeer(link, handshake.request());
            final String failure = c.establish(4 * ANSWER_NANOS);
            if (null == failure)
            {
                open.add(c);
            }
            return failure;
        });
        for (final ScriptedPeer c : open)
        {
            closeQuietly(c);
        }
    }

    void runLiveness(final ConnectRequest request) throws IOException
    {
        final double idle = target.idleTimeoutSeconds();
        final long keepaliveNanos = (long)(idle / 3 * 1e9);
        final boolean testable = idle > 0 && idle <= 12;
        final Connection connection = testable ? open(request) : new Connection(null, idle <= 0 ?
            "the target's idle timeout is off" : "the target's idle timeout (" + idle + " s) is longer than the " +
            "suite waits (12 s; give the target --idle-timeout 3 and the suite the same)");
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        must("liveness.keepalive", "S12.10-1", "a connection idle for keepaliveInterval (idleTimeout / 3) draws a " +
            "keepalive: an ACK of path 0, tagged", () ->
        {
            DataChecks.requireConnection(why);
            final long start = System.nanoTime();
            final Packet keepalive = c.awaitPacket(keepaliveNanos * 3 / 2 + ANSWER_NANOS, p -> c.isAckOf(p, 0));
            if (null == keepalive)
            {
                return "no ACK of path 0 within " + (keepaliveNanos * 3 / 2 + ANSWER_NANOS) / ScriptedPeer.MILLI +
                    " ms of silence";
            }
            final long after = System.nanoTime() - start;
            return after < keepaliveNanos / 2 ? "the keepalive came after " + after / ScriptedPeer.MILLI + " ms, well " +
                "before keepaliveInterval (" + keepaliveNanos / ScriptedPeer.MILLI + " ms)" : null;
        });
        must("liveness.idle-close", "S12.10-2", "a connection whose peer stays silent for idleTimeout is closed: a " +
            "PROBE after it draws nothing", () ->
        {
            DataChecks.requireConnection(why);
            // the suite sent nothing since the handshake (it answers no keepalive), so the target heard nothing
            c.collect((long)(idle * 1e9) + keepaliveNanos / 4 + ANSWER_NANOS);
            final int psn = c.takePsn(0);
            c.send(c.probe(0, psn, 0, c.sendKey));
            final int expect = (psn + 1) & SprayWire.PSN_MASK;
            return null == c.awaitPacket(ANSWER_NANOS, p -> c.isAckOf(p, 0) && p.h24(5) == expect) ? answersStill() :
                "a PROBE after " + idle + " s of silence was acknowledged: the connection is still open";
        });
    }

    private ScriptedPeer.Message write(final ScriptedPeer c, final int length, final long offset)
    {
        return new ScriptedPeer.Message(SprayWire.WRITE, 0, c.takeMsn(0), length, 0, base + offset, rkey, 0);
    }

    private static void add(final List<String> failures, final String failure)
    {
        if (null != failure)
        {
            failures.add(failure);
        }
    }
}
