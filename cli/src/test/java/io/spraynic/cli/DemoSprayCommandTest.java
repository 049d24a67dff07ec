package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The main job as the README runs it, smaller: spray between two NIC endpoints over DPDK net_ring
 * ports through the real-time fabric emulator, 4 planes, 8 paths, 1 % loss, then the RoCEv2
 * baseline over the same ports, polled as {@code --threads auto} decides for this host. One EAL per JVM, so a class
 * of its own.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DemoSprayCommandTest
{
    @Test
    void shouldVerifyEveryByteAndUseEveryPath()
    {
        final CliTestSupport.Run run = CliTestSupport.run("demo", "--size", "32m", "--json");
        assertEquals(0, run.exitCode(), run.out() + run.err());
        final String json = run.out().lines().filter(line -> line.startsWith("{")).findFirst().orElseThrow();
        assertTrue(json.startsWith("{\"mode\":\"spray\",\"bytes\":33554432,"), json);
        assertTrue(json.contains("\"verified\":true"), json);
        assertTrue(json.contains("\"goodputGbps\":"), json);
        // the summary says what bounded it: the links' rate (data-centre links by default), the host's cores and how
        // they were shared (auto: one poll thread for the NICs and the fabric below 4 cores, as on a 2-core host)
        final int cores = Runtime.getRuntime().availableProcessors();
        assertTrue(json.contains("\"linkGbps\":100.000,\"cores\":" + cores + ",\"threads\":\"" +
            (cores < 4 ? "shared" : "dedicated") + "\","), json);
        final Matcher paths = Pattern.compile("\"paths\":\\[([0-9,]+)]").matcher(json);
        assertTrue(paths.find(), json);
        final long[] perPath = Arrays.stream(paths.group(1).split(",")).mapToLong(Long::parseLong).toArray();
        assertEquals(8, perPath.length);
        assertTrue(Arrays.stream(perPath).allMatch(count -> count > 0), "every path carried traffic: " + json);
        final Matcher lost = Pattern.compile("\"lost\":(\\d+),\"retransmitted\":(\\d+),\"moved\":(\\d+),").matcher(json);
        assertTrue(lost.find(), json);
        assertTrue(Long.parseLong(lost.group(2)) + Long.parseLong(lost.group(3)) >= Long.parseLong(lost.group(1)),
            "every loss sent again: " + json);
        assertTrue(json.contains(",\"rocev2\":{\"mode\":\"rocev2\",\"bytes\":33554432,"), "the baseline ran beside it: " + json);
        assertEquals(2, json.split("\"verified\":true", -1).length - 1, "both transfers verified: " + json);
    }
}
