package io.spraynic.cli;

import io.spraynic.datapath.port.TestNetwork;
import org.junit.jupiter.api.AfterAll;
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
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The compliance suite over IPv6 (S2.1: connection packets in the IP version of the peer's plane-0 address):
 * {@code spraynic nic} on a DPDK {@code net_af_packet} port at fd00:95::1 on one end of a veth pair, in a network
 * namespace whose kernel has IPv6 off (the NIC answers neighbour discovery itself), and {@code spraynic conformance}
 * on the kernel's IPv6 UDP stack in a second namespace (fd00:95::2, and fd00:95::3 for the source-address check,
 * both without duplicate address detection). Every frame crosses the veth as Ethernet, IPv6 and UDP, so the ICRC is
 * checked over the IPv6 header as S2.6 says (traffic class, flow label and hop limit masked) and the ECN field is
 * the traffic class's on the wire. With a pre-shared key, a 3 s idle timeout and 4 connections per source, as
 * {@link ConformanceVethTest}. The namespaces are removed afterwards, also on failure. Needs root.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ConformanceVethIpv6Test
{
    private static final String NS_NIC = TestNetwork.name("spc6n");
    private static final String NS_SUITE = TestNetwork.name("spc6s");
    private static final String VETH_NIC = TestNetwork.name("spc6vn");
    private static final String VETH_SUITE = TestNetwork.name("spc6vs");
    private static TestNetwork network;

    @BeforeAll
    static void createNetwork() throws Exception
    {
        network = TestNetwork.create("network namespaces and a veth pair", NS_NIC, NS_SUITE)
            .loopbackUp(NS_NIC, NS_SUITE).disableIpv6(NS_NIC)
            .veth(NS_NIC, VETH_NIC, NS_SUITE, VETH_SUITE)
            .address(NS_SUITE, VETH_SUITE, "fd00:95::2/64").address(NS_SUITE, VETH_SUITE, "fd00:95::3/64");
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
    void shouldFindSprayNicOnAfPacketCompliantOverIpv6(@TempDir final Path dir) throws Exception
    {
        final Path exchange = dir.resolve("exchange");
        final Path nicOut = dir.resolve("nic.out");
        final Path psk = dir.resolve("psk");
        Files.writeString(psk, "8899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677\n");
        Files.setPosixFilePermissions(psk, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        final List<String> serve = new ArrayList<>(List.of("ip", "netns", "exec", NS_NIC));
        serve.addAll(javaCommand(List.of("nic", "--config", "net_af_packet", "-p", "iface=" + VETH_NIC, "-p",
            "file_prefix=spraynic-conformance6-" + TestNetwork.ID, "--mode", "spray", "--ip", "fd00:95::1/64",
            "--expose", "1m", "--exchange", exchange.toString(), "--idle-timeout", "3",
            "--max-connections-per-source", "4", "--psk-file", psk.toString(), "--seconds", "200")));
        final Process nic = new ProcessBuilder(serve).redirectErrorStream(true).redirectOutput(nicOut.toFile()).start();
        try
        {
            final Path report = dir.resolve("report.json");
            final Path suiteOut = dir.resolve("suite.out");
            final List<String> suite = new ArrayList<>(List.of("ip", "netns", "exec", NS_SUITE));
            suite.addAll(javaCommand(List.of("conformance", "--target", "udp:[fd00:95::1]", "--local",
                "[fd00:95::2]:4791", "--exchange", exchange.toString(), "--output", report.toString(),
                "--target-idle-timeout", "3", "--target-connection-limit", "4", "--psk-file", psk.toString())));
            final Process conformance = new ProcessBuilder(suite).redirectErrorStream(true)
                .redirectOutput(suiteOut.toFile()).start();
            final boolean done = conformance.waitFor(240, TimeUnit.SECONDS);
            final String out = Files.readString(suiteOut);
            System.out.println(out);
            assertTrue(done, "the suite ended within 240 s: " + out + "\nNIC: " + Files.readString(nicOut));
            assertTrue(out.contains("udp:fd00:95:0:0:0:0:0:1:4791") || out.contains("udp:fd00:95::1"), out);
            assertEquals(0, conformance.exitValue(), out + "\nNIC: " + Files.readString(nicOut));
            final String json = Files.readString(report);
            assertTrue(json.contains("\"mustFailed\":false"), json);
            assertFalse(json.contains("\"verdict\":\"FAIL\""), json);
            // every check ran but the response bucket's, which the suite cannot out-send on a shared host (S13.3)
            assertEquals(0, json.replaceAll(ConformanceCommandTest.RESPONSE_RATE_CHECK, "")
                .split("\"verdict\":\"NOT_TESTED\"", -1).length - 1, "every check ran: " + json);
            for (final String clause : List.of("S2.3-1", "S2.6-1", "S2.6-2", "S8.1-1", "S12.2-2", "S12.5-1",
                "S12.10-2"))
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
