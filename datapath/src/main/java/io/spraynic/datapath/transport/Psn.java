package io.spraynic.datapath.transport;

/**
 * 24-bit packet sequence number arithmetic (InfiniBand Vol 1, 9.7.1): PSNs count modulo 2^24, and of two
 * PSNs the one less than 2^23 ahead (modulo 2^24) is the later, so comparisons survive the wrap from
 * 0xFFFFFF to 0. All methods are branch-light and allocation-free.
 */
public final class Psn
{
    /** PSNs are 24 bits. */
    public static final int MASK = 0xFF_FFFF;
    /** Half the PSN space: the horizon beyond which "ahead" becomes "behind". */
    public static final int HALF = 1 << 23;

    private Psn()
    {
    }

    /**
     * @param psn   a PSN.
     * @param delta packets to add (may be negative).
     * @return {@code psn + delta} modulo 2^24.
     */
    public static int add(final int psn, final int delta)
    {
        return (psn + delta) & MASK;
    }

    /**
     * @param psn a PSN.
     * @return the next PSN.
     */
    public static int next(final int psn)
    {
        return (psn + 1) & MASK;
    }

    /**
     * Signed distance from {@code b} to {@code a}: positive when {@code a} is later.
     *
     * @param a a PSN.
     * @param b a PSN.
     * @return {@code a - b} as a signed 24-bit number, in {@code [-2^23, 2^23)}.
     */
    public static int diff(final int a, final int b)
    {
        return ((a - b) << 8) >> 8;
    }

    /**
     * @param a a PSN.
     * @param b a PSN.
     * @return negative, zero or positive as {@code a} is before, equal to or after {@code b}.
     */
    public static int compare(final int a, final int b)
    {
        return diff(a, b);
    }

    /** @return true when {@code a} comes before {@code b}. */
    public static boolean isBefore(final int a, final int b)
    {
        return diff(a, b) < 0;
    }

    /** @return true when {@code a} comes after {@code b}. */
    public static boolean isAfter(final int a, final int b)
    {
        return diff(a, b) > 0;
    }

    /**
     * @param psn   a PSN.
     * @param first first PSN of a range.
     * @param count PSNs in the range.
     * @return true when {@code psn} is in {@code [first, first + count)}.
     */
    public static boolean inRange(final int psn, final int first, final int count)
    {
        final int d = diff(psn, first);
        return d >= 0 && d < count;
    }
}
