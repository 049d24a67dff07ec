package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * CI's conformance run: {@code spraynic nic --mode spray} on the {@code udp} preset (its own process, as shipped:
 * kernel UDP sockets on a loopback address, no root, no EAL) exposes memory; {@code spraynic conformance} plays its
 * peer from another loopback address and must find every MUST clause it checks passing; then a {@code spraynic
 * transfer} (a third process) connects to the suite as if it were a serving NIC, for the initiator's checks. The
 * processes are stopped and their files removed whatever happens.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ConformanceCommandTest
{
    /**
     * The NIC's response bucket (S12.9: RETRYs and REJECTs a second, and at once), far below its default of 50,000
     * a second: on a shared host the suite sends its 4,000 CONNECTs, and the NIC answers them, at 2,000 to 7,000 a
     * second (one veth run took 2.2 s to send them), no faster than the default refills, so that only a small
     * bucket is outrun and {@code limits.response-rate} judges (S13.3) rather than says not tested; so does
     * {@code resources.no-resources-rate} (S10.2-2: the same bucket, for NACKs RNR NO_RESOURCES).
     */
    static final String RESPONSE_RATE = "500";
    static final String RESPONSE_BURST = "32";

    @Test
    void shouldFindSprayNicCompliantInEveryClauseTheSuiteChecks(@TempDir final Path dir) throws Exception
    {
        final long pid = ProcessHandle.current().pid();
        final String nicIp = "127.73." + (pid >> 8 & 0xFF) + "." + (pid & 0xFF);
        final String suiteIp = "127.74." + (pid >> 8 & 0xFF) + "." + (pid & 0xFF);
        final int port = 20_000 + (int)(pid % 40_000);
        final Path exchange = dir.resolve("exchange");
        final Path output = dir.resolve("nic.out");
        // a pre-shared key (S12.2), a short idle timeout (S12.10) and a small per-source limit (S12.9), so that the
        // suite's checks of them run, and run quickly
        final Path psk = dir.resolve("psk");
        Files.writeString(psk, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n");
        Files.setPosixFilePermissions(psk, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        final ProcessBuilder builder = new ProcessBuilder(CliTestSupport.javaCommand(List.of("nic", "--config", "udp",
            "-p", "ip=" + nicIp, "-p", "port=" + port, "-p", "peer_port=" + port, "--ip", nicIp, "--mode", "spray",
            "--expose", "1m", "--exchange", exchange.toString(), "--seconds", "180", "--idle", "backoff",
            "--psk-file", psk.toString(), "--idle-timeout", "3", "--max-connections-per-source", "4",
            "--connect-response-rate", RESPONSE_RATE, "--connect-response-burst", RESPONSE_BURST)))
            .redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().put("SPRAYNIC_RUN_DIR", dir.toString());
        final Process nic = builder.start();
        // the target as an initiator: a transfer that visits the suite as if it were a serving NIC
        final String initiatorIp = "127.75." + (pid >> 8 & 0xFF) + "." + (pid & 0xFF);
        final Path initiatorExchange = dir.resolve("initiator-exchange");
        final Process transfer = new ProcessBuilder(CliTestSupport.javaCommand(List.of("transfer", "--config", "udp",
            "-p", "ip=" + initiatorIp, "-p", "port=" + port, "-p", "peer_port=" + port, "--ip", initiatorIp, "--mode",
            "spray", "--role", "client", "--peer-kind", "nic", "--exchange", initiatorExchange.toString(), "--size", "64k",
            "--timeout", "150", "--idle", "backoff")))
            .redirectErrorStream(true).redirectOutput(dir.resolve("transfer.out").toFile()).start();
        // and a transfer the suite serves itself, dropping 5 % of each direction: interoperability under loss
        final String interopIp = "127.76." + (pid >> 8 & 0xFF) + "." + (pid & 0xFF);
        final Path interopExchange = dir.resolve("interop-exchange");
        final Path interopOut = dir.resolve("interop.out");
        final Process interop = new ProcessBuilder(CliTestSupport.javaCommand(List.of("transfer", "--config", "udp",
            "-p", "ip=" + interopIp, "-p", "port=" + port, "-p", "peer_port=" + port, "--ip", interopIp, "--mode",
            "spray", "--role", "client", "--peer-kind", "nic", "--exchange", interopExchange.toString(), "--size", "1m",
            "--message", "64k", "--timeout", "200", "--idle", "backoff")))
            .redirectErrorStream(true).redirectOutput(interopOut.toFile()).start();
        try
        {
            final Path report = dir.resolve("report.json");
            final Path junit = dir.resolve("conformance.xml");
            final CliTestSupport.Run run = CliTestSupport.run("conformance", "--target", "udp:" + nicIp + ":" + port,
                "--local", suiteIp + ":" + port, "--exchange", exchange.toString(), "--output", report.toString(),
                "--junit", junit.toString(), "--psk-file", psk.toString(), "--target-idle-timeout", "3",
                "--target-connection-limit", "4", "--target-response-rate", RESPONSE_RATE, "--target-response-burst",
                RESPONSE_BURST, "--initiator", "udp:" + initiatorIp + ":" + port, "--initiator-exchange",
                initiatorExchange.toString(), "--interop", "udp:" + interopIp + ":" + port, "--interop-exchange",
                interopExchange.toString(), "--interop-loss", "5", "--target-late-margin-max", "2",
                "--target-deregister-command",
                CliTestSupport.shellCommand(List.of("deregister", "--exchange", exchange.toString())));
            final String nicOut = Files.readString(output);
            System.out.println(run.out());
            assertEquals(0, run.exitCode(), run.out() + run.err() + "\nNIC: " + nicOut);
            assertTrue(run.out().contains("0 failed"), run.out());
            assertTrue(interop.waitFor(60, TimeUnit.SECONDS), "the interop transfer ended");
            final String interopText = Files.readString(interopOut);
            assertEquals(0, interop.exitValue(), interopText);
            assertTrue(interopText.contains("VERIFIED, 1,048,576 bytes each way"), interopText);
            final String json = Files.readString(report);
            assertTrue(json.contains("\"mustFailed\":false"), json);
            assertFalse(json.contains("\"verdict\":\"FAIL\""), json);
            final String xml = Files.readString(junit);
            assertTrue(xml.contains("failures=\"0\"") && xml.contains("<testcase classname=\"S9.1-1\" name=\"handshake.version-3\">"),
                xml);
            assertTrue(json.contains("\"id\":\"initiator.version-reject\",\"clause\":\"S9.1-1\",\"level\":\"MUST\"," +
                "\"title\":\"after a CONNECT_REJECT VERSION_UNSUPPORTED the target sends no more CONNECTs for that " +
                "request\",\"verdict\":\"PASS\""), json);
            // every check of the suite ran and passed, the response bucket's included (S13.3), S6.8-1's undo too
            // (the suite slows the path until SprayNIC's RTO comes before its first tail probe), and S9.3.2-1's, last,
            // with spraynic deregister taking the NIC's region away in the middle of a READ
            assertTrue(nicOut.contains("spraynic nic: deregistered the exposed region (rkey="), nicOut);
            assertFalse(json.contains("\"verdict\":\"NOT_TESTED\""), json);
            for (final String id : io.spraynic.conformance.ConformanceSuite.checkIds())
            {
                assertTrue(json.contains("{\"id\":\"" + id + "\""), id + " ran: " + json);
            }
            assertTrue(json.matches("(?s).*\"id\":\"multipath\\.repath-rtt\"[^}]*\"verdict\":\"PASS\",\"reason\":" +
                "\"path \\d+ moved from control port \\d+ to \\d+ with its ACKs \\d+ ms late.*"), json);
            for (final String clause : List.of("S9.1-1", "S9.1-2", "S9.1-3", "S2.6-1", "S3.1-1", "S6.4-2", "S6.6-1",
                "S9.2-1", "S9.1-8", "S12.2-1", "S12.2-2", "S2.3-1", "S8.1-1", "S8.2-1", "S7.4-1", "S12.9-1", "S12.10-2"))
            {
                assertTrue(json.contains("\"clause\":\"" + clause + "\""), clause + " checked: " + json);
            }
        }
        finally
        {
            transfer.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            interop.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            nic.destroy();
            if (!nic.waitFor(20, TimeUnit.SECONDS))
            {
                nic.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void shouldRefuseATargetItCannotReach()
    {
        final CliTestSupport.Run run = CliTestSupport.run("conformance", "--target", "tcp:127.0.0.1", "--region", "1:2:3");
        assertEquals(2, run.exitCode(), run.out() + run.err());
        assertTrue(run.err().contains("--target tcp:127.0.0.1: is not a UDP target udp:HOST[:PORT]") &&
            run.err().contains("; try --target udp:127.0.0.1"), run.err());
        final CliTestSupport.Run noRegion = CliTestSupport.run("conformance", "--target", "udp:127.0.0.1");
        assertEquals(2, noRegion.exitCode(), noRegion.out() + noRegion.err());
        assertTrue(noRegion.err().contains("--exchange DIR or --region"), noRegion.err());
        final CliTestSupport.Run noGroup = CliTestSupport.run("conformance", "--target", "udp:127.0.0.1", "--region",
            "1:2:1048576", "--groups", "errors,nothing");
        assertEquals(2, noGroup.exitCode(), noGroup.out() + noGroup.err());
        assertTrue(noGroup.err().contains("--groups errors,nothing: names a group the suite does not have; try --groups " +
            "errors (groups: handshake, data,"), noGroup.err());
    }
}
