package io.spraynic.bench.raw;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Java loop and its C twin (each in its own process, as the command runs them) forward frames
 * around a net_ring port in both forwarding modes, and report rates by wall-clock and CPU time.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RawLoopComparisonTest
{
    @Test
    void shouldForwardInJavaAndCWithTwoCallsAndWithOneCallPerBurst() throws Exception
    {
        System.setProperty(RawLoopComparison.C_BINARY_PROPERTY, Path.of("target", "native", "spraynic-rawloop").toString());
        for (final RawLoop.Mode mode : new RawLoop.Mode[] {RawLoop.Mode.IO, RawLoop.Mode.TXRX})
        {
            final RawLoopComparison.Summary summary = RawLoopComparison.run(
                RawLoop.Pmd.NET_RING, mode, 0.2, 32, 64, 1, line -> { });
            assertEquals(mode.name().toLowerCase(), summary.mode());
            for (final double[] rates : new double[][] {summary.javaMpps(), summary.cMpps()})
            {
                assertTrue(rates[0] > 1, summary::toText);
            }
            // a thread uses at most its wall-clock time on a core: per CPU second is never slower
            assertTrue(summary.javaCpuMpps()[0] >= summary.javaMpps()[0] * 0.99, summary::toText);
            assertTrue(summary.cCpuMpps()[0] >= summary.cMpps()[0] * 0.99, summary::toText);
            assertTrue(summary.toJson().contains("\"cpuRatio\":"), summary::toJson);
        }
    }
}
