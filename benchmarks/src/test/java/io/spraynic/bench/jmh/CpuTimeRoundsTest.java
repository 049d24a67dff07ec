package io.spraynic.bench.jmh;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class CpuTimeRoundsTest
{
    @Test
    void shouldKeepRoundsAfterTheWarmUpPerItemPerLoopAndGiveTheirBestAndMedian()
    {
        final long[] clock = {0};
        final int[] calls = new int[2];
        // loop 0's runs cost these ns in turn (three warm-up rounds first), loop 1's 50 ns each; a run handles 10 items
        final long[] loop0Costs = {1_000, 1_000, 1_000, 500, 300, 900, 700, 100};
        final CpuTimeRounds timed = new CpuTimeRounds(5, 10, () -> clock[0])
            .add(() ->
            {
                clock[0] += loop0Costs[calls[0]++];
                return 1;
            })
            .add(() ->
            {
                calls[1]++;
                clock[0] += 50;
                return 2;
            })
            .run();
        assertEquals(5 + CpuTimeRounds.WARM_UP_ROUNDS, calls[0]);
        assertEquals(5 + CpuTimeRounds.WARM_UP_ROUNDS, calls[1]);
        assertEquals(10.0, timed.best(0), "100 ns over 10 items; the 1,000 ns warm-up rounds not kept");
        assertEquals(50.0, timed.median(0), "of 50, 30, 90, 70, 10 per item");
        assertEquals(5.0, timed.best(1));
        assertEquals(5.0, timed.median(1));
        assertEquals(8 * 3, timed.sink(), "what every run returned, warm-up included");
    }

    @Test
    void shouldRefuseNoRoundsOrNoItems()
    {
        assertThrows(IllegalArgumentException.class, () -> new CpuTimeRounds(0, 10));
        assertThrows(IllegalArgumentException.class, () -> new CpuTimeRounds(3, 0));
    }
}
