package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

final class MedianTest
{
    @Test
    void shouldTakeTheMiddleValueOrTheMeanOfTheTwoMiddleOnes()
    {
        assertEquals(3.0, Median.ofFirst(new double[]{5, 3, 1}, 3));
        assertEquals(2.5, Median.ofFirst(new double[]{4, 1, 3, 2}, 4));
        assertEquals(7.0, Median.ofFirst(new double[]{7}, 1));
        assertEquals(0.0, Median.ofFirst(new double[]{0, 0, 0, 0.9}, 4), "most paths lose nothing");
    }

    @Test
    void shouldSortOnlyTheFirstCountAndLeaveTheRest()
    {
        final double[] values = {9, 8, 7, 1, 0};
        assertEquals(8.0, Median.ofFirst(values, 3));
        assertArrayEquals(new double[]{7, 8, 9, 1, 0}, values);
    }

    @Test
    void shouldAgreeWithAFullSortOnRandomValues()
    {
        final SplittableRandom random = new SplittableRandom(13);
        for (int round = 0; round < 1000; round++)
        {
            final int count = 1 + random.nextInt(PathScheduler.MAX_PATHS);
            final double[] values = new double[count];
            for (int i = 0; i < count; i++)
            {
                values[i] = random.nextInt(4) == 0 ? 0.0 : random.nextDouble(); // ties, as idle paths make
            }
            final double[] sorted = values.clone();
            Arrays.sort(sorted);
            final double expected = (count & 1) == 1 ? sorted[count / 2] : (sorted[count / 2 - 1] + sorted[count / 2]) / 2;
            assertEquals(expected, Median.ofFirst(values, count), "round " + round);
            assertArrayEquals(sorted, values);
        }
    }
}
