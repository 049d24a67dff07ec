package io.spraynic.datapath.nic.ipc;

/**
 * A receive work request for a {@link ClientConnection}, as {@code ReceiveWorkRequest}: a reusable holder that
 * posting copies.
 */
public final class ClientReceiveRequest
{
    long wrId;
    int lkey;
    long address;
    int length;

    /** @return this, cleared. */
    public ClientReceiveRequest reset()
    {
        wrId = 0;
        lkey = 0;
        address = 0;
        length = 0;
        return this;
    }

    /** @param wrId returned in the completion. @return this. */
    public ClientReceiveRequest wrId(final long wrId)
    {
        this.wrId = wrId;
        return this;
    }

    /**
     * @param region  a region with LOCAL_WRITE (null with length 0).
     * @param address virtual address of the first byte.
     * @param length  bytes the buffer holds.
     * @return this.
     */
    public ClientReceiveRequest buffer(final ClientRegion region, final long address, final int length)
    {
        this.lkey = null == region ? 0 : region.lkey();
        this.address = address;
        this.length = length;
        return this;
    }
}
