package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.verbs.MemoryRegion;

/**
 * The READs a responder has accepted and not yet answered in full, oldest first: a ring of contexts indexed by
 * ever-growing positions from {@link #head} (the one whose responses go out now) to {@link #tail}. Holds at most
 * {@link RcEngineConfig#maxReadsInFlight()} (rounded up to a power of two), IB's max_dest_rd_atomic.
 */
final class RcReadResponseQueue extends RcRegionRing
{
    final int[] startPsn;
    final long[] offset;
    final long[] length;
    final int[] packetCount;
    final int[] packetsSent;

    RcReadResponseQueue(final int maxReads)
    {
        super(maxReads);
        final int capacity = capacity();
        startPsn = new int[capacity];
        offset = new long[capacity];
        length = new long[capacity];
        packetCount = new int[capacity];
        packetsSent = new int[capacity];
    }

    /**
     * Queues the responses of a READ.
     *
     * @param memory where they are read from, or null for a zero-length READ.
     * @param at     where in {@code memory}.
     */
    void add(final int psn, final MemoryRegion memory, final long at, final long bytes, final int packets)
    {
        final int slot = (int)tail & mask;
        startPsn[slot] = psn;
        region[slot] = memory;
        offset[slot] = at;
        length[slot] = bytes;
        packetCount[slot] = packets;
        packetsSent[slot] = 0;
        tail++;
    }

    /** @return the PSN of the last response of the READ at {@code index}. */
    int lastPsn(final int index)
    {
        return Psn.add(startPsn[index], packetCount[index] - 1);
    }

    /** @return the PSN of the next response of the READ at {@code position}. */
    int nextResponsePsn(final long position)
    {
        final int slot = (int)position & mask;
        return Psn.add(startPsn[slot], packetsSent[slot]);
    }

    /** Forgets the READs from {@code position} on. */
    void truncate(final long position)
    {
        for (long at = position; at < tail; at++)
        {
            region[(int)at & mask] = null;
        }
        tail = position;
    }

    /** Forgets the newest READs whose responses reach {@code psn} or beyond: they are about to be asked for again. */
    void dropFrom(final int psn)
    {
        while (tail != head && Psn.diff(lastPsn((int)(tail - 1) & mask), psn) >= 0)
        {
            tail--;
            region[(int)tail & mask] = null;
        }
    }

    /** Forgets every READ (flush on error). */
    void flush()
    {
        for (long at = head; at < tail; at++)
        {
            region[(int)at & mask] = null;
        }
        head = tail;
    }
}
