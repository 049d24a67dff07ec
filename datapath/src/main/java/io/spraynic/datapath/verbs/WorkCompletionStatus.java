package io.spraynic.datapath.verbs;

/**
 * Completion status codes with the values of ibverbs' {@code enum ibv_wc_status}, so {@link #code()}
 * is what {@code ibv_wc.status} would hold for the same outcome.
 */
public enum WorkCompletionStatus
{
    /** IBV_WC_SUCCESS: the work request completed. */
    SUCCESS(0),
    /** IBV_WC_LOC_LEN_ERR: a received message was longer than the receive buffer. */
    LOC_LEN_ERR(1),
    /** IBV_WC_LOC_QP_OP_ERR: an internal QP consistency error (e.g. a request too long for the QP). */
    LOC_QP_OP_ERR(2),
    /** IBV_WC_LOC_EEC_OP_ERR: RD only. */
    LOC_EEC_OP_ERR(3),
    /** IBV_WC_LOC_PROT_ERR: the local buffer is not in a region with this lkey and the needed rights. */
    LOC_PROT_ERR(4),
    /** IBV_WC_WR_FLUSH_ERR: the QP went to the error state before this request completed. */
    WR_FLUSH_ERR(5),
    /** IBV_WC_MW_BIND_ERR: memory window bind failed. */
    MW_BIND_ERR(6),
    /** IBV_WC_BAD_RESP_ERR: an unexpected transport response (e.g. a READ response of the wrong length). */
    BAD_RESP_ERR(7),
    /** IBV_WC_LOC_ACCESS_ERR: a protection error on a local data buffer during an incoming write. */
    LOC_ACCESS_ERR(8),
    /** IBV_WC_REM_INV_REQ_ERR: the responder found the request invalid (NAK invalid request). */
    REM_INV_REQ_ERR(9),
    /** IBV_WC_REM_ACCESS_ERR: the responder refused the access (NAK remote access error). */
    REM_ACCESS_ERR(10),
    /** IBV_WC_REM_OP_ERR: the responder could not complete the operation (NAK remote operational error). */
    REM_OP_ERR(11),
    /** IBV_WC_RETRY_EXC_ERR: the transport retry counter ran out (timeouts or sequence-error NAKs). */
    RETRY_EXC_ERR(12),
    /** IBV_WC_RNR_RETRY_EXC_ERR: the RNR retry counter ran out. */
    RNR_RETRY_EXC_ERR(13),
    /** IBV_WC_LOC_RDD_VIOL_ERR: RD only. */
    LOC_RDD_VIOL_ERR(14),
    /** IBV_WC_REM_INV_RD_REQ_ERR: RD only. */
    REM_INV_RD_REQ_ERR(15),
    /** IBV_WC_REM_ABORT_ERR: the responder aborted. */
    REM_ABORT_ERR(16),
    /** IBV_WC_INV_EECN_ERR: RD only. */
    INV_EECN_ERR(17),
    /** IBV_WC_INV_EEC_STATE_ERR: RD only. */
    INV_EEC_STATE_ERR(18),
    /** IBV_WC_FATAL_ERR: a fatal transport error. */
    FATAL_ERR(19),
    /** IBV_WC_RESP_TIMEOUT_ERR: the response timed out. */
    RESP_TIMEOUT_ERR(20),
    /** IBV_WC_GENERAL_ERR: any other error. */
    GENERAL_ERR(21);

    private static final WorkCompletionStatus[] BY_CODE = values();

    private final int code;

    WorkCompletionStatus(final int code)
    {
        this.code = code;
    }

    /** @return the ibverbs value. */
    public int code()
    {
        return code;
    }

    /**
     * @param code an ibverbs value.
     * @return its status.
     */
    public static WorkCompletionStatus of(final int code)
    {
        if (code < 0 || code >= BY_CODE.length)
        {
            throw new IllegalArgumentException("no work completion status " + code);
        }
        return BY_CODE[code];
    }
}
