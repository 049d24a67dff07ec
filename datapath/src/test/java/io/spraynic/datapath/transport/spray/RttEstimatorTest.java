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
        rtt.onSample(0, 8_000);
        assertEquals(8_000, rtt.srttNanos(0));
        assertEquals(4_000, rtt.rttvarNanos(0));
        assertEquals(50_000, rtt.rtoNanos(0), "8 + 4 * 4 us clamps to the 50 us floor");
        rtt.onSample(0, 16_000);
        assertEquals(9_000, rtt.srttNanos(0));
        assertEquals(5_000, rtt.rttvarNanos(0));
        for (int i = 0; i < 3; i++)
        {
            rtt.onTimeout(0);
        }
        assertEquals(400_000, rtt.rtoNanos(0));
        assertEquals(3, rtt.consecutiveTimeouts(0));
        for (int i = 0; i < 20; i++)
        {
            rtt.onTimeout(0);
        }
        assertEquals(10_000_000, rtt.rtoNanos(0));
        rtt.onSample(0, 9_000);
        assertEquals(0, rtt.consecutiveTimeouts(0));
        rtt.onSample(0, -1);
        assertEquals(9_000, rtt.srttNanos(0), "no sample from retransmissions");
    }

    @Test
    void shouldTimeAPathWithoutSamplesByItsSlowestSiblingS68()
    {
        final RttEstimator rtt = new RttEstimator(50_000, 10_000_000, 10_000, 5_000);
        assertEquals(50_000, rtt.rtoNanos(0, 0, 0), "no sibling sampled: the initial RTT, clamped");
        assertEquals(60_000 + 4 * 30_000, rtt.rtoNanos(0, 60_000, 2_000), "sibling srtt as a first sample: 3 x 60 us");
        assertEquals(60_000, rtt.srttNanos(0, 60_000));
        rtt.onSample(0, 20_000);
        assertEquals(20_000 + 4 * 10_000, rtt.rtoNanos(0, 60_000, 2_000), "own samples win once there are some");
        assertEquals(20_000, rtt.srttNanos(0, 60_000));
    }

    /** Issue 14: the late margin measures the hosts, so an engine's new connection starts from the last one learnt. */
    @Test
    void shouldStartANewConnectionFromTheLateMarginItsEngineLearntS681()
    {
        final RttEstimator.Limits engine = new RttEstimator.Limits(5_000_000, 200_000_000, 5_000_000, 2_000_000_000);
        final RttEstimator first = new RttEstimator(2, engine, 1_000_000);
        final RttEstimator quiet = new RttEstimator(2, engine, 1_000_000);
        assertEquals(0, first.lateMarginNanos());
        first.onSample(0, 2_000);
        first.onSpuriousTimeout(0, 25_000_000);
        final long learnt = first.lateMarginNanos();
        assertTrue(learnt > 0);
        assertEquals(learnt, new RttEstimator(2, engine, 1_000_000).lateMarginNanos(), "a new connection inherits it");
        quiet.decayLateMargin();
        assertEquals(0, quiet.lateMarginNanos());
        assertEquals(learnt, new RttEstimator(2, engine, 1_000_000).lateMarginNanos(),
            "a connection that learnt nothing leaves the seed alone");

        final RttEstimator idle = new RttEstimator(2, engine, 1_000_000);
        final RttEstimator unlearnt = new RttEstimator(2,
            new RttEstimator.Limits(5_000_000, 200_000_000, 5_000_000, 2_000_000_000), 1_000_000);
        unlearnt.decayLateMargin();
        assertEquals(0, unlearnt.lateMarginNanos(), "another engine's connections start from 0");
        idle.decayLateMargin();
        assertEquals(learnt - learnt / 4, new RttEstimator(2, engine, 1_000_000).lateMarginNanos(),
            "clean rounds narrow the seed too");
    }

    /**
     * Issue 14: the seed of a quiet engine narrows by a quarter per quiet spell ({@code connectionTimeout}, here 1 s)
     * in which no connection learnt or narrowed its margin.
     */
    @Test
    void shouldAgeTheSeedOfAQuietEngineS681()
    {
        final long quiet = 1_000_000_000;
        final RttEstimator.Limits engine = new RttEstimator.Limits(5_000_000, 200_000_000, 5_000_000, 2_000_000_000);
        long now = 5_000_000_000L;
        engine.ageLateMarginSeed(now, quiet);
        final RttEstimator first = new RttEstimator(2, engine, 1_000_000);
        first.onSample(0, 2_000);
        first.onSpuriousTimeout(0, 25_000_000);
        final long learnt = first.lateMarginNanos();
        engine.ageLateMarginSeed(now += quiet - 1, quiet);
        assertEquals(learnt, new RttEstimator(2, engine, 1_000_000).lateMarginNanos(), "not yet quiet for long");
        engine.ageLateMarginSeed(now += 1, quiet);
        assertEquals(RttEstimator.narrowed(learnt), new RttEstimator(2, engine, 1_000_000).lateMarginNanos(),
            "a quiet spell narrows it by a quarter");
        assertEquals(learnt, first.lateMarginNanos(), "a connection's own margin narrows with its traffic, not here");

        first.decayLateMargin(); // a clean round of the connection: its margin is the seed again, and news
        assertEquals(RttEstimator.narrowed(learnt), first.lateMarginNanos());
        engine.ageLateMarginSeed(now += quiet / 2, quiet);
        engine.ageLateMarginSeed(now += quiet / 2 - 1, quiet);
        assertEquals(RttEstimator.narrowed(learnt), new RttEstimator(2, engine, 1_000_000).lateMarginNanos(),
            "the quiet spell counts from the connection's last change");
        engine.ageLateMarginSeed(now += 1, quiet);
        assertEquals(RttEstimator.narrowed(RttEstimator.narrowed(learnt)),
            new RttEstimator(2, engine, 1_000_000).lateMarginNanos(), "a whole spell since it");
        for (int i = 0; i < 60; i++)
        {
            engine.ageLateMarginSeed(now += quiet, quiet);
        }
        assertEquals(0, new RttEstimator(2, engine, 1_000_000).lateMarginNanos(), "a minute quiet: forgotten");
        first.onSpuriousTimeout(0, 25_000_000); // news again: the seed is the connection's widened margin
        assertEquals(first.lateMarginNanos(), new RttEstimator(2, engine, 1_000_000).lateMarginNanos());
    }

    /**
     * S6.8.1: the seed is kept per peer. A peer that withholds ACKs until timeouts fire and then reports each copy
     * as a duplicate (S6.8-1 c) widens its connection's margin to the cap; the engine's next connection to another
     * peer must not start from it, while its own next connection does.
     */
    @Test
    void shouldKeepAMarginALyingPeerTaughtToThatPeersConnectionsS681()
    {
        final RttEstimator.Limits engine = new RttEstimator.Limits(5_000_000, 200_000_000, 5_000_000, 2_000_000_000);
        final long liar = io.spraynic.pmd.InterfaceAddress.mappedLow(0x0A00_0066); // 10.0.0.102
        final long honest = io.spraynic.pmd.InterfaceAddress.mappedLow(0x0A00_0065); // 10.0.0.101
        final long honestV6High = 0xFD00_0000_0000_0001L;
        final RttEstimator lying = new RttEstimator(2, engine, 1_000_000, 0, liar);
        lying.onSample(0, 2_000);
        for (int timeout = 0; timeout < 16; timeout++)
        {
            lying.onSpuriousTimeout(0, 2_000_000_000L); // each a timeout the peer forced and then called spurious
        }
        assertEquals(2_000_000_000L, lying.lateMarginNanos(), "the liar's own connection: at the cap");
        assertEquals(0, new RttEstimator(2, engine, 1_000_000, 0, honest).lateMarginNanos(), "another peer's: untouched");
        assertEquals(0, new RttEstimator(2, engine, 1_000_000, honestV6High, liar).lateMarginNanos(),
            "an IPv6 peer whose low bits are the liar's: another peer");
        assertEquals(2_000_000_000L, new RttEstimator(2, engine, 1_000_000, 0, liar).lateMarginNanos(),
            "the liar's next connection starts where it left its own");
        assertEquals(2_000_000_000L, engine.lateMarginSeedNanos(0, liar));
        assertEquals(0, engine.lateMarginSeedNanos(0, honest));
    }

    @Test
    void shouldKeepAMarginAboveSrttWhenTheVariationCollapsesS68()
    {
        final RttEstimator rtt = new RttEstimator(50_000, 10_000_000, 10_000, 5_000);
        for (int i = 0; i < 100; i++)
        {
            rtt.onSample(0, 80_000);
        }
        assertTrue(rtt.rttvarNanos(0) < 1_000);
        assertEquals(85_000, rtt.rtoNanos(0), "srtt + the ackDelay + tick margin, not srtt + 4 x ~0");
    }

    @Test
    void shouldWidenTheLateMarginToCoverASpuriousTimeoutsPacketAndNarrowItOnCleanRoundsS681()
    {
        final RttEstimator rtt = new RttEstimator(50_000, 10_000_000, 100_000, 5_000, 100_000_000);
        for (int i = 0; i < 100; i++)
        {
            rtt.onSample(0, 1_000_000);
        }
        final long plain = rtt.rtoNanos(0);
        assertEquals(1_005_000, plain, "srtt + slack: nothing learnt yet");
        assertEquals(1_000_000, rtt.minRttNanos(0));
        rtt.onTimeout(0);
        rtt.onTimeout(0);

        rtt.onSpuriousTimeout(0, 41_005_000); // the packet given up on arrived 40 ms after the RTO would fire
        assertEquals(0, rtt.consecutiveTimeouts(0), "the backoff is undone");
        assertEquals(50_000_000, rtt.lateMarginNanos(), "the shortfall and a quarter more");
        assertEquals(plain + 50_000_000, rtt.rtoNanos(0), "above the 10 ms rtoMax: the ceiling rises with the margin");
        assertTrue(rtt.rtoNanos(0) > 41_005_000, "the same lateness no longer times out");
        assertEquals(plain, rtt.rtoNanos(0, 0, 0, false), "left out on request (a sibling shows the path dead)");

        rtt.onSpuriousTimeout(0, 2_000_000);
        assertEquals(100_000_000, rtt.lateMarginNanos(), "at least doubled, up to the cap");
        rtt.onTimeout(0);
        assertEquals(10_000_000 + 100_000_000, rtt.rtoNanos(0), "backs off up to rtoMax + the margin");

        rtt.decayLateMargin();
        assertEquals(75_000_000, rtt.lateMarginNanos(), "a clean round narrows it by a quarter");
        for (int i = 0; i < 100; i++)
        {
            rtt.decayLateMargin();
        }
        assertEquals(0, rtt.lateMarginNanos());
        rtt.onSample(0, 1_000_000);
        assertEquals(plain, rtt.rtoNanos(0));
    }

    @Test
    void shouldNeverTimeOutBelowTheSmoothedRttWhenItExceedsRtoMaxS681()
    {
        final RttEstimator rtt = new RttEstimator(5_000_000, 200_000_000, 1_000_000, 5_000_000);
        rtt.onSample(0, 680_000_000); // a descheduled host's path
        assertEquals(685_000_000, rtt.rtoNanos(0), "srtt + slack, not rtoMax's 200 ms: that would time out all");
        rtt.onTimeout(0);
        assertEquals(685_000_000, rtt.rtoNanos(0), "the backoff's ceiling too");
        final RttEstimator below = new RttEstimator(5_000_000, 200_000_000, 1_000_000, 5_000_000);
        below.onSample(0, 100_000_000);
        assertEquals(200_000_000, below.rtoNanos(0), "100 + 4 x 50 ms: rtoMax bounds the variation's share");
    }

    @Test
    void shouldLearnNoLateMarginWithoutACapS681()
    {
        final RttEstimator rtt = new RttEstimator(50_000, 10_000_000, 100_000, 5_000);
        rtt.onSample(0, 1_000_000);
        rtt.onTimeout(0);
        rtt.onSpuriousTimeout(0, 40_000_000);
        assertEquals(0, rtt.lateMarginNanos());
        assertEquals(0, rtt.consecutiveTimeouts(0), "the backoff is undone all the same");
    }
    @Test
    void shouldKeepEachPathsEstimateApartButOneLateMarginForAllS681()
    {
        final RttEstimator rtt = new RttEstimator(3, new RttEstimator.Limits(50_000, 10_000_000, 5_000, 100_000_000),
            100_000);
        rtt.onSample(1, 20_000);
        rtt.onTimeout(2);
        assertTrue(rtt.hasSample(1));
        assertTrue(!rtt.hasSample(0) && !rtt.hasSample(2), "a sample is its path's only");
        assertEquals(100_000, rtt.srttNanos(0));
        assertEquals(20_000, rtt.srttNanos(1));
        assertEquals(20_000, rtt.minRttNanos(1));
        assertEquals(Long.MAX_VALUE, rtt.minRttNanos(0));
        assertEquals(1, rtt.consecutiveTimeouts(2));
        assertEquals(0, rtt.consecutiveTimeouts(1));

        rtt.onSpuriousTimeout(2, 40_000_000);
        assertEquals(0, rtt.consecutiveTimeouts(2));
        final long margin = rtt.lateMarginNanos();
        assertTrue(margin > 0);
        assertEquals(rtt.rtoNanos(0, 0, 0, false) + margin, rtt.rtoNanos(0), "learnt on path 2, applied on path 0");

        rtt.reset(1, 100_000);
        assertTrue(!rtt.hasSample(1), "reset forgets the path's samples");
        assertEquals(Long.MAX_VALUE, rtt.minRttNanos(1));
        assertEquals(margin, rtt.lateMarginNanos(), "but not the hosts' late margin");
    }
}
