package io.spraynic.conformance;

import java.io.IOException;
import java.util.List;

/**
 * The target as a sender (S6.5-S6.7: it recovers what the suite pretends to lose), as a refuser (S9.3, S9.3.1:
 * NACKs and their numbers) and at teardown (S9.2, S9.5: CLOSE, CLOSE_ACK, a forgotten connection).
 */
final class PeerChecks extends Checks
{
    /** Tries of sender.stale-ack before the target's own timer makes it NOT_TESTED. */
    private static final int STALE_ACK_ATTEMPTS = 3;
    /** QUERYs errors.query sends, each waited on {@link #ANSWER_NANOS}, before it says none was answered. */
    static final int QUERY_TRIES = 3;

    private final long base;
    private final int rkey;

    PeerChecks(final Target target, final UdpLink link, final List<CheckResult> results, final long regionOffset)
    {
        super(target, link, results);
        this.base = target.regionAddress() + regionOffset;
        this.rkey = target.rkey();
    }

    void runSender(final ConnectRequest request) throws IOException
    {
        request.paths = 1; // every READ response on path 0: the suite knows which PSN it drops
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        final byte[] data = pattern(8 * 1024, 20);
        final boolean[] written = new boolean[1];
        final boolean[] whole = new boolean[1]; // path 0 has no hole left by an earlier check
        must("sender.retransmit-gap", "S6.6-1", "a PSN the suite's ACKs show missing is sent again with the same PSN " +
            "and RETRANSMIT set, and the READ completes", () ->
        {
            DataChecks.requireConnection(why);
            written[0] = writeAll(c, data);
            if (!written[0])
            {
                throw new NotTested("the WRITE of the bytes to read back was not acknowledged");
            }
            final int lost = (c.inboundCumulative(0) + 2) & SprayWire.PSN_MASK;
            c.dropOnce(0, lost);
            final ScriptedPeer.InboundRead read = c.read(0, base, rkey, data.length, 4 * ANSWER_NANOS);
            final List<String> f = newFailures();
            if (!read.complete())
            {
                f.add("the READ did not complete: " + read.bytesPlaced + " of " + data.length + " B");
            }
            else if (!java.util.Arrays.equals(read.data, data))
            {
                f.add("the bytes read back differ from those written");
            }
            boolean again = false;
            for (final Packet p : read.packets)
            {
                if (p.psn() == lost)
                {
                    again = true;
                    if ((p.h8(1) & SprayWire.SETH_RETRANSMIT) == 0)
                    {
                        f.add("PSN " + lost + " came again without RETRANSMIT");
                    }
                }
            }
            if (!again)
            {
                f.add("PSN " + lost + " was never sent again on path 0 (READ_RESPONSE PSNs: " +
                    read.packets.stream().map(Packet::psn).toList() + ")");
            }
            return failures(f);
        });
        must("sender.tail-loss", "S6.7-1", "a lost last packet (no later packet shows the gap) is recovered: the " +
            "READ completes", () ->
        {
            DataChecks.requireConnection(why);
            if (!written[0])
            {
                throw new NotTested("no bytes written to read back");
            }
            final int half = data.length / 2;
            final int packets = (half + c.mtu - 1) / c.mtu;
            c.dropOnce(0, (c.inboundCumulative(0) + packets - 1) & SprayWire.PSN_MASK);
            final ScriptedPeer.InboundRead read = c.read(0, base, rkey, half, 4 * ANSWER_NANOS);
            if (!read.complete())
            {
                return "the READ did not complete: " + read.bytesPlaced + " of " + half + " B";
            }
            whole[0] = true;
            return java.util.Arrays.equals(read.data, java.util.Arrays.copyOf(data, half)) ? null :
                "the bytes read back differ from those written";
        });
        must("sender.stale-ack", "S5.1-2", "an ACK that repeats the last ackSequence and claims a lost " +
            "READ_RESPONSE received is ignored: the packet is sent again and the READ completes", () ->
        {
            DataChecks.requireConnection(why);
            if (!whole[0])
            {
                throw new NotTested("path 0 may keep a hole from sender.tail-loss, so the suite cannot tell which PSN " +
                    "comes next");
            }
            final int half = data.length / 2;
            final int packets = (half + c.mtu - 1) / c.mtu;
            if (packets < 2)
            {
                throw new NotTested("the READ fits one packet");
            }
            if (c.lastAckSequence(0) == 0)
            {
                throw new NotTested("the suite has sent no ACK on path 0 to repeat");
            }
            // The target's own timer may send the held-back PSN again before the suite's stale ACK goes out (a
            // loaded host); that attempt proves nothing either way, so it is let finish and tried again.
            for (int attempt = 1; ; attempt++)
            {
                final int lost = c.inboundCumulative(0);
                final int last = (lost + packets - 1) & SprayWire.PSN_MASK;
                c.dropOnce(0, lost);
                c.silent = true;
                final int msn = c.takeMsn(0);
                final ScriptedPeer.InboundRead read;
                try
                {
                    c.send(c.readRequest(0, 0, msn, base, rkey, half));
                    read = c.inboundRead(0, msn);
                    c.awaitPacket(ANSWER_NANOS, p -> p.opcode() == SprayWire.READ_RESPONSE &&
                        p.destQp() == c.localCid() && p.psn() == last);
                    if (c.inboundCumulative(0) != lost)
                    {
                        c.silent = false;
                        c.sendAck(0);
                        c.awaitPacket(4 * ANSWER_NANOS, p -> read.complete());
                        if (attempt == STALE_ACK_ATTEMPTS || !read.complete())
                        {
                            throw new NotTested("PSN " + lost + " came again before the suite's ACKs (by the target's " +
                                "timer), in " + attempt + " of " + STALE_ACK_ATTEMPTS + " attempts");
                        }
                        continue;
                    }
                    final int replayed = c.sendStaleAck(0, (last + 1) & SprayWire.PSN_MASK);
                    c.silent = false;
                    c.sendAck(0); // the truth: `lost` is missing, the rest received
                    c.awaitPacket(4 * ANSWER_NANOS, p -> read.complete());
                    if (!read.complete())
                    {
                        return "PSN " + lost + " never came again: the target took an ACK with ackSequence " + replayed +
                            ", not above the last it had, as acknowledging it (" + read.bytesPlaced + " of " + half +
                            " B read)";
                    }
                }
                finally
                {
                    c.silent = false;
                }
                return java.util.Arrays.equals(read.data, java.util.Arrays.copyOf(data, half)) ? null :
                    "the bytes read back differ from those written";
            }
        });
        must("wire.sender-tags", "S12.4-2", "every READ_RESPONSE, PROBE, ACK and NACK the target sent verifies " +
            "(message and control tags)", () ->
        {
            DataChecks.requireConnection(why);
            return DataChecks.controlTagFailures(c);
        });
        closeQuietly(c);
    }

    void runErrors(final ConnectRequest request) throws IOException
    {
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        final int stream = 1;
        final Packet[] nack = new Packet[1];
        final int[] refused = new int[2]; // msn, psn
        must("errors.bad-rkey", "S9.3-1", "a WRITE with a wrong R_Key draws a NACK REMOTE_ACCESS_ERROR naming its " +
            "message, and writes nothing", () ->
        {
            DataChecks.requireConnection(why);
            if (c.streams < 2)
            {
                throw new NotTested("the connection has one stream");
            }
            final byte[] zeros = new byte[256];
            if (!writeAll(c, zeros))
            {
                throw new NotTested("the WRITE of zeros was not acknowledged");
            }
            final byte[] data = pattern(256, 30);
            final int msn = c.takeMsn(stream);
            final ScriptedPeer.Message m = new ScriptedPeer.Message(SprayWire.WRITE, stream, msn, data.length, 0, base,
                rkey ^ 0x5A5A, 0);
            final int psn = c.takePsn(0);
            refused[0] = msn;
            refused[1] = psn;
            c.send(c.dataPacket(m, 0, psn, 0, data, SprayWire.SETH_LAST, true, c.tag(m)));
            nack[0] = c.awaitPacket(ANSWER_NANOS, p -> p.icrcValid && p.opcode() == SprayWire.NACK &&
                p.destQp() == c.localCid() && p.wholeHeaders());
            final List<String> f = newFailures();
            if (null == nack[0])
            {
                f.add("no NACK");
            }
            else
            {
                if (!nack[0].controlTagValid(c.receiveKey))
                {
                    f.add("the NACK's tag does not verify");
                }
                if (nack[0].h8(0) != SprayWire.SYNDROME_REMOTE_ACCESS_ERROR)
                {
                    f.add("syndrome " + nack[0].h8(0) + ", not 2 (REMOTE_ACCESS_ERROR)");
                }
                if (nack[0].h16(2) != stream || nack[0].h32(4) != msn)
                {
                    f.add("names (stream " + nack[0].h16(2) + ", msn " + nack[0].h32(4) + "), not (" + stream + ", " + msn + ")");
                }
                if (nack[0].h32(12) < 1)
                {
                    f.add("refusal number " + nack[0].h32(12) + " (numbers start at 1)");
                }
            }
            final String read = readBack(c, 0, base, rkey, zeros, "the zeros written before");
            if (null != read)
            {
                f.add("written: " + read);
            }
            return failures(f);
        });
        must("errors.refused-acknowledged", "S9.3.1-1", "the refused packet is still acknowledged at the path layer, " +
            "and the ACK's refusals count includes the NACK's number", () ->
        {
            DataChecks.requireConnection(why);
            if (null == nack[0])
            {
                throw new NotTested("no NACK to compare with");
            }
            final int after = (refused[1] + 1) & SprayWire.PSN_MASK;
            for (final Packet p : c.received)
            {
                if (c.isAckOf(p, 0) && SprayWire.psnDistance(after, p.h24(5)) >= 0)
                {
                    return Integer.compareUnsigned(p.h32(48), nack[0].h32(12)) >= 0 ? null :
                        "the ACK covering it says refusals " + p.h32(48) + " < the NACK's " + nack[0].h32(12);
                }
            }
            return "no ACK covers PSN " + refused[1];
        });
        must("errors.query", "S9.3.1-2", "a QUERY of the refused message is answered with its NACK again, same number",
            () ->
            {
                DataChecks.requireConnection(why);
                if (null == nack[0])
                {
                    throw new NotTested("no NACK to compare with");
                }
                // S9.3.1's sender asks again at an interval, since a QUERY or its answer may be lost: so does the
                // suite, and says which QUERY was answered (a target that answers none fails)
                Packet again = null;
                int asked = 0;
                long answeredIn = 0;
                while (null == again && asked < QUERY_TRIES)
                {
                    asked++;
                    final long sent = System.nanoTime();
                    c.send(c.query(stream, refused[0]));
                    again = c.awaitPacket(ANSWER_NANOS, p -> p.icrcValid && p.opcode() == SprayWire.NACK &&
                        p.destQp() == c.localCid() && p.wholeHeaders() && p.h32(4) == refused[0] && p.h16(2) == stream);
                    answeredIn = System.nanoTime() - sent;
                }
                if (null == again)
                {
                    return "no NACK answered any of " + QUERY_TRIES + " QUERYs sent " +
                        ANSWER_NANOS / ScriptedPeer.MILLI + " ms apart";
                }
                measured("the " + ordinal(asked) + " QUERY was answered, in " + answeredIn / 1_000 + " us" +
                    (asked > 1 ? " (no answer to the earlier within " + ANSWER_NANOS / ScriptedPeer.MILLI +
                    " ms each: lost or late)" : ""));
                return again.h8(0) == nack[0].h8(0) && again.h32(12) == nack[0].h32(12) ? null :
                    "answered syndrome " + again.h8(0) + " refusal " + again.h32(12) + "; the NACK said " +
                    nack[0].h8(0) + " refusal " + nack[0].h32(12);
            });
        must("errors.query-unseen", "S9.3.1-2", "a QUERY of a message the target never received (the next MSN of " +
            "stream 0, not sent) draws no ACCEPTED: a sender would complete a message nothing of which was placed", () ->
        {
            DataChecks.requireConnection(why);
            final int msn = c.peekMsn(0);
            c.send(c.query(0, msn));
            final Packet answer = c.awaitPacket(ANSWER_NANOS, p -> p.icrcValid && p.opcode() == SprayWire.NACK &&
                p.destQp() == c.localCid() && p.wholeHeaders() && p.h16(2) == 0 && p.h32(4) == msn);
            if (null == answer)
            {
                measured("no answer in " + ANSWER_NANOS / ScriptedPeer.MILLI + " ms");
                return answersStill();
            }
            measured("answered syndrome " + answer.h8(0));
            return answer.h8(0) != SprayWire.SYNDROME_ACCEPTED ? null : "answered ACCEPTED for (stream 0, msn " + msn +
                "), which it never received";
        });
        closeQuietly(c);
    }

    void runClose(final ConnectRequest request) throws IOException
    {
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        final long token = ConnectRequest.randomLong();
        must("close.bad-tag", "S9.2-2", "a CLOSE whose tag does not verify draws no CLOSE_ACK and leaves the " +
            "connection open", () ->
        {
            DataChecks.requireConnection(why);
            c.send(c.close(ConnectRequest.randomLong(), new long[]{c.sendKey[0], c.sendKey[1] ^ 1}));
            final List<String> f = newFailures();
            for (final Packet p : c.collect(SILENCE_NANOS))
            {
                // this connection's only: a late CLOSE_ACK of an earlier group's close is not this check's failure
                if (p.opcode() == SprayWire.CLOSE_ACK && p.length() >= SprayWire.BTH_LENGTH && p.destQp() == c.localCid())
                {
                    f.add("answered with " + p);
                }
            }
            if (!probeAnswered(c))
            {
                f.add("the connection no longer answers a PROBE");
            }
            return failures(f);
        });
        final Packet[] closeAck = new Packet[1];
        must("close.ack", "S9.2-1", "a CLOSE draws a CLOSE_ACK: the token echoed, the target's CID, a valid tag", () ->
        {
            DataChecks.requireConnection(why);
            c.send(c.close(token, c.sendKey));
            closeAck[0] = c.awaitPacket(ANSWER_NANOS, p -> p.icrcValid && p.opcode() == SprayWire.CLOSE_ACK &&
                p.destQp() == c.localCid());
            if (null == closeAck[0])
            {
                return "no CLOSE_ACK";
            }
            return closeAckFailures(c, closeAck[0], token);
        });
        must("close.forgotten", "S9.5-1", "a packet for a closed connection draws nothing", () ->
        {
            DataChecks.requireConnection(why);
            if (null == closeAck[0])
            {
                throw new NotTested("the connection was not closed");
            }
            return probeAnswered(c) ? "a PROBE to the closed connection was acknowledged" : answersStill();
        });
        must("close.repeat", "S9.2-3", "a CLOSE repeated after the CLOSE_ACK (as if it were lost) draws a CLOSE_ACK " +
            "again", () ->
        {
            DataChecks.requireConnection(why);
            if (null == closeAck[0])
            {
                throw new NotTested("the connection was not closed");
            }
            c.send(c.close(token, c.sendKey));
            final Packet again = c.awaitPacket(ANSWER_NANOS, p -> p.icrcValid && p.opcode() == SprayWire.CLOSE_ACK &&
                p.destQp() == c.localCid());
            return null == again ? "no CLOSE_ACK to the repeated CLOSE" : closeAckFailures(c, again, token);
        });
    }

    private static String ordinal(final int n)
    {
        return switch (n)
        {
            case 1 -> "first";
            case 2 -> "second";
            case 3 -> "third";
            default -> n + "th";
        };
    }

    private static String closeAckFailures(final ScriptedPeer c, final Packet ack, final long token)
    {
        final List<String> f = newFailures();
        if (!ack.wholeHeaders())
        {
            return "the CLOSE_ACK is shorter than its header";
        }
        if (ack.h64(20) != token)
        {
            f.add("token not echoed");
        }
        if (ack.h24(9) != c.remoteCid)
        {
            f.add("senderCid 0x" + Integer.toHexString(ack.h24(9)) + " is not the target's CID");
        }
        if (!ack.controlTagValid(c.receiveKey))
        {
            f.add("the tag does not verify with the target's send key");
        }
        return failures(f);
    }

    /** WRITEs {@code data} at this group's base on stream 0, path 0; true when acknowledged. */
    private boolean writeAll(final ScriptedPeer c, final byte[] data) throws IOException
    {
        return writeAcked(c, new ScriptedPeer.Message(SprayWire.WRITE, 0, c.takeMsn(0), data.length, 0, base, rkey, 0),
            data);
    }
}
