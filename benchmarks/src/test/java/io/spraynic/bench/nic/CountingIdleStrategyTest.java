package io.spraynic.bench.nic;

import org.agrona.concurrent.IdleStrategy;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class CountingIdleStrategyTest
{
    @Test
    void shouldCountEveryLoopAndTheEmptyOnesAndIdleAsItsDelegate()
    {
        final int[] idled = new int[3]; // idle(work) with work, idle(work) without, idle()
        final CountingIdleStrategy counting = new CountingIdleStrategy(new IdleStrategy()
        {
            public void idle(final int workCount)
            {
                idled[workCount > 0 ? 0 : 1]++;
            }

            public void idle()
            {
                idled[2]++;
            }

            public void reset()
            {
            }
        });
        counting.idle(3);
        counting.idle(0);
        counting.idle(1);
        counting.idle(0);
        counting.idle();
        assertEquals(5, counting.loops());
        assertEquals(3, counting.emptyLoops());
        assertEquals(2, idled[0]);
        assertEquals(2, idled[1]);
        assertEquals(1, idled[2]);
    }
}
