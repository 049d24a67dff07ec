package io.spraynic.datapath.transport;

import java.util.Arrays;

/**
 * A transport's event counters: one {@code long} slot per event, named by a label table the transport
 * defines ({@code RcCounters}, {@code SprayCounters}). Single writer (the engine's thread), plain stores;
 * another thread may read slightly stale values, and the NIC runtime copies them to the counters file.
 */
public final class TransportCounters
{
    private final String name;
    private final String[] labels;
    private final long[] values;

    /**
     * @param name   what {@link #toString()} calls them, e.g. {@code RcCounters}.
     * @param labels one label per slot, slot order.
     */
    public TransportCounters(final String name, final String[] labels)
    {
        this.name = name;
        this.labels = labels;
        this.values = new long[labels.length];
    }

    public void increment(final int slot)
    {
        values[slot]++;
    }

    public void add(final int slot, final long delta)
    {
        values[slot] += delta;
    }

    public long get(final int slot)
    {
        return values[slot];
    }

    /**
     * @return the label of {@code slot}, e.g. {@code retransmitted}.
     */
    public String label(final int slot)
    {
        return labels[slot];
    }

    public int slotCount()
    {
        return values.length;
    }

    /** Zeroes every slot. */
    public void reset()
    {
        Arrays.fill(values, 0);
    }

    /**
     * @return bytes one instance with {@code slots} slots holds (object headers, fields, the array).
     */
    public static int stateBytes(final int slots)
    {
        return 16 + 3 * 8 + 16 + slots * Long.BYTES;
    }

    /** @return the non-zero slots as "label=value" pairs. */
    public String toString()
    {
        final StringBuilder sb = new StringBuilder(name).append('{');
        boolean first = true;
        for (int i = 0; i < values.length; i++)
        {
            if (values[i] != 0)
            {
                sb.append(first ? "" : ", ").append(labels[i]).append('=').append(values[i]);
                first = false;
            }
        }
        return sb.append('}').toString();
    }
}
