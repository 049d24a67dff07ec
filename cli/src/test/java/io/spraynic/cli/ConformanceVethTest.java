package io.spraynic.cli;

import io.spraynic.datapath.port.TestNetwork;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

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
 * The compliance suite over a real link rather than the {@code udp} preset's loopback sockets, once per address
 * family (S2.1: connection packets in the IP version of the peer's plane-0 address): {@code spraynic nic} on a DPDK
 * {@code net_af_packet} port on one end of a veth pair, in a network namespace whose kernel has IPv6 off and no
 * address (the NIC answers ARP and neighbour discovery itself), and {@code spraynic conformance} on the kernel's UDP
 * stack in a second namespace on the other end, at two addresses (the second for the source-address check; IPv6 ones
 * without duplicate address detection). Every frame crosses the veth as Ethernet, IP and UDP, so the ICRC is checked
 * over real IP headers (over IPv6 with traffic class, flow label and hop limit masked, S2.6) and the ECN field is the
 * one on the wire.
 * <p>
 * The NIC runs with a pre-shared key (S12.2), a 3 s idle timeout and 4 connections per source, so that the
 * liveness and limit checks run. With the key, the handshake frames are the ones written twice (the proof covers the
 * BTH of the first write): their IPv4 identification must still be 0 (S2.4), which the {@code udp} preset cannot
 * show, because its ports synthesize the IP header on both ends. The namespaces are created by each run and
 * removed afterwards, also on failure and when the JVM is killed. Needs root.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ConformanceVethTest
{
    private static final String PSK = "8899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677\n";

    /** What differs between the two runs: addresses, names, and the clauses each must have checked. */
    enum Family
    {
        IPV4("spcf", "10.95.0.1/24", "udp:10.95.0.1", "10.95.0.2:4791", List.of("10.95.0.2/24", "10.95.0.3/24"),
            "udp:10.95.0.1:4791", List.of("S2.3-1", "S2.6-1", "S6.8-1", "S6.8-4", "S6.8-6", "S8.1-1", "S8.2-1",
            "S7.4-1", "S12.2-1", "S12.2-2", "S12.5-1", "S12.10-2")),
        IPV6("spc6", "fd00:95::1/64", "udp:[fd00:95::1]", "[fd00:95::2]:4791", List.of("fd00:95::2/64",
            "fd00:95::3/64"), "udp:fd00:95:", List.of("S2.3-1", "S2.6-1", "S2.6-2", "S6.8-1", "S6.8-4",
            "S6.8-6", "S8.1-1", "S8.2-1", "S7.4-1", "S12.2-2", "S12.5-1", "S12.10-2"));

        final String prefix;
        final String nicAddress;
        final String target;
        final String local;
        final List<String> suiteAddresses;
        /** How the suite's report names the target (an IPv6 address written in full or shortened). */
        final String targetNamed;
        final List<String> clauses;

        Family(final String prefix, final String nicAddress, final String target, final String local,
            final List<String> suiteAddresses, final String targetNamed, final List<String> clauses)
        {
            this.prefix = prefix;
            this.nicAddress = nicAddress;
            this.target = target;
            this.local = local;
            this.suiteAddresses = suiteAddresses;
            this.targetNamed = targetNamed;
            this.clauses = clauses;
        }
    }

    @ParameterizedTest
    @EnumSource(Family.class)
    void shouldFindSprayNicOnAfPacketCompliantInEveryClauseTheSuiteChecks(final Family family,
        @TempDir final Path dir) throws Exception
    {
        final String nsNic = TestNetwork.name(family.prefix + "n");
        final String nsSuite = TestNetwork.name(family.prefix + "s");
        final String vethNic = TestNetwork.name(family.prefix + "vn");
        final String vethSuite = TestNetwork.name(family.prefix + "vs");
        try (TestNetwork network = TestNetwork.create("network namespaces and a veth pair", nsNic, nsSuite))
        {
            network.loopbackUp(nsNic, nsSuite).disableIpv6(family == Family.IPV4 ? new String[]{nsNic, nsSuite} :
                new String[]{nsNic}).veth(nsNic, vethNic, nsSuite, vethSuite);
            for (final String address : family.suiteAddresses)
            {
                network.address(nsSuite, vethSuite, address);
            }
            runSuite(family, dir, nsNic, vethNic, nsSuite);
        }
    }

    private static void runSuite(final Family family, final Path dir, final String nsNic, final String vethNic,
        final String nsSuite) throws Exception
    {
        final Path exchange = dir.resolve("exchange");
        final Path nicOut = dir.resolve("nic.out");
        final Path psk = dir.resolve("psk");
        Files.writeString(psk, PSK);
        Files.setPosixFilePermissions(psk, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        final List<String> serve = new ArrayList<>(List.of("ip", "netns", "exec", nsNic));
        serve.addAll(javaCommand(List.of("nic", "--config", "net_af_packet", "-p", "iface=" + vethNic, "-p",
            "file_prefix=spraynic-" + family.prefix + "-" + TestNetwork.ID, "--mode", "spray", "--ip",
            family.nicAddress, "--expose", "1m", "--exchange", exchange.toString(), "--idle-timeout", "3",
            "--max-connections-per-source", "4", "--psk-file", psk.toString(), "--seconds", "200",
            "--connect-response-rate", ConformanceCommandTest.RESPONSE_RATE, "--connect-response-burst",
            ConformanceCommandTest.RESPONSE_BURST)));
        final Process nic = new ProcessBuilder(serve).redirectErrorStream(true).redirectOutput(nicOut.toFile()).start();
        try
        {
            final Path report = dir.resolve("report.json");
            final Path suiteOut = dir.resolve("suite.out");
            final List<String> suite = new ArrayList<>(List.of("ip", "netns", "exec", nsSuite));
            suite.addAll(javaCommand(List.of("conformance", "--target", family.target, "--local", family.local,
                "--exchange", exchange.toString(), "--output", report.toString(), "--target-idle-timeout", "3",
                "--target-connection-limit", "4", "--psk-file", psk.toString(), "--target-response-rate",
                ConformanceCommandTest.RESPONSE_RATE, "--target-response-burst", ConformanceCommandTest.RESPONSE_BURST,
                "--target-late-margin-max", "2", "--target-deregister-command",
                CliTestSupport.shellCommand(List.of("deregister", "--exchange", exchange.toString())))));
            final Process conformance = new ProcessBuilder(suite).redirectErrorStream(true)
                .redirectOutput(suiteOut.toFile()).start();
            final boolean done = conformance.waitFor(240, TimeUnit.SECONDS);
            final String out = Files.readString(suiteOut);
            System.out.println(out);
            assertTrue(done, "the suite ended within 240 s: " + out + "\nNIC: " + Files.readString(nicOut));
            assertTrue(out.contains(family.targetNamed), out);
            assertEquals(0, conformance.exitValue(), out + "\nNIC: " + Files.readString(nicOut));
            final String json = Files.readString(report);
            assertTrue(json.contains("\"mustFailed\":false"), json);
            assertFalse(json.contains("\"verdict\":\"FAIL\""), json);
            // every check of the suite ran and passed, the response bucket's included, but those of the target as
            // an initiator, which this run does not start (S13.3)
            assertFalse(json.contains("\"verdict\":\"NOT_TESTED\""), "every check ran: " + json);
            for (final String id : io.spraynic.conformance.ConformanceSuite.checkIds())
            {
                assertTrue(id.startsWith("initiator.") || id.startsWith("interop.") ||
                    json.contains("{\"id\":\"" + id + "\""), id + " ran: " + json);
            }
            for (final String clause : family.clauses)
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
