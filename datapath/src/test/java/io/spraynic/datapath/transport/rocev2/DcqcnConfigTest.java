package io.spraynic.datapath.transport.rocev2;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DCQCN's parameters as an operator gives them: derived from the line rate, set one by name, refused when hostile.
 */
class DcqcnConfigTest
{
    @Test
    void shouldKeepThePaperParametersAtOneHundredGigabitsAndAbove()
    {
        assertEquals(DcqcnConfig.paperDefaults(), DcqcnConfig.forLineRate(DcqcnConfig.DEFAULT_LINE_RATE));
        assertEquals(DcqcnConfig.paperDefaults(400_000_000_000L), DcqcnConfig.forLineRate(400_000_000_000L));
    }

    @Test
    void shouldScaleRatesByteCounterAndBurstWithASlowerLine()
    {
        final DcqcnConfig tenMegabit = DcqcnConfig.forLineRate(10_000_000L);
        final DcqcnConfig paper = DcqcnConfig.paperDefaults();
        assertEquals(10_000_000L, tenMegabit.lineRateBitsPerSecond());
        // the same share of the line per increase event as the paper's 40 and 200 Mb/s at 100 Gb/s
        assertEquals(4_000L, tenMegabit.additiveIncreaseBitsPerSecond());
        assertEquals(20_000L, tenMegabit.hyperIncreaseBitsPerSecond());
        // the floor is not scaled: at 100 b/s one frame would take 90 s, past any ACK timeout
        assertEquals(1_000_000L, tenMegabit.minRateBitsPerSecond());
        assertEquals(200_000L, DcqcnConfig.forLineRate(2_000_000L).minRateBitsPerSecond(), "a tenth of a slower line");
        // the byte counter fires after the same time at line rate: 10 MiB at 100 Gb/s, 1 KiB at 10 Mb/s
        assertEquals(1049L, tenMegabit.byteCounterBytes());
        assertEquals(DcqcnConfig.MIN_DERIVED_PACING_BURST, tenMegabit.pacingBurstBytes());
        // the timers belong to the fabric's round trip, which the line rate does not tell
        assertEquals(paper.rateIncreasePeriodNanos(), tenMegabit.rateIncreasePeriodNanos());
        assertEquals(paper.alphaUpdatePeriodNanos(), tenMegabit.alphaUpdatePeriodNanos());
        assertEquals(paper.cnpIntervalNanos(), tenMegabit.cnpIntervalNanos());
        assertEquals(paper.g(), tenMegabit.g());
        assertTrue(tenMegabit.enabled());
        final DcqcnConfig tenGigabit = DcqcnConfig.forLineRate(10_000_000_000L);
        assertEquals(4_000_000L, tenGigabit.additiveIncreaseBitsPerSecond());
        assertEquals(6_554, tenGigabit.pacingBurstBytes(), "5.2 us of the line, as 64 KiB at 100 Gb/s");
    }

    @Test
    void shouldSetEachParameterByNameWithUnits()
    {
        DcqcnConfig config = DcqcnConfig.forLineRate(10_000_000L);
        config = config.with("rate_ai", "8kbit").with("rate_hai", "0.05mbit").with("min_rate", "2000")
            .with("time_reset", "300us").with("alpha_period", "1ms").with("cnp_interval", "4us")
            .with("byte_reset", "32767").with("threshold", "1").with("g", "0.0048828125")
            .with("initial_alpha", "1").with("pacing_burst", "8192").with("line_rate", "25mbit");
        assertEquals(8_000L, config.additiveIncreaseBitsPerSecond());
        assertEquals(50_000L, config.hyperIncreaseBitsPerSecond());
        assertEquals(2_000L, config.minRateBitsPerSecond());
        assertEquals(300_000L, config.rateIncreasePeriodNanos());
        assertEquals(1_000_000L, config.alphaUpdatePeriodNanos());
        assertEquals(4_000L, config.cnpIntervalNanos());
        assertEquals(32_767L, config.byteCounterBytes());
        assertEquals(1, config.fastRecoveryThreshold());
        assertEquals(5.0 / 1024, config.g());
        assertEquals(1.0, config.initialAlpha());
        assertEquals(8192, config.pacingBurstBytes());
        assertEquals(25_000_000L, config.lineRateBitsPerSecond());
        assertFalse(config.with("enabled", "false").enabled());
    }

    @ParameterizedTest
    @CsvSource(delimiter = ';', value = {
        "rate_ai;0", "rate_ai;-5kbit", "rate_ai;200tbit", "rate_ai;1e9", "rate_ai;99999999999999999999",
        "min_rate;20mbit",
        "line_rate;0", "time_reset;55", "time_reset;0us", "time_reset;11s", "alpha_period;-1us",
        "cnp_interval;1h", "byte_reset;0", "byte_reset;2000000000", "byte_reset;1.5", "threshold;0",
        "threshold;1001", "g;0", "g;1", "g;2", "g;NaN", "initial_alpha;0", "initial_alpha;1.5",
        "pacing_burst;0", "pacing_burst;99999999", "enabled;yes", "rate_max;1mbit", "RATE_AI;1kbit"})
    void shouldRefuseHostileValuesNamingTheParameter(final String name, final String value)
    {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> DcqcnConfig.forLineRate(10_000_000L).with(name, value));
        assertTrue(e.getMessage().startsWith("DCQCN parameter " + name + "=" + value + ": "), e.getMessage());
    }

    @Test
    void shouldKeepALimitedQpAtOrBelowItsLineBetweenCnpsOnASlowLine()
    {
        // The law with the derived parameters: a QP cut by one CNP recovers towards its line rate and no further
        // (the paper's 40 Mb/s steps on a 10 Mb/s line were four lines a step, clamped only at the 100 Gb/s default)
        final DcqcnRateLimiter limiter = new DcqcnRateLimiter(DcqcnConfig.forLineRate(10_000_000L));
        limiter.onCnp(0);
        assertEquals(5_000_000L, limiter.currentRate(), 1);
        for (long t = 0; t <= 10_000_000L; t += 1_000L)
        {
            limiter.onTick(t);
            assertTrue(limiter.currentRate() <= 10_000_000L, "at most the line: " + limiter);
        }
        // 10 ms later: fast recovery plus 176 additive steps of 4 kb/s, back at the line
        assertFalse(limiter.isLimited(), limiter.toString());
    }
}
