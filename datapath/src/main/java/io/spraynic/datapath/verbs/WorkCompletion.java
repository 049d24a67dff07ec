package io.spraynic.datapath.verbs;

/**
 * One completion, as {@code ibv_wc}: a mutable holder that {@link CompletionQueue#poll} fills, so an
 * application polls with no allocation by reusing one instance (or an array of them).
 */
public final class WorkCompletion
{
    long wrId;
    WorkCompletionStatus status = WorkCompletionStatus.SUCCESS;
    WorkCompletionOpcode opcode = WorkCompletionOpcode.SEND;
    int byteLength;
    int immediateData;
    boolean hasImmediate;
    int qpNumber;

    /**
     * Fills every field, for a completion that arrives some other way than a {@link CompletionQueue} (e.g. from a
     * NIC process's shared-memory ring).
     *
     * @return this.
     */
    public WorkCompletion set(final long wrId, final WorkCompletionStatus status, final WorkCompletionOpcode opcode,
        final int byteLength, final boolean hasImmediate, final int immediateData, final int qpNumber)
    {
        this.wrId = wrId;
        this.status = status;
        this.opcode = opcode;
        this.byteLength = byteLength;
        this.hasImmediate = hasImmediate;
        this.immediateData = immediateData;
        this.qpNumber = qpNumber;
        return this;
    }

    /** @return the work request id given when posting. */
    public long wrId()
    {
        return wrId;
    }

    /** @return the outcome. */
    public WorkCompletionStatus status()
    {
        return status;
    }

    /** @return what completed; meaningful for receives only when {@link #status()} is SUCCESS, as in ibverbs. */
    public WorkCompletionOpcode opcode()
    {
        return opcode;
    }

    /** @return bytes received (receives) or transferred (READ). */
    public int byteLength()
    {
        return byteLength;
    }

    /** @return the immediate data, if {@link #hasImmediate()}. */
    public int immediateData()
    {
        return immediateData;
    }

    /** @return true when the message carried immediate data (IBV_WC_WITH_IMM). */
    public boolean hasImmediate()
    {
        return hasImmediate;
    }

    /** @return the local QP number. */
    public int qpNumber()
    {
        return qpNumber;
    }

    public String toString()
    {
        return "WorkCompletion{wrId=" + wrId + ", status=" + status + ", opcode=" + opcode + ", byteLength=" +
            byteLength + (hasImmediate ? ", imm=0x" + Integer.toHexString(immediateData) : "") + ", qp=" +
            qpNumber + '}';
    }
}
