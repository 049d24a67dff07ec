package io.spraynic.datapath.transport.spray;

/**
 * The median of a few values, sorted in place: S7.3 compares a path's loss rate and RTT with the median of its
 * connection's paths, at most {@link PathScheduler#MAX_PATHS} of them, on the sender's thread with no allocation.
 */
final class Median
{
    private Median()
    {
    }

    /**
     * @param values the values; the first {@code count} are sorted ascending in place.
     * @param count  how many of them, at least 1.
     * @return their median: the middle one, or the mean of the two middle ones for an even count.
     */
    static double ofFirst(final double[] values, final int count)
    {
        for (int i = 1; i < count; i++) // insertion sort: a handful of values, allocation-free
        {
            final double x = values[i];
            int j = i - 1;
            while (j >= 0 && values[j] > x)
            {
                values[j + 1] = values[j];
                j--;
            }
            values[j + 1] = x;
        }
        return (count & 1) == 1 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
    }
}
