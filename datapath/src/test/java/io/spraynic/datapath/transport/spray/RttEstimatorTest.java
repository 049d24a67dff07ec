package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * docs/PROTOCOL.md S6.8.
 */
class RttEstimatorTest
{
    @Test
    void shouldFollowRfc6298AndClamp()
    {
        final RttEstimator rtt = new RttEstimator(50_000, 10_000_000, 100_000);
        rtt.onSample(8_000);
        assertEquals(8_000, rtt.srttNanos());
        assertEquals(4_000, rtt.rttvarNanos());
        assertEquals(50_000, rtt.rtoNanos(), "8 + 4 * 4 us clamps to the 50 us floor");
        rtt.onSample(16_000);
        assertEquals(9_000, rtt.srttNanos());
        assertEquals(5_000, rtt.rttvarNanos());
        for (int i = 0; i < 3; i++)
        {
            rtt.onTimeout();
        }
        assertEquals(400_000, rtt.rtoNanos());
        assertEquals(3, rtt.consecutiveTimeouts());
        for (int i = 0; i < 20; i++)
        {
            rtt.onTimeout();
        }
        assertEquals(10_000_000, rtt.rtoNanos());
        rtt.onSample(9_000);
        assertEquals(0, rtt.consecutiveTimeouts());
        rtt.onSample(-1);
        assertEquals(9_000, rtt.srttNanos(), "no sample from retransmissions");
    }
}
