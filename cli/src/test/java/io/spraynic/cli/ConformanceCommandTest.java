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
 * peer from another loopback address and must find every MUST clause it checks passing. The NIC process is
 * stopped and its files removed whatever happens.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class ConformanceCommandTest
{
    @Test
    void shouldFindSprayNicCompliantInEveryClauseTheSuiteChecks(@TempDir final Path dir) throws Exception
    {
        final long pid = ProcessHandle.current().pid();
        final String nicIp = "127.73." + (pid >> 8 & 0xFF) + "." + (pid & 0xFF);
        final String suiteIp = "127.74." + (pid >> 8 & 0xFF) + "." + (pid & 0xFF);
        final int port = 20_000 + (int)(pid % 40_000);
        final Path exchange = dir.resolve("exchange");
        final Path output = dir.resolve("nic.out");
        final ProcessBuilder builder = new ProcessBuilder(CliTestSupport.javaCommand(List.of("nic", "--config", "udp",
            "-p", "ip=" + nicIp, "-p", "port=" + port, "-p", "peer_port=" + port, "--ip", nicIp, "--mode", "spray",
            "--expose", "1m", "--exchange", exchange.toString(), "--seconds", "180", "--idle", "backoff")))
            .redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().put("SPRAYNIC_RUN_DIR", dir.toString());
        final Process nic = builder.start();
        try
        {
            final Path report = dir.resolve("report.json");
            final CliTestSupport.Run run = CliTestSupport.run("conformance", "--target", "udp:" + nicIp + ":" + port,
                "--local", suiteIp + ":" + port, "--exchange", exchange.toString(), "--output", report.toString());
            final String nicOut = Files.readString(output);
            assertEquals(0, run.exitCode(), run.out() + run.err() + "\nNIC: " + nicOut);
            assertTrue(run.out().contains("0 failed"), run.out());
            final String json = Files.readString(report);
            assertTrue(json.contains("\"mustFailed\":false"), json);
            assertFalse(json.contains("\"verdict\":\"FAIL\""), json);
            for (final String clause : List.of("S9.1-1", "S9.1-2", "S9.1-3", "S2.6-1", "S3.1-1", "S6.4-2", "S6.6-1",
                "S9.2-1"))
            {
                assertTrue(json.contains("\"clause\":\"" + clause + "\""), clause + " checked: " + json);
            }
        }
        finally
        {
            nic.destroy();
            if (!nic.waitFor(20, TimeUnit.SECONDS))
            {
                nic.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
