package io.spraynic.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.spraynic.cli.BenchCaptureCommandTest.doubleField;
import static io.spraynic.cli.BenchCaptureCommandTest.longField;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic bench capture --workload receive --json} (the default workload: a NIC's worker receiving, parsing and
 * counting net_null's frames) in a JVM (an EAL) of its own, tiny: each round's cost per captured frame is computed from
 * that round's counts, and the worker never idled, so its CPU time is all busy time.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BenchCaptureReceiveCommandTest
{
    @Test
    void shouldComputeTheCaptureCostPerFrameFromEachRoundsCounts()
    {
        final CliTestSupport.Run run = CliTestSupport.run("bench", "capture", "--workload", "receive", "--seconds", "0.3",
            "--rounds", "2", "--json");
        assertEquals(0, run.exitCode(), run.err() + run.out());
        assertTrue(run.out().startsWith("{\"workload\":\"receive\""), run.out());
        final Matcher point = Pattern.compile("\\{\"offMpps\"[^}]*}").matcher(run.out());
        int points = 0;
        while (point.find())
        {
            points++;
            final String p = point.group();
            final long offFrames = longField(p, "offFrames");
            final long onFrames = longField(p, "onFrames");
            final long offCpu = longField(p, "offCpuNanos");
            final long onCpu = longField(p, "onCpuNanos");
            final long capturedInWindow = longField(p, "capturedInWindow");
            assertTrue(offFrames > 0 && onFrames > 0 && offCpu > 0 && onCpu > 0, p);
            assertTrue(capturedInWindow > 0 && capturedInWindow <= longField(p, "captured"), p);
            assertEquals(0, longField(p, "emptyLoopsOff"), "net_null always has frames: the worker never spins: " + p);
            final double perFrame = (onCpu - onFrames * ((double)offCpu / offFrames)) / capturedInWindow;
            assertEquals(perFrame, doubleField(p, "nsPerCapturedFrame"), 1e-3 + Math.abs(perFrame) * 1e-6, p);
            assertEquals((double)offCpu / offFrames, doubleField(p, "nsPerFrameOff"), 1e-3, p);
        }
        assertEquals(2, points, run.out());
        assertTrue(run.out().matches("(?s).*\"medianNsPerCapturedFrame\":-?[0-9.]+.*"), run.out());
    }
}
