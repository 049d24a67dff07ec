package io.spraynic.datapath.verbs;

/**
 * Queue pair states, with the values of ibverbs' {@code enum ibv_qp_state}, and the transitions
 * {@code ibv_modify_qp} allows (InfiniBand Vol 1, 10.3.1, figure 126):
 * <pre>
 *   RESET -> INIT -> RTR -> RTS <-> SQD       any -> RESET, any -> ERROR
 *   INIT -> INIT, RTS -> RTS, SQD -> SQD, SQE -> RTS
 * </pre>
 * SQE (send queue error) and the move from SQD back to RTS are entered by the transport; ERROR is
 * entered by the transport on a fatal error too.
 */
public enum QueuePairState
{
    /** IBV_QPS_RESET: just created or reset; no traffic. */
    RESET(0),
    /** IBV_QPS_INIT: receives may be posted; no traffic yet. */
    INIT(1),
    /** IBV_QPS_RTR: ready to receive: the responder runs. */
    RTR(2),
    /** IBV_QPS_RTS: ready to send: requester and responder run. */
    RTS(3),
    /** IBV_QPS_SQD: send queue drained: no new requests start. */
    SQD(4),
    /** IBV_QPS_SQE: send queue error (UC/UD only). */
    SQE(5),
    /** IBV_QPS_ERR: outstanding and new requests complete with WR_FLUSH_ERR. */
    ERROR(6);

    private final int code;

    QueuePairState(final int code)
    {
        this.code = code;
    }

    /** @return the ibverbs value. */
    public int code()
    {
        return code;
    }

    /**
     * @param target the state asked for.
     * @return true when {@code ibv_modify_qp} allows moving from this state to {@code target}.
     */
    public boolean canTransitionTo(final QueuePairState target)
    {
        if (target == RESET || target == ERROR)
        {
            return true;
        }
        return switch (this)
        {
            case RESET -> target == INIT;
            case INIT -> target == INIT || target == RTR;
            case RTR -> target == RTS;
            case RTS -> target == RTS || target == SQD;
            case SQD -> target == SQD || target == RTS;
            case SQE -> target == RTS;
            case ERROR -> false;
        };
    }

    /**
     * @param target the state asked for.
     * @throws IllegalStateException when the transition is not allowed (control path).
     */
    public void checkTransitionTo(final QueuePairState target)
    {
        if (!canTransitionTo(target))
        {
            throw new IllegalStateException("illegal queue pair state transition " + this + " -> " + target);
        }
    }

    /** @return true when the responder accepts requests (RTR and beyond, ERROR excluded). */
    public boolean canReceive()
    {
        return this == RTR || this == RTS || this == SQD || this == SQE;
    }

    /** @return true when the requester starts new requests. */
    public boolean canSend()
    {
        return this == RTS;
    }
}
