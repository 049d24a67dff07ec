package io.spraynic.datapath.nic;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TickSpacingTest
{
    @Test
    void shouldTickOnEveryLoopWhileTicksEndWithinTheThreshold()
    {
        final TickSpacing spacing = new TickSpacing();
        for (long loop = 0; loop < 1_000_000; loop += 1_000)
        {
            assertTrue(spacing.isDue(loop), "loop at " + loop);
            spacing.onTicked(loop, loop + TickSpacing.THRESHOLD_NANOS); // at the threshold: not over it
        }
    }

    @Test
    void shouldLeaveAsLongWithoutATickAsALongTickTookCountedFromTheLoopStart()
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
    void shouldRefuseANegativeThreshold()
    {
        assertThrows(IllegalArgumentException.class, () -> new TickSpacing(-1));
    }
}
