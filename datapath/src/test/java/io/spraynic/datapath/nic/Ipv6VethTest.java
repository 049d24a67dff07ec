package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.TestNetwork;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.wire.Icmpv6Header;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.InterfaceAddress;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * IPv6 planes against Linux. Two NICs on DPDK {@code net_af_packet}, each on a veth whose other end is in a
 * bridge inside a network namespace this test creates (and removes, also on failure and when the JVM is killed);
 * the bridge holds Linux's own address, fd00:96::2/64. The NICs have fd00:96::10 and fd00:96::20 and nothing else:
 * <ul>
 *   <li>Linux's ICMPv6 echo requests (a raw socket, as {@code ping -6}) to both NICs are answered: Linux resolved
 *   each NIC's MAC with a neighbour solicitation to its solicited-node group, its table holds the MACs, and its
 *   ICMPv6 checksum-error counter stays 0 (every NA and echo reply passed Linux's checksum over the pseudo-header);</li>
 *   <li>a NIC resolves Linux's address with a neighbour solicitation: its spray CONNECTs reach Linux's UDP stack
 *   (port 4791 closed: counted in {@code Udp6NoPorts}) and go unanswered;</li>
 *   <li>a verified spray transfer and a verified RoCEv2 transfer each way between the NICs, named by their IPv6
 *   addresses only, each having resolved the other by neighbour discovery.</li>
 * </ul>
 * Needs root and python3.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class Ipv6VethTest
{
    private static final long ID = TestNetwork.ID;
    private static final String NETNS = TestNetwork.name("sp6ns");
    private static final String BRIDGE = TestNetwork.name("sp6br");
    private static final String[] LOCAL = {TestNetwork.name("sp6la"), TestNetwork.name("sp6lb")};
    private static final String[] INSIDE = {TestNetwork.name("sp6ia"), TestNetwork.name("sp6ib")};
    private static final String LINUX = "fd00:96::2";
    private static final String[] NIC = {"fd00:96::10", "fd00:96::20"};
    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String N0 = "worker 0: plane 0 neighbour ";

    /** Sends argv[2] ICMPv6 echo requests to argv[1] from a raw socket (the kernel sums it), prints how many came back. */
    private static final String PING6 = String.join("\n",
        "import socket, struct, sys, time, os",
        "s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, socket.IPPROTO_ICMPV6); s.settimeout(1.0)",
        "ident = os.getpid() & 0xffff; answered = 0",
        "for seq in range(int(sys.argv[2])):",
        "    data = bytes(range(56))",
        "    s.sendto(struct.pack('!BBHHH', 128, 0, 0, ident, seq) + data, (sys.argv[1], 0))",
        "    end = time.time() + 3.0",
        "    while time.time() < end:",
        "        try: p, a = s.recvfrom(2048)",
        "        except socket.timeout: continue",
        "        t, code, _, i, q = struct.unpack('!BBHHH', p[:8])",
        "        if a[0] == sys.argv[1] and t == 129 and i == ident and q == seq and p[8:] == data:",
        "            answered += 1; break",
        "    time.sleep(0.1)",
        "print('answered', answered)");

    private static TestNetwork network;
    private static DpdkNic dpdk;

    @TempDir
    Path dir;

    @BeforeAll
    static void start()
    {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "SKIPPED: the pinger needs python3");
        network = TestNetwork.create("a network namespace, a bridge and veth pairs", NETNS).loopbackUp(NETNS);
        for (int i = 0; i < 2; i++)
        {
            network.veth(null, LOCAL[i], NETNS, INSIDE[i]); // the local ends without IPv6: only the NICs speak there
        }
        // flooded multicast: without a querier the solicited-node groups need not be snooped
        network.bridge(NETNS, BRIDGE, List.of(INSIDE), "mcast_snooping", "0").address(NETNS, BRIDGE, LINUX + "/64");
        dpdk = DpdkNic.start(NicConfig.of(EalConfig.DEFAULT.withFilePrefix("spraynic-ipv6-veth-" + ID)
            .withLogLevels(List.of("lib.eal:warning")), MempoolConfig.DEFAULT, List.of(port(0), port(1))));
    }

    private static PortConfig port(final int i)
    {
        return PortConfig.vdev("afp" + i, "net_af_packet" + i, "iface=" + LOCAL[i] + ",qpairs=1");
    }

    @AfterAll
    static void stop()
    {
        try
        {
            if (null != dpdk)
            {
                dpdk.close();
            }
        }
        finally
        {
            if (null != network)
            {
                network.close();
            }
        }
    }

    @Test
    void shouldAnswerLinuxPing6AndResolveLinuxByNeighbourDiscovery() throws Exception
    {
        final EmbeddedNic[] nics = new EmbeddedNic[2];
        final CountersFile[] counters = new CountersFile[2];
        try
        {
            for (int h = 0; h < 2; h++)
            {
                counters[h] = CountersFile.create(dir, "ipv6ping" + h + "-" + ID, 4096);
                nics[h] = start(h, NicConnection.Kind.SPRAY, counters[h]);
            }
            final long checksumErrorsBefore = snmp6("Icmp6InCsumErrors");
            for (int h = 0; h < 2; h++)
            {
                final String ping = inNamespace("python3", "-c", PING6, NIC[h], "5");
                assertTrue(ping.contains("answered 5"), "every echo request answered by " + NIC[h] + ": " + ping +
                    HostileWire.counters(nics[h]));
                final String neighbours = inNamespace("ip", "-6", "neigh", "show", NIC[h], "dev", BRIDGE);
                final String mac = io.spraynic.datapath.wire.Wire.macToString(nics[h].localMac(0)).toLowerCase(Locale.ROOT);
                assertTrue(neighbours.toLowerCase(Locale.ROOT).contains("lladdr " + mac), "Linux learned " + NIC[h] +
                    "'s MAC " + mac + " by neighbour discovery: " + neighbours);
                final Map<String, Long> c = HostileWire.counters(nics[h]);
                assertTrue(c.get(N0 + "neighbour_advertisements_sent") >= 1, c.toString());
                assertTrue(c.get(N0 + "echo_answered") >= 5, c.toString());
                assertEquals(1, c.get(N0 + "unsolicited_advertisements_sent"), "announced once at start");
            }
            assertEquals(checksumErrorsBefore, snmp6("Icmp6InCsumErrors"), "Linux found no ICMPv6 checksum wrong");

            // a NIC given only Linux's address resolves it: its CONNECTs reach Linux's closed UDP port 4791
            final long noPortsBefore = snmp6("Udp6NoPorts");
            final long udpChecksumErrorsBefore = snmp6("Udp6InCsumErrors");
            final IllegalStateException noSpray = assertThrows(IllegalStateException.class,
                () -> nics[0].connect(new InetAddress[]{InetAddress.getByName(LINUX)}, Duration.ofSeconds(4)));
            assertTrue(noSpray.getMessage().contains("fd00:96::2") && !noSpray.getMessage().contains("neighbour advertisement"),
                "resolved, then the handshake went unanswered: " + noSpray.getMessage());
            final Map<String, Long> c = HostileWire.counters(nics[0]);
            assertTrue(c.get(N0 + "neighbour_solicitations_sent") >= 1 && c.get(N0 + "resolved") >= 1, c.toString());
            assertTrue(snmp6("Udp6NoPorts") > noPortsBefore, "CONNECTs addressed to Linux's MAC arrived, their UDP " +
                "checksums right (checksum errors " + udpChecksumErrorsBefore + " -> " + snmp6("Udp6InCsumErrors") + ")");
            assertEquals(udpChecksumErrorsBefore, snmp6("Udp6InCsumErrors"), "Linux found no UDP checksum wrong");
            assertEquals(0, HostileWire.sum(c, "frame faults (exception handling a frame, dropped)"));
        }
        finally
        {
            close(nics, counters);
        }
    }

    @Test
    void shouldTransferVerifiedBetweenTwoNicsNamedByIpv6AddressesOnly() throws Exception
    {
        for (final NicConnection.Kind mode : NicConnection.Kind.values())
        {
            final EmbeddedNic[] nics = new EmbeddedNic[2];
            final CountersFile[] counters = new CountersFile[2];
            try
            {
                for (int h = 0; h < 2; h++)
                {
                    counters[h] = CountersFile.create(dir, "ipv6" + mode + h + "-" + ID, 4096);
                    nics[h] = start(h, mode, counters[h]);
                }
                final long bytes = 2L << 20;
                final VerifiedExchange.Pair both = VerifiedExchange.runBoth(nics[0], nics[1], bytes, 64 * 1024, WAIT);
                final VerifiedExchange.Result client = both.client();
                final VerifiedExchange.Result served = both.server();
                assertTrue(both.verified(), both.describe());
                assertEquals(bytes, client.bytesEachWay());
                // no MAC anywhere, no static neighbour, only IPv6 addresses: each NIC found the other's MAC by
                // neighbour discovery, or it could not have connected (the exchange closes the NICs, and their counters)
                assertEquals(NIC[0], served.peerAddress(), both.describe());
                assertEquals(NIC[1], client.peerAddress(), both.describe());
            }
            finally
            {
                close(nics, counters);
            }
        }
    }

    private EmbeddedNic start(final int h, final NicConnection.Kind mode, final CountersFile counters)
    {
        final String name = "afp" + h;
        final InterfaceAddress address = InterfaceAddress.parse(NIC[h] + "/64", "");
        final EmbeddedNicConfig config = new EmbeddedNicConfig().mode(mode).workers(1).planes(1)
            .local(0, address, 0x02_00_00_00_96_10L + h)
            .sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig).bursts(32, dpdk.maxFrameLength(name));
        // as EmbeddedNic.startOnDpdk does for an IPv6 plane (af_packet on a veth receives every frame anyway)
        dpdk.port(name).acceptMulticast(Icmpv6Header.multicastMac(Icmpv6Header.solicitedNodeLow(address.ipv6Low())),
            Icmpv6Header.multicastMac(Icmpv6Header.ALL_NODES_LOW));
        return EmbeddedNic.start(config, new PacketPort[][]{{dpdk.packetPort(name, 0)}}, counters);
    }

    private static void close(final EmbeddedNic[] nics, final CountersFile[] counters)
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

    private static long snmp6(final String name)
    {
        for (final String line : inNamespace("cat", "/proc/net/snmp6").split("\n"))
        {
            final String[] fields = line.trim().split("\\s+");
            if (fields.length == 2 && fields[0].equals(name))
            {
                return Long.parseLong(fields[1]);
            }
        }
        throw new IllegalStateException("no " + name + " in /proc/net/snmp6");
    }

    private static String inNamespace(final String... command)
    {
        return network.in(NETNS, command);
    }
}
