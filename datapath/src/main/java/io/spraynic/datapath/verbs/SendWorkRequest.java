package io.spraynic.datapath.verbs;

/**
 * A send queue work request, as {@code ibv_send_wr} with one scatter/gather element: a reusable holder
 * the application fills and passes to {@link QueuePair#postSend}, which copies what it needs, so one
 * instance serves every post with no allocation.
 * <pre>
 *   request.reset().wrId(7).opcode(WorkRequestOpcode.RDMA_WRITE)
 *       .local(region, 0, 4096).remote(remoteAddress, rkey).signaled(true);
 * </pre>
 */
public final class SendWorkRequest
{
    private long wrId;
    private WorkRequestOpcode opcode = WorkRequestOpcode.SEND;
    private MemoryRegion localRegion;
    private long localAddress;
    private int length;
    private long remoteAddress;
    private int rkey;
    private int immediateData;
    private boolean signaled = true;
    private boolean solicited;

    /**
     * Clears every field to its default (SEND, signaled, nothing local).
     *
     * @return this.
     */
    public SendWorkRequest reset()
    {
        wrId = 0;
        opcode = WorkRequestOpcode.SEND;
        localRegion = null;
        localAddress = 0;
        length = 0;
        remoteAddress = 0;
        rkey = 0;
        immediateData = 0;
        signaled = true;
        solicited = false;
        return this;
    }

    /** @param wrId returned in the completion. @return this. */
    public SendWorkRequest wrId(final long wrId)
    {
        this.wrId = wrId;
        return this;
    }

    /** @param opcode the operation. @return this. */
    public SendWorkRequest opcode(final WorkRequestOpcode opcode)
    {
        this.opcode = opcode;
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
        this.localAddress = address;
        this.length = length;
        return this;
    }

    /**
     * @param remoteAddress peer's virtual address (WRITE, READ).
     * @param rkey          peer's region key.
     * @return this.
     */
    public SendWorkRequest remote(final long remoteAddress, final int rkey)
    {
        this.remoteAddress = remoteAddress;
        this.rkey = rkey;
        return this;
    }

    /** @param immediateData for the *_WITH_IMM opcodes. @return this. */
    public SendWorkRequest immediate(final int immediateData)
    {
        this.immediateData = immediateData;
        return this;
    }

    /** @param signaled false to complete silently on success (IBV_SEND_SIGNALED unset). @return this. */
    public SendWorkRequest signaled(final boolean signaled)
    {
        this.signaled = signaled;
        return this;
    }

    /** @param solicited sets the BTH solicited-event bit on the last packet. @return this. */
    public SendWorkRequest solicited(final boolean solicited)
    {
        this.solicited = solicited;
        return this;
    }

    public long wrId()
    {
        return wrId;
    }

    public WorkRequestOpcode opcode()
    {
        return opcode;
    }

    public MemoryRegion localRegion()
    {
        return localRegion;
    }

    public long localAddress()
    {
        return localAddress;
    }

    public int length()
    {
        return length;
    }

    public long remoteAddress()
    {
        return remoteAddress;
    }

    public int rkey()
    {
        return rkey;
    }

    public int immediateData()
    {
        return immediateData;
    }

    public boolean signaled()
    {
        return signaled;
    }

    public boolean solicited()
    {
        return solicited;
    }

    public String toString()
    {
        return "SendWorkRequest{wrId=" + wrId + ", opcode=" + opcode + ", local=0x" + Long.toHexString(localAddress) +
            "+" + length + ", remote=0x" + Long.toHexString(remoteAddress) + ", rkey=0x" + Integer.toHexString(rkey) +
            ", signaled=" + signaled + '}';
    }
}
