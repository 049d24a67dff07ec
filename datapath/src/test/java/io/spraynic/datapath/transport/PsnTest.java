package io.spraynic.datapath.transport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PsnTest
{
    @ParameterizedTest
    @CsvSource({
        "16777215,1,0", "16777215,2,1", "0,-1,16777215", "5,-10,16777211", "8388607,1,8388608", "100,0,100"})
    void shouldAddModulo2To24(final int psn, final int delta, final int expected)
    {
        assertEquals(expected, Psn.add(psn, delta));
    }

    @ParameterizedTest
    @CsvSource({
        "0,16777215,1", "16777215,0,-1", "5,16777210,11", "16777210,5,-11", "8388607,0,8388607",
        "8388608,0,-8388608", "0,8388608,-8388608", "1,0,1", "7,7,0"})
    void shouldMeasureSignedDistanceAcrossTheWrap(final int a, final int b, final int expected)
    {
        assertEquals(expected, Psn.diff(a, b));
    }

    @Test
    void shouldOrderAcrossTheWrap()
    {
        assertTrue(Psn.isBefore(0xFFFFFF, 0));
        assertTrue(Psn.isAfter(0, 0xFFFFFF));
        assertTrue(Psn.isBefore(0xFFFFF0, 0x10));
        assertFalse(Psn.isBefore(0x10, 0xFFFFF0));
        assertEquals(0x000000, Psn.next(0xFFFFFF));
        assertTrue(Psn.inRange(0x000002, 0xFFFFFE, 5));
        assertFalse(Psn.inRange(0x000003, 0xFFFFFE, 5));
        assertFalse(Psn.inRange(0xFFFFFD, 0xFFFFFE, 5));
    }

    @Test
    void shouldAgreeWithLongArithmeticForRandomPairs()
    {
        final SplittableRandom random = new SplittableRandom(24);
        for (int i = 0; i < 100_000; i++)
        {
            final long base = random.nextLong(1L << 40);
            final int delta = random.nextInt(-(1 << 23), 1 << 23);
            final int a = (int)((base + delta) & Psn.MASK);
            final int b = (int)(base & Psn.MASK);
            assertEquals(delta, Psn.diff(a, b));
            assertEquals(a, Psn.add(b, delta));
        }
    }
}
