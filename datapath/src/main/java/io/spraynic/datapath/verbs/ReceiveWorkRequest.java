package io.spraynic.datapath.verbs;

/**
 * A receive queue work request, as {@code ibv_recv_wr} with one scatter/gather element: a reusable holder
 * passed to {@link QueuePair#postReceive}, which copies it.
 */
public final class ReceiveWorkRequest
{
    private long wrId;
    private MemoryRegion region;
    private long address;
    private int length;

    /** @return this, cleared. */
    public ReceiveWorkRequest reset()
    {
        wrId = 0;
        region = null;
        address = 0;
        length = 0;
        return this;
    }

    /** @param wrId returned in the completion. @return this. */
    public ReceiveWorkRequest wrId(final long wrId)
    {
        this.wrId = wrId;
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
        this.address = address;
        this.length = length;
        return this;
    }

    public long wrId()
    {
        return wrId;
    }

    public MemoryRegion region()
    {
        return region;
    }

    public long address()
    {
        return address;
    }

    public int length()
    {
        return length;
    }
}
