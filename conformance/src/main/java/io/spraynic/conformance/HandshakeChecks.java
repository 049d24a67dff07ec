package io.spraynic.conformance;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * Connection set-up as the responder must do it (S9.1, S9.1.1, S5.4, S5.6): the stateless cookie, the
 * CONNECT_ACK, version handling, every parameter check of step 2 and a CONNECT with a bad ICRC. The suite plays
 * the initiator; each check sends fresh CONNECTs (own CID, token and key pair).
 */
final class HandshakeChecks extends Checks
{
    HandshakeChecks(final Target target, final UdpLink link, final List<CheckResult> results)
    {
        super(target, link, results);
    }

    void run() throws IOException
    {
        final ConnectRequest request = request();
        final ScriptedPeer peer = new ScriptedPeer(link, request);
        final Packet[] retry = new Packet[1];
        must("handshake.retry", "S9.1-3", "a CONNECT without a cookie draws a CONNECT_RETRY with one", () ->
        {
            final int connectBytes = request.frame().length + SprayWire.ICRC_LENGTH;
            retry[0] = peer.connectOnce(request, ANSWER_NANOS);
            if (null == retry[0])
            {
                return "no answer to a valid CONNECT within " + ANSWER_NANOS / ScriptedPeer.MILLI + " ms";
            }
            final List<String> f = newFailures();
            expectOpcode(retry[0], SprayWire.CONNECT_RETRY, f);
            answerFields(retry[0], request, f);
            if (retry[0].length() < SprayWire.BTH_LENGTH + SprayWire.CONH_LENGTH + 16)
            {
                f.add("the RETRY holds no handshake block");
            }
            else if (isZero(retry[0].hBytes(SprayWire.CONH_LENGTH, 16)))
            {
                f.add("the RETRY's cookie is zero");
            }
            if (retry[0].length() > connectBytes)
            {
                f.add("the RETRY (" + retry[0].length() + " B) is larger than the CONNECT (" + connectBytes + " B)");
            }
            return failures(f);
        });
        final boolean haveCookie = null != retry[0] && retry[0].opcode() == SprayWire.CONNECT_RETRY &&
            retry[0].length() >= SprayWire.BTH_LENGTH + SprayWire.CONH_LENGTH + 16;
        final Packet[] ack = new Packet[1];
        must("handshake.accept", "S9.1-4", "a CONNECT with the RETRY's cookie draws a valid CONNECT_ACK", () ->
        {
            if (!haveCookie)
            {
                throw new NotTested("no RETRY with a cookie to echo");
            }
            request.cookie = retry[0].hBytes(SprayWire.CONH_LENGTH, 16);
            ack[0] = peer.connectOnce(request, ANSWER_NANOS);
            if (null == ack[0])
            {
                return "no answer to the CONNECT with the cookie";
            }
            final List<String> f = newFailures();
            expectOpcode(ack[0], SprayWire.CONNECT_ACK, f);
            if (!f.isEmpty())
            {
                return failures(f);
            }
            answerFields(ack[0], request, f);
            if (ack[0].h24(9) == 0)
            {
                f.add("senderCid is 0");
            }
            if (ack[0].h8(2) < 1 || ack[0].h8(2) > 64)
            {
                f.add("paths " + ack[0].h8(2) + " outside 1..64");
            }
            if (!validMtu(ack[0].h16(4)))
            {
                f.add("mtu " + ack[0].h16(4) + " is not 256, 512, 1024, 2048 or 4096");
            }
            if (ack[0].h8(3) != request.planes)
            {
                f.add("planes " + ack[0].h8(3) + ", the CONNECT said " + request.planes);
            }
            final String accepted = peer.accept(ack[0]);
            if (null != accepted)
            {
                f.add(accepted);
            }
            return failures(f);
        });
        must("handshake.advertised-limits", "S10.2-3", "the CONNECT_ACK advertises the target's inbound message " +
            "window and the READs it serves at once (CONH window and reads not 0)", () ->
        {
            if (null == ack[0] || ack[0].opcode() != SprayWire.CONNECT_ACK)
            {
                throw new NotTested("no CONNECT_ACK to read");
            }
            return advertisedLimits(ack[0]);
        });
        must("handshake.repeat", "S9.1-5", "a repeated CONNECT draws the same CONNECT_ACK (no second connection)", () ->
        {
            if (null == ack[0] || ack[0].opcode() != SprayWire.CONNECT_ACK)
            {
                throw new NotTested("no CONNECT_ACK to compare with");
            }
            final Packet again = peer.connectOnce(request, ANSWER_NANOS);
            if (null == again || again.opcode() != SprayWire.CONNECT_ACK)
            {
                return "the repeated CONNECT drew " + again;
            }
            if (again.h24(9) != ack[0].h24(9) || !Arrays.equals(again.hBytes(SprayWire.CONH_LENGTH + 16, 32),
                ack[0].hBytes(SprayWire.CONH_LENGTH + 16, 32)))
            {
                return "the second CONNECT_ACK names CID 0x" + Integer.toHexString(again.h24(9)) + " or another key " +
                    "(first: CID 0x" + Integer.toHexString(ack[0].h24(9)) + ")";
            }
            return null;
        });
        closeQuietly(peer);

        must("handshake.bad-cookie", "S9.1-3", "a CONNECT with a cookie the target did not issue draws a RETRY", () ->
        {
            final ConnectRequest r = request();
            Arrays.fill(r.cookie, (byte)0x5A);
            final Packet answer = new ScriptedPeer(link, r).connectOnce(r, ANSWER_NANOS);
            if (null == answer)
            {
                return "no answer";
            }
            final List<String> f = newFailures();
            expectOpcode(answer, SprayWire.CONNECT_RETRY, f);
            return failures(f);
        });
        for (final int version : new int[]{1, 3, 255})
        {
            must("handshake.version-" + version, "S9.1-1", "a CONNECT of version " + version +
                " draws CONNECT_REJECT VERSION_UNSUPPORTED carrying version 2", () ->
                reject(r -> r.version = version, SprayWire.REASON_VERSION_UNSUPPORTED));
        }
        must("handshake.reserved-flag", "S9.1-2", "a CONNECT with a reserved CONH flag bit set is rejected (BAD_PARAMETERS)",
            () -> reject(r -> r.flags = 0x02, SprayWire.REASON_BAD_PARAMETERS));
        must("handshake.planes", "S9.1-2", "a CONNECT whose planes differ from the target's is rejected (BAD_PARAMETERS)",
            () -> reject(r -> r.planes = target.planes() + 1, SprayWire.REASON_BAD_PARAMETERS));
        must("handshake.paths-0", "S9.1-2", "a CONNECT with paths 0 is rejected (BAD_PARAMETERS)",
            () -> reject(r -> r.paths = 0, SprayWire.REASON_BAD_PARAMETERS));
        must("handshake.paths-65", "S9.1-2", "a CONNECT with paths 65 is rejected (BAD_PARAMETERS)",
            () -> reject(r -> r.paths = 65, SprayWire.REASON_BAD_PARAMETERS));
        must("handshake.mtu", "S9.1-2", "a CONNECT with an MTU of 1000 is rejected (BAD_PARAMETERS)",
            () -> reject(r -> r.mtu = 1000, SprayWire.REASON_BAD_PARAMETERS));
        must("handshake.cid-0", "S9.1-2", "a CONNECT with senderCid 0 is rejected (BAD_PARAMETERS)",
            () -> reject(r -> r.senderCid = 0, SprayWire.REASON_BAD_PARAMETERS));
        must("handshake.destqp", "S9.1-2", "a CONNECT with a non-zero DestQP is rejected (BAD_PARAMETERS)",
            () -> reject(r -> r.destQp = 0x123456, SprayWire.REASON_BAD_PARAMETERS));
        must("handshake.short-block", "S9.1-2", "a CONNECT whose payload is shorter than the handshake block is " +
            "rejected (BAD_PARAMETERS)", () -> reject(r -> r.payloadLength = 32, SprayWire.REASON_BAD_PARAMETERS));
        must("handshake.bad-icrc", "S2.6-1", "a CONNECT with a wrong ICRC draws no answer", () ->
        {
            final ConnectRequest r = request();
            final Packet answer = new ScriptedPeer(link, r).connectOnce(r, SILENCE_NANOS, true);
            return null == answer ? answersStill() : "answered with " + answer;
        });
    }

    /** Sends a CONNECT changed by {@code change} (with no cookie) and expects a REJECT with {@code reason}. */
    private String reject(final Consumer<ConnectRequest> change, final int reason) throws IOException
    {
        final ConnectRequest r = request();
        change.accept(r);
        final int cid = r.senderCid;
        final Packet answer = new ScriptedPeer(link, r).connectOnce(r, ANSWER_NANOS);
        if (null == answer)
        {
            return "no answer within " + ANSWER_NANOS / ScriptedPeer.MILLI + " ms (a refused CONNECT must be rejected)";
        }
        final List<String> f = newFailures();
        expectOpcode(answer, SprayWire.CONNECT_REJECT, f);
        if (!f.isEmpty())
        {
            return failures(f);
        }
        if (answer.h8(28) != reason)
        {
            f.add("reason " + answer.h8(28) + ", expected " + reason);
        }
        if (answer.h8(0) != SprayWire.VERSION)
        {
            f.add("the REJECT carries version " + answer.h8(0) + ", not the responder's (2)");
        }
        if (answer.h64(20) != r.token)
        {
            f.add("token not echoed");
        }
        if (answer.destQp() != cid)
        {
            f.add("DestQP 0x" + Integer.toHexString(answer.destQp()) + " is not the initiator's CID");
        }
        if (answer.length() != SprayWire.BTH_LENGTH + SprayWire.CONH_LENGTH + SprayWire.ICRC_LENGTH)
        {
            f.add("a REJECT has no payload; this one is " + answer.length() + " B");
        }
        return failures(f);
    }

    private static void expectOpcode(final Packet p, final int opcode, final List<String> f)
    {
        if (!p.icrcValid)
        {
            f.add("answer has a wrong ICRC: " + p);
        }
        else if (p.opcode() != opcode)
        {
            f.add("expected " + SprayWire.opcodeName(opcode) + ", got " + p);
        }
        else if (!p.wholeHeaders())
        {
            f.add("the answer is shorter than its headers: " + p);
        }
    }

    /** The fields every answer to a CONNECT carries (S5.4): DestQP the initiator's CID, the token echoed, version 2. */
    private static void answerFields(final Packet p, final ConnectRequest r, final List<String> f)
    {
        if (p.destQp() != r.senderCid)
        {
            f.add("DestQP is not the initiator's CID");
        }
        if (p.h64(20) != r.token)
        {
            f.add("token not echoed");
        }
        if (p.h8(0) != SprayWire.VERSION)
        {
            f.add("version " + p.h8(0));
        }
        if (p.tver() != 0)
        {
            f.add("BTH TVer " + p.tver());
        }
    }

    static boolean validMtu(final int mtu)
    {
        return mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096;
    }

    static boolean isZero(final byte[] bytes)
    {
        for (final byte b : bytes)
        {
            if (b != 0)
            {
                return false;
            }
        }
        return true;
    }
}
