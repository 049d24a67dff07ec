package io.spraynic.datapath.api;

/**
 * A receive work request for a {@link Connection}, as {@code ibv_recv_wr} with one scatter/gather element: a
 * reusable holder that posting copies; its buffer is named by lkey and virtual address, as in {@link SendRequest}.
 */
public final class ReceiveRequest
{
    private long wrId;
    private int lkey;
    private long address;
    private int length;

    /** @return this, cleared. */
    public ReceiveRequest reset()
    {
        wrId = 0;
        lkey = 0;
        address = 0;
        length = 0;
        return this;
    }

    /** @param wrId returned in the completion. @return this. */
    public ReceiveRequest wrId(final long wrId)
    {
        this.wrId = wrId;
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
        this.address = address;
        this.length = length;
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

    public long wrId()
    {
        return wrId;
    }

    public int lkey()
    {
        return lkey;
    }

    public long address()
    {
        return address;
    }

    public int length()
    {
        return length;
    }

    public String toString()
    {
        return "ReceiveRequest{wrId=" + wrId + ", lkey=0x" + Integer.toHexString(lkey) + ", buffer=0x" +
            Long.toHexString(address) + "+" + length + '}';
    }
}
