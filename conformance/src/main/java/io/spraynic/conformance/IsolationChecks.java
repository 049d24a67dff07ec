package io.spraynic.conformance;

import java.io.IOException;
import java.util.List;

/**
 * Error isolation (S9.4): after the target refused a message of one stream (a WRITE with a wrong R_Key, S9.3), it
 * places nothing of that stream's later messages, and goes on placing the connection's other streams and another
 * connection's messages on the same stream number. The suite opens two connections for it and reads the target's
 * memory back to judge.
 */
final class IsolationChecks extends Checks
{
    /** The stream the suite makes fail; stream 0 stays healthy and carries the READs that judge. */
    private static final int FAILED_STREAM = 1;
    private static final int SPAN = 1024;

    private final long base;
    private final int rkey;

    /** @param regionOffset where in the target's region this group writes ({@link #SPAN} bytes). */
    IsolationChecks(final Target target, final UdpLink link, final List<CheckResult> results, final long regionOffset)
    {
        super(target, link, results);
        this.base = target.regionAddress() + regionOffset;
        this.rkey = target.rkey();
    }

    void run(final HandshakeChecks handshake) throws IOException
    {
        final Connection first = open(handshake.request());
        final Connection second = open(handshake.request());
        final ScriptedPeer c = first.peer();
        final String why = null != first.why() ? first.why() : second.why();
        final boolean[] refused = new boolean[1];
        must("errors.flush-stream", "S9.4-1", "after a NACK REMOTE_ACCESS_ERROR on stream 1, the stream's next " +
            "WRITE (valid R_Key) is not placed", () ->
        {
            DataChecks.requireConnection(why);
            if (c.streams < 2)
            {
                throw new NotTested("the connection has one stream");
            }
            final byte[] zeros = new byte[SPAN];
            if (!writeAcked(c, write(c, 0, 0, rkey, zeros.length), zeros))
            {
                throw new NotTested("the WRITE of zeros was not acknowledged");
            }
            final byte[] refusedBytes = pattern(256, 60);
            final ScriptedPeer.Message bad = write(c, FAILED_STREAM, 0, rkey ^ 0x5A5A, refusedBytes.length);
            c.send(c.dataPacket(bad, 0, c.takePsn(0), 0, refusedBytes, SprayWire.SETH_LAST, true, c.tag(bad)));
            final Packet nack = c.awaitPacket(ANSWER_NANOS, p -> p.icrcValid && p.opcode() == SprayWire.NACK &&
                p.destQp() == c.localCid() && p.wholeHeaders() && p.h16(2) == FAILED_STREAM && p.h32(4) == bad.msn());
            if (null == nack || nack.h8(0) != SprayWire.SYNDROME_REMOTE_ACCESS_ERROR)
            {
                throw new NotTested("the WRITE with a wrong R_Key drew no NACK REMOTE_ACCESS_ERROR (errors.bad-rkey): " +
                    (null == nack ? "none" : "syndrome " + nack.h8(0)));
            }
            refused[0] = true;
            final byte[] later = pattern(256, 61);
            final boolean acked = writeAcked(c, write(c, FAILED_STREAM, 256, rkey, later.length), later);
            final String read = readBack(c, 0, base, rkey, zeros, "the zeros written before the refusal");
            if (null != read)
            {
                return "the later message of the refused stream was placed" + (acked ? "" : " (not acknowledged)") +
                    ": " + read;
            }
            return null;
        });
        must("errors.isolation-stream", "S9.4-2", "after the refusal on stream 1, a WRITE on stream 0 of the same " +
            "connection is placed and read back", () ->
        {
            DataChecks.requireConnection(why);
            if (!refused[0])
            {
                throw new NotTested("the target refused nothing on stream 1");
            }
            final byte[] data = pattern(256, 62);
            final List<String> f = newFailures();
            if (!writeAcked(c, write(c, 0, 512, rkey, data.length), data))
            {
                f.add("the WRITE on stream 0 was not acknowledged");
            }
            final String read = readBack(c, 0, base + 512, rkey, data, "the WRITE on stream 0");
            if (null != read)
            {
                f.add(read);
            }
            return failures(f);
        });
        must("errors.isolation-connection", "S9.4-2", "after the refusal on stream 1 of one connection, a WRITE on " +
            "stream 1 of another connection is placed and read back", () ->
        {
            DataChecks.requireConnection(why);
            if (!refused[0])
            {
                throw new NotTested("the target refused nothing on stream 1");
            }
            final ScriptedPeer other = second.peer();
            final byte[] data = pattern(256, 63);
            final List<String> f = newFailures();
            if (!writeAcked(other, write(other, FAILED_STREAM, 768, rkey, data.length), data))
            {
                f.add("the WRITE on the other connection was not acknowledged");
            }
            final String read = readBack(other, FAILED_STREAM, base + 768, rkey, data, "the other connection's WRITE");
            if (null != read)
            {
                f.add(read);
            }
            return failures(f);
        });
        closeQuietly(c);
        closeQuietly(second.peer());
    }

    /** @return a one-packet WRITE of {@code length} bytes at {@code offset} of this group's span, on {@code stream}. */
    private ScriptedPeer.Message write(final ScriptedPeer c, final int stream, final int offset, final int key,
        final int length)
    {
        return new ScriptedPeer.Message(SprayWire.WRITE, stream, c.takeMsn(stream), length, 0, base + offset, key, 0);
    }
}
