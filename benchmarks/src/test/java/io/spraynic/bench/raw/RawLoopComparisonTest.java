package io.spraynic.bench.raw;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Java loop and its C twin forward frames around a net_ring port in both forwarding modes, touching every
 * frame's length or none, placed in separate processes (as spraynic-rawloop runs) or in one process (the C loop
 * loaded as a library), and report rates by wall-clock and CPU time.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RawLoopComparisonTest
{
    @BeforeAll
    static void useTheBinariesOfThisBuild()
    {
        System.setProperty(RawLoopComparison.C_BINARY_PROPERTY, Path.of("target", "native", "spraynic-rawloop").toString());
        System.setProperty(RawLoopComparison.C_LIBRARY_PROPERTY, Path.of("target", "native", "libspraynic_rawloop.so").toString());
    }

    @Test
    void shouldForwardInJavaAndCWithTwoCallsAndWithOneCallPerBurst() throws Exception
    {
        for (final RawLoop.Mode mode : new RawLoop.Mode[] {RawLoop.Mode.IO, RawLoop.Mode.TXRX})
        {
            final RawLoopComparison.Summary summary = RawLoopComparison.run(
                RawLoop.Pmd.NET_RING, mode, RawLoop.Touch.LENGTH, RawLoopComparison.Placement.PROCESSES, 0.2, 32, 64, 1, 1,
                line -> { });
            assertEquals(mode.name().toLowerCase(), summary.mode());
            assertPlausible(summary);
        }
    }

    @Test
    void shouldAlternateJavaAndCInOneProcessOnTheSameShim() throws Exception
    {
        for (final RawLoop.Touch touch : RawLoop.Touch.values())
        {
            final RawLoopComparison.Summary summary = RawLoopComparison.run(
                RawLoop.Pmd.NET_RING, RawLoop.Mode.TXRX, touch, RawLoopComparison.Placement.SAME_PROCESS, 0.1, 32, 64, 2, 2,
                line -> { });
            assertEquals(4, summary.javaMpps().length, summary::toJson); // 2 processes of 2 rounds
            assertEquals(touch.text(), summary.touch());
            // the child JVM loads the shim the library links against: one copy, called by both languages
            assertTrue(summary.sameShim(), summary::toText);
            assertPlausible(summary);
            assertTrue(summary.toJson().contains("\"placement\":\"same-process\""), summary::toJson);
        }
    }

    @Test
    void shouldRunEveryModeOfTheCLibraryOnNetNull() throws Exception
    {
        for (final RawLoop.Mode mode : RawLoop.Mode.values())
        {
            final RawLoopComparison.Summary summary = RawLoopComparison.run(
                RawLoop.Pmd.NET_NULL, mode, RawLoop.Touch.NONE, RawLoopComparison.Placement.SAME_PROCESS, 0.05, 32, 64, 1, 1,
                line -> { });
            assertPlausible(summary);
        }
    }

    @Test
    void shouldNameWhatIsMissingWhenTheLibraryIsNotBuilt()
    {
        final String saved = System.getProperty(RawLoopComparison.C_LIBRARY_PROPERTY);
        System.setProperty(RawLoopComparison.C_LIBRARY_PROPERTY, Path.of("target", "no-such-library.so").toString());
        try
        {
            final IllegalStateException ex = assertThrows(IllegalStateException.class, () -> RawLoopComparison.run(
                RawLoop.Pmd.NET_NULL, RawLoop.Mode.RX, RawLoop.Touch.NONE, RawLoopComparison.Placement.SAME_PROCESS, 0.05, 32,
                64, 1, 1, line -> { }));
            assertTrue(ex.getMessage().contains("no-such-library.so is not built"), ex.getMessage());
        }
        finally
        {
            System.setProperty(RawLoopComparison.C_LIBRARY_PROPERTY, saved);
        }
    }

    private static void assertPlausible(final RawLoopComparison.Summary summary)
    {
        // forwarding at all on the wall clock, and at least 1 Mpps per CPU second: a loaded host (CI at load 19 gave the
        // Java loop 0.32 Mpps of wall clock and 16 per CPU second) starves the wall-clock rate, not the per-CPU one
        for (final double[] rates : new double[][] {summary.javaMpps(), summary.cMpps()})
        {
            for (final double rate : rates)
            {
                assertTrue(rate > 0, summary::toText);
            }
        }
        for (final double[] rates : new double[][] {summary.javaCpuMpps(), summary.cCpuMpps()})
        {
            for (final double rate : rates)
            {
                assertTrue(rate > 1, summary::toText);
            }
        }
        // a thread uses at most its wall-clock time on a core: per CPU second is never slower
        for (int round = 0; round < summary.javaMpps().length; round++)
        {
            assertTrue(summary.javaCpuMpps()[round] >= summary.javaMpps()[round] * 0.99, summary::toText);
            assertTrue(summary.cCpuMpps()[round] >= summary.cMpps()[round] * 0.99, summary::toText);
        }
        assertTrue(summary.pairedCpuRatio() > 0, summary::toJson);
        assertTrue(summary.toJson().contains("\"cpuRatio\":"), summary::toJson);
    }
}
