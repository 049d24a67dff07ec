package io.spraynic.datapath.verbs;

/**
 * A send queue work request, as {@code ibv_send_wr} with one scatter/gather element: a reusable holder
 * the application fills and passes to {@link QueuePair#postSend}, which copies what it needs, so one
 * instance serves every post with no allocation. Its local memory is a {@link MemoryRegion} of this process; the
 * fields it shares with the application API's request are {@link SendRequestFields}'.
 * <pre>
 *   request.reset().wrId(7).opcode(WorkRequestOpcode.RDMA_WRITE)
 *       .local(region, 0, 4096).remote(remoteAddress, rkey).signaled(true);
 * </pre>
 */
public final class SendWorkRequest extends SendRequestFields<SendWorkRequest>
{
    private MemoryRegion localRegion;

    /**
     * Clears every field to its default (SEND, signaled, nothing local).
     *
     * @return this.
     */
    public SendWorkRequest reset()
    {
        clearFields();
        localRegion = null;
        return this;
    }

    /**
     * The local buffer: the source of a WRITE or SEND, the destination of a READ (which needs
     * {@link AccessFlags#LOCAL_WRITE}). Length 0 needs no region.
     *
     * @param region  the region holding the buffer (its lkey is what ibverbs would take).
     * @param address virtual address of the first byte (see {@link MemoryRegion#address()}).
     * @param length  bytes.
     * @return this.
     */
    public SendWorkRequest local(final MemoryRegion region, final long address, final int length)
    {
        this.localRegion = region;
        localBuffer(address, length);
        return this;
    }

    public MemoryRegion localRegion()
    {
        return localRegion;
    }

    /** @return the local region's key; 0 with no region. */
    public int lkey()
    {
        return null == localRegion ? 0 : localRegion.lkey();
    }

    protected SendWorkRequest self()
    {
        return this;
    }
}
