package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.QueuePairState;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.Arena;
import java.util.EnumSet;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static io.spraynic.datapath.verbs.QueuePairState.ERROR;
import static io.spraynic.datapath.verbs.QueuePairState.INIT;
import static io.spraynic.datapath.verbs.QueuePairState.RESET;
import static io.spraynic.datapath.verbs.QueuePairState.RTR;
import static io.spraynic.datapath.verbs.QueuePairState.RTS;
import static io.spraynic.datapath.verbs.QueuePairState.SQD;
import static io.spraynic.datapath.verbs.QueuePairState.SQE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What each queue pair state allows (InfiniBand Vol 1, 10.3.1): the table in {@link RcStateMachine}'s Javadoc,
 * row by row, and the transitions {@code ibv_modify_qp} accepts.
 */
@Timeout(value = 10, unit = TimeUnit.SECONDS)
class RcStateMachineTest
{
    private final RcStateMachine states = new RcStateMachine();

    private void force(final QueuePairState state)
    {
        states.moveTo(state);
    }

    @Test
    void shouldStartInResetWhereNothingIsAllowed()
    {
        assertEquals(RESET, states.state());
        assertFalse(states.acceptsSendPosts());
        assertFalse(states.acceptsReceivePosts());
        assertFalse(states.receives());
        assertFalse(states.requesterRuns());
        assertTrue(states.isIdle());
        assertFalse(states.isError());
    }

    @ParameterizedTest
    @EnumSource(QueuePairState.class)
    void shouldAllowWhatTheSpecificationAllowsInEachState(final QueuePairState state)
    {
        force(state);
        assertEquals(state == RTS || state == SQD || state == ERROR, states.acceptsSendPosts(), "post send");
        assertEquals(state != RESET, states.acceptsReceivePosts(), "post receive");
        assertEquals(state == RTR || state == RTS || state == SQD || state == SQE, states.receives(), "inbound");
        assertEquals(state == RTS || state == SQD, states.requesterRuns(), "requester");
        assertEquals(state == SQD, states.isDraining(), "drain");
        assertEquals(state == RESET || state == INIT, states.isIdle(), "idle");
        assertEquals(state == ERROR, states.isError(), "error");
    }

    @ParameterizedTest
    @EnumSource(QueuePairState.class)
    void shouldAcceptExactlyTheModifyQpTransitions(final QueuePairState from)
    {
        final EnumSet<QueuePairState> allowed = switch (from)
        {
            case RESET -> EnumSet.of(INIT, RESET, ERROR);
            case INIT -> EnumSet.of(INIT, RTR, RESET, ERROR);
            case RTR -> EnumSet.of(RTS, RESET, ERROR);
            case RTS -> EnumSet.of(RTS, SQD, RESET, ERROR);
            case SQD -> EnumSet.of(SQD, RTS, RESET, ERROR);
            case SQE -> EnumSet.of(RTS, RESET, ERROR);
            case ERROR -> EnumSet.of(RESET, ERROR);
        };
        for (final QueuePairState to : QueuePairState.values())
        {
            force(from);
            if (allowed.contains(to))
            {
                states.checkTransitionTo(to);
            }
            else
            {
                assertThrows(IllegalStateException.class, () -> states.checkTransitionTo(to), from + " -> " + to);
            }
            assertEquals(from, states.state(), "a check moves nothing");
        }
    }

    @ParameterizedTest
    @EnumSource(QueuePairState.class)
    void shouldEnterErrorFromAnyStateOnce(final QueuePairState from)
    {
        force(from);
        assertEquals(from != ERROR, states.enterError(), "true only when it moved: one flush");
        assertSame(ERROR, states.state());
        assertFalse(states.enterError());
        assertSame(ERROR, states.state());
    }

    @Test
    void shouldFlushWithLocalProtectionErrorOnlyWhereTheMemoryIsGone()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final ProtectionDomain pd = new ProtectionDomain(new SplittableRandom(1));
            final MemoryRegion live = pd.register(arena.allocate(64), AccessFlags.LOCAL_WRITE);
            final MemoryRegion beingRevoked = pd.register(arena.allocate(64), AccessFlags.LOCAL_WRITE);
            final MemoryRegion gone = pd.register(arena.allocate(64), AccessFlags.LOCAL_WRITE);
            pd.deregister(gone);

            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, RcStateMachine.flushStatus(null, null));
            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, RcStateMachine.flushStatus(live, null));
            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, RcStateMachine.flushStatus(live, beingRevoked));
            assertEquals(WorkCompletionStatus.LOC_PROT_ERR, RcStateMachine.flushStatus(beingRevoked, beingRevoked));
            assertEquals(WorkCompletionStatus.LOC_PROT_ERR, RcStateMachine.flushStatus(gone, null));
        }
    }
}
