package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * docs/PROTOCOL.md S6.6, S7.4, S7.4.1: retransmissions keep their path and PSN, moves remember where they were
 * lost; both in order, across the ring's end, never mixed.
 */
@Timeout(10)
class RetransmitQueuesTest
{
    @Test
    void shouldKeepRetransmissionsInOrderWithTheirPathAndPsnAcrossTheRingsEnd()
    {
        final RetransmitQueues queues = new RetransmitQueues(3);
        for (int round = 0; round < 4; round++)
        {
            queues.queueRetransmission(1, 100 + round, 1000L + round);
            queues.queueRetransmission(2, 200 + round, 2000L + round);
            assertEquals(2, queues.retransmissions());
            assertEquals(1, queues.retransmissionPath());
            assertEquals(100 + round, queues.retransmissionPsn());
            assertEquals(1000L + round, queues.retransmissionHandle());
            queues.dropRetransmission();
            assertEquals(2, queues.retransmissionPath());
            assertEquals(200 + round, queues.retransmissionPsn());
            assertEquals(2000L + round, queues.retransmissionHandle());
            queues.dropRetransmission();
            assertEquals(0, queues.retransmissions());
        }
        assertEquals(0, queues.moves(), "retransmissions are no moves");
    }

    @Test
    void shouldKeepMovesInOrderWithThePathTheyWereLostOn()
    {
        final RetransmitQueues queues = new RetransmitQueues(2);
        queues.queueMove(7L, RetransmitQueues.NOT_LOST);
        queues.queueMove(8L, 3);
        assertEquals(2, queues.moves());
        assertEquals(7L, queues.moveHandle());
        assertEquals(RetransmitQueues.NOT_LOST, queues.moveLostOn());
        queues.dropMove();
        queues.queueMove(9L, 1); // wraps
        assertEquals(8L, queues.moveHandle());
        assertEquals(3, queues.moveLostOn());
        queues.dropMove();
        assertEquals(9L, queues.moveHandle());
        assertEquals(1, queues.moveLostOn());
        assertEquals(0, queues.retransmissions());
    }

    @Test
    void shouldForgetEverythingOnClear()
    {
        final RetransmitQueues queues = new RetransmitQueues(4);
        queues.queueMove(1L, 0);
        queues.queueRetransmission(0, 1, 1L);
        queues.clear();
        assertEquals(0, queues.moves());
        assertEquals(0, queues.retransmissions());
        queues.queueRetransmission(3, 4, 5L);
        assertEquals(3, queues.retransmissionPath());
        assertEquals(4 * (4 + 4 + 8 + 8), queues.stateBytes());
    }
}
