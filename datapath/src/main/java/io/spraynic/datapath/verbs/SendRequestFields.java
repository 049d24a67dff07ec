package io.spraynic.datapath.verbs;

import java.util.Objects;

/**
 * What every send work request holds, as {@code ibv_send_wr} with one scatter/gather element, written once for both
 * kinds: the verbs {@link SendWorkRequest}, whose local memory is a {@link MemoryRegion} of this process, and the
 * application API's {@code api.SendRequest}, whose local memory is named by lkey so that it means the same to a NIC in
 * another process. A subclass adds how its local memory is named and answers {@link #lkey()}. Reusable holders:
 * posting copies them, so one instance serves every post with no allocation.
 *
 * @param <T> the request type, so that the setters chain.
 */
public abstract class SendRequestFields<T extends SendRequestFields<T>>
{
    private long wrId;
    private WorkRequestOpcode opcode = WorkRequestOpcode.SEND;
    private long localAddress;
    private int length;
    private long remoteAddress;
    private int rkey;
    private int immediateData;
    private boolean signaled = true;
    private boolean solicited;

    protected SendRequestFields()
    {
    }

    /** @return this request (the subclass). */
    protected abstract T self();

    /** @return the key of the region holding the local buffer; 0, naming nothing, for none. */
    public abstract int lkey();

    /** Clears every field shared by both kinds to its default (SEND, signaled, no local buffer). */
    protected final void clearFields()
    {
        wrId = 0;
        opcode = WorkRequestOpcode.SEND;
        localAddress = 0;
        length = 0;
        remoteAddress = 0;
        rkey = 0;
        immediateData = 0;
        signaled = true;
        solicited = false;
    }

    /** The local buffer's address and length; the subclass names its region. */
    protected final void localBuffer(final long address, final int length)
    {
        this.localAddress = address;
        this.length = length;
    }

    /** @param wrId returned in the completion. @return this. */
    public final T wrId(final long wrId)
    {
        this.wrId = wrId;
        return self();
    }

    /** @param opcode the operation. @return this. */
    public final T opcode(final WorkRequestOpcode opcode)
    {
        this.opcode = Objects.requireNonNull(opcode, "opcode"); // posting must not meet a null
        return self();
    }

    /** @param remoteAddress the peer's virtual address (WRITE, READ). @param rkey the peer's key. @return this. */
    public final T remote(final long remoteAddress, final int rkey)
    {
        this.remoteAddress = remoteAddress;
        this.rkey = rkey;
        return self();
    }

    /** @param immediateData for the *_WITH_IMM opcodes. @return this. */
    public final T immediate(final int immediateData)
    {
        this.immediateData = immediateData;
        return self();
    }

    /** @param signaled false to complete silently on success (IBV_SEND_SIGNALED unset). @return this. */
    public final T signaled(final boolean signaled)
    {
        this.signaled = signaled;
        return self();
    }

    /** @param solicited sets the BTH solicited-event bit on the last packet. @return this. */
    public final T solicited(final boolean solicited)
    {
        this.solicited = solicited;
        return self();
    }

    public final long wrId()
    {
        return wrId;
    }

    public final WorkRequestOpcode opcode()
    {
        return opcode;
    }

    public final long localAddress()
    {
        return localAddress;
    }

    public final int length()
    {
        return length;
    }

    public final long remoteAddress()
    {
        return remoteAddress;
    }

    public final int rkey()
    {
        return rkey;
    }

    public final int immediateData()
    {
        return immediateData;
    }

    public final boolean signaled()
    {
        return signaled;
    }

    public final boolean solicited()
    {
        return solicited;
    }

    public String toString()
    {
        return getClass().getSimpleName() + "{wrId=" + wrId + ", opcode=" + opcode + ", lkey=0x" +
            Integer.toHexString(lkey()) + ", local=0x" + Long.toHexString(localAddress) + "+" + length + ", remote=0x" +
            Long.toHexString(remoteAddress) + ", rkey=0x" + Integer.toHexString(rkey) + ", signaled=" + signaled + '}';
    }
}
