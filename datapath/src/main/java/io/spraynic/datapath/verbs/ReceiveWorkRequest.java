package io.spraynic.datapath.verbs;

/**
 * A receive queue work request, as {@code ibv_recv_wr} with one scatter/gather element: a reusable holder
 * passed to {@link QueuePair#postReceive}, which copies it. Its buffer lies in a {@link MemoryRegion} of this process;
 * the fields it shares with the application API's request are {@link ReceiveRequestFields}'.
 */
public final class ReceiveWorkRequest extends ReceiveRequestFields<ReceiveWorkRequest>
{
    private MemoryRegion region;

    /** @return this, cleared. */
    public ReceiveWorkRequest reset()
    {
        clearFields();
        region = null;
        return this;
    }

    /**
     * @param region  a region with {@link AccessFlags#LOCAL_WRITE} (none needed for length 0).
     * @param address virtual address of the first byte.
     * @param length  bytes the buffer holds.
     * @return this.
     */
    public ReceiveWorkRequest buffer(final MemoryRegion region, final long address, final int length)
    {
        this.region = region;
        localBuffer(address, length);
        return this;
    }

    public MemoryRegion region()
    {
        return region;
    }

    /** @return the region's key; 0 with no region. */
    public int lkey()
    {
        return null == region ? 0 : region.lkey();
    }

    protected ReceiveWorkRequest self()
    {
        return this;
    }
}
