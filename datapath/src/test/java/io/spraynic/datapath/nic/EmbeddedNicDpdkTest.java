package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.BulkTransfer;
import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two embedded NICs in one process on real DPDK {@code net_ring} ports: two planes, each a crossed ring pair
 * with two queues, two workers per NIC (worker w owns queue w of both planes); they exchange verified
 * transfers both ways, in spray and RoCEv2 mode (one EAL per JVM: one DPDK for the class).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class EmbeddedNicDpdkTest
{
    private static final int PLANES = 2;
    private static final int WORKERS = 2;
    private static DpdkNic dpdk;

    @TempDir
    Path dir;

    @BeforeAll
    static void start()
    {
        final List<PortConfig> ports = new ArrayList<>();
        for (int p = 0; p < PLANES; p++)
        {
            ports.add(PortConfig.ringPair("a" + p, "b" + p).withQueues(WORKERS, WORKERS).withDescriptors(1024, 1024));
            ports.add(PortConfig.ringPair("b" + p, "a" + p).withQueues(WORKERS, WORKERS).withDescriptors(1024, 1024));
        }
        dpdk = DpdkNic.start(NicConfig.of(EalConfig.DEFAULT.withFilePrefix("spraynic-embedded-" + ProcessHandle.current().pid())
            .withLogLevels(List.of("lib.eal:warning")), MempoolConfig.DEFAULT.withMbufs(32767), ports));
    }

    @AfterAll
    static void stop()
    {
        dpdk.close();
    }

    @ParameterizedTest
    @EnumSource(NicConnection.Kind.class)
    void shouldExchangeVerifiedTransfersBothWaysWithTwoWorkersPerNic(final NicConnection.Kind mode) throws Exception
    {
        final EmbeddedNic[] nics = new EmbeddedNic[2];
        final CountersFile[] counters = new CountersFile[2];
        try
        {
            for (int h = 0; h < 2; h++)
            {
                final EmbeddedNicConfig config = new EmbeddedNicConfig().mode(mode).workers(WORKERS).planes(PLANES)
                    .connections(8, 4, 1024).sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig);
                final PacketPort[][] ports = new PacketPort[WORKERS][PLANES];
                for (int p = 0; p < PLANES; p++)
                {
                    config.local(p, 0x0A00_0001 + (h << 8) + (p << 16), 0x02_00_00_00_00_01L + ((long)h << 8) + ((long)p << 16));
                    for (int w = 0; w < WORKERS; w++)
                    {
                        ports[w][p] = dpdk.packetPort((h == 0 ? "a" : "b") + p, w);
                    }
                }
                config.peerResolver(new io.spraynic.datapath.transport.spray.SprayHandshake.PeerResolver()
                {
                    public int ipv4(final int plane, final int plane0Ipv4)
                    {
                        return plane0Ipv4 + (plane << 16);
                    }

                    public long mac(final int plane, final int plane0Ipv4, final long plane0Mac)
                    {
                        return plane0Mac + ((long)plane << 16);
                    }
                });
                counters[h] = CountersFile.create(dir, "dpdk-" + mode + h, 4096);
                nics[h] = EmbeddedNic.start(config, ports, counters[h]);
            }
            final VerifiedExchange.Pair both = VerifiedExchange.runBoth(nics[0], nics[1], 8L << 20, 64 * 1024,
                Duration.ofSeconds(60));
            final VerifiedExchange.Result client = both.client();
            final VerifiedExchange.Result served = both.server();
            assertTrue(client.verified(), client.describe());
            assertTrue(served.verified(), served.describe());
            assertEquals(8L << 20, served.bytesEachWay());
            assertTrue(client.drain().drained() && served.drain().drained(), client.drain().describe());
        }
        finally
        {
            for (int h = 0; h < 2; h++)
            {
                if (null != nics[h])
                {
                    nics[h].close();
                }
                if (null != counters[h])
                {
                    counters[h].close();
                }
            }
        }
    }

    @Test
    void shouldConnectWithAPreSharedKeyAndTransferDuringASpoofedConnectFlood() throws Exception
    {
        final byte[] key = new byte[32];
        new java.security.SecureRandom().nextBytes(key);
        final EmbeddedNicHandshakeTest.InjectingPort attacker =
            new EmbeddedNicHandshakeTest.InjectingPort(dpdk.packetPort("a0", 0));
        final EmbeddedNic[] nics = new EmbeddedNic[2];
        final CountersFile[] counters = new CountersFile[2];
        final int flood = 6_000;
        final Arena arena = Arena.ofShared();
        final Thread floodThread = new Thread(() ->
        {
            final io.spraynic.datapath.wire.RoceFrameWriter writer =
                new io.spraynic.datapath.wire.RoceFrameWriter(io.spraynic.datapath.wire.SprayOpcodes.TABLE);
            final java.util.SplittableRandom random = new java.util.SplittableRandom(5);
            for (int n = 0; n < flood; n++)
            {
                attacker.frames.add(EmbeddedNicHandshakeTest.spoofedConnect(writer, random, n, ip(1, 0), mac(1, 0), PLANES));
                if (n % 100 == 99 && n < flood - 2_000)
                {
                    java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
                }
            }
        }, "connect-flood");
        try
        {
            for (int h = 0; h < 2; h++)
            {
                final EmbeddedNicConfig config = new EmbeddedNicConfig().mode(NicConnection.Kind.SPRAY).workers(WORKERS)
                    .planes(PLANES).connections(8, 4, 1024).sprayConfig(() ->
                        EmbeddedNicConfig.sharedCoreSprayConfig().psk(key).connectResponseRate(20_000, 64));
                final PacketPort[][] ports = new PacketPort[WORKERS][PLANES];
                for (int p = 0; p < PLANES; p++)
                {
                    config.local(p, ip(h, p), mac(h, p));
                    for (int w = 0; w < WORKERS; w++)
                    {
                        ports[w][p] = h == 0 && w == 0 && p == 0 ? attacker : dpdk.packetPort((h == 0 ? "a" : "b") + p, w);
                    }
                }
                config.peerResolver(RESOLVER);
                counters[h] = CountersFile.create(dir, "dpdk-flood" + h, 4096);
                nics[h] = EmbeddedNic.start(config, ports, counters[h]);
            }
            floodThread.start();
            final Duration wait = Duration.ofSeconds(60);
            final NicConnection client = nics[0].connect(new int[]{ip(1, 0), ip(1, 1)}, wait);
            final NicConnection server = nics[1].accept(wait);
            assertNotNull(server);
            final long bytes = 8L << 20;
            final MemorySegment source = SeededPattern.allocate(arena, bytes, 17);
            final MemorySegment target = arena.allocate(bytes, 64);
            final MemoryRegion src = nics[0].register(source, AccessFlags.NONE);
            final MemoryRegion dst = nics[1].register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            assertEquals(PostResult.OK, server.postReceive(0, new ReceiveWorkRequest().wrId(77).buffer(null, 0, 0)));
            BulkTransfer.write(client, src, dst.address(), dst.rkey(), 64 * 1024, true, wait);
            assertEquals(77, BulkTransfer.awaitImmediate(server, wait).wrId());
            assertEquals(-1, source.mismatch(target), "every byte arrived during the flood");
            floodThread.join();
            final long drained = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!attacker.frames.isEmpty() && System.nanoTime() < drained)
            {
                Thread.sleep(10); // A's worker puts the rest on the wire (what the full ring refuses is lost)
            }
            Thread.sleep(50);
            // with the key required, not even a RETRY: every spoofed CONNECT fails its proof first (S12.2)
            final long authFailures = EmbeddedNicHandshakeTest.awaitAtLeast(nics[1], WORKERS,
                "spray handshake_auth_failures", attacker.injected);
            final long answered = EmbeddedNicHandshakeTest.sum(nics[1], WORKERS, "spray connect_retries_sent") +
                EmbeddedNicHandshakeTest.sum(nics[1], WORKERS, "spray connect_responses_rate_limited") +
                EmbeddedNicHandshakeTest.sum(nics[1], WORKERS, "spray connect_rejects_sent");
            assertTrue(attacker.injected > flood / 4, "the flood reached the wire: " + attacker.injected);
            assertEquals(attacker.injected, authFailures, "every spoofed CONNECT dropped and counted");
            assertTrue(answered >= 1 && answered <= 8, "RETRYs only for the legitimate peer's CONNECTs: " + answered);
            assertNull(nics[1].accept(Duration.ofMillis(200)), "the flood opened no connection");
        }
        finally
        {
            floodThread.join();
            for (int h = 0; h < 2; h++)
            {
                if (null != nics[h])
                {
                    nics[h].close();
                }
                if (null != counters[h])
                {
                    counters[h].close();
                }
            }
            arena.close();
        }
    }

    private static final io.spraynic.datapath.transport.spray.SprayHandshake.PeerResolver RESOLVER =
        new io.spraynic.datapath.transport.spray.SprayHandshake.PeerResolver()
        {
            public int ipv4(final int plane, final int plane0Ipv4)
            {
                return plane0Ipv4 + (plane << 16);
            }

            public long mac(final int plane, final int plane0Ipv4, final long plane0Mac)
            {
                return plane0Mac + ((long)plane << 16);
            }
        };

    private static int ip(final int host, final int plane)
    {
        return 0x0A00_0001 + (host << 8) + (plane << 16);
    }

    private static long mac(final int host, final int plane)
    {
        return 0x02_00_00_00_00_01L + ((long)host << 8) + ((long)plane << 16);
    }
}
