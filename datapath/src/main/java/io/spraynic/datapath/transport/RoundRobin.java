package io.spraynic.datapath.transport;

/**
 * Where a walk over {@code n} entries starts, from a counter bumped on every tick: a busy worker ticks millions of
 * times a second, so the counter wraps to negative within minutes, and a plain {@code counter % n} would then index
 * before the array on most ticks.
 */
public final class RoundRobin
{
    private RoundRobin()
    {
    }

    /**
     * @param counter the tick counter, any int (it wraps).
     * @param n       entries, at least 1.
     * @return the first entry's index, in {@code 0..n-1}.
     */
    public static int start(final int counter, final int n)
    {
        return (counter & Integer.MAX_VALUE) % n;
    }
}
