package io.spraynic.datapath.nic;

import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The three remote triggers that used to stop a worker's receive queue for good (issue 12, item 1), sent by an
 * attacker on the same L2 through B's real DPDK queues: a CONNECT with {@code paths = 0}, one with an MTU outside
 * S4.3, and more CONNECTs than a worker has connection slots. Each is refused by reason (S9.1.1) or answered
 * statelessly (S12.9) and counted, none creates a connection; a valid CONNECT sent after them is answered, no worker caught an exception, and a legitimate transfer over both workers still
 * completes with every byte verified.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class HostileConnectDpdkTest
{
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final long ATTACKER_MAC = 0x02_66_66_66_66_66L;
    private static final int ATTACKER_IP = 0x0A63_6363;
    private static final int FLOOD_PER_WORKER = 70; // a worker has 64 slots

    @TempDir
    static Path dir;

    private static HostileWire wire;

    @BeforeAll
    static void start()
    {
        wire = new HostileWire(dir, "hostile-connect", c -> { });
    }

    @AfterAll
    static void stop()
    {
        if (null != wire)
        {
            wire.close();
        }
    }

    /** A CONNECT from the attacker to B on plane 0, the given limits; token picks B's worker (token mod workers). */
    static byte[] connect(final int paths, final int mtu, final int streams, final long token, final int senderCid)
    {
        final RoceFrameWriter writer = new RoceFrameWriter(SprayOpcodes.TABLE);
        writer.ethernet(ATTACKER_MAC, HostileWire.mac(1, 0)).ipv4(ATTACKER_IP, HostileWire.ip(1, 0))
            .udpSourcePort(50_000).destQp(0).psn(0).opcode(SprayOpcodes.CONNECT);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment frame = arena.allocate(writer.frameLength(HandshakeBlock.LENGTH));
            ConnectionHeader.write(frame, writer.payloadOffset() - ConnectionHeader.LENGTH, 0, paths,
                HostileWire.PLANES, mtu, streams, senderCid, 0x1234, 100_000, token);
            // S5.6: no cookie yet, a public key (the X25519 base point: any well-formed key does before the cookie)
            final byte[] publicKey = new byte[HandshakeBlock.PUBLIC_KEY_LENGTH];
            publicKey[0] = 9;
            HandshakeBlock.writePublicKey(frame, writer.payloadOffset(), publicKey);
            final int length = writer.writeFrame(frame, 0, HandshakeBlock.LENGTH);
            return frame.asSlice(0, length).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        }
    }

    /** Sends a fixed list of frames once, on plane 0. */
    static final class ListAttacker implements HostileWire.Attacker
    {
        private final List<byte[]> frames;
        private final AtomicInteger next = new AtomicInteger();

        ListAttacker(final List<byte[]> frames)
        {
            this.frames = frames;
        }

        public boolean hasNext(final int plane)
        {
            return plane == 0 && next.get() < frames.size();
        }

        public int next(final int plane, final MemorySegment memory, final long offset, final int room)
        {
            final byte[] frame = frames.get(next.getAndIncrement());
            MemorySegment.copy(frame, 0, memory, java.lang.foreign.ValueLayout.JAVA_BYTE, offset, frame.length);
            return frame.length;
        }
    }

    @Test
    void shouldDropHostileConnectsAndStillCompleteAVerifiedTransfer() throws Exception
    {
        final HostileWire.Legit legit = wire.connect(WAIT);
        // what B answers to the attacker: a tap on the switch, parsed off the switch thread's copy
        final ConcurrentLinkedQueue<Long> answeredTokens = new ConcurrentLinkedQueue<>();
        final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), true);
        final RoceFrame parsed = new RoceFrame();
        wire.tap((toB, plane, memory, offset, length) ->
        {
            if (!toB && EthernetHeader.destinationMac(memory, offset) == ATTACKER_MAC &&
                parser.parse(memory, offset, length, parsed) == FrameClass.ROCE && parsed.opcode() == SprayOpcodes.CONNECT_RETRY)
            {
                answeredTokens.add(ConnectionHeader.token(memory, parsed.customHeaderOffset()));
            }
        });
        final Map<String, Long> before = HostileWire.counters(wire.b());

        // 1. malformed limits, on both workers (token mod 2), then a valid CONNECT on each: answered statelessly with
        // a cookie (S9.1), since it carries none
        final List<byte[]> malformed = new ArrayList<>();
        for (long token = 10; token < 12; token++)
        {
            malformed.add(connect(0, 1024, 4, token, 0x500 + (int)token));
            malformed.add(connect(65, 1024, 4, token, 0x510 + (int)token));
            malformed.add(connect(255, 1024, 4, token, 0x520 + (int)token));
            malformed.add(connect(4, 100_000, 4, token, 0x530 + (int)token)); // u16 on the wire: 34464
            malformed.add(connect(4, 100, 4, token, 0x540 + (int)token));
            malformed.add(connect(4, 0, 4, token, 0x550 + (int)token));
        }
        malformed.add(connect(4, 1024, 4, 20, 0x600));
        malformed.add(connect(4, 1024, 4, 21, 0x601));
        send(malformed);
        awaitTrue(() -> answeredTokens.contains(20L) && answeredTokens.contains(21L),
            "B answered a valid CONNECT sent after the malformed ones, on both workers");
        Map<String, Long> now = HostileWire.counters(wire.b());
        assertEquals(12, delta(before, now, "spray refused_bad_parameters"), "each CONNECT with bad limits refused (S9.1.1)");

        // 2. more CONNECTs than a worker has slots, on each worker: none carries a cookie, so none creates state; each
        // is answered with a RETRY or, past the response rate, counted and left unanswered (S12.9)
        final int connectionsBefore = connections(wire.b());
        final List<byte[]> flood = new ArrayList<>();
        for (int i = 0; i < 2 * FLOOD_PER_WORKER; i++)
        {
            flood.add(connect(4, 1024, 4, 1000 + i, 0x1000 + i));
        }
        send(flood);
        awaitTrue(() -> delta(before, HostileWire.counters(wire.b()), "spray connect_retries_sent") +
            delta(before, HostileWire.counters(wire.b()), "spray connect_responses_rate_limited") >= 2L * FLOOD_PER_WORKER + 2,
            "every cookie-less CONNECT answered with a RETRY or counted as rate-limited");
        assertEquals(connectionsBefore, connections(wire.b()), "a CONNECT without a cookie creates no connection");

        // 3. the legitimate connection still carries a verified transfer; nothing threw in any worker
        final long mismatch = HostileWire.verifiedTransfer(legit, wire.a(), wire.b(), 8L << 20, 77, WAIT);
        assertEquals(-1, mismatch, "first mismatching byte");
        now = HostileWire.counters(wire.b());
        assertEquals(0, delta(before, now, "spray no_resources"), now.toString());
        assertEquals(0, HostileWire.sum(now, "frame faults (exception handling a frame, dropped)"), now.toString());
        assertEquals(0, HostileWire.sum(now, "loop faults (exception in a command, poller, post or tick)"), now.toString());
        assertNull(wire.switchFailure());
    }

    private static void send(final List<byte[]> frames) throws InterruptedException
    {
        final long target = wire.attackFramesSent() + frames.size();
        wire.attack(new ListAttacker(frames));
        awaitTrue(() -> wire.attackFramesSent() >= target, "the attacker sent its frames");
        wire.attack(null);
    }

    private static int connections(final EmbeddedNic nic)
    {
        int n = 0;
        for (int w = 0; w < HostileWire.WORKERS; w++)
        {
            n += ((SprayWorkerTransport)nic.worker(w).transport()).engine().connectionCount(); // a size read across threads: after the counters settled
        }
        return n;
    }

    private static long delta(final Map<String, Long> before, final Map<String, Long> after, final String suffix)
    {
        return HostileWire.sum(after, suffix) - HostileWire.sum(before, suffix);
    }

    private static void awaitTrue(final BooleanSupplier condition, final String what) throws InterruptedException
    {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean())
        {
            assertTrue(System.nanoTime() < deadline, "timed out waiting: " + what);
            Thread.sleep(5);
        }
    }
}
