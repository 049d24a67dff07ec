package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.transport.Psn;

/**
 * The READ requests a responder served lately, so that it can tell a requester's re-issued READ (its responses
 * were lost, or go-back-N resent it) from a forged duplicate: only a repeat of one of these is
 * served again; anything else behind the expected PSN is dropped. A ring of primitive arrays: no allocation.
 */
final class RcServedReads
{
    private final int mask;
    private final int[] startPsn;
    private final int[] packetCount;
    private final long[] address;
    private final int[] rkey;
    private final long[] length;
    private long tail;

    /**
     * @param capacity READs remembered, a power of two: at least the READs a requester may have outstanding.
     */
    RcServedReads(final int capacity)
    {
        if (Integer.bitCount(capacity) != 1)
        {
            throw new IllegalArgumentException("capacity " + capacity + " is not a power of two");
        }
        mask = capacity - 1;
        startPsn = new int[capacity];
        packetCount = new int[capacity];
        address = new long[capacity];
        rkey = new int[capacity];
        length = new long[capacity];
    }

    /** Remembers a READ just accepted at the expected PSN, forgetting the oldest. */
    void add(final int psn, final int packets, final long virtualAddress, final int key, final long dmaLength)
    {
        final int e = (int)tail & mask;
        startPsn[e] = psn;
        packetCount[e] = packets;
        address[e] = virtualAddress;
        rkey[e] = key;
        length[e] = dmaLength;
        tail++;
    }

    /**
     * @param psn            the duplicate's PSN.
     * @param virtualAddress its RETH address.
     * @param key            its rkey.
     * @param dmaLength      its RETH length.
     * @param mtu            the path MTU: a re-issued READ starts whole packets into the original.
     * @return true when it repeats a READ remembered: from its first PSN, or from a later one of its range with
     * the address and length moved on by that many MTUs, and the same rkey.
     */
    boolean repeats(final int psn, final long virtualAddress, final int key, final long dmaLength, final int mtu)
    {
        final long oldest = Math.max(0, tail - mask - 1);
        for (long h = tail - 1; h >= oldest; h--)
        {
            final int e = (int)h & mask;
            final int index = Psn.diff(psn, startPsn[e]);
            if (index >= 0 && index < packetCount[e])
            {
                // PSN ranges of READs never overlap: the newest holding the PSN is the only candidate
                final long offset = (long)index * mtu;
                return rkey[e] == key && address[e] + offset == virtualAddress && length[e] - offset == dmaLength;
            }
        }
        return false;
    }

    /** Forgets everything (the QP was reset). */
    void clear()
    {
        tail = 0;
    }
}
