package io.spraynic.datapath.api;

import io.spraynic.datapath.verbs.WorkRequestOpcode;

import java.util.Objects;

/**
 * A send work request for a {@link Connection}, as {@code ibv_send_wr} with one scatter/gather element: a reusable
 * holder the application fills and posts; posting copies it, so one instance serves every post with no allocation.
 * Local memory is named as {@code ibv_sge} names it, by lkey and virtual address, so the same request means the same
 * to a NIC in this process and to one in another.
 * <pre>
 *   request.reset().wrId(7).opcode(WorkRequestOpcode.RDMA_WRITE)
 *       .local(region, region.address() + offset, 4096).remote(remoteAddress, rkey);
 * </pre>
 */
public final class SendRequest
{
    private long wrId;
    private WorkRequestOpcode opcode = WorkRequestOpcode.SEND;
    private int lkey;
    private long localAddress;
    private int length;
    private long remoteAddress;
    private int rkey;
    private int immediateData;
    private boolean signaled = true;
    private boolean solicited;

    /** @return this, cleared to a signaled SEND with no local buffer. */
    public SendRequest reset()
    {
        wrId = 0;
        opcode = WorkRequestOpcode.SEND;
        lkey = 0;
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
    public SendRequest wrId(final long wrId)
    {
        this.wrId = wrId;
        return this;
    }

    /** @param opcode the operation. @return this. */
    public SendRequest opcode(final WorkRequestOpcode opcode)
    {
        this.opcode = Objects.requireNonNull(opcode, "opcode"); // posting must not meet a null
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
        this.localAddress = address;
        this.length = length;
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

    /** @param remoteAddress the peer's virtual address (WRITE, READ). @param rkey the peer's key. @return this. */
    public SendRequest remote(final long remoteAddress, final int rkey)
    {
        this.remoteAddress = remoteAddress;
        this.rkey = rkey;
        return this;
    }

    /** @param immediateData for the *_WITH_IMM opcodes. @return this. */
    public SendRequest immediate(final int immediateData)
    {
        this.immediateData = immediateData;
        return this;
    }

    /** @param signaled false to complete silently on success (IBV_SEND_SIGNALED unset). @return this. */
    public SendRequest signaled(final boolean signaled)
    {
        this.signaled = signaled;
        return this;
    }

    /** @param solicited sets the solicited-event bit on the last packet. @return this. */
    public SendRequest solicited(final boolean solicited)
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

    public int lkey()
    {
        return lkey;
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
        return "SendRequest{wrId=" + wrId + ", opcode=" + opcode + ", lkey=0x" + Integer.toHexString(lkey) + ", local=0x" +
            Long.toHexString(localAddress) + "+" + length + ", remote=0x" + Long.toHexString(remoteAddress) + ", rkey=0x" +
            Integer.toHexString(rkey) + ", signaled=" + signaled + '}';
    }
}
