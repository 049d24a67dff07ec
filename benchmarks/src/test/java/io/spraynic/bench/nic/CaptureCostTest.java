package io.spraynic.bench.nic;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CaptureCostTest
{
    @Test
    void shouldChargeTheCaptureOnlyTheCpuBeyondTheWorkloadsOwnCost()
    {
        // off: 1,000 frames in 20,000 ns (20 ns a frame); on: 800 frames in 40,000 ns, 800 captured:
        // 800 frames would have cost 16,000 ns without capture, so 24,000 ns / 800 = 30 ns a captured frame
        assertEquals(30.0, CaptureCost.nanosPerCapturedFrame(1_000, 20_000, 800, 40_000, 800), 1e-9);
        // half the frames captured: the same extra CPU over half as many frames
        assertEquals(60.0, CaptureCost.nanosPerCapturedFrame(1_000, 20_000, 800, 40_000, 400), 1e-9);
        // a capture that costs nothing comes out at 0, whatever the rates
        assertEquals(0.0, CaptureCost.nanosPerCapturedFrame(1_000, 20_000, 3_000, 60_000, 3_000), 1e-9);
    }

    @Test
    void shouldHaveNoCostWithNothingToDivideBy()
    {
        assertTrue(Double.isNaN(CaptureCost.nanosPerCapturedFrame(0, 20_000, 800, 40_000, 800)));
        assertTrue(Double.isNaN(CaptureCost.nanosPerCapturedFrame(1_000, 20_000, 0, 40_000, 800)));
        assertTrue(Double.isNaN(CaptureCost.nanosPerCapturedFrame(1_000, 20_000, 800, 40_000, 0)));
        assertTrue(Double.isNaN(CaptureCost.busyRatio(1_000, 0, 800, 40_000)));
        assertTrue(Double.isNaN(CaptureCost.nanosPerWork(0, 1)));
    }

    @Test
    void shouldTakeTheEmptyLoopsSpinOutOfTheRatio()
    {
        // the same 10 ns of work a message in both runs; the run without capture spun 400 empty loops of 25 ns more
        final long busyOff = CaptureCost.busyCpuNanos(20_000, 400, 25.0);
        final long busyOn = CaptureCost.busyCpuNanos(10_000, 0, 25.0);
        assertEquals(10_000, busyOff);
        assertEquals(10_000, busyOn);
        assertEquals(2.0, (1_000 / 10_000.0) / (1_000 / 20_000.0), 1e-9); // the plain ratio: capturing looks twice as fast
        assertEquals(1.0, CaptureCost.busyRatio(1_000, busyOff, 1_000, busyOn), 1e-9);
        assertEquals(0.0, CaptureCost.nanosPerCapturedFrame(1_000, busyOff, 1_000, busyOn, 2_000), 1e-9);
    }

    @Test
    void shouldRefuseAnEmptyLoopCostTheWindowContradicts()
    {
        // 100 empty loops at 25 ns would be 2,500 ns: more than the window's 1,000 ns of CPU
        assertEquals(-1, CaptureCost.busyCpuNanos(1_000, 100, 25.0));
        assertEquals(-1, CaptureCost.busyCpuNanos(1_000, 1, Double.NaN));
        assertEquals(0, CaptureCost.busyCpuNanos(1_000, 40, 25.0));
        assertEquals(1_000, CaptureCost.busyCpuNanos(1_000, 0, 25.0));
        assertTrue(Double.isNaN(CaptureCost.nanosPerCapturedFrame(1_000, -1, 800, 40_000, 800)));
        assertTrue(Double.isNaN(CaptureCost.nanosPerCapturedFrame(1_000, 20_000, 800, -1, 800)));
        assertTrue(Double.isNaN(CaptureCost.busyRatio(1_000, 20_000, 800, -1)));
        assertTrue(Double.isNaN(CaptureCost.nanosPerWork(1_000, -1)));
    }
}
