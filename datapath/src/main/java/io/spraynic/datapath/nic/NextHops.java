package io.spraynic.datapath.nic;

import io.spraynic.pmd.InterfaceAddress;

/**
 * Per plane, the address whose MAC a connection's frames go to: the peer on-link, the plane's gateway off-link.
 * Addresses are 128 bits, an IPv4 one in its IPv4-mapped form ({@link InterfaceAddress#mappedLow}); {0, 0} is none
 * (a plane the connection does not use). Control path; the arrays are read on the worker thread once published.
 *
 * @param high first 64 bits per plane.
 * @param low  last 64 bits per plane.
 */
record NextHops(long[] high, long[] low)
{
    /** @return {@code planes} planes, none set. */
    static NextHops none(final int planes)
    {
        return new NextHops(new long[planes], new long[planes]);
    }

    /** @return the planes. */
    int planes()
    {
        return high.length;
    }

    /** @return whether {@code plane} has a next hop. */
    boolean has(final int plane)
    {
        return high[plane] != 0 || low[plane] != 0;
    }

    /** @return whether {@code plane}'s next hop is {@code high:low}. */
    boolean is(final int plane, final long high, final long low)
    {
        return plane < this.high.length && this.high[plane] == high && this.low[plane] == low;
    }

    /** @return {@code plane}'s next hop as text. */
    String text(final int plane)
    {
        return InterfaceAddress.text(high[plane], low[plane]);
    }
}
