package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code experiment plane-failure --realtime} on DPDK (a class of its own: EAL starts once per JVM, and
 * {@link ExperimentCommandTest} starts it for the real-time loss sweep): spray finishes by itself over the live
 * planes, RoCEv2's QP on the dead plane fails.
 */
class PlaneFailureRealTimeCommandTest
{
    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void shouldFinishSprayAndFailRocev2WhenAPlaneDiesInRealTime(@TempDir final Path dir) throws Exception
    {
        final CliTestSupport.Run run = CliTestSupport.run("experiment", "plane-failure", "--realtime", "--bytes", "48m",
            "--fail-at-us", "20000", "--json", "--out", dir.toString());
        assertEquals(0, run.exitCode(), run.err());
        final String json = run.out().lines().filter(line -> line.startsWith("{")).findFirst().orElseThrow();
        assertTrue(json.contains("\"clock\":\"real\""), json);
        assertTrue(json.contains("{\"transport\":\"spray\",\"complete\":true,\"verified\":true,\"flowFailed\":false,"), json);
        assertTrue(json.contains("{\"transport\":\"rocev2\",\"complete\":false,\"verified\":false,\"flowFailed\":true,"), json);
        assertTrue(Files.exists(dir.resolve("plane-failure-realtime.csv")) && Files.exists(dir.resolve("plane-failure-realtime.png")));
        assertEquals(json, Files.readString(dir.resolve("plane-failure-realtime.json")).strip());
    }

}
