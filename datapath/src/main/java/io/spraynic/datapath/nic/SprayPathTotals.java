package io.spraynic.datapath.nic;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.transport.spray.PathCountersFold;
import io.spraynic.datapath.transport.spray.SprayConnection;

import java.util.Arrays;

/**
 * A spray connection's per-path counters over its whole life, for the counters file: the connection's own cover
 * only the current traffic period (they are lent with its tables, issue 13), so the periods it gave back are folded
 * here and the current one added when read. Per-path events of an idle connection (a keepalive's ACK) are in the
 * connection's totals only. Worker thread (the engine's), for both folding and reading.
 */
final class SprayPathTotals implements PathCountersFold
{
    private final SprayConnection connection;
    private final int[] slots;
    /** [path * slots.length + i]: slot {@code slots[i]} of the periods given back. */
    private final long[] folded;
    /** Where each slot is in {@link #slots}, or -1: not kept here. */
    private final int[] positions;

    SprayPathTotals(final SprayConnection connection, final int[] slots, final int slotCount)
    {
        this.connection = connection;
        this.slots = slots.clone();
        this.folded = new long[connection.paths() * slots.length];
        this.positions = new int[slotCount];
        Arrays.fill(positions, -1);
        for (int i = 0; i < slots.length; i++)
        {
            positions[slots[i]] = i;
        }
    }

    @Override
    public void fold(final int path, final TransportCounters period)
    {
        for (int i = 0; i < slots.length; i++)
        {
            folded[path * slots.length + i] += period.get(slots[i]);
        }
    }

    /** @return slot {@code slot} of path {@code path} since the connection opened; 0 for a slot not kept here. */
    long get(final int path, final int slot)
    {
        final int position = positions[slot];
        return position < 0 ? 0 : folded[path * slots.length + position] + connection.pathCounters(path).get(slot);
    }
}
