package io.spraynic.cli;

import io.spraynic.datapath.port.TestNetwork;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.spraynic.datapath.port.DpdkTestSupport.run;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic transfer} over IPv6 through a Linux router, by address only: two NICs on {@code net_af_packet}, each
 * on a veth into a namespace this test creates (and removes, also on failure and when the JVM is killed), on two
 * IPv6 subnets (fd00:97:1::/64, fd00:97:2::/64) joined by a router with IPv6 forwarding. One NIC's gateway is the
 * router's global address, the other's its link-local fe80::1, as routers announce themselves. Each NIC knows only
 * the other's IPv6 address from the exchange directory: it resolves its gateway by neighbour discovery and sends
 * every frame to the router's MAC; the router resolves the NICs the same way and forwards both directions. Needs root.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class Ipv6RouterVethTest
{
    private static final String NS_A = TestNetwork.name("sp6a");
    private static final String NS_R = TestNetwork.name("sp6r");
    private static final String NS_B = TestNetwork.name("sp6b");
    private static final String VETH_A = TestNetwork.name("sp6va");
    private static final String VETH_RA = TestNetwork.name("sp6vra");
    private static final String VETH_B = TestNetwork.name("sp6vb");
    private static final String VETH_RB = TestNetwork.name("sp6vrb");
    private static TestNetwork network;

    @BeforeAll
    static void createNetwork() throws Exception
    {
        // the NICs' namespaces without IPv6: their kernels keep quiet on the NICs' veths, only the NIC speaks there
        network = TestNetwork.create("network namespaces, veth pairs and a router", NS_A, NS_R, NS_B)
            .loopbackUp(NS_A, NS_R, NS_B).disableIpv6(NS_A, NS_B)
            .veth(NS_A, VETH_A, NS_R, VETH_RA).veth(NS_B, VETH_B, NS_R, VETH_RB)
            .sysctl(NS_R, "net.ipv6.conf.all.forwarding=1")
            .address(NS_R, VETH_RA, "fd00:97:1::1/64").address(NS_R, VETH_RB, "fd00:97:2::1/64")
            .address(NS_R, VETH_RB, "fe80::1/64");
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
    void shouldTransferBetweenTwoIpv6SubnetsThroughALinuxRouterByAddressOnly(@TempDir final Path dir) throws Exception
    {
        final Path exchange = Files.createDirectory(dir.resolve("exchange"));
        final long forwardedBefore = snmp6(NS_R, "Ip6OutForwDatagrams");
        final Process server = NetnsTestSupport.startRoutedTransfer(NS_B, VETH_B, "server", "fd00:97:2::20/64", "fe80::1",
            exchange, dir.resolve("b.out"));
        final Process client = NetnsTestSupport.startRoutedTransfer(NS_A, VETH_A, "client", "fd00:97:1::10/64",
            "fd00:97:1::1", exchange, dir.resolve("a.out"));
        try
        {
            for (final String out : NetnsTestSupport.awaitTransferPair(client, dir.resolve("a.out"), server,
                dir.resolve("b.out")))
            {
                assertTrue(out.contains("\"verified\":true"), out);
                assertTrue(out.contains("\"bytes\":" + (4 << 20)), out);
            }
            final String published = Files.readString(exchange.resolve("server.addr"));
            assertTrue(published.contains("ip.0=fd00:97:2::20") && !published.contains("mac"), published);
            // the router forwarded the transfer both ways: it resolved both NICs by neighbour discovery
            final String routerNeighbours = run("ip", "-n", NS_R, "-6", "neigh", "show");
            assertTrue(routerNeighbours.contains("fd00:97:1::10") && routerNeighbours.contains("fd00:97:2::20"),
                routerNeighbours);
            final long forwarded = snmp6(NS_R, "Ip6OutForwDatagrams") - forwardedBefore;
            assertTrue(forwarded > 4096, "the router forwarded the packets: " + forwarded);
        }
        finally
        {
            client.destroyForcibly();
            server.destroyForcibly();
        }
    }

    private static long snmp6(final String ns, final String name) throws Exception
    {
        for (final String line : run("ip", "netns", "exec", ns, "cat", "/proc/net/snmp6").split("\n"))
        {
            final String[] fields = line.trim().split("\\s+");
            if (fields.length == 2 && fields[0].equals(name))
            {
                return Long.parseLong(fields[1]);
            }
        }
        throw new IllegalStateException("no " + name + " in /proc/net/snmp6 of " + ns);
    }
}
