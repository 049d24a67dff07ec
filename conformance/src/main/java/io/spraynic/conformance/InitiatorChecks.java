package io.spraynic.conformance;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.List;

/**
 * The target as an initiator (S9.1 steps 1, 4 and 6): the suite plays a serving NIC that publishes its address
 * in an exchange directory ({@code nic.addr}, as {@code spraynic nic --exchange} does), waits for the target's
 * CONNECT (e.g. from {@code spraynic transfer --peer-kind nic --exchange DIR}), checks it, answers a RETRY with a
 * cookie, checks that the CONNECT comes back with it, and rejects that with {@code VERSION_UNSUPPORTED}: the
 * target must then stop trying.
 */
final class InitiatorChecks extends Checks
{
    /** How long the suite waits for the target to start connecting. */
    static final long FIRST_CONNECT_NANOS = 60_000 * ScriptedPeer.MILLI;

    private final Path exchange;

    InitiatorChecks(final Target target, final UdpLink link, final List<CheckResult> results, final Path exchange)
    {
        super(target, link, results);
        this.exchange = exchange;
    }

    /**
     * Publishes the suite as a serving NIC in {@code exchange}: its address on one plane and a region (which no
     * transfer reaches: the handshake is refused).
     */
    static void publish(final Path exchange, final InetSocketAddress local) throws IOException
    {
        publish(exchange, local, 1L << 32, 1, 1L << 30);
    }

    /** Publishes the suite as a serving NIC whose exposed region is {@code length} bytes at {@code address}. */
    static void publish(final Path exchange, final InetSocketAddress local, final long address, final int rkey,
        final long length) throws IOException
    {
        Files.createDirectories(exchange);
        final Path tmp = exchange.resolve("nic.addr.tmp");
        // made afresh, never through a link or into a pipe planted at the name; the rename replaces a link at the
        // final name rather than writing through it
        Files.deleteIfExists(tmp);
        try (java.io.OutputStream out = Files.newOutputStream(tmp, java.nio.file.StandardOpenOption.CREATE_NEW,
            java.nio.file.StandardOpenOption.WRITE, java.nio.file.LinkOption.NOFOLLOW_LINKS))
        {
            out.write(("planes=1 ip.0=" + local.getAddress().getHostAddress() + " addr=" + address + " rkey=" +
                Integer.toUnsignedString(rkey) + " length=" + length).getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        Files.move(tmp, exchange.resolve("nic.addr"), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    void run() throws IOException
    {
        publish(exchange, link.local());
        final ScriptedPeer listener = new ScriptedPeer(link, new ConnectRequest());
        final Packet first = listener.awaitPacket(FIRST_CONNECT_NANOS, p -> p.icrcValid && p.opcode() == SprayWire.CONNECT);
        must("initiator.connect", "S9.1-6", "the target's first CONNECT carries version 2, DestQP 0, a CID, valid " +
            "limits, no cookie and a public key", () ->
        {
            if (null == first)
            {
                throw new NotTested("no CONNECT from the target within " + FIRST_CONNECT_NANOS / 1_000_000_000L + " s");
            }
            final List<String> f = newFailures();
            if (!first.wholeHeaders() || first.length() < SprayWire.BTH_LENGTH + SprayWire.CONH_LENGTH +
                SprayWire.HSB_LENGTH + SprayWire.ICRC_LENGTH)
            {
                return "the CONNECT is shorter than CONH and a handshake block: " + first;
            }
            if (first.h8(0) != SprayWire.VERSION)
            {
                f.add("version " + first.h8(0));
            }
            if (first.destQp() != 0)
            {
                f.add("DestQP 0x" + Integer.toHexString(first.destQp()));
            }
            if (first.h24(9) == 0)
            {
                f.add("senderCid 0");
            }
            if (first.h8(2) < 1 || first.h8(2) > 64)
            {
                f.add("paths " + first.h8(2));
            }
            if (first.h8(3) < 1)
            {
                f.add("planes 0");
            }
            if (!HandshakeChecks.validMtu(first.h16(4)))
            {
                f.add("mtu " + first.h16(4));
            }
            if (!HandshakeChecks.isZero(first.hBytes(SprayWire.CONH_LENGTH, 16)))
            {
                f.add("a cookie on the first try");
            }
            if (HandshakeChecks.isZero(first.hBytes(SprayWire.CONH_LENGTH + 16, 32)))
            {
                f.add("no public key");
            }
            return failures(f);
        });
        final byte[] cookie = new byte[16];
        Arrays.fill(cookie, (byte)0xC5);
        final Packet[] again = new Packet[1];
        must("initiator.retry-echo", "S9.1-7", "after a RETRY the target sends the CONNECT again with its cookie, " +
            "the same token, CID and public key", () ->
        {
            if (null == first || !first.wholeHeaders())
            {
                throw new NotTested("no CONNECT to answer");
            }
            link.send(answer(first, SprayWire.CONNECT_RETRY, 0).bytes(cookie).zeros(48).bytes(), false);
            again[0] = listener.awaitPacket(2 * ANSWER_NANOS, p -> p.icrcValid && p.opcode() == SprayWire.CONNECT &&
                p.wholeHeaders() && p.h64(20) == first.h64(20) &&
                p.length() >= SprayWire.BTH_LENGTH + SprayWire.CONH_LENGTH + SprayWire.HSB_LENGTH &&
                !HandshakeChecks.isZero(p.hBytes(SprayWire.CONH_LENGTH, 16)));
            if (null == again[0])
            {
                return "no CONNECT with a cookie and the same token after the RETRY";
            }
            final List<String> f = newFailures();
            if (!Arrays.equals(again[0].hBytes(SprayWire.CONH_LENGTH, 16), cookie))
            {
                f.add("the cookie is not the RETRY's");
            }
            if (again[0].h24(9) != first.h24(9))
            {
                f.add("another CID");
            }
            if (!Arrays.equals(again[0].hBytes(SprayWire.CONH_LENGTH + 16, 32), first.hBytes(SprayWire.CONH_LENGTH + 16, 32)))
            {
                f.add("another public key");
            }
            return failures(f);
        });
        must("initiator.version-reject", "S9.1-1", "after a CONNECT_REJECT VERSION_UNSUPPORTED the target sends no " +
            "more CONNECTs for that request", () ->
        {
            if (null == first || !first.wholeHeaders())
            {
                throw new NotTested("no CONNECT to answer");
            }
            final Packet last = null == again[0] ? first : again[0];
            link.send(answer(last, SprayWire.CONNECT_REJECT, SprayWire.REASON_VERSION_UNSUPPORTED).bytes(), false);
            final long token = first.h64(20);
            for (final Packet p : listener.collect(4 * SILENCE_NANOS))
            {
                if (p.icrcValid && p.opcode() == SprayWire.CONNECT && p.wholeHeaders() && p.h64(20) == token)
                {
                    return "another CONNECT with the rejected request's token: " + p;
                }
            }
            return null;
        });
    }

    /** A RETRY or REJECT to {@code connect}: DestQP its CID, version (3 in a version REJECT: a later responder's). */
    private static FrameBuilder answer(final Packet connect, final int opcode, final int reason)
    {
        final int version = reason == SprayWire.REASON_VERSION_UNSUPPORTED ? SprayWire.VERSION + 1 : SprayWire.VERSION;
        return FrameBuilder.bth(opcode, connect.h24(9), 0, false).u8(version).u8(0).u8(0).u8(connect.h8(3)).u16(0)
            .u16(0).u8(0).u24(0).u8(0).u24(0).u32(10_000).u64(connect.h64(20)).u8(reason).zeros(3).u64(0);
    }
}
