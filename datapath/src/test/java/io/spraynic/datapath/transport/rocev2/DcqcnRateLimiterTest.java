package io.spraynic.datapath.transport.rocev2;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The DCQCN reaction point's law in virtual time.
 */
class DcqcnRateLimiterTest
{
    private static final long LINE = 100_000_000_000L;
    private static final double G = 1.0 / 256;
    private static final long US = 1_000;

    private final DcqcnConfig config = DcqcnConfig.paperDefaults(LINE);
    private final DcqcnRateLimiter limiter = new DcqcnRateLimiter(config);

    @Test
    void shouldStartUnthrottledAtLineRate()
    {
        assertFalse(limiter.isLimited());
        assertEquals(LINE, limiter.currentRate());
        assertTrue(limiter.canSend(0));
    }

    @Test
    void shouldPaceAnUnthrottledQpAtLineRate()
    {
        final long start = 1_000 * US;
        limiter.onSent(1250, start); // 10,000 bits at 100 Gb/s: 100 ns, but the bucket credits idle time
        assertTrue(limiter.canSend(start), "an idle QP may burst up to the bucket");
        long now = start;
        int sent = 1;
        while (limiter.canSend(now))
        {
            limiter.onSent(1250, now);
            sent++;
        }
        final int bucketPackets = config.pacingBurstBytes() / 1250;
        assertTrue(sent >= bucketPackets && sent <= bucketPackets + 2, "burst of about the bucket: " + sent);
        // from then on, exactly line rate however coarse the caller's ticks (here 1 us)
        final int before = sent;
        for (int tick = 1; tick <= 1000; tick++)
        {
            now = start + tick * US;
            while (limiter.canSend(now))
            {
                limiter.onSent(1250, now);
                sent++;
            }
        }
        assertEquals(1000 * US / 100, sent - before, 2, "100 ns per packet at line rate");
        assertFalse(limiter.isLimited());
    }

    @Test
    void shouldNotPaceWhenDisabled()
    {
        final DcqcnRateLimiter off = new DcqcnRateLimiter(config.disabled());
        off.onSent(1_000_000, 0);
        assertTrue(off.canSend(0), "DCQCN off: the engine's tick budget is the only limit");
    }

    @Test
    void shouldHalveTheRateOnTheFirstCnpAndRaiseAlpha()
    {
        limiter.onCnp(0);
        assertTrue(limiter.isLimited());
        assertEquals(LINE / 2.0, limiter.currentRate(), 1e-3, "alpha starts at 1: R_C (1 - 1/2)");
        assertEquals(LINE, limiter.targetRate(), 1e-3);
        assertEquals((1 - G) + G, limiter.alpha(), 1e-12);
    }

    @Test
    void shouldCutByAlphaOverTwoOnEveryCnp()
    {
        limiter.onCnp(0);
        final double rate = limiter.currentRate();
        final double alpha = limiter.alpha();
        limiter.onCnp(10 * US);
        assertEquals(rate * (1 - alpha / 2), limiter.currentRate(), 1e-3);
        assertEquals(rate, limiter.targetRate(), 1e-3);
        assertEquals((1 - G) * alpha + G, limiter.alpha(), 1e-12);
    }

    @Test
    void shouldDecayAlphaEveryQuietPeriod()
    {
        limiter.onCnp(0);
        final double alpha = limiter.alpha();
        limiter.onTick(54 * US);
        assertEquals(alpha, limiter.alpha(), 1e-15);
        limiter.onTick(55 * US);
        assertEquals(alpha * (1 - G), limiter.alpha(), 1e-15);
        limiter.onTick(3 * 55 * US);
        assertEquals(alpha * Math.pow(1 - G, 3), limiter.alpha(), 1e-15);
    }

    @Test
    void shouldRecoverFastThenAdditivelyThenHyper()
    {
        limiter.onCnp(0);
        final double target = limiter.targetRate();
        double current = limiter.currentRate();
        // five timer events of fast recovery: R_C halves its distance to R_T, R_T stays
        for (int i = 1; i < config.fastRecoveryThreshold(); i++)
        {
            limiter.onTick(i * 55 * US);
            current = (target + current) / 2;
            assertEquals(current, limiter.currentRate(), 1e-3, "fast recovery step " + i);
            assertEquals(target, limiter.targetRate(), 1e-3);
        }
        // then additive increase: R_T grows by R_AI (capped at line rate, which it already is here)
        final DcqcnRateLimiter slow = new DcqcnRateLimiter(DcqcnConfig.paperDefaults(LINE));
        slow.onCnp(0);
        slow.onCnp(1);
        final double t0 = slow.targetRate();
        for (int i = 1; i <= 5; i++)
        {
            slow.onTick(1 + i * 55 * US);
        }
        assertEquals(t0 + config.additiveIncreaseBitsPerSecond(), slow.targetRate(), 1e-3, "fifth event: additive");
        // bytes push the byte counter past F as well: hyper increase adds (min - F) R_HAI
        final double t1 = slow.targetRate();
        for (int i = 0; i < 7; i++)
        {
            slow.onSent((int)Math.min(Integer.MAX_VALUE, config.byteCounterBytes()), 1 + 5 * 55 * US);
        }
        assertTrue(slow.targetRate() > t1 + config.hyperIncreaseBitsPerSecond() - 1, "hyper increase");
    }

    @Test
    void shouldPaceAtTheCurrentRate()
    {
        limiter.onCnp(0); // 50 Gb/s
        assertTrue(limiter.canSend(0));
        limiter.onSent(1250, 0); // 10,000 bits at 50 Gb/s: 200 ns (no earlier credit: the clock starts at 0)
        assertFalse(limiter.canSend(199));
        assertTrue(limiter.canSend(200));
        assertEquals(200, limiter.nextSendNanos());
    }

    @Test
    void shouldNotFallBelowTheMinimumRate()
    {
        for (int i = 0; i < 200; i++)
        {
            limiter.onCnp(i);
        }
        assertEquals(config.minRateBitsPerSecond(), limiter.currentRate(), 1e-6);
    }

    @Test
    void shouldReleaseTheLimiterOnceBackAtLineRate()
    {
        limiter.onCnp(0);
        limiter.onTick(100 * 55 * US);
        assertFalse(limiter.isLimited());
        assertEquals(LINE, limiter.currentRate());
    }

    @Test
    void shouldIgnoreCnpsWhenDisabled()
    {
        final DcqcnRateLimiter off = new DcqcnRateLimiter(config.disabled());
        off.onCnp(0);
        assertFalse(off.isLimited());
        assertEquals(LINE, off.currentRate());
    }
}
