package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    @Test
    void shouldTimeAPathWithoutSamplesByItsSlowestSiblingS68()
    {
        final RttEstimator rtt = new RttEstimator(50_000, 10_000_000, 10_000, 5_000);
        assertEquals(50_000, rtt.rtoNanos(0, 0), "no sibling sampled: the initial RTT, clamped");
        assertEquals(60_000 + 4 * 30_000, rtt.rtoNanos(60_000, 2_000), "sibling srtt as a first sample: 3 x 60 us");
        assertEquals(60_000, rtt.srttNanos(60_000));
        rtt.onSample(20_000);
        assertEquals(20_000 + 4 * 10_000, rtt.rtoNanos(60_000, 2_000), "own samples win once there are some");
        assertEquals(20_000, rtt.srttNanos(60_000));
    }

    @Test
    void shouldKeepAMarginAboveSrttWhenTheVariationCollapsesS68()
    {
        final RttEstimator rtt = new RttEstimator(50_000, 10_000_000, 10_000, 5_000);
        for (int i = 0; i < 100; i++)
        {
            rtt.onSample(80_000);
        }
        assertTrue(rtt.rttvarNanos() < 1_000);
        assertEquals(85_000, rtt.rtoNanos(), "srtt + the ackDelay + tick margin, not srtt + 4 x ~0");
    }

    @Test
    void shouldWidenTheLateMarginToCoverASpuriousTimeoutsPacketAndNarrowItOnCleanRoundsS681()
    {
        final RttEstimator rtt = new RttEstimator(50_000, 10_000_000, 100_000, 5_000, 100_000_000);
        for (int i = 0; i < 100; i++)
        {
            rtt.onSample(1_000_000);
        }
        final long plain = rtt.rtoNanos();
        assertEquals(1_005_000, plain, "srtt + slack: nothing learnt yet");
        assertEquals(1_000_000, rtt.minRttNanos());
        rtt.onTimeout();
        rtt.onTimeout();

        rtt.onSpuriousTimeout(41_005_000); // the packet given up on arrived 40 ms after the RTO would fire
        assertEquals(0, rtt.consecutiveTimeouts(), "the backoff is undone");
        assertEquals(50_000_000, rtt.lateMarginNanos(), "the shortfall and a quarter more");
        assertEquals(plain + 50_000_000, rtt.rtoNanos(), "above the 10 ms rtoMax: the ceiling rises with the margin");
        assertTrue(rtt.rtoNanos() > 41_005_000, "the same lateness no longer times out");
        assertEquals(plain, rtt.rtoNanos(0, 0, false), "left out on request (a sibling shows the path dead)");

        rtt.onSpuriousTimeout(2_000_000);
        assertEquals(100_000_000, rtt.lateMarginNanos(), "at least doubled, up to the cap");
        rtt.onTimeout();
        assertEquals(10_000_000 + 100_000_000, rtt.rtoNanos(), "backs off up to rtoMax + the margin");

        rtt.decayLateMargin();
        assertEquals(75_000_000, rtt.lateMarginNanos(), "a clean round narrows it by a quarter");
        for (int i = 0; i < 100; i++)
        {
            rtt.decayLateMargin();
        }
        assertEquals(0, rtt.lateMarginNanos());
        rtt.onSample(1_000_000);
        assertEquals(plain, rtt.rtoNanos());
    }

    @Test
    void shouldNeverTimeOutBelowTheSmoothedRttWhenItExceedsRtoMaxS681()
    {
        final RttEstimator rtt = new RttEstimator(5_000_000, 200_000_000, 1_000_000, 5_000_000);
        rtt.onSample(680_000_000); // a descheduled host's path
        assertEquals(685_000_000, rtt.rtoNanos(), "srtt + slack, not rtoMax's 200 ms: that would time out all");
        rtt.onTimeout();
        assertEquals(685_000_000, rtt.rtoNanos(), "the backoff's ceiling too");
        final RttEstimator below = new RttEstimator(5_000_000, 200_000_000, 1_000_000, 5_000_000);
        below.onSample(100_000_000);
        assertEquals(200_000_000, below.rtoNanos(), "100 + 4 x 50 ms: rtoMax bounds the variation's share");
    }

    @Test
    void shouldLearnNoLateMarginWithoutACapS681()
    {
        final RttEstimator rtt = new RttEstimator(50_000, 10_000_000, 100_000, 5_000);
        rtt.onSample(1_000_000);
        rtt.onTimeout();
        rtt.onSpuriousTimeout(40_000_000);
        assertEquals(0, rtt.lateMarginNanos());
        assertEquals(0, rtt.consecutiveTimeouts(), "the backoff is undone all the same");
    }
}
