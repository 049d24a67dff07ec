package io.spraynic.cli;

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
import java.util.concurrent.TimeUnit;

import static io.spraynic.cli.CliTestSupport.javaCommand;
import static io.spraynic.cli.NetnsTestSupport.run;
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
    private static final long ID = ProcessHandle.current().pid() % 100_000;
    private static final String NS_A = "sp6a" + ID;
    private static final String NS_R = "sp6r" + ID;
    private static final String NS_B = "sp6b" + ID;
    private static final List<String> NAMESPACES = List.of(NS_A, NS_R, NS_B);
    private static final String VETH_A = "sp6va" + ID;
    private static final String VETH_RA = "sp6vra" + ID;
    private static final String VETH_B = "sp6vb" + ID;
    private static final String VETH_RB = "sp6vrb" + ID;
    private static Thread cleanupHook;

    @BeforeAll
    static void createNetwork() throws Exception
    {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
            "SKIPPED: network namespaces, veth pairs and a router need root");
        cleanupHook = new Thread(Ipv6RouterVethTest::removeNetwork, "ipv6-router-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanupHook);
        removeNetwork();
        for (final String ns : NAMESPACES)
        {
            run("ip", "netns", "add", ns);
            run("ip", "-n", ns, "link", "set", "lo", "up");
        }
        for (final String ns : List.of(NS_A, NS_B))
        {
            // the NICs' namespaces: their kernels keep quiet on the NICs' veths, only the NIC speaks there
            run("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1",
                "net.ipv6.conf.default.disable_ipv6=1");
        }
        NetnsTestSupport.vethPair(NS_A, VETH_A, NS_R, VETH_RA);
        NetnsTestSupport.vethPair(NS_B, VETH_B, NS_R, VETH_RB);
        run("ip", "netns", "exec", NS_R, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1");
        run("ip", "-n", NS_R, "-6", "addr", "add", "fd00:97:1::1/64", "dev", VETH_RA, "nodad");
        run("ip", "-n", NS_R, "-6", "addr", "add", "fd00:97:2::1/64", "dev", VETH_RB, "nodad");
        run("ip", "-n", NS_R, "-6", "addr", "add", "fe80::1/64", "dev", VETH_RB, "nodad");
    }

    @AfterAll
    static void deleteNetwork()
    {
        removeNetwork();
        if (null != cleanupHook)
        {
            Runtime.getRuntime().removeShutdownHook(cleanupHook);
        }
    }

    private static void removeNetwork()
    {
        NetnsTestSupport.deleteNamespaces(NAMESPACES);
    }

    @Test
    void shouldTransferBetweenTwoIpv6SubnetsThroughALinuxRouterByAddressOnly(@TempDir final Path dir) throws Exception
    {
        final Path exchange = Files.createDirectory(dir.resolve("exchange"));
        final long forwardedBefore = snmp6(NS_R, "Ip6OutForwDatagrams");
        final Process server = transfer(NS_B, VETH_B, "server", "fd00:97:2::20/64", "fe80::1", exchange, dir.resolve("b.out"));
        final Process client = transfer(NS_A, VETH_A, "client", "fd00:97:1::10/64", "fd00:97:1::1", exchange,
            dir.resolve("a.out"));
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

    private static Process transfer(final String ns, final String veth, final String role, final String ip,
        final String gateway, final Path exchange, final Path output) throws Exception
    {
        final List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", ns));
        command.addAll(javaCommand(List.of("transfer", "--config", "net_af_packet", "-p", "iface=" + veth, "-p",
            "file_prefix=spraynic-route6-" + role + "-" + ID, "--role", role, "--ip", ip, "--gateway", gateway,
            "--exchange", exchange.toString(), "--size", "4m", "--timeout", "60", "--json")));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
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
