package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The main job's path, smaller: a verified transfer over the crossed DPDK net_ring pair. One EAL
 * per JVM, so one demo run per test class.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DemoCommandTest
{
    @Test
    void shouldVerifyEveryFrameOverNetRingPair()
    {
        final CliTestSupport.Run run = CliTestSupport.run("demo", "--frames", "20k", "--frame-size", "1024", "--json");
        assertEquals(0, run.exitCode(), run.out() + run.err());
        final String json = run.out().lines().filter(line -> line.startsWith("{")).findFirst().orElseThrow();
        assertTrue(json.contains("\"verified\":true"), json);
        assertTrue(json.contains("\"frames\":20480,"), json);
        assertTrue(json.contains("\"bytes\":" + 20480L * 1024 + ","), json);
        assertTrue(json.contains("\"corrupt\":0,"), json);
        assertTrue(json.contains("\"portTxPackets\":20480,") && json.contains("\"portRxPackets\":20480"), json);
    }
}
