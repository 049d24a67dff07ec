package io.spraynic.datapath.wire;

/**
 * One counter per parse outcome: {@link #ROCE}, {@link #NOT_OURS} and one per {@link MalformedReason}, at
 * slot {@link #MALFORMED_BASE} + ordinal. Every frame given to {@link RoceParser#parse} adds one to exactly
 * one slot.
 * <p>
 * Single writer (the parsing thread), plain {@code long} stores; another thread may read a slightly stale
 * value. The lead's counters file (Agrona {@code CountersManager}) can copy these periodically.
 */
public final class ParseCounters
{
    /** Slot of well-formed RoCEv2 packets. */
    public static final int ROCE = 0;
    /** Slot of frames that are not RoCEv2. */
    public static final int NOT_OURS = 1;
    /** Slot of the first malformed reason. */
    public static final int MALFORMED_BASE = 2;
    /** Number of slots. */
    public static final int SLOT_COUNT = MALFORMED_BASE + MalformedReason.count();

    private final long[] values = new long[SLOT_COUNT];

    /**
     * @param reason a malformed reason.
     * @return its slot.
     */
    public static int slot(final MalformedReason reason)
    {
        return MALFORMED_BASE + reason.ordinal();
    }

    /**
     * @param slot a slot.
     * @return its label, e.g. "roce", "not_ours", "malformed_bad_icrc".
     */
    public static String label(final int slot)
    {
        return switch (slot)
        {
            case ROCE -> "roce";
            case NOT_OURS -> "not_ours";
            default -> "malformed_" + MalformedReason.of(slot - MALFORMED_BASE).name().toLowerCase(java.util.Locale.ROOT);
        };
    }

    /**
     * Adds one to a slot.
     *
     * @param slot the slot.
     */
    public void increment(final int slot)
    {
        values[slot]++;
    }

    /**
     * @param slot a slot.
     * @return its count.
     */
    public long get(final int slot)
    {
        return values[slot];
    }

    /**
     * @param reason a malformed reason.
     * @return its count.
     */
    public long get(final MalformedReason reason)
    {
        return values[slot(reason)];
    }

    /** @return count of frames in all malformed slots. */
    public long malformed()
    {
        long sum = 0;
        for (int i = MALFORMED_BASE; i < SLOT_COUNT; i++)
        {
            sum += values[i];
        }
        return sum;
    }

    /** @return count of all frames parsed. */
    public long total()
    {
        long sum = 0;
        for (final long value : values)
        {
            sum += value;
        }
        return sum;
    }

    /** Zeroes every slot. */
    public void reset()
    {
        java.util.Arrays.fill(values, 0);
    }

    /** @return the non-zero slots as "label=value" pairs. */
    @Override
    public String toString()
    {
        final StringBuilder sb = new StringBuilder("ParseCounters{");
        for (int i = 0; i < SLOT_COUNT; i++)
        {
            if (values[i] != 0)
            {
                if (sb.charAt(sb.length() - 1) != '{')
                {
                    sb.append(", ");
                }
                sb.append(label(i)).append('=').append(values[i]);
            }
        }
        return sb.append('}').toString();
    }
}
