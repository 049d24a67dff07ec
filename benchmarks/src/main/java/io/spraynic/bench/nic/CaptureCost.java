package io.spraynic.bench.nic;

/**
 * What capturing costs a poll thread per frame, from the same measured window of a run without capture ("off") and
 * one that captures ("on"): the CPU time the capturing run used beyond what its own work would have cost at the off
 * run's CPU per unit of work, per frame it captured in that window. The unit of work is whatever the workload
 * counts (frames received, messages completed). Both CPU times are the poll thread's busy time ({@link #busyCpuNanos}),
 * so that a run whose thread spun longer on empty loops is not charged for it.
 */
public final class CaptureCost
{
    private CaptureCost()
    {
    }

    /**
     * @param cpuNanos       the poll thread's CPU time in the window.
     * @param emptyLoops     its loops in the window that found no work ({@link CountingIdleStrategy}).
     * @param emptyLoopNanos CPU one empty loop costs, measured on the same thread with nothing to do.
     * @return the CPU time of the loops that did work: {@code cpuNanos} less the empty loops'; -1 when the empty loops
     * at that cost come to more than the window's whole CPU time (the measured cost does not hold in this window), or
     * when the cost is unknown (NaN).
     */
    public static long busyCpuNanos(final long cpuNanos, final long emptyLoops, final double emptyLoopNanos)
    {
        final double spin = emptyLoops * emptyLoopNanos;
        return Double.isNaN(spin) || spin > cpuNanos ? -1 : cpuNanos - Math.round(spin);
    }

    /**
     * @return ns of CPU per frame captured: ({@code busyOn} - {@code workOn} × {@code busyOff} / {@code workOff}) /
     * {@code capturedOn}; NaN when either run did no work, nothing was captured (nothing to divide by) or a busy time
     * is unknown (negative: {@link #busyCpuNanos}).
     */
    public static double nanosPerCapturedFrame(final long workOff, final long busyOff, final long workOn, final long busyOn,
        final long capturedOn)
    {
        if (workOff <= 0 || workOn <= 0 || capturedOn <= 0 || busyOff < 0 || busyOn < 0)
        {
            return Double.NaN;
        }
        return (busyOn - workOn * ((double)busyOff / workOff)) / capturedOn;
    }

    /** @return ns of CPU per unit of work; NaN for none, or for an unknown busy time. */
    public static double nanosPerWork(final long work, final long busyNanos)
    {
        return work <= 0 || busyNanos < 0 ? Double.NaN : (double)busyNanos / work;
    }

    /** @return work per busy CPU second, capturing ÷ off: the throughput ratio without the spin; NaN if undefined. */
    public static double busyRatio(final long workOff, final long busyOff, final long workOn, final long busyOn)
    {
        if (workOff <= 0 || busyOff <= 0 || busyOn <= 0)
        {
            return Double.NaN;
        }
        return ((double)workOn / busyOn) / ((double)workOff / busyOff);
    }
}
