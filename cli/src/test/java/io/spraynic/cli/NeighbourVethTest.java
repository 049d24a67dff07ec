package io.spraynic.cli;

import io.spraynic.datapath.port.TestNetwork;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.spraynic.cli.CliTestSupport.javaCommand;
import static io.spraynic.datapath.port.DpdkTestSupport.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The NIC on a real Linux network, named by IP address only. On {@code net_af_packet} over a veth into namespaces this
 * test creates (and removes, also on failure and when the JVM is killed):
 * <ul>
 *   <li>beside a Linux host: the kernel's ICMP echo requests ({@code ping}) get answers, the kernel's neighbour table
 *   learns the NIC's MAC, and the NIC resolves the host's address by ARP (its CONNECTs reach the host's UDP stack);</li>
 *   <li>through a Linux router ({@code ip_forward=1}) between two subnets: two NICs, each given the other's address and
 *   its own gateway, exchange a verified transfer both ways: every frame goes to the router's MAC.</li>
 * </ul>
 * Needs root and python3 (the echo requests come from a raw ICMP socket when {@code ping} is not installed).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class NeighbourVethTest
{
    private static final long ID = TestNetwork.ID;
    private static final String NS_NIC = TestNetwork.name("spnbn");
    private static final String NS_HOST = TestNetwork.name("spnbh");
    private static final String NS_A = TestNetwork.name("spnba");
    private static final String NS_R = TestNetwork.name("spnbr");
    private static final String NS_B = TestNetwork.name("spnbb");
    private static final String VETH_NIC = TestNetwork.name("spnvn");
    private static final String VETH_HOST = TestNetwork.name("spnvh");
    private static final String VETH_A = TestNetwork.name("spnva");
    private static final String VETH_RA = TestNetwork.name("spnvra");
    private static final String VETH_B = TestNetwork.name("spnvb");
    private static final String VETH_RB = TestNetwork.name("spnvrb");
    private static TestNetwork network;

    /** Sends argv[2] ICMP echo requests to argv[1], one every 200 ms, prints how many were answered. */
    private static final String PING = String.join("\n",
        "import socket, struct, sys, time, os",
        "def csum(b):",
        "    if len(b) % 2: b += b'\\0'",
        "    s = sum(struct.unpack('!%dH' % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16",
        "    return ~s & 0xffff",
        "s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); s.settimeout(1.0)",
        "ident = os.getpid() & 0xffff; answered = 0",
        "for seq in range(int(sys.argv[2])):",
        "    data = bytes(range(48))",
        "    h = struct.pack('!BBHHH', 8, 0, 0, ident, seq); c = csum(h + data)",
        "    s.sendto(struct.pack('!BBHHH', 8, 0, c, ident, seq) + data, (sys.argv[1], 0))",
        "    end = time.time() + 1.0",
        "    while time.time() < end:",
        "        try: p, a = s.recvfrom(2048)",
        "        except socket.timeout: break",
        "        ihl = (p[0] & 15) * 4",
        "        t, code, _, i, q = struct.unpack('!BBHHH', p[ihl:ihl + 8])",
        "        if a[0] == sys.argv[1] and t == 0 and i == ident and q == seq and p[ihl + 8:] == data and csum(p[ihl:]) == 0:",
        "            answered += 1; break",
        "    time.sleep(0.2)",
        "print('answered', answered)");

    @BeforeAll
    static void createNetwork() throws Exception
    {
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/bin/python3")), "SKIPPED: the pinger needs python3");
        network = TestNetwork.create("network namespaces, veth pairs and a router", NS_NIC, NS_HOST, NS_A, NS_R, NS_B)
            .loopbackUp(NS_NIC, NS_HOST, NS_A, NS_R, NS_B).disableIpv6(NS_NIC, NS_HOST, NS_A, NS_R, NS_B);
        // a NIC beside a Linux host: 10.96.0.1 (the NIC, no address in its namespace's kernel), 10.96.0.2 (Linux)
        network.veth(NS_NIC, VETH_NIC, NS_HOST, VETH_HOST).address(NS_HOST, VETH_HOST, "10.96.0.2/24");
        // two NICs on two subnets and a Linux router between them: 10.97.1.10 - 10.97.1.1 | 10.97.2.1 - 10.97.2.20
        network.veth(NS_A, VETH_A, NS_R, VETH_RA).veth(NS_B, VETH_B, NS_R, VETH_RB)
            .address(NS_R, VETH_RA, "10.97.1.1/24").address(NS_R, VETH_RB, "10.97.2.1/24")
            .sysctl(NS_R, "net.ipv4.ip_forward=1");
    }

    @AfterAll
    static void deleteNetwork()
    {
        if (null != network)
        {
            network.close();
        }
    }

    @Test
    void shouldAnswerLinuxPingTeachLinuxItsMacAndResolveTheHostByArp(@TempDir final Path dir) throws Exception
    {
        // a serving NIC: Linux pings it and learns its MAC
        final Path nicOut = dir.resolve("nic.out");
        final List<String> serve = new ArrayList<>(List.of("ip", "netns", "exec", NS_NIC));
        serve.addAll(javaCommand(List.of("nic", "--config", "net_af_packet", "-p", "iface=" + VETH_NIC, "-p",
            "file_prefix=spraynic-neigh-nic-" + ID, "--mode", "spray", "--ip", "10.96.0.1/24", "--seconds", "60")));
        final Process nic = new ProcessBuilder(serve).redirectErrorStream(true).redirectOutput(nicOut.toFile()).start();
        try
        {
            awaitOutput(nic, nicOut, "running");
            final String ping = run("ip", "netns", "exec", NS_HOST, "python3", "-c", PING, "10.96.0.1", "5");
            assertTrue(ping.contains("answered 5"), "every echo request answered: " + ping + Files.readString(nicOut));
            final String nicMac = macOf(NS_NIC, VETH_NIC);
            final String neighbours = run("ip", "-n", NS_HOST, "neigh", "show", "10.96.0.1", "dev", VETH_HOST);
            assertTrue(neighbours.toLowerCase(Locale.ROOT).contains("lladdr " + nicMac), "Linux learned the NIC's MAC " +
                nicMac + ": " + neighbours);
            nic.destroy(); // SIGTERM: drains and stops
            assertTrue(nic.waitFor(60, TimeUnit.SECONDS), Files.readString(nicOut));
        }
        finally
        {
            nic.destroyForcibly();
        }

        // a client NIC given only the Linux host's address: it resolves it by ARP, so its CONNECTs reach the host's UDP
        // stack (port 4791 closed there) and go unanswered
        final Path exchange = Files.createDirectory(dir.resolve("exchange"));
        Files.writeString(exchange.resolve("server.addr"), "planes=1 ip.0=10.96.0.2 addr=4096 rkey=1 length=1048576");
        final Path out = dir.resolve("client.out");
        final List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", NS_NIC));
        command.addAll(javaCommand(List.of("transfer", "--config", "net_af_packet", "-p", "iface=" + VETH_NIC, "-p",
            "file_prefix=spraynic-neigh-" + ID, "--role", "client", "--ip", "10.96.0.1/24", "--exchange",
            exchange.toString(), "--size", "64k", "--timeout", "8")));
        final long udpNoPortsBefore = udpNoPorts(NS_HOST);
        final Process client = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try
        {
            assertTrue(client.waitFor(90, TimeUnit.SECONDS), Files.readString(out));
            final String clientOut = Files.readString(out);
            assertTrue(clientOut.contains("no answer from 10.96.0.2 after"), "ARP answered, the handshake not: " + clientOut);
            assertTrue(!clientOut.contains("no ARP answer"), clientOut);
            assertTrue(udpNoPorts(NS_HOST) > udpNoPortsBefore, "CONNECTs addressed to the host's MAC arrived: " + clientOut);
        }
        finally
        {
            client.destroyForcibly();
        }
    }

    @Test
    void shouldTransferBetweenTwoSubnetsThroughALinuxRouterByAddressOnly(@TempDir final Path dir) throws Exception
    {
        final Path exchange = Files.createDirectory(dir.resolve("exchange"));
        final Process server = NetnsTestSupport.startRoutedTransfer(NS_B, VETH_B, "server", "10.97.2.20/24", "10.97.2.1",
            exchange, dir.resolve("b.out"));
        final Process client = NetnsTestSupport.startRoutedTransfer(NS_A, VETH_A, "client", "10.97.1.10/24", "10.97.1.1",
            exchange, dir.resolve("a.out"));
        try
        {
            for (final String out : NetnsTestSupport.awaitTransferPair(client, dir.resolve("a.out"), server,
                dir.resolve("b.out")))
            {
                assertTrue(out.contains("\"verified\":true"), out);
                assertTrue(out.contains("\"bytes\":" + (4 << 20)), out);
            }
            for (final String file : List.of("client.addr", "server.addr"))
            {
                final String published = Files.readString(exchange.resolve(file));
                assertTrue(!published.contains("mac"), "peers are named by address only: " + published);
            }
            // the router forwarded the transfer both ways: it knows both NICs' MACs from ARP, and counted the packets
            final String routerNeighbours = run("ip", "-n", NS_R, "neigh", "show");
            assertTrue(routerNeighbours.contains("10.97.1.10") && routerNeighbours.contains("10.97.2.20"), routerNeighbours);
            final long forwarded = snmp(NS_R, "Ip", "ForwDatagrams");
            assertTrue(forwarded > 4096, "the router forwarded the packets: " + forwarded);
        }
        finally
        {
            client.destroyForcibly();
            server.destroyForcibly();
        }
    }

    private static void awaitOutput(final Process process, final Path out, final String text) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (!Files.readString(out).contains(text))
        {
            assertTrue(process.isAlive() && System.nanoTime() < deadline, "waiting for '" + text + "': " +
                Files.readString(out));
            Thread.sleep(50);
        }
    }

    private static String macOf(final String ns, final String veth) throws Exception
    {
        final Matcher m = Pattern.compile("link/ether (\\S+)").matcher(run("ip", "-n", ns, "link", "show", veth));
        assertTrue(m.find());
        return m.group(1).toLowerCase(Locale.ROOT);
    }

    private static long udpNoPorts(final String ns) throws Exception
    {
        return snmp(ns, "Udp", "NoPorts");
    }

    /** @return one counter of the namespace's /proc/net/snmp, e.g. Ip ForwDatagrams. */
    private static long snmp(final String ns, final String group, final String name) throws Exception
    {
        final List<String> lines = run("ip", "netns", "exec", ns, "cat", "/proc/net/snmp").lines()
            .filter(l -> l.startsWith(group + ": ")).toList();
        final List<String> names = List.of(lines.get(0).split("\\s+"));
        final String[] values = lines.get(1).split("\\s+");
        return Long.parseLong(values[names.indexOf(name)]);
    }
}
