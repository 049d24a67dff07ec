package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.PacketPort;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
            final Path exchange = Files.createDirectory(dir.resolve("exchange"));
            final CompletableFuture<PeerExchange.Result> server =
                CompletableFuture.supplyAsync(() -> exchange(nics[1], PeerExchange.Role.SERVER, exchange));
            final PeerExchange.Result client = exchange(nics[0], PeerExchange.Role.CLIENT, exchange);
            final PeerExchange.Result served = server.get(120, TimeUnit.SECONDS);
            assertTrue(client.verified(), client.toJson());
            assertTrue(served.verified(), served.toJson());
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

    private static PeerExchange.Result exchange(final EmbeddedNic nic, final PeerExchange.Role role, final Path directory)
    {
        try
        {
            return PeerExchange.run(nic, role, directory, 8L << 20, 64 * 1024, Duration.ofSeconds(60));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }
}
