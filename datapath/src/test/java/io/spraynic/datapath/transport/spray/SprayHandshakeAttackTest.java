package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.PlaneAddress;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.function.Consumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The handshake under attack (docs/PROTOCOL.md S9.1, S9.1.1, S12.2, S12.9, S12.10), over the in-memory test bed
 * in virtual time: spoofed CONNECT floods, forged cookies, limits, bad parameters, pre-shared keys, idle peers.
 * The attacker writes real frames (correct ICRC) onto A's side of plane 0; B's answers are recorded on the wire.
 */
@Timeout(120)
class SprayHandshakeAttackTest
{
    private static final int BTH = SprayTestBed.DATA_OFFSET_BTH;

    /** B's CONNECT_RETRY, CONNECT_REJECT and CONNECT_ACK frames, as they leave B on plane 0. */
    static final class Responses implements FaultInjectingPacketPort.Selector
    {
        final List<long[]> seen = new ArrayList<>(); // opcode, destQp, token, reason
        byte[] lastCookie;

        public boolean test(final MemorySegment m, final long o, final int length)
        {
            if (length > BTH + BaseTransportHeader.LENGTH + ConnectionHeader.LENGTH)
            {
                final int opcode = BaseTransportHeader.opcode(m, o + BTH);
                final long conh = o + BTH + BaseTransportHeader.LENGTH;
                if (opcode == SprayOpcodes.CONNECT_RETRY || opcode == SprayOpcodes.CONNECT_REJECT ||
                    opcode == SprayOpcodes.CONNECT_ACK)
                {
                    seen.add(new long[]{opcode, BaseTransportHeader.destQp(m, o + BTH), ConnectionHeader.token(m, conh),
                        ConnectionHeader.reason(m, conh)});
                    if (opcode == SprayOpcodes.CONNECT_RETRY)
                    {
                        lastCookie = new byte[HandshakeBlock.COOKIE_LENGTH];
                        HandshakeBlock.cookie(m, conh + ConnectionHeader.LENGTH, lastCookie);
                    }
                }
            }
            return false;
        }

        /** @return the last answer to {@code token}: {opcode, destQp, token, reason}, or null. */
        long[] answer(final long token)
        {
            for (int i = seen.size() - 1; i >= 0; i--)
            {
                if (seen.get(i)[2] == token)
                {
                    return seen.get(i);
                }
            }
            return null;
        }

        long count(final int opcode)
        {
            return seen.stream().filter(s -> s[0] == opcode).count();
        }
    }

    /** A bed whose B answers are recorded, whose attacker sends from A's side of plane 0. */
    private static final class Attack
    {
        final Responses responses = new Responses();
        final PacketPort[] attackerPort = new PacketPort[1];
        final SprayTestBed.Options options = new SprayTestBed.Options();
        ConnectForger forger;

        Attack()
        {
            options.handshake = true;
            options.wrapA((plane, port) ->
            {
                if (plane == 0)
                {
                    attackerPort[0] = port;
                }
                return port;
            });
            options.wrapB((plane, port) -> plane == 0 ? FaultInjectingPacketPort.exact(port, responses) : port);
        }

        ConnectForger forger()
        {
            if (null == forger)
            {
                forger = new ConnectForger(attackerPort[0]);
            }
            return forger;
        }
    }

    private static SprayHandshake.Pending connect(final SprayTestBed bed, final int maxSteps)
    {
        final SprayHandshake.Pending p = bed.engineA.connect(bed.initiatorConfig(), bed.now);
        bed.runUntil(() -> p.state() != SprayHandshake.Pending.State.CONNECTING, maxSteps);
        return p;
    }

    private static byte[] randomKey(final SplittableRandom random)
    {
        final byte[] key = new byte[32];
        random.nextBytes(key);
        return key;
    }

    // (a)
    @Test
    void shouldKeepNoStateForASpoofedConnectFloodRateLimitItsRetriesAndStillConnectAndTransfer()
    {
        final Attack attack = new Attack();
        final SplittableRandom random = new SplittableRandom(7);
        final int flood = 8_000;
        final long[] step = {0};
        // B answers at most 20,000 RETRYs/REJECTs a second; the flood comes at twice that, from a new source each time
        attack.options.configure = (host, config) -> config.connectResponseRate(20_000, 16);
        attack.options.beforeStep = () ->
        {
            if (step[0]++ % 25 == 0 && attack.forger().sent < flood)
            {
                final ConnectForger f = attack.forger();
                final int n = (int)f.sent;
                f.sourceIpv4 = (10 << 24) | (200 << 16) | (n + 1);
                f.sourceMac = 0x02_AA_00_00_00_00L | n;
                f.token = random.nextLong();
                f.senderCid = 1 + random.nextInt(0xFF_FFFE);
                random.nextBytes(f.publicKey);
                f.send();
                f.flush();
            }
        };
        try (SprayTestBed bed = new SprayTestBed(attack.options))
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state(), "the legitimate peer connected");
            final SprayLossRecoveryTest.Workload w = new SprayLossRecoveryTest.Workload(bed, 1 << 20);
            w.post();
            w.runAndVerify(400_000);
            bed.runUntil(() -> attack.forger().sent >= flood, 400_000);
            bed.runToQuiet(1_000);
            assertEquals(flood, attack.forger().sent);
            assertEquals(1, bed.engineB.connectionCount(), "the flood opened nothing");
            final long retries = bed.engineB.counters().get(SprayCounters.CONNECT_RETRIES_SENT);
            final long limited = bed.engineB.counters().get(SprayCounters.CONNECT_RESPONSES_RATE_LIMITED);
            assertTrue(limited > flood / 4, "rate-limited: " + limited);
            final long legitimateWithoutCookie = bed.pending.tries() - 1;
            assertTrue(retries + limited >= flood && retries + limited <= flood + legitimateWithoutCookie,
                "every cookie-less CONNECT answered or counted: " + retries + " + " + limited);
            final double seconds = (bed.now - 1_000_000) / 1e9;
            assertTrue(retries <= 16 + 20_000 * seconds + 1, "RETRYs within the rate: " + retries + " in " + seconds + " s");
            assertEquals(retries, attack.responses.count(SprayOpcodes.CONNECT_RETRY), "RETRYs counted as sent");
            assertEquals(0, bed.engineB.counters().get(SprayCounters.COOKIE_FAILURES));
            System.out.println("flood: " + flood + " spoofed CONNECTs in " + seconds + " s, " + retries + " RETRYs, " +
                limited + " rate-limited; legitimate peer: " + bed.pending.tries() + " CONNECTs");
        }
    }

    // (b)
    @Test
    void shouldRefuseForgedExpiredAndOtherSourceCookies()
    {
        final Attack attack = new Attack();
        attack.options.configure = (host, config) -> config.cookieEpochNanos(1_000_000);
        try (SprayTestBed bed = new SprayTestBed(attack.options))
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state(), "a real peer gets through");
            final ConnectForger f = attack.forger();
            f.sourceIpv4 = SprayTestBed.ip(0, 77);
            f.token = 0x1234_5678_9ABC_DEF0L;
            f.senderCid = 0x4242;
            f.publicKey[0] = 9; // the X25519 base point: a usable public key
            f.send();
            f.flush();
            bed.runToQuiet(5);
            final byte[] cookie = attack.responses.lastCookie;
            assertNotNull(cookie, "a RETRY with a cookie");
            final long failures0 = bed.engineB.counters().get(SprayCounters.COOKIE_FAILURES);

            final Consumer<ConnectForger> send = forger ->
            {
                forger.send();
                forger.flush();
                bed.runToQuiet(5);
            };
            // a forged cookie
            f.cookie = cookie.clone();
            f.cookie[10] ^= 1;
            send.accept(f);
            // the real cookie from another source address
            f.cookie = cookie.clone();
            f.sourceIpv4 = SprayTestBed.ip(0, 78);
            send.accept(f);
            // for another token, another CID, another public key
            f.sourceIpv4 = SprayTestBed.ip(0, 77);
            f.token++;
            send.accept(f);
            f.token--;
            f.senderCid++;
            send.accept(f);
            f.senderCid--;
            f.publicKey[1] = 1;
            send.accept(f);
            f.publicKey[1] = 0;
            assertEquals(failures0 + 5, bed.engineB.counters().get(SprayCounters.COOKIE_FAILURES));
            assertEquals(1, bed.engineB.connectionCount(), "no state from any of them");

            // expired: two epochs later
            bed.runToQuiet(2_100);
            send.accept(f);
            assertEquals(failures0 + 6, bed.engineB.counters().get(SprayCounters.COOKIE_FAILURES));
            assertEquals(1, bed.engineB.connectionCount());
            assertEquals(SprayOpcodes.CONNECT_RETRY, attack.responses.answer(f.token)[0], "answered with a new cookie");

            // the fresh cookie, echoed exactly: the attacker at that address does get a connection (it receives there)
            f.cookie = attack.responses.lastCookie.clone();
            send.accept(f);
            assertEquals(SprayOpcodes.CONNECT_ACK, attack.responses.answer(f.token)[0]);
            assertEquals(2, bed.engineB.connectionCount());
            assertEquals(failures0 + 6, bed.engineB.counters().get(SprayCounters.COOKIE_FAILURES));
        }
    }

    @Test
    void shouldRejectALowOrderPublicKeyWithBadKeyAfterTheCookie()
    {
        final Attack attack = new Attack();
        try (SprayTestBed bed = new SprayTestBed(attack.options))
        {
            final ConnectForger f = attack.forger();
            f.sourceIpv4 = SprayTestBed.ip(0, 60);
            f.token = 60;
            f.publicKey = new byte[HandshakeBlock.PUBLIC_KEY_LENGTH]; // u = 0: the shared secret would be 0
            f.send();
            f.flush();
            bed.runToQuiet(5);
            assertEquals(SprayOpcodes.CONNECT_RETRY, attack.responses.answer(60)[0], "no X25519 work before the cookie");
            f.cookie = attack.responses.lastCookie;
            f.send();
            f.flush();
            bed.runToQuiet(5);
            final long[] answer = attack.responses.answer(60);
            assertEquals(SprayOpcodes.CONNECT_REJECT, answer[0]);
            assertEquals(RejectReason.BAD_KEY, (int)answer[3]);
            assertEquals(1, bed.engineB.counters().get(SprayCounters.REFUSED_BAD_KEY));
            assertEquals(1, bed.engineB.connectionCount());
        }
    }

    @Test
    void shouldDrawTheSameSecretsFromTheSameSeedOnlyWhenDeterministicSecretsAreAskedFor()
    {
        final SprayEngine[] engines = new SprayEngine[4];
        for (int i = 0; i < engines.length; i++)
        {
            engines[i] = new SprayEngine(new SprayConfig().seed(42).deterministicSecrets(i < 2),
                new io.spraynic.datapath.verbs.ProtectionDomain(new SplittableRandom(1)), null);
        }
        final int[][] cids = new int[4][8];
        for (int i = 0; i < engines.length; i++)
        {
            for (int k = 0; k < 8; k++)
            {
                cids[i][k] = engines[i].newCid();
            }
        }
        assertArrayEquals(cids[0], cids[1], "seeded: reproducible (simulator only)");
        assertFalse(Arrays.equals(cids[2], cids[3]), "by default: SecureRandom");
        assertFalse(Arrays.equals(cids[0], cids[2]));
    }

    // (c)
    @Test
    void shouldRefuseTheConnectionBeyondThePerSourceLimitWithSourceLimitAndCountItFreeAgainAfterAClose()
    {
        final Attack attack = new Attack();
        attack.options.configure = (host, config) -> config.maxConnectionsPerSource(3);
        try (SprayTestBed bed = new SprayTestBed(attack.options))
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state());
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, connect(bed, 20_000).state());
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, connect(bed, 20_000).state());
            final long stepsBefore = bed.steps;
            final SprayHandshake.Pending fourth = connect(bed, 20_000);
            assertEquals(SprayHandshake.Pending.State.FAILED, fourth.state());
            assertEquals(RejectReason.SOURCE_LIMIT, fourth.reason());
            assertEquals("peer refused: SOURCE_LIMIT", fourth.failure());
            assertTrue(bed.steps - stepsBefore < 50, "at once: " + (bed.steps - stepsBefore) + " steps");
            assertEquals(1, bed.engineB.counters().get(SprayCounters.SOURCE_LIMITED));
            assertEquals(3, bed.engineB.connectionCount());
            // another source is not limited by this one
            final ConnectForger f = attack.forger();
            f.sourceIpv4 = SprayTestBed.ip(0, 99);
            f.publicKey[0] = 9;
            f.token = 5;
            f.send();
            f.flush();
            bed.runToQuiet(5);
            f.cookie = attack.responses.lastCookie;
            f.send();
            f.flush();
            bed.runToQuiet(5);
            assertEquals(SprayOpcodes.CONNECT_ACK, attack.responses.answer(5)[0]);
            // a closed connection no longer counts
            bed.engineA.close(bed.a, bed.now);
            bed.runUntil(() -> bed.a.isClosed() && bed.b.isClosed(), 20_000);
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, connect(bed, 20_000).state());
        }
    }

    // (d)
    @Test
    void shouldRefuseAtOnceWithNoResourcesWhenTheEngineIsFull()
    {
        final Attack attack = new Attack();
        attack.options.configure = (host, config) ->
        {
            if (host == 2)
            {
                config.maxConnections(2);
            }
        };
        try (SprayTestBed bed = new SprayTestBed(attack.options))
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state());
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, connect(bed, 20_000).state());
            final long stepsBefore = bed.steps;
            final SprayHandshake.Pending third = connect(bed, 20_000);
            assertEquals(SprayHandshake.Pending.State.FAILED, third.state());
            assertEquals(RejectReason.NO_RESOURCES, third.reason());
            assertEquals(2, third.tries(), "the CONNECT and its resend with the cookie");
            assertTrue(bed.steps - stepsBefore < 50, "at once: " + (bed.steps - stepsBefore) + " steps");
            assertEquals(1, bed.engineB.counters().get(SprayCounters.REFUSED_NO_RESOURCES));
            assertEquals(2, bed.engineB.connectionCount());
        }
    }

    @Test
    void shouldFailAtOnceWithNoListener()
    {
        final Attack attack = new Attack();
        attack.options.listen = false;
        try (SprayTestBed bed = new SprayTestBed(attack.options))
        {
            assertEquals(SprayHandshake.Pending.State.FAILED, bed.pending.state());
            assertEquals(RejectReason.NO_LISTENER, bed.pending.reason());
            assertEquals(1, bed.pending.tries());
            assertTrue(bed.steps < 10, "at once: " + bed.steps);
            assertNull(bed.a);
            assertEquals(1, bed.engineB.counters().get(SprayCounters.REFUSED_NO_LISTENER));
            assertEquals(1, bed.engineA.counters().get(SprayCounters.CONNECT_REJECTS_RECEIVED));
        }
    }

    // a CONNECT whose address list gives plane 1 this MAC and IPv4 address (plane 0 the initiator's own)
    private static Consumer<ConnectForger> addresses(final long plane1Mac, final int plane1Ipv4)
    {
        return x ->
        {
            x.flags = ConnectionHeader.FLAG_ADDRESSES;
            x.payload = HandshakeBlock.LENGTH + 2 * PlaneAddress.LENGTH;
            x.entryIpv4 = new int[]{x.sourceIpv4, plane1Ipv4};
            x.entryMac = new long[]{x.sourceMac, plane1Mac};
        };
    }

    // (e)
    @Test
    void shouldRejectEveryBadParameterWithItsReasonAndStillAcceptAValidConnectAfter()
    {
        final Attack attack = new Attack();
        try (SprayTestBed bed = new SprayTestBed(attack.options))
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state());
            final ConnectForger f = attack.forger();
            f.sourceIpv4 = SprayTestBed.ip(0, 50);
            final long[] token = {1000};
            final Object[][] cases = {
                {"paths 0", (Consumer<ConnectForger>)x -> x.paths = 0, RejectReason.BAD_PARAMETERS},
                {"paths 65", (Consumer<ConnectForger>)x -> x.paths = 65, RejectReason.BAD_PARAMETERS},
                {"MTU 100000 (as 16 bits)", (Consumer<ConnectForger>)x -> x.mtu = 100_000, RejectReason.BAD_PARAMETERS},
                {"MTU 0", (Consumer<ConnectForger>)x -> x.mtu = 0, RejectReason.BAD_PARAMETERS},
                {"MTU 1500", (Consumer<ConnectForger>)x -> x.mtu = 1500, RejectReason.BAD_PARAMETERS},
                {"planes 1 of 2", (Consumer<ConnectForger>)x -> x.planes = 1, RejectReason.BAD_PARAMETERS},
                {"planes 255", (Consumer<ConnectForger>)x -> x.planes = 255, RejectReason.BAD_PARAMETERS},
                {"version 1", (Consumer<ConnectForger>)x -> x.version = 1, RejectReason.VERSION_UNSUPPORTED},
                {"version 3", (Consumer<ConnectForger>)x -> x.version = 3, RejectReason.VERSION_UNSUPPORTED},
                {"unknown flag", (Consumer<ConnectForger>)x -> x.flags = 0x80, RejectReason.BAD_PARAMETERS},
                {"sender CID 0", (Consumer<ConnectForger>)x -> x.senderCid = 0, RejectReason.BAD_PARAMETERS},
                {"DestQP not 0", (Consumer<ConnectForger>)x -> x.destQp = 0x77, RejectReason.BAD_PARAMETERS},
                {"no handshake block", (Consumer<ConnectForger>)x -> x.payload = 32, RejectReason.BAD_PARAMETERS},
                {"address list cut short", (Consumer<ConnectForger>)x ->
                {
                    x.flags = ConnectionHeader.FLAG_ADDRESSES;
                    x.payload = HandshakeBlock.LENGTH + 24;
                }, RejectReason.BAD_PARAMETERS},
                // an address list names where the responder sends every frame of a plane and what it resolves as a
                // next hop: a group MAC, a non-host address or the responder's own is refused (before, taken)
                {"address list: a multicast MAC", addresses(0x01_00_5E_00_00_01L, SprayTestBed.ip(1, 50)),
                    RejectReason.BAD_PARAMETERS},
                {"address list: the broadcast MAC", addresses(0xFFFF_FFFF_FFFFL, SprayTestBed.ip(1, 50)),
                    RejectReason.BAD_PARAMETERS},
                {"address list: MAC 0", addresses(0, SprayTestBed.ip(1, 50)), RejectReason.BAD_PARAMETERS},
                {"address list: loopback", addresses(SprayTestBed.mac(1, 50), 0x7F00_0001), RejectReason.BAD_PARAMETERS},
                {"address list: broadcast", addresses(SprayTestBed.mac(1, 50), -1), RejectReason.BAD_PARAMETERS},
                {"address list: multicast", addresses(SprayTestBed.mac(1, 50), 0xE000_0001), RejectReason.BAD_PARAMETERS},
                {"address list: the responder's own", addresses(SprayTestBed.mac(1, 50), SprayTestBed.ip(1, 2)),
                    RejectReason.BAD_PARAMETERS},
            };
            for (final Object[] c : cases)
            {
                final ConnectForger x = attack.forger();
                x.paths = 8;
                x.mtu = 4096;
                x.planes = 2;
                x.version = ConnectionHeader.VERSION;
                x.flags = 0;
                x.senderCid = 0x321;
                x.destQp = 0;
                x.payload = HandshakeBlock.LENGTH;
                x.token = ++token[0];
                @SuppressWarnings("unchecked") final Consumer<ConnectForger> mutate = (Consumer<ConnectForger>)c[1];
                mutate.accept(x);
                x.send();
                x.flush();
                bed.runToQuiet(5);
                final long[] answer = attack.responses.answer(x.token);
                assertNotNull(answer, c[0] + ": answered");
                assertEquals(SprayOpcodes.CONNECT_REJECT, answer[0], c[0] + ": REJECT");
                assertEquals((int)c[2], (int)answer[3], c[0] + ": reason");
                assertEquals(x.senderCid, (int)answer[1], c[0] + ": to the initiator's CID");
            }
            assertEquals(1, bed.engineB.connectionCount());
            assertEquals(2, bed.engineB.counters().get(SprayCounters.REFUSED_VERSION));
            assertEquals(cases.length - 2, bed.engineB.counters().get(SprayCounters.REFUSED_BAD_PARAMETERS));
            // streams 0 on the wire is 65536 (S5.4): valid, negotiated down to the listener's 4
            f.streams = 0;
            f.paths = 8;
            f.mtu = 4096;
            f.planes = 2;
            f.version = ConnectionHeader.VERSION;
            f.flags = 0;
            f.senderCid = 0x321;
            f.destQp = 0;
            f.payload = HandshakeBlock.LENGTH;
            f.publicKey[0] = 9;
            f.token = 1;
            f.send();
            f.flush();
            bed.runToQuiet(5);
            f.cookie = attack.responses.lastCookie;
            f.send();
            f.flush();
            bed.runToQuiet(5);
            assertEquals(SprayOpcodes.CONNECT_ACK, attack.responses.answer(1)[0]);
            assertEquals(2, bed.engineB.connectionCount());
            // and a real peer right after
            final SprayHandshake.Pending p = connect(bed, 20_000);
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, p.state());
            assertEquals(0, bed.engineB.counters().get(SprayCounters.MALFORMED));
        }
    }

    @Test
    void shouldNeverThrowNorOpenAConnectionForRandomConnectBytes()
    {
        final Attack attack = new Attack();
        final SplittableRandom random = new SplittableRandom(99);
        try (SprayTestBed bed = new SprayTestBed(attack.options))
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state());
            final ConnectForger f = attack.forger();
            for (int i = 0; i < 20_000; i++)
            {
                f.sourceIpv4 = random.nextInt();
                f.version = random.nextInt(4);
                f.flags = random.nextInt(4);
                f.paths = random.nextInt(256);
                f.planes = random.nextInt(4);
                f.mtu = random.nextInt(5) == 0 ? random.nextInt(1 << 16) : 256 << random.nextInt(5);
                f.streams = random.nextInt(1 << 16);
                f.senderCid = random.nextInt(1 << 24);
                f.destQp = random.nextInt(4) == 0 ? random.nextInt(1 << 24) : 0;
                f.token = random.nextLong();
                f.payload = random.nextInt(200);
                random.nextBytes(f.cookie);
                random.nextBytes(f.publicKey);
                f.send();
                if (i % 50 == 0)
                {
                    f.flush();
                    bed.step();
                }
            }
            f.flush();
            bed.runToQuiet(100);
            assertEquals(1, bed.engineB.connectionCount(), "no connection without a valid cookie");
            final SprayHandshake.Pending p = connect(bed, 40_000);
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, p.state(), "B still serves");
        }
    }

    // (f)
    @Test
    void shouldOpenNoConnectionWithoutThePreSharedKeyOrWithAnotherOne()
    {
        final SplittableRandom random = new SplittableRandom(3);
        final byte[] key = randomKey(random);
        final byte[] other = randomKey(random);
        for (final byte[] initiatorKey : new byte[][]{null, other})
        {
            final Attack attack = new Attack();
            attack.options.configure = (host, config) -> config.psk(host == 2 ? key : initiatorKey);
            try (SprayTestBed bed = new SprayTestBed(attack.options))
            {
                bed.runUntil(() -> bed.pending.state() != SprayHandshake.Pending.State.CONNECTING, 40_000);
                assertEquals(SprayHandshake.Pending.State.FAILED, bed.pending.state());
                assertEquals(RejectReason.NO_ANSWER, bed.pending.reason(), "silently dropped");
                assertEquals(0, bed.engineB.connectionCount());
                assertEquals(SprayHandshake.CONNECT_TRIES, bed.engineB.counters().get(SprayCounters.HANDSHAKE_AUTH_FAILURES));
                assertEquals(0, attack.responses.seen.size(), "not even a RETRY");
            }
        }
    }

    @Test
    void shouldAgreeOnKeysWithThePreSharedKeyAndDrawNewOnesPerConnection()
    {
        final byte[] key = randomKey(new SplittableRandom(5));
        final Attack attack = new Attack();
        attack.options.configure = (host, config) -> config.psk(key);
        try (SprayTestBed bed = new SprayTestBed(attack.options))
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state());
            final SprayConnectionConfig a = bed.a.handshakeConfig;
            final SprayConnectionConfig b = bed.b.handshakeConfig;
            assertArrayEquals(new long[]{a.sendKey0, a.sendKey1, a.receiveKey0, a.receiveKey1},
                new long[]{b.receiveKey0, b.receiveKey1, b.sendKey0, b.sendKey1}, "both ends derived the same keys");
            assertNotEquals(a.sendKey0, a.receiveKey0, "one key per direction");
            final SprayLossRecoveryTest.Workload w = new SprayLossRecoveryTest.Workload(bed, 1 << 20);
            w.post();
            w.runAndVerify(200_000);

            final SprayHandshake.Pending second = connect(bed, 20_000);
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, second.state());
            final SprayConnectionConfig a2 = second.connection().handshakeConfig;
            final SprayConnectionConfig b2 = bed.engineB.connection(second.connection().remoteCid()).handshakeConfig;
            assertEquals(a2.sendKey0, b2.receiveKey0);
            assertEquals(a2.receiveKey1, b2.sendKey1);
            assertNotEquals(a.sendKey0, a2.sendKey0, "a new connection, new keys");
            assertNotEquals(a.receiveKey1, a2.receiveKey1);
            assertEquals(0, bed.engineB.counters().get(SprayCounters.HANDSHAKE_AUTH_FAILURES));
            assertEquals(0, bed.engineA.counters().get(SprayCounters.HANDSHAKE_AUTH_FAILURES));
        }
    }

    @Test
    void shouldDrawRandomCidsTokensAndInitialPsns()
    {
        final Attack attack = new Attack();
        try (SprayTestBed bed = new SprayTestBed(attack.options))
        {
            final List<Integer> cids = new ArrayList<>();
            final List<Long> tokens = new ArrayList<>();
            for (int i = 0; i < 4; i++)
            {
                final SprayHandshake.Pending p = connect(bed, 20_000);
                assertEquals(SprayHandshake.Pending.State.ESTABLISHED, p.state());
                cids.add(p.localCid());
                cids.add(p.connection().remoteCid());
                tokens.add(p.token);
                assertNotEquals(0, p.localCid());
            }
            assertEquals(cids.size(), cids.stream().distinct().count());
            assertFalse(cids.stream().allMatch(c -> c < 0x1000), "not sequential from 0x100: " + cids);
            assertEquals(tokens.size(), tokens.stream().distinct().count());
        }
    }

    /**
     * S7.6 and S12.9-1: a peer that takes data and then goes silent makes every path of the accepted connection fail;
     * after {@code connectionTimeout} it closes, and like any closed connection it must stop counting against its
     * source's limit (it did not: it stayed in the engine's table, its slot, CID and tables taken, so a source whose
     * connections died this way {@code maxConnectionsPerSource} times was refused for good).
     */
    @Test
    void shouldStopCountingAnAcceptedConnectionThatClosedWhenEveryPathFailedS76()
    {
        final SprayTestBed.SwitchablePort[] aPlanes = new SprayTestBed.SwitchablePort[2];
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.handshake = true;
        options.connectionTimeoutNanos = 2_000_000;
        options.configure = (host, config) -> config.maxConnectionsPerSource(1);
        options.wrapA((plane, port) -> aPlanes[plane] = new SprayTestBed.SwitchablePort(port));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state());
            final MemoryRegion src = bed.region(bed.pdB, 1 << 20, AccessFlags.NONE, 7);
            final MemoryRegion dst = bed.region(bed.pdA, 1 << 20, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            aPlanes[0].down = true; // nothing A sends arrives: B's WRITE is never acknowledged
            aPlanes[1].down = true;
            bed.b.postSend(0, new io.spraynic.datapath.verbs.SendWorkRequest().wrId(1)
                .opcode(io.spraynic.datapath.verbs.WorkRequestOpcode.RDMA_WRITE).local(src, src.address(), 1 << 20)
                .remote(dst.address(), dst.rkey()));
            bed.runUntil(() -> bed.b.isClosed(), 50_000);
            final List<WorkCompletion> done = SprayTestBed.drain(bed.sendCqB);
            assertEquals(1, done.size());
            assertEquals(WorkCompletionStatus.RETRY_EXC_ERR, done.get(0).status(), "S7.6");
            assertNull(bed.engineB.connection(bed.b.localCid()), "forgotten by its engine");
            assertEquals(0, bed.engineB.connectionCount());
            aPlanes[0].down = false;
            aPlanes[1].down = false;
            final SprayHandshake.Pending again = connect(bed, 20_000);
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, again.state(),
                "the source's one connection closed: it may open another, not " + again.failure());
            assertEquals(0, bed.engineB.counters().get(SprayCounters.SOURCE_LIMITED));
        }
    }

    // (g)
    @Test
    void shouldCloseAConnectionWhosePeerVanishedAfterTheIdleTimeoutAndKeepALiveIdleOne()
    {
        final SprayTestBed.SwitchablePort[] bPlanes = new SprayTestBed.SwitchablePort[2];
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.handshake = true;
        options.configure = (host, config) -> config.idleTimeoutNanos(10_000_000); // keepalives every 3.3 ms
        options.wrapB((plane, port) -> bPlanes[plane] = new SprayTestBed.SwitchablePort(port));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertEquals(SprayHandshake.Pending.State.ESTABLISHED, bed.pending.state());
            // idle but alive: 50 ms, five idle timeouts, without a byte of data
            bed.runToQuiet(50_000);
            assertFalse(bed.a.isClosed());
            assertFalse(bed.b.isClosed());
            assertTrue(bed.a.counters().get(SprayCounters.KEEPALIVES_SENT) >= 10, bed.a.toString());
            assertTrue(bed.b.counters().get(SprayCounters.KEEPALIVES_SENT) >= 10, bed.b.toString());
            assertEquals(0, bed.engineA.counters().get(SprayCounters.IDLE_CLOSED));

            // B vanishes (nothing it sends arrives); A holds a posted receive
            final MemoryRegion buffer = bed.region(bed.pdA, 4096, AccessFlags.LOCAL_WRITE, 0);
            assertEquals(0, bed.a.postReceive(0, new ReceiveWorkRequest().wrId(77).buffer(buffer, buffer.address(), 4096)));
            bPlanes[0].down = true;
            bPlanes[1].down = true;
            final long vanishedAt = bed.now;
            bed.runUntil(() -> bed.a.isClosed(), 20_000);
            final long after = bed.now - vanishedAt;
            assertTrue(after >= 10_000_000 - 3_400_000 && after <= 10_000_000 + 3_000_000,
                "closed about idleTimeout after the last packet: " + after);
            assertEquals(1, bed.engineA.counters().get(SprayCounters.IDLE_CLOSED));
            assertNull(bed.engineA.connection(bed.a.localCid()), "forgotten");
            final List<WorkCompletion> flushed = SprayTestBed.drain(bed.receiveCqA);
            assertEquals(1, flushed.size());
            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, flushed.get(0).status());
            // B still hears nothing from A from now on: it closes too
            bed.runUntil(() -> bed.b.isClosed(), 20_000);
            assertEquals(1, bed.engineB.counters().get(SprayCounters.IDLE_CLOSED));
            assertTrue(bPlanes[0].dropped > 0, "B's keepalives went nowhere");
        }
    }
}
