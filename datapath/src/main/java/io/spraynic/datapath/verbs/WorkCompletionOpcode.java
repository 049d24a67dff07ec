package io.spraynic.datapath.verbs;

/**
 * What a completion completed, with the values of ibverbs' {@code enum ibv_wc_opcode}.
 */
public enum WorkCompletionOpcode
{
    /** IBV_WC_SEND: a SEND or SEND with immediate. */
    SEND(0),
    /** IBV_WC_RDMA_WRITE: an RDMA WRITE or WRITE with immediate. */
    RDMA_WRITE(1),
    /** IBV_WC_RDMA_READ: an RDMA READ. */
    RDMA_READ(2),
    /** IBV_WC_COMP_SWAP: an atomic compare and swap. */
    COMP_SWAP(3),
    /** IBV_WC_FETCH_ADD: an atomic fetch and add. */
    FETCH_ADD(4),
    /** IBV_WC_RECV: a receive consumed by a SEND. */
    RECV(128),
    /** IBV_WC_RECV_RDMA_WITH_IMM: a receive consumed by an RDMA WRITE with immediate. */
    RECV_RDMA_WITH_IMM(129);

    private final int code;

    WorkCompletionOpcode(final int code)
    {
        this.code = code;
    }

    /** @return the ibverbs value. */
    public int code()
    {
        return code;
    }

    /** @return true for completions of the receive queue. */
    public boolean isReceive()
    {
        return code >= RECV.code;
    }
}
