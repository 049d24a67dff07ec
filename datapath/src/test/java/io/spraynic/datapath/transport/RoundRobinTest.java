package io.spraynic.datapath.transport;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RoundRobinTest
{
    /**
     * Past 2^31 ticks the counter is negative: before, {@code counter % n} gave a negative start and the engines'
     * tick walks (spray connections, RC queue pairs) threw ArrayIndexOutOfBoundsException on most ticks.
     */
    @Test
    void shouldStartInsideTheArrayForEveryCounterAndStillRotate()
    {
        for (final int counter : new int[]{Integer.MAX_VALUE, Integer.MIN_VALUE, -1, -7, 0, 5})
        {
            for (final int n : new int[]{1, 2, 3, 7, 1000})
            {
                final int start = RoundRobin.start(counter, n);
                assertTrue(start >= 0 && start < n, counter + " % " + n + " -> " + start);
            }
        }
        assertEquals(0, RoundRobin.start(Integer.MIN_VALUE, 3));
        assertEquals(1, RoundRobin.start(Integer.MIN_VALUE + 1, 3), "it goes on rotating across the wrap");
        assertEquals(2, RoundRobin.start(Integer.MIN_VALUE + 2, 3));
    }
}
