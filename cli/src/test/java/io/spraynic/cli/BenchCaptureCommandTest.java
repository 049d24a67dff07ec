package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic bench capture --workload spray --json} in this JVM (its EAL: one per test class, so rocev2 has a class
 * of its own, {@link BenchCaptureRocev2CommandTest}), tiny: each round's transfers verified, and the capture of every
 * frame took every frame the two ports received and sent (the driver's count), and the drainer read each one.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BenchCaptureCommandTest
{
    private static final Pattern POINT = Pattern.compile("\"ratio\":([0-9.]+),\"captured\":(\\d+),\"dropped\":(\\d+)," +
        "\"drained\":(\\d+),\"portFrames\":(\\d+),\"complete\":(true|false),\"verified\":(true|false)");

    @Test
    void shouldCaptureEveryFrameOfSprayTransfersAndVerifyThem()
    {
        assertCapturesEveryFrame("spray");
    }

    static void assertCapturesEveryFrame(final String workload)
    {
        final CliTestSupport.Run run = CliTestSupport.run("bench", "capture", "--workload", workload, "--seconds", "0.2",
            "--rounds", "2", "--json");
        assertEquals(0, run.exitCode(), run.err() + run.out());
        assertTrue(run.out().startsWith("{\"workload\":\"" + workload + "\""), run.out());
        final Matcher point = POINT.matcher(run.out());
        int points = 0;
        while (point.find())
        {
            points++;
            final long captured = Long.parseLong(point.group(2));
            final long dropped = Long.parseLong(point.group(3));
            final long portFrames = Long.parseLong(point.group(5));
            assertTrue(captured > 1000, point.group()); // both directions of a transfer's frames, at both ends
            assertEquals(portFrames, captured + dropped, "every frame the ports saw, taken or counted: " + point.group());
            assertEquals(captured, Long.parseLong(point.group(4)), "the drainer read every frame taken: " + point.group());
            assertEquals("true", point.group(6), point.group());
            assertEquals("true", point.group(7), point.group());
            assertTrue(Double.parseDouble(point.group(1)) > 0, point.group());
        }
        assertEquals(2, points, run.out());
    }
}
