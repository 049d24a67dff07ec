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
        "\"sampledOut\":0,\"drained\":(\\d+),\"portFrames\":(\\d+),\"complete\":(true|false),\"verified\":(true|false)");

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
        assertPerFrameCostFromTheRuns(run.out());
    }

    /**
     * The capture's cost per frame is computed from each round's own counts (messages, the poll thread's CPU time, its
     * empty loops at what one was measured to cost, the frames captured in the window), not set or carried over.
     */
    private static void assertPerFrameCostFromTheRuns(final String out)
    {
        final Matcher point = Pattern.compile("\\{\"offMessagesPerCpuSecond\"[^}]*}").matcher(out);
        int points = 0;
        while (point.find())
        {
            points++;
            final String p = point.group();
            final long offMessages = longField(p, "offMessages");
            final long onMessages = longField(p, "onMessages");
            final long capturedInWindow = longField(p, "capturedInWindow");
            assertTrue(offMessages > 0 && onMessages > 0, p);
            assertTrue(capturedInWindow > 0 && capturedInWindow <= longField(p, "captured"), p);
            // an empty loop's cost was measured on the poll thread, and the spin it explains taken out of its CPU time,
            // or, where those empty loops would come to more than the window's CPU time, no busy time claimed at all
            boolean busyKnown = true;
            for (final String run : new String[]{"off", "on"})
            {
                final double emptyLoopNanos = doubleField(p, run + "EmptyLoopNanos");
                assertTrue(emptyLoopNanos > 0 && emptyLoopNanos < 100_000, p);
                final long cpu = longField(p, run + "CpuNanos");
                final double spin = longField(p, run + "EmptyLoops") * emptyLoopNanos;
                if (p.contains("\"" + run + "BusyCpuNanos\":null"))
                {
                    assertTrue(spin > cpu * (1 - 1e-6), "no busy time only where the spin would exceed the CPU: " + p);
                    busyKnown = false;
                }
                else
                {
                    assertEquals(cpu - spin, longField(p, run + "BusyCpuNanos"), 1 + spin * 1e-6, p);
                }
            }
            if (!busyKnown)
            {
                assertTrue(p.contains("\"busyRatio\":null") && p.contains("\"nsPerCapturedFrame\":null"), p);
                continue;
            }
            final long offBusy = longField(p, "offBusyCpuNanos");
            final long onBusy = longField(p, "onBusyCpuNanos");
            final double perFrame = (onBusy - onMessages * ((double)offBusy / offMessages)) / capturedInWindow;
            assertEquals(perFrame, doubleField(p, "nsPerCapturedFrame"), 1e-3 + Math.abs(perFrame) * 1e-6, p);
            assertEquals(((double)onMessages / onBusy) / ((double)offMessages / offBusy), doubleField(p, "busyRatio"), 1e-3, p);
            assertEquals((double)offBusy / offMessages, doubleField(p, "nsPerMessageOff"), 1e-3, p);
        }
        assertEquals(2, points, out);
        assertTrue(out.matches("(?s).*\"medianBusyRatio\":([0-9.]+|null),\"medianNsPerCapturedFrame\":(-?[0-9.]+|null).*"), out);
    }

    static long longField(final String json, final String name)
    {
        final Matcher value = Pattern.compile("\"" + name + "\":(-?\\d+)[,}]").matcher(json);
        assertTrue(value.find(), name + " in " + json);
        return Long.parseLong(value.group(1));
    }

    static double doubleField(final String json, final String name)
    {
        final Matcher value = Pattern.compile("\"" + name + "\":(-?[0-9.]+)[,}]").matcher(json);
        assertTrue(value.find(), name + " in " + json);
        return Double.parseDouble(value.group(1));
    }
}
