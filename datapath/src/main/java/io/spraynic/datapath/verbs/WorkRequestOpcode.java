package io.spraynic.datapath.verbs;

/**
 * Send queue operations, with the values of ibverbs' {@code enum ibv_wr_opcode}.
 */
public enum WorkRequestOpcode
{
    /** IBV_WR_RDMA_WRITE. */
    RDMA_WRITE(0, WorkCompletionOpcode.RDMA_WRITE),
    /** IBV_WR_RDMA_WRITE_WITH_IMM: consumes a receive at the peer, which completes with the immediate. */
    RDMA_WRITE_WITH_IMM(1, WorkCompletionOpcode.RDMA_WRITE),
    /** IBV_WR_SEND. */
    SEND(2, WorkCompletionOpcode.SEND),
    /** IBV_WR_SEND_WITH_IMM. */
    SEND_WITH_IMM(3, WorkCompletionOpcode.SEND),
    /** IBV_WR_RDMA_READ. */
    RDMA_READ(4, WorkCompletionOpcode.RDMA_READ);

    private static final WorkRequestOpcode[] VALUES = values();

    private final int code;
    private final WorkCompletionOpcode completionOpcode;

    WorkRequestOpcode(final int code, final WorkCompletionOpcode completionOpcode)
    {
        this.code = code;
        this.completionOpcode = completionOpcode;
    }

    /** @return the ibverbs value. */
    public int code()
    {
        return code;
    }

    /** @return the opcode of this request's completion. */
    public WorkCompletionOpcode completionOpcode()
    {
        return completionOpcode;
    }

    /** @return true when the operation carries immediate data. */
    public boolean hasImmediate()
    {
        return this == RDMA_WRITE_WITH_IMM || this == SEND_WITH_IMM;
    }

    /** @return true when the operation names remote memory (RETH). */
    public boolean isRdma()
    {
        return this == RDMA_WRITE || this == RDMA_WRITE_WITH_IMM || this == RDMA_READ;
    }

    /**
     * @param code an ibverbs value.
     * @return its opcode.
     */
    public static WorkRequestOpcode of(final int code)
    {
        if (code < 0 || code >= VALUES.length)
        {
            throw new IllegalArgumentException("no work request opcode " + code);
        }
        return VALUES[code];
    }
}
