package io.spraynic.datapath.transport;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TokenBucketTest
{
    private static int taken(final TokenBucket bucket, final int tries, final long nowNanos)
    {
        int taken = 0;
        for (int i = 0; i < tries; i++)
        {
            taken += bucket.tryTake(nowNanos) ? 1 : 0;
        }
        return taken;
    }

    @Test
    void shouldGiveTheBurstAtOnceThenTheRate()
    {
        final TokenBucket bucket = new TokenBucket(1000, 64);
        final long start = 5_000_000_000L;
        assertEquals(64, taken(bucket, 100, start));
        assertFalse(bucket.tryTake(start + 999_999), "1 ms refills one token, not less");
        assertTrue(bucket.tryTake(start + 1_000_000));
        assertEquals(10, taken(bucket, 100, start + 11_000_000), "10 ms more: 10 tokens");
        assertEquals(64, taken(bucket, 1000, start + 3_600_000_000_000L), "an hour idle refills the burst, no more");
    }

    @Test
    void shouldRefillNothingWhenTheClockGoesBackAndKeepTheRateOverMillionsOfTries()
    {
        final TokenBucket bucket = new TokenBucket(1000, 1);
        assertTrue(bucket.tryTake(1_000_000_000L));
        assertFalse(bucket.tryTake(0), "back in time: nothing");
        assertFalse(bucket.tryTake(1_000_500_000L), "not back to where it was refilled plus a cost");
        int taken = 0;
        for (long t = 1_000_000_000L; t < 2_000_000_000L; t += 1_000) // a try every microsecond for 1 s
        {
            taken += bucket.tryTake(t) ? 1 : 0;
        }
        assertTrue(taken >= 999 && taken <= 1001, taken + " tokens in a second of 1000/s");
    }

    @Test
    void shouldRefuseARateOrBurstBelowOneAndSurviveHugeOnes()
    {
        assertThrows(IllegalArgumentException.class, () -> new TokenBucket(0, 1));
        assertThrows(IllegalArgumentException.class, () -> new TokenBucket(1, 0));
        final TokenBucket huge = new TokenBucket(1, Integer.MAX_VALUE); // 10^9 ns a token times 2^31: past a long
        assertEquals(1000, taken(huge, 1000, 0));
    }
}
