package io.spraynic.datapath.verbs;

/**
 * What every receive work request holds, as {@code ibv_recv_wr} with one scatter/gather element, written once for both
 * kinds: the verbs {@link ReceiveWorkRequest}, whose buffer lies in a {@link MemoryRegion} of this process, and the
 * application API's {@code api.ReceiveRequest}, whose buffer is named by lkey so that it means the same to a NIC in
 * another process. A subclass adds how its buffer's region is named and answers {@link #lkey()}. Reusable holders:
 * posting copies them, so one instance serves every post with no allocation. The receive twin of
 * {@link SendRequestFields}.
 *
 * @param <T> the request type, so that the setters chain.
 */
public abstract class ReceiveRequestFields<T extends ReceiveRequestFields<T>>
{
    private long wrId;
    private long address;
    private int length;

    protected ReceiveRequestFields()
    {
    }

    /** @return this request (the subclass). */
    protected abstract T self();

    /** @return the key of the region holding the buffer; 0, naming nothing, for none. */
    public abstract int lkey();

    /** Clears every field shared by both kinds (no buffer). */
    protected final void clearFields()
    {
        wrId = 0;
        address = 0;
        length = 0;
    }

    /** The buffer's address and length; the subclass names its region. */
    protected final void localBuffer(final long address, final int length)
    {
        this.address = address;
        this.length = length;
    }

    /** @param wrId returned in the completion. @return this. */
    public final T wrId(final long wrId)
    {
        this.wrId = wrId;
        return self();
    }

    public final long wrId()
    {
        return wrId;
    }

    /** @return the virtual address of the buffer's first byte. */
    public final long address()
    {
        return address;
    }

    /** @return bytes the buffer holds. */
    public final int length()
    {
        return length;
    }

    public String toString()
    {
        return getClass().getSimpleName() + "{wrId=" + wrId + ", lkey=0x" + Integer.toHexString(lkey()) +
            ", buffer=0x" + Long.toHexString(address) + "+" + length + '}';
    }
}
