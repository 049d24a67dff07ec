package io.spraynic.datapath.api;

import io.spraynic.datapath.verbs.ReceiveRequestFields;

/**
 * A receive work request for a {@link Connection}, as {@code ibv_recv_wr} with one scatter/gather element: a
 * reusable holder that posting copies; its buffer is named by lkey and virtual address, as in {@link SendRequest}.
 * The fields it shares with the verbs request are {@link ReceiveRequestFields}'.
 */
public final class ReceiveRequest extends ReceiveRequestFields<ReceiveRequest>
{
    private int lkey;

    /** @return this, cleared. */
    public ReceiveRequest reset()
    {
        clearFields();
        lkey = 0;
        return this;
    }

    /**
     * @param lkey    the key of a region with LOCAL_WRITE (0, naming nothing, with length 0).
     * @param address virtual address of the first byte.
     * @param length  bytes the buffer holds.
     * @return this.
     */
    public ReceiveRequest buffer(final int lkey, final long address, final int length)
    {
        this.lkey = lkey;
        localBuffer(address, length);
        return this;
    }

    /**
     * @param region  a region with LOCAL_WRITE (null with length 0).
     * @param address virtual address of the first byte.
     * @param length  bytes the buffer holds.
     * @return this.
     */
    public ReceiveRequest buffer(final Region region, final long address, final int length)
    {
        return buffer(null == region ? 0 : region.lkey(), address, length);
    }

    public int lkey()
    {
        return lkey;
    }

    protected ReceiveRequest self()
    {
        return this;
    }
}
