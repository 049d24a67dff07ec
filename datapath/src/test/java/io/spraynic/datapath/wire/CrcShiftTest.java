package io.spraynic.datapath.wire;

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

class CrcShiftTest
{
    /** Z_n by the definition: n zero bytes through the bitwise shift register. */
    private static int zeroBytes(final int register, final int n)
    {
        int value = register;
        for (int i = 0; i < 8 * n; i++)
        {
            value = (value & 1) != 0 ? (value >>> 1) ^ 0xEDB8_8320 : value >>> 1;
        }
        return value;
    }

    @Test
    void shouldAdvanceAsZeroBytesThroughTheRegisterDoByPowersAndByTables()
    {
        final Random random = new Random(5);
        final CrcShift shift = new CrcShift(0);
        for (int i = 0; i < 400; i++)
        {
            final int n = i < 100 ? i : random.nextInt(65_536);
            final int register = random.nextInt();
            final int expected = zeroBytes(register, n);
            assertEquals(expected, CrcShift.advance(register, n), "n " + n);
            assertEquals(expected, CrcShift.apply(shift.table(n), register), "n " + n);
        }
    }

    @Test
    void shouldBuildAtMostOneTablePerCallsPerBuildAndKeepWhatItBuilt()
    {
        final CrcShift shift = new CrcShift(CrcShift.CALLS_PER_BUILD);
        final int[] first = shift.table(64);
        assertNotNull(first, "the first call may build");
        assertNull(shift.table(65), "a second length right after must wait");
        assertSame(first, shift.table(64), "a cached length is always answered");
        for (int i = 0; i < CrcShift.CALLS_PER_BUILD - 3; i++)
        {
            assertNull(shift.table(1_000 + i % 7), "call " + i);
        }
        assertNotNull(shift.table(1_000), "due after " + CrcShift.CALLS_PER_BUILD + " calls");
        assertNull(shift.table(-1));
        assertNull(shift.table(65_536));
    }
}
