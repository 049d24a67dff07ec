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
    /** Where each slot is kept in {@link #values}, or null: every slot at its own index. */
    private final int[] positions;
    private final int discarded;

    /**
     * @param name   what {@link #toString()} calls them, e.g. {@code RcCounters}.
     * @param labels one label per slot, slot order.
     */
    public TransportCounters(final String name, final String[] labels)
    {
        this.name = name;
        this.labels = labels;
        this.values = new long[labels.length];
        this.positions = null;
        this.discarded = -1;
    }

    /**
     * A set that keeps only some of the slots (a spray path counts a few of its connection's events): the others
     * read 0 and what is added to them is dropped.
     *
     * @param positions where each slot is kept, from {@link #positions}: one table shared by every such set.
     */
    public TransportCounters(final String name, final String[] labels, final int[] positions)
    {
        if (positions.length != labels.length)
        {
            throw new IllegalArgumentException("a position for each of the " + labels.length + " slots");
        }
        int discarded = 0;
        for (final int position : positions)
        {
            discarded = Math.max(discarded, position);
        }
        this.name = name;
        this.labels = labels;
        this.values = new long[discarded + 1];
        this.positions = positions;
        this.discarded = discarded;
    }

    /**
     * @param slotCount slots of the full set.
     * @param kept      the slots a partial set keeps, each a valid slot once.
     * @return where a partial set keeps each slot: kept slots in their order, every other slot at one position
     * after them whose value is never read.
     */
    public static int[] positions(final int slotCount, final int[] kept)
    {
        final int[] positions = new int[slotCount];
        Arrays.fill(positions, kept.length);
        for (int i = 0; i < kept.length; i++)
        {
            if (positions[kept[i]] != kept.length)
            {
                throw new IllegalArgumentException("slot kept twice: " + kept[i]);
            }
            positions[kept[i]] = i;
        }
        return positions;
    }

    public void increment(final int slot)
    {
        values[null == positions ? slot : positions[slot]]++;
    }

    public void add(final int slot, final long delta)
    {
        values[null == positions ? slot : positions[slot]] += delta;
    }

    public long get(final int slot)
    {
        if (null == positions)
        {
            return values[slot];
        }
        final int position = positions[slot];
        return position == discarded ? 0 : values[position];
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
        return labels.length;
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
        for (int i = 0; i < labels.length; i++)
        {
            if (get(i) != 0)
            {
                sb.append(first ? "" : ", ").append(labels[i]).append('=').append(get(i));
                first = false;
            }
        }
        return sb.append('}').toString();
    }
}
