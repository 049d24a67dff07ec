package io.spraynic.datapath.api;

import io.spraynic.datapath.verbs.SendRequestFields;

/**
 * A send work request for a {@link Connection}, as {@code ibv_send_wr} with one scatter/gather element: a reusable
 * holder the application fills and posts; posting copies it, so one instance serves every post with no allocation.
 * Local memory is named as {@code ibv_sge} names it, by lkey and virtual address, so the same request means the same
 * to a NIC in this process and to one in another. The fields it shares with the verbs request are
 * {@link SendRequestFields}'.
 * <pre>
 *   request.reset().wrId(7).opcode(WorkRequestOpcode.RDMA_WRITE)
 *       .local(region, region.address() + offset, 4096).remote(remoteAddress, rkey);
 * </pre>
 */
public final class SendRequest extends SendRequestFields<SendRequest>
{
    private int lkey;

    /** @return this, cleared to a signaled SEND with no local buffer. */
    public SendRequest reset()
    {
        clearFields();
        lkey = 0;
        return this;
    }

    /**
     * The local buffer: the source of a WRITE or SEND, the destination of a READ (which needs LOCAL_WRITE).
     *
     * @param lkey    the key of the region holding it (0, naming nothing, with length 0).
     * @param address virtual address of the first byte ({@link Region#address()} + offset).
     * @param length  bytes.
     * @return this.
     */
    public SendRequest local(final int lkey, final long address, final int length)
    {
        this.lkey = lkey;
        localBuffer(address, length);
        return this;
    }

    /**
     * @param region  the region holding the buffer (null with length 0).
     * @param address virtual address of the first byte ({@link Region#address()} + offset).
     * @param length  bytes.
     * @return this.
     */
    public SendRequest local(final Region region, final long address, final int length)
    {
        return local(null == region ? 0 : region.lkey(), address, length);
    }

    public int lkey()
    {
        return lkey;
    }

    protected SendRequest self()
    {
        return this;
    }
}
