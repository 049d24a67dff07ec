package io.spraynic.datapath.nic;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TickSpacingTest
{
    @Test
    void shouldTickOnEveryLoopWhileTicksTakeWithinTheThreshold()
    {
        final TickSpacing spacing = new TickSpacing();
        for (long loop = 0; loop < 1_000_000; loop += 1_000)
        {
            assertTrue(spacing.isDue(loop), "loop at " + loop);
            spacing.onTicked(loop, loop + TickSpacing.THRESHOLD_NANOS); // a tick of the threshold: not over it
        }
    }

    @Test
    void shouldLeaveAsLongWithoutATickAsALongTickTookAfterIt()
    {
        final TickSpacing spacing = new TickSpacing(250_000);
        assertTrue(spacing.isDue(1_000_000));
        spacing.onTicked(1_000_000, 3_000_000); // 2 ms
        assertFalse(spacing.isDue(3_000_000), "right after the tick");
        assertFalse(spacing.isDue(4_999_999), "2 ms after it ended, less a nanosecond");
        assertTrue(spacing.isDue(5_000_000), "as long again after it ended");
        spacing.onTicked(5_000_000, 5_000_100); // cheap again: every loop
        assertTrue(spacing.isDue(5_000_200));
    }

    @Test
    void shouldNotTimeTicksWhileLoopsWithATickStayWithinHalfTheThreshold()
    {
        final TickSpacing spacing = new TickSpacing(250_000);
        for (long loop = 0; loop < 10_000_000; loop += 125_000) // each loop as long as half the threshold
        {
            spacing.onLoopStart(loop);
            assertTrue(spacing.isDue(loop), "loop at " + loop);
            assertFalse(spacing.measuresTicks(), "loop at " + loop);
            spacing.onTickedUnmeasured(loop);
        }
    }

    @Test
    void shouldTimeTheTicksAfterALongLoopAndSpaceByTheTickAlone()
    {
        final TickSpacing spacing = new TickSpacing(250_000);
        spacing.onLoopStart(0);
        spacing.onTickedUnmeasured(0);
        spacing.onLoopStart(5_000_000); // 5 ms later: the tick, or anything else in the loop, may have been long
        assertTrue(spacing.isDue(5_000_000), "not spaced by a span it did not measure");
        assertTrue(spacing.measuresTicks());
        spacing.onTicked(5_000_000, 5_010_000); // the tick itself was short: the thread was busy elsewhere
        assertTrue(spacing.isDue(5_100_000));
        assertFalse(spacing.measuresTicks(), "a tick within half the threshold: back to the loop's one read");

        spacing.onLoopStart(5_100_000);
        spacing.onTickedUnmeasured(5_100_000);
        spacing.onLoopStart(5_500_000);
        assertTrue(spacing.measuresTicks());
        spacing.onTicked(5_500_000, 7_500_000); // timed at 2 ms: spaced as before
        spacing.onLoopStart(7_600_000);
        assertFalse(spacing.isDue(9_499_999));
        assertTrue(spacing.isDue(9_500_000));
        assertTrue(spacing.measuresTicks(), "long ticks stay timed");
        spacing.onTicked(9_500_000, 9_630_000); // 130 us: over half the threshold, not over it
        assertTrue(spacing.isDue(9_700_000));
        assertTrue(spacing.measuresTicks(), "still timed above half the threshold");
    }

    @Test
    void shouldIgnoreTheSpanAfterALoopWhoseTickWasTimed()
    {
        final TickSpacing spacing = new TickSpacing(250_000);
        spacing.onLoopStart(0);
        spacing.onTickedUnmeasured(0);
        spacing.onLoopStart(200_000); // over half the threshold: measure
        spacing.onTicked(200_000, 201_000);
        spacing.onLoopStart(10_000_000); // a long gap after a measured tick bounds nothing
        assertFalse(spacing.measuresTicks());
        assertTrue(spacing.isDue(10_000_000));
    }

    @Test
    void shouldRefuseANegativeThreshold()
    {
        assertThrows(IllegalArgumentException.class, () -> new TickSpacing(-1));
    }
}
