package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.NetworkNamespaceThread;
import io.spraynic.datapath.port.TestNetwork;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.pmd.NicConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two NICs on IPv6 kernel UDP sockets across a veth pair between two network namespaces this test creates (and
 * removes, also on failure and when the JVM is killed): NIC h opens its sockets inside namespace h
 * ({@link NetworkNamespaceThread}), on fd00:97::h+1, the address its veth end has there (no DAD: usable at once).
 * A verified spray transfer and a verified RoCEv2 transfer each way; the veth's own counters show the datagrams
 * crossed it, not a loopback. Needs root.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class UdpSocketIpv6VethTest
{
    private static final String[] NETNS = {TestNetwork.name("su6na"), TestNetwork.name("su6nb")};
    private static final String[] VETH = {TestNetwork.name("su6va"), TestNetwork.name("su6vb")};
    private static final String[] ADDRESS = {"fd00:97::1", "fd00:97::2"};
    private static final Duration WAIT = Duration.ofSeconds(60);

    private static TestNetwork network;

    @TempDir
    Path dir;

    private final int udpPort = 20_000 + new SplittableRandom().nextInt(40_000);

    @BeforeAll
    static void createNetwork()
    {
        network = TestNetwork.create("two network namespaces and a veth pair", NETNS);
        network.veth(NETNS[0], VETH[0], NETNS[1], VETH[1]);
        for (int h = 0; h < 2; h++)
        {
            // the engines' frames are up to a mempool buffer long (over 1500 B): a jumbo link, as a RoCE fabric has
            network.in(NETNS[h], "ip", "link", "set", "dev", VETH[h], "mtu", "9000");
            network.address(NETNS[h], VETH[h], ADDRESS[h] + "/64");
        }
    }

    @AfterAll
    static void removeNetwork()
    {
        if (null != network)
        {
            network.close();
        }
    }

    private NicConfig pmdConfig(final int nic)
    {
        return NicConfig.parse("[eal]\nlcores = \"0\"\nno_huge = true\nno_pci = true\n[[port]]\nname = \"udp0\"\n" +
            "kind = \"udp\"\ndevice = \"" + ADDRESS[nic] + "\"\nargs = { port = \"" + udpPort + "\", peer_port = \"" +
            udpPort + "\", source_ports = \"8\" }\n", "udp6-veth-" + nic);
    }

    private EmbeddedNic start(final int nic, final NicConnection.Kind mode, final CountersFile counters) throws Exception
    {
        final EmbeddedNicConfig config = new EmbeddedNicConfig().mode(mode).workers(1).planes(1)
            .connections(8, 4, 1024).sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig)
            .rocevRetry(io.spraynic.datapath.transport.rocev2.RcConnectionAttributes.ackTimeoutNanos(18), 7);
        // the sockets open on this thread, so in the NIC's namespace; the poll threads only use them
        return NetworkNamespaceThread.call(NETNS[nic],
            () -> EmbeddedNic.startOnDpdk(pmdConfig(nic), config, counters, UnaryOperator.identity()));
    }

    private static long vethPackets(final int h, final String direction)
    {
        return Long.parseLong(network.in(NETNS[h], "cat", "/sys/class/net/" + VETH[h] + "/statistics/" + direction +
            "_packets").strip());
    }

    @Test
    void shouldTransferVerifiedSprayAndRocev2BetweenNamespacesOverIpv6Sockets() throws Exception
    {
        for (final NicConnection.Kind mode : NicConnection.Kind.values())
        {
            final EmbeddedNic[] nics = new EmbeddedNic[2];
            final CountersFile[] counters = new CountersFile[2];
            try
            {
                final long sentBefore = vethPackets(0, "tx");
                for (int h = 0; h < 2; h++)
                {
                    counters[h] = CountersFile.create(dir, "udp6veth-" + mode + h, 8192);
                    nics[h] = start(h, mode, counters[h]);
                    assertEquals(ADDRESS[h], nics[h].localAddressText(0));
                    assertEquals(0, nics[h].localIpv4(0), "an IPv6 plane");
                }
                final long bytes = 4L << 20;
                final VerifiedExchange.Pair both = VerifiedExchange.runBoth(nics[0], nics[1], bytes, 64 * 1024, WAIT);
                nics[0] = null; // the exchange closed them
                nics[1] = null;
                assertTrue(both.verified(), mode + ": " + both.describe());
                assertEquals(bytes, both.server().bytesEachWay());
                assertEquals(ADDRESS[0], both.server().peerAddress(), both.describe());
                final long crossed = vethPackets(0, "tx") - sentBefore;
                assertTrue(crossed > bytes / 4096, mode + ": " + crossed + " packets left namespace 0 on its veth end: " +
                    "the datagrams crossed the veth");
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
    }
}
