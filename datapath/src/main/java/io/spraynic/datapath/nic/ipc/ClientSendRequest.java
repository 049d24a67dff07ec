package io.spraynic.datapath.nic.ipc;

import io.spraynic.datapath.verbs.WorkRequestOpcode;

/**
 * A send work request for a {@link ClientConnection}, as {@code SendWorkRequest} for a {@code NicConnection}: a
 * reusable holder the application fills and posts; posting copies it into the connection's shared ring.
 */
public final class ClientSendRequest
{
    long wrId;
    WorkRequestOpcode opcode = WorkRequestOpcode.SEND;
    int lkey;
    long localAddress;
    int length;
    long remoteAddress;
    int rkey;
    int immediateData;
    boolean signaled = true;
    boolean solicited;

    /** @return this, cleared to a signaled SEND with no local buffer. */
    public ClientSendRequest reset()
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
    public ClientSendRequest wrId(final long wrId)
    {
        this.wrId = wrId;
        return this;
    }

    /** @param opcode the operation. @return this. */
    public ClientSendRequest opcode(final WorkRequestOpcode opcode)
    {
        this.opcode = opcode;
        return this;
    }

    /**
     * @param region  one of this client's regions (null with length 0).
     * @param address virtual address of the first byte ({@link ClientRegion#address()} + offset).
     * @param length  bytes.
     * @return this.
     */
    public ClientSendRequest local(final ClientRegion region, final long address, final int length)
    {
        this.lkey = null == region ? 0 : region.lkey();
        this.localAddress = address;
        this.length = length;
        return this;
    }

    /** @param remoteAddress the peer's virtual address. @param rkey the peer's key. @return this. */
    public ClientSendRequest remote(final long remoteAddress, final int rkey)
    {
        this.remoteAddress = remoteAddress;
        this.rkey = rkey;
        return this;
    }

    /** @param immediateData for the *_WITH_IMM opcodes. @return this. */
    public ClientSendRequest immediate(final int immediateData)
    {
        this.immediateData = immediateData;
        return this;
    }

    /** @param signaled false to complete silently on success. @return this. */
    public ClientSendRequest signaled(final boolean signaled)
    {
        this.signaled = signaled;
        return this;
    }

    /** @param solicited sets the solicited-event bit. @return this. */
    public ClientSendRequest solicited(final boolean solicited)
    {
        this.solicited = solicited;
        return this;
    }
}
