package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic bench throughput --json} in this JVM (its EAL: one per test class), tiny: every point of
 * both transports and of the UDP baseline moved data and verified it.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BenchThroughputCommandTest
{
    @Test
    void shouldMoveAndVerifyEveryPoint()
    {
        final CliTestSupport.Run run = CliTestSupport.run("bench", "throughput", "--sizes", "64,20000", "--seconds", "0.2",
            "--warmup", "0.1", "--threads", "1", "--with-udp", "--json");
        assertEquals(0, run.exitCode(), run.err());
        final Matcher point = Pattern.compile("\"name\":\"([a-z0-9-]+)\",\"messageBytes\":(\\d+),\"messages\":(\\d+)" +
            ".*?\"verified\":(true|false)").matcher(run.out());
        int points = 0;
        while (point.find())
        {
            points++;
            assertTrue(Long.parseLong(point.group(3)) > 0, point.group());
            assertEquals("true", point.group(4), point.group());
        }
        assertEquals(6, points, run.out()); // spray, rocev2 and udp at two sizes
    }
}
