package io.spraynic.datapath.transport.rocev2;

/**
 * The DCQCN reaction point of one QP: its sending rate, cut on each CNP and raised again by timer and byte
 * counter, and the pacing that holds packets to that rate. Pure: time is whatever the caller says, so the
 * law is tested in virtual time and runs the same in real time.
 * <pre>
 *   on CNP:        R_T = R_C;  R_C = R_C (1 - alpha / 2);  alpha = (1 - g) alpha + g;  counters reset
 *   every K quiet: alpha = (1 - g) alpha
 *   each increase event (timer T expired, or B bytes sent), with i = the larger counter, j = the smaller:
 *     i &lt; F:    fast recovery     R_C = (R_T + R_C) / 2
 *     j &gt; F:    hyper increase    R_T += (j - F) R_HAI;  R_C = (R_T + R_C) / 2
 *     else:     additive increase R_T += R_AI;            R_C = (R_T + R_C) / 2
 * </pre>
 * A QP starts unthrottled at line rate; once the rate climbs back to line rate it is released again.
 * <p>
 * Pacing is a per-QP rate limiter, as NICs have: a next-send time that each packet moves on by its wire time at
 * R_C (line rate while unthrottled), with a token bucket of {@link DcqcnConfig#pacingBurstBytes} so that a QP
 * driven by a periodic tick catches up with what the tick granularity held back, but never bursts more than the
 * bucket after being idle. Without pacing at line rate a QP hands its whole per-tick budget to the NIC queue at
 * once, its own bursts cross the ECN threshold, and DCQCN throttles a flow that congests nothing.
 */
public final class DcqcnRateLimiter
{
    private static final double NANOS_PER_SECOND = 1e9;

    private final DcqcnConfig config;
    private final double lineRate;
    private final double minRate;
    private boolean limited;
    private double currentRate;
    private double targetRate;
    private double alpha;
    private long lastAlphaUpdateNanos;
    private long lastRateIncreaseNanos;
    private int timerEvents;
    private int byteEvents;
    private long bytesSinceEvent;
    private long nextSendNanos;
    private double nanosPerByte;
    private double burstNanos;
    private long cnpCount;

    /**
     * @param config the parameters.
     */
    public DcqcnRateLimiter(final DcqcnConfig config)
    {
        this.config = config;
        this.lineRate = config.lineRateBitsPerSecond();
        this.minRate = config.minRateBitsPerSecond();
        reset();
    }

    /**
     * Back to line rate, unthrottled (QP reset).
     */
    public void reset()
    {
        limited = false;
        currentRate = lineRate;
        targetRate = lineRate;
        alpha = config.initialAlpha();
        timerEvents = 0;
        byteEvents = 0;
        bytesSinceEvent = 0;
        nextSendNanos = 0;
        cnpCount = 0;
        rateChanged();
    }

    private void rateChanged()
    {
        nanosPerByte = 8 * NANOS_PER_SECOND / currentRate;
        burstNanos = config.pacingBurstBytes() * nanosPerByte;
    }

    /**
     * A CNP arrived for this QP.
     *
     * @param nowNanos the time.
     */
    public void onCnp(final long nowNanos)
    {
        if (!config.enabled())
        {
            return;
        }
        cnpCount++;
        limited = true;
        targetRate = currentRate;
        currentRate = Math.max(minRate, currentRate * (1 - alpha / 2));
        rateChanged();
        alpha = (1 - config.g()) * alpha + config.g();
        timerEvents = 0;
        byteEvents = 0;
        bytesSinceEvent = 0;
        lastAlphaUpdateNanos = nowNanos;
        lastRateIncreaseNanos = nowNanos;
    }

    /**
     * Lets the timers run up to {@code nowNanos}.
     *
     * @param nowNanos the time.
     */
    public void onTick(final long nowNanos)
    {
        if (!limited)
        {
            return;
        }
        final long k = config.alphaUpdatePeriodNanos();
        while (nowNanos - lastAlphaUpdateNanos >= k)
        {
            alpha *= 1 - config.g();
            lastAlphaUpdateNanos += k;
        }
        final long t = config.rateIncreasePeriodNanos();
        while (limited && nowNanos - lastRateIncreaseNanos >= t)
        {
            lastRateIncreaseNanos += t;
            timerEvents++;
            increase();
        }
    }

    /**
     * @param nowNanos the time.
     * @return true when a packet may leave now: its turn at the current rate has come (always, when disabled).
     */
    public boolean canSend(final long nowNanos)
    {
        return !config.enabled() || nowNanos - nextSendNanos >= 0;
    }

    /**
     * Accounts for a packet sent: moves the pacing clock and the byte counter.
     *
     * @param bytes    frame bytes.
     * @param nowNanos the time.
     */
    public void onSent(final int bytes, final long nowNanos)
    {
        if (!config.enabled())
        {
            return;
        }
        // credit for time behind schedule, up to the bucket: a QP that was quiet bursts at most that much
        final long earliest = nowNanos - (long)burstNanos;
        final long from = nextSendNanos - earliest >= 0 ? nextSendNanos : earliest;
        nextSendNanos = from + (long)(bytes * nanosPerByte);
        if (!limited)
        {
            return;
        }
        bytesSinceEvent += bytes;
        final long b = config.byteCounterBytes();
        while (limited && bytesSinceEvent >= b)
        {
            bytesSinceEvent -= b;
            byteEvents++;
            increase();
        }
    }

    private void increase()
    {
        final int f = config.fastRecoveryThreshold();
        final int most = Math.max(timerEvents, byteEvents);
        final int least = Math.min(timerEvents, byteEvents);
        if (least > f)
        {
            targetRate = Math.min(lineRate, targetRate + (least - f) * (double)config.hyperIncreaseBitsPerSecond());
        }
        else if (most >= f)
        {
            targetRate = Math.min(lineRate, targetRate + config.additiveIncreaseBitsPerSecond());
        }
        currentRate = (targetRate + currentRate) / 2;
        if (currentRate >= lineRate * (1 - 1e-9))
        {
            currentRate = lineRate;
            limited = false;
        }
        rateChanged();
    }

    /** @return true while the QP is paced below line rate. */
    public boolean isLimited()
    {
        return limited;
    }

    /** @return R_C, bits per second. */
    public double currentRate()
    {
        return currentRate;
    }

    /** @return R_T, bits per second. */
    public double targetRate()
    {
        return targetRate;
    }

    /** @return alpha. */
    public double alpha()
    {
        return alpha;
    }

    /** @return when the next packet may leave. */
    public long nextSendNanos()
    {
        return nextSendNanos;
    }

    /** @return CNPs obeyed. */
    public long cnpCount()
    {
        return cnpCount;
    }

    /** @return the parameters. */
    public DcqcnConfig config()
    {
        return config;
    }

    public String toString()
    {
        return "DcqcnRateLimiter{limited=" + limited + ", rc=" + (long)currentRate + ", rt=" + (long)targetRate +
            ", alpha=" + alpha + '}';
    }
}
