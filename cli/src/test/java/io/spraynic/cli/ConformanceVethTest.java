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
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The compliance suite over a real link rather than the {@code udp} preset's loopback sockets: {@code spraynic nic}
 * on a DPDK {@code net_af_packet} port on one end of a veth pair, in a network namespace of its own (no address in
 * its kernel: it answers ARP itself), and {@code spraynic conformance} in a second namespace on the other end, on
 * the kernel's UDP stack there (10.95.0.2, and 10.95.0.3 for the source-address check). Every frame crosses the veth
 * as Ethernet, IPv4 and UDP, so the ICRC is checked over real IP headers and the ECN field is the one on the wire.
 * The NIC runs with a 3 s idle timeout and 4 connections per source, so that the liveness and limit checks run.
 * <p>
 * It runs with a pre-shared key (S12.2), so the handshake frames are the ones written twice (the proof covers the
 * BTH of the first write): their IPv4 identification must still be 0 (S2.4), which the {@code udp} preset cannot
 * show, because its ports synthesize the IP header on both ends.
 * The namespaces are created here and removed afterwards, also on failure and when the JVM is killed. Needs root.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ConformanceVethTest
{
    private static final long ID = ProcessHandle.current().pid() % 100_000;
    private static final String NS_NIC = "spcfn" + ID;
    private static final String NS_SUITE = "spcfs" + ID;
    private static final List<String> NAMESPACES = List.of(NS_NIC, NS_SUITE);
    private static final String VETH_NIC = "spcvn" + ID;
    private static final String VETH_SUITE = "spcvs" + ID;
    private static Thread cleanupHook;

    @BeforeAll
    static void createNetwork() throws Exception
    {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
            "SKIPPED: network namespaces and veth pairs need root");
        cleanupHook = new Thread(ConformanceVethTest::removeNetwork, "conformance-veth-cleanup");
        Runtime.getRuntime().addShutdownHook(cleanupHook);
        removeNetwork();
        for (final String ns : NAMESPACES)
        {
            run("ip", "netns", "add", ns);
            run("ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1");
            run("ip", "-n", ns, "link", "set", "lo", "up");
        }
        NetnsTestSupport.vethPair(NS_NIC, VETH_NIC, NS_SUITE, VETH_SUITE);
        run("ip", "-n", NS_SUITE, "addr", "add", "10.95.0.2/24", "dev", VETH_SUITE);
        run("ip", "-n", NS_SUITE, "addr", "add", "10.95.0.3/24", "dev", VETH_SUITE);
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
    void shouldFindSprayNicOnAfPacketCompliantInEveryClauseTheSuiteChecks(@TempDir final Path dir) throws Exception
    {
        final Path exchange = dir.resolve("exchange");
        final Path nicOut = dir.resolve("nic.out");
        final Path psk = dir.resolve("psk");
        Files.writeString(psk, "8899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677\n");
        Files.setPosixFilePermissions(psk, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        final List<String> serve = new ArrayList<>(List.of("ip", "netns", "exec", NS_NIC));
        serve.addAll(javaCommand(List.of("nic", "--config", "net_af_packet", "-p", "iface=" + VETH_NIC, "-p",
            "file_prefix=spraynic-conformance-" + ID, "--mode", "spray", "--ip", "10.95.0.1/24", "--expose", "1m",
            "--exchange", exchange.toString(), "--idle-timeout", "3",
            "--max-connections-per-source", "4", "--psk-file", psk.toString(), "--seconds", "200")));
        final Process nic = new ProcessBuilder(serve).redirectErrorStream(true).redirectOutput(nicOut.toFile()).start();
        try
        {
            final Path report = dir.resolve("report.json");
            final Path suiteOut = dir.resolve("suite.out");
            final List<String> suite = new ArrayList<>(List.of("ip", "netns", "exec", NS_SUITE));
            suite.addAll(javaCommand(List.of("conformance", "--target", "udp:10.95.0.1", "--local", "10.95.0.2:4791",
                "--exchange", exchange.toString(), "--output", report.toString(), "--target-idle-timeout", "3",
                "--target-connection-limit", "4", "--psk-file", psk.toString())));
            final Process conformance = new ProcessBuilder(suite).redirectErrorStream(true)
                .redirectOutput(suiteOut.toFile()).start();
            final boolean done = conformance.waitFor(240, TimeUnit.SECONDS);
            final String out = Files.readString(suiteOut);
            System.out.println(out);
            assertTrue(done, "the suite ended within 240 s: " + out + "\nNIC: " + Files.readString(nicOut));
            assertEquals(0, conformance.exitValue(), out + "\nNIC: " + Files.readString(nicOut));
            final String json = Files.readString(report);
            assertTrue(json.contains("\"mustFailed\":false"), json);
            assertFalse(json.contains("\"verdict\":\"FAIL\""), json);
            // every check ran but the response bucket's, which the suite cannot out-send on a shared host (S13.3)
            assertEquals(0, json.replaceAll(ConformanceCommandTest.RESPONSE_RATE_CHECK, "")
                .split("\"verdict\":\"NOT_TESTED\"", -1).length - 1, "every check ran: " + json);
            for (final String clause : List.of("S2.3-1", "S2.6-1", "S8.1-1", "S8.2-1", "S7.4-1", "S12.2-1", "S12.2-2",
                "S12.5-1", "S12.10-2"))
            {
                assertTrue(json.contains("\"clause\":\"" + clause + "\""), clause + " checked: " + json);
            }
        }
        finally
        {
            nic.destroy();
            if (!nic.waitFor(30, TimeUnit.SECONDS))
            {
                nic.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
