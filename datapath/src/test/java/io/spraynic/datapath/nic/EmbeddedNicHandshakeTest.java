package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.BulkTransfer;
import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.port.ForwardingPort;
import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.transport.spray.SprayConfig;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.wire.ConnectionHeader;
import io.spraynic.datapath.wire.HandshakeBlock;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The spray handshake between two live embedded NICs (poll threads, in-JVM links): a spoofed CONNECT flood
 * while a legitimate peer connects and transfers, refusals that name their reason, pre-shared keys.
 * docs/PROTOCOL.md S9.1, S12.2, S12.9.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EmbeddedNicHandshakeTest
{
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private final Arena arena = Arena.ofShared();

    @AfterEach
    void closeAll() throws Exception
    {
        for (int i = closeables.size() - 1; i >= 0; i--)
        {
            closeables.get(i).close();
        }
        arena.close();
    }

    /**
     * A port of NIC A that also transmits frames an attacker queued, from A's own worker thread (the port is
     * single-threaded), each time the worker polls it.
     */
    static final class InjectingPort extends ForwardingPort
    {
        final ConcurrentLinkedQueue<byte[]> frames = new ConcurrentLinkedQueue<>();
        private PacketBurst tx;
        volatile long injected;

        InjectingPort(final PacketPort inner)
        {
            super(inner, "+attacker");
        }

        public int receive(final PacketBurst burst)
        {
            if (!frames.isEmpty())
            {
                inject();
            }
            return inner.receive(burst);
        }

        private void inject()
        {
            if (null == tx)
            {
                tx = inner.newBurst(32);
            }
            for (int i = 0; i < 32 && tx.size() < tx.capacity(); i++)
            {
                final byte[] frame = frames.poll();
                if (null == frame || !inner.allocate(tx, 1))
                {
                    break;
                }
                final int at = tx.size() - 1;
                MemorySegment.copy(MemorySegment.ofArray(frame), 0, tx.memory(), tx.offset(at), frame.length);
                tx.length(at, frame.length);
            }
            injected += inner.transmit(tx);
            inner.release(tx); // what the link could not take is lost, as on a congested wire
        }

        public void close()
        {
            if (null != tx)
            {
                inner.release(tx);
                tx.close();
            }
            inner.close();
        }
    }

    private static int ip(final int host)
    {
        return 0x0A00_0000 | (host + 1);
    }

    private static long mac(final int host)
    {
        return 0x02_00_00_00_00_00L | (host + 1);
    }

    /** Starts NICs 0 and 1 (one plane, {@code workers} each); NIC 0's worker 0 port carries the attacker. */
    private EmbeddedNic[] start(final int workers, final IntFunction<SprayConfig> spray, final InjectingPort[] attacker)
        throws Exception
    {
        final PacketPort[][][] ports = new PacketPort[2][workers][1];
        for (int w = 0; w < workers; w++)
        {
            final InMemoryLink link = new InMemoryLink("w" + w, 1024, 2048 + InMemoryLink.HEADROOM);
            closeables.add(link);
            ports[0][w][0] = w == 0 && null != attacker ? attacker[0] = new InjectingPort(link.first()) : link.first();
            ports[1][w][0] = link.second();
        }
        final EmbeddedNic[] nics = new EmbeddedNic[2];
        for (int h = 0; h < 2; h++)
        {
            final int host = h;
            final EmbeddedNicConfig c = new EmbeddedNicConfig().mode(NicConnection.Kind.SPRAY).workers(workers).planes(1)
                .connections(4, 1, 1024).bursts(32, 2048).sprayConfig(() -> spray.apply(host)).local(0, ip(h), mac(h));
            final CountersFile counters = CountersFile.create(dir, "nic" + h + "-" + closeables.size(), 4096);
            closeables.add(counters);
            nics[h] = EmbeddedNic.start(c, ports[h], counters);
            closeables.add(nics[h]);
        }
        return nics;
    }

    private static NicConnection connect(final EmbeddedNic from, final EmbeddedNic to)
    {
        return from.connect(new int[]{to.localIpv4(0)}, WAIT);
    }

    private void transferAndVerify(final EmbeddedNic a, final EmbeddedNic b, final NicConnection from,
        final NicConnection to, final long bytes)
    {
        final MemorySegment source = SeededPattern.allocate(arena, bytes, 17);
        final MemorySegment target = arena.allocate(bytes, 64);
        final MemoryRegion src = a.register(source, AccessFlags.NONE);
        final MemoryRegion dst = b.register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        assertEquals(PostResult.OK, to.postReceive(0, new ReceiveWorkRequest().wrId(77).buffer(null, 0, 0)));
        BulkTransfer.write(from, src, dst.address(), dst.rkey(), 64 * 1024, true, WAIT);
        assertEquals(77, BulkTransfer.awaitImmediate(to, WAIT).wrId());
        assertEquals(-1, source.mismatch(target), "every byte arrived");
    }

    private static Map<String, Long> counters(final EmbeddedNic nic)
    {
        final CountersReader reader = nic.counters().counters();
        final Map<String, Long> values = new HashMap<>();
        reader.forEach((value, id, label) -> values.put(label, value));
        return values;
    }

    static long sum(final EmbeddedNic nic, final int workers, final String label)
    {
        final Map<String, Long> c = counters(nic);
        long sum = 0;
        for (int w = 0; w < workers; w++)
        {
            final Long v = c.get("worker " + w + ": " + label);
            assertNotNull(v, label + " in " + c.keySet());
            sum += v;
        }
        return sum;
    }

    // the counters file is published every few ms: wait for a value to get there
    static long awaitAtLeast(final EmbeddedNic nic, final int workers, final String label, final long value)
        throws InterruptedException
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        long seen = sum(nic, workers, label);
        while (seen < value && System.nanoTime() < deadline)
        {
            Thread.sleep(10);
            seen = sum(nic, workers, label);
        }
        return seen;
    }

    /** A CONNECT from a spoofed source to NIC 1, written with the real frame writer (ICRC right). */
    private static byte[] spoofedConnect(final RoceFrameWriter writer, final SplittableRandom random, final int n)
    {
        return spoofedConnect(writer, random, n, ip(1), mac(1), 1);
    }

    /** A CONNECT from spoofed source number {@code n} (10.200.x.y) to {@code ip}/{@code mac}, with no cookie. */
    static byte[] spoofedConnect(final RoceFrameWriter writer, final SplittableRandom random, final int n, final int ip,
        final long mac, final int planes)
    {
        writer.ethernet(0x02_AA_00_00_00_00L | n, mac).vlan(-1).ipv4(0x0AC8_0000 | (n + 1), ip).ipv4Identification(0)
            .udpSourcePort(49152).destQp(0).psn(0).opcode(SprayOpcodes.CONNECT);
        final byte[] frame = new byte[writer.frameLength(HandshakeBlock.LENGTH)];
        final MemorySegment seg = MemorySegment.ofArray(frame);
        final long conh = writer.payloadOffset() - ConnectionHeader.LENGTH;
        ConnectionHeader.write(seg, conh, 0, 4, planes, 1024, 1, 1 + random.nextInt(0xFF_FFFE), 0, 100_000,
            random.nextLong());
        final byte[] key = new byte[HandshakeBlock.PUBLIC_KEY_LENGTH];
        random.nextBytes(key);
        HandshakeBlock.writePublicKey(seg, writer.payloadOffset(), key);
        writer.writeFrame(seg, 0, HandshakeBlock.LENGTH);
        return frame;
    }

    @Test
    void shouldConnectAndTransferDuringASpoofedConnectFloodAndKeepNoStateForIt() throws Exception
    {
        final int workers = 2;
        final InjectingPort[] attacker = new InjectingPort[1];
        final EmbeddedNic[] nics = start(workers, h -> EmbeddedNicConfig.sharedCoreSprayConfig()
            .connectResponseRate(20_000, 64), attacker);
        final int flood = 6_000;
        final Thread floodThread = new Thread(() ->
        {
            final RoceFrameWriter writer = new RoceFrameWriter(SprayOpcodes.TABLE);
            final SplittableRandom random = new SplittableRandom(11);
            for (int n = 0; n < flood; n++)
            {
                attacker[0].frames.add(spoofedConnect(writer, random, n));
                if (n % 100 == 99 && n < flood - 2_000)
                {
                    // ~50,000 CONNECTs a second while the peer connects, then the last 2,000 at once: far above the
                    // response rate whatever the machine's load
                    java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
                }
            }
        }, "connect-flood");
        floodThread.start();
        final NicConnection client = connect(nics[0], nics[1]);
        final NicConnection server = nics[1].accept(WAIT);
        assertNotNull(server);
        transferAndVerify(nics[0], nics[1], client, server, 4L << 20);
        floodThread.join();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        long answered = 0;
        while (System.nanoTime() < deadline)
        {
            answered = sum(nics[1], workers, "spray connect_retries_sent") +
                sum(nics[1], workers, "spray connect_responses_rate_limited");
            if (answered >= attacker[0].injected && attacker[0].frames.isEmpty())
            {
                break;
            }
            Thread.sleep(20);
        }
        assertTrue(attacker[0].injected > flood / 4, "the flood reached the wire: " + attacker[0].injected);
        assertTrue(answered >= attacker[0].injected, "every spoofed CONNECT answered or counted: " + answered + " of " +
            attacker[0].injected + "; " + counters(nics[1]));
        assertTrue(awaitAtLeast(nics[1], workers, "spray connect_responses_rate_limited", 1) > 0, "RETRYs were rate-limited");
        assertNull(nics[1].accept(Duration.ofMillis(200)), "the flood opened no connection");
        assertEquals(0, sum(nics[1], workers, "spray cookie_failures"));
    }

    @Test
    void shouldFailAConnectWithTheReasonThePeerRefusedIt() throws Exception
    {
        final EmbeddedNic[] nics = start(1, h -> EmbeddedNicConfig.sharedCoreSprayConfig().maxConnectionsPerSource(1), null);
        final NicConnection first = connect(nics[0], nics[1]);
        assertNotNull(nics[1].accept(WAIT));
        final IllegalStateException refused = assertThrows(IllegalStateException.class, () -> connect(nics[0], nics[1]));
        assertTrue(refused.getMessage().contains("peer refused: SOURCE_LIMIT"), refused.getMessage());
        // one refusal per CONNECT with the cookie that reached it: a resend may cross the REJECT on a loaded machine
        assertTrue(awaitAtLeast(nics[1], 1, "spray source_limited", 1) >= 1);
        assertNotNull(first);
    }

    @Test
    void shouldConnectOnlyWithTheSamePreSharedKey() throws Exception
    {
        final SecureRandom random = new SecureRandom();
        final byte[] key = new byte[32];
        final byte[] other = new byte[32];
        random.nextBytes(key);
        random.nextBytes(other);
        final EmbeddedNic[] nics = start(2, h -> EmbeddedNicConfig.sharedCoreSprayConfig().psk(key), null);
        final NicConnection client = connect(nics[0], nics[1]);
        final NicConnection server = nics[1].accept(WAIT);
        transferAndVerify(nics[0], nics[1], client, server, 1L << 20);

        final EmbeddedNic[] strangers = start(1, h -> EmbeddedNicConfig.sharedCoreSprayConfig()
            .connectBackoffNanos(1_000_000).psk(h == 0 ? other : key), null);
        final IllegalStateException refused = assertThrows(IllegalStateException.class,
            () -> connect(strangers[0], strangers[1]));
        assertTrue(refused.getMessage().contains("pre-shared key"), refused.getMessage());
        // every CONNECT failed the proof: the 8 tries, and more until the connect's deadline (S9.1)
        assertTrue(awaitAtLeast(strangers[1], 1, "spray handshake_auth_failures", 8) >= 8);
        assertNull(strangers[1].accept(Duration.ofMillis(100)));
    }
}
