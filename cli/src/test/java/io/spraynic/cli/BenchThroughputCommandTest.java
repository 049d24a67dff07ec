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
    void shouldMoveAndVerifyEveryPointAtEachMtu()
    {
        final CliTestSupport.Run run = CliTestSupport.run("bench", "throughput", "--sizes", "64,20000", "--seconds", "0.2",
            "--warmup", "0.1", "--threads", "1", "--with-udp", "--mtu", "1024,4096", "--hugepages", "off", "--json");
        assertEquals(0, run.exitCode(), run.err());
        assertTrue(run.err().contains("spraynic: hugepages: off (--hugepages off)"), run.err());
        final Matcher point = Pattern.compile("\"name\":\"([a-z0-9-]+)\",\"mtu\":(\\d+),\"messageBytes\":(\\d+)," +
            "\"messages\":(\\d+),\"packets\":(\\d+).*?\"verified\":(true|false)").matcher(run.out());
        int points = 0;
        while (point.find())
        {
            points++;
            final long messages = Long.parseLong(point.group(4));
            assertTrue(messages > 0, point.group());
            assertEquals("true", point.group(6), point.group());
            if (!point.group(1).equals("udp"))
            {
                final int mtu = Integer.parseInt(point.group(2));
                final int size = Integer.parseInt(point.group(3));
                assertEquals(messages * ((size + mtu - 1) / mtu), Long.parseLong(point.group(5)), "packets cut at the MTU: " +
                    point.group());
            }
        }
        assertEquals(10, points, run.out()); // spray and rocev2 at two sizes and two MTUs, udp at two sizes
    }

    @Test
    void shouldRefuseAnMtuThatIsNotAPathMtu()
    {
        final CliTestSupport.Run run = CliTestSupport.run("bench", "throughput", "--mtu", "1500");
        assertEquals(2, run.exitCode(), run.err());
        assertTrue(run.err().contains("--mtu 1500: must be 256, 512, 1024, 2048 or 4096"), run.err());
    }
}
