package io.spraynic.datapath.verbs;

import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

import static io.spraynic.datapath.verbs.QueuePairState.ERROR;
import static io.spraynic.datapath.verbs.QueuePairState.INIT;
import static io.spraynic.datapath.verbs.QueuePairState.RESET;
import static io.spraynic.datapath.verbs.QueuePairState.RTR;
import static io.spraynic.datapath.verbs.QueuePairState.RTS;
import static io.spraynic.datapath.verbs.QueuePairState.SQD;
import static io.spraynic.datapath.verbs.QueuePairState.SQE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class QueuePairStateTest
{
    private static final Map<QueuePairState, Set<QueuePairState>> LEGAL = Map.of(
        RESET, EnumSet.of(RESET, INIT, ERROR),
        INIT, EnumSet.of(RESET, INIT, RTR, ERROR),
        RTR, EnumSet.of(RESET, RTS, ERROR),
        RTS, EnumSet.of(RESET, RTS, SQD, ERROR),
        SQD, EnumSet.of(RESET, RTS, SQD, ERROR),
        SQE, EnumSet.of(RESET, RTS, ERROR),
        ERROR, EnumSet.of(RESET, ERROR));

    @Test
    void shouldAllowExactlyTheIbTransitions()
    {
        for (final QueuePairState from : QueuePairState.values())
        {
            for (final QueuePairState to : QueuePairState.values())
            {
                assertEquals(LEGAL.get(from).contains(to), from.canTransitionTo(to), from + " -> " + to);
            }
        }
    }

    @Test
    void shouldThrowOnIllegalTransition()
    {
        final IllegalStateException ex = assertThrows(IllegalStateException.class, () -> RESET.checkTransitionTo(RTS));
        assertEquals("illegal queue pair state transition RESET -> RTS", ex.getMessage());
    }

    @Test
    void shouldUseIbverbsValues()
    {
        assertEquals(0, RESET.code());
        assertEquals(3, RTS.code());
        assertEquals(6, ERROR.code());
        assertEquals(0, WorkCompletionStatus.SUCCESS.code());
        assertEquals(1, WorkCompletionStatus.LOC_LEN_ERR.code());
        assertEquals(2, WorkCompletionStatus.LOC_QP_OP_ERR.code());
        assertEquals(4, WorkCompletionStatus.LOC_PROT_ERR.code());
        assertEquals(5, WorkCompletionStatus.WR_FLUSH_ERR.code());
        assertEquals(9, WorkCompletionStatus.REM_INV_REQ_ERR.code());
        assertEquals(10, WorkCompletionStatus.REM_ACCESS_ERR.code());
        assertEquals(11, WorkCompletionStatus.REM_OP_ERR.code());
        assertEquals(12, WorkCompletionStatus.RETRY_EXC_ERR.code());
        assertEquals(13, WorkCompletionStatus.RNR_RETRY_EXC_ERR.code());
        assertEquals(21, WorkCompletionStatus.GENERAL_ERR.code());
        for (final WorkCompletionStatus status : WorkCompletionStatus.values())
        {
            assertEquals(status, WorkCompletionStatus.of(status.code()));
        }
        assertEquals(128, WorkCompletionOpcode.RECV.code());
        assertEquals(129, WorkCompletionOpcode.RECV_RDMA_WITH_IMM.code());
        assertEquals(4, WorkRequestOpcode.RDMA_READ.code());
        assertEquals(1, WorkRequestOpcode.RDMA_WRITE_WITH_IMM.code());
        assertEquals(7, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
    }
}
