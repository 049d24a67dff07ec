package io.spraynic.datapath.transport.rocev2;

import java.util.concurrent.TimeUnit;

/**
 * The parameters of DCQCN congestion control (Zhu et al., "Congestion Control for Large-Scale RDMA
 * Deployments", SIGCOMM 2015), in one place: the notification point's CNP pacing and the reaction point's
 * rate law.
 *
 * @param enabled                 false: no CNPs are generated or obeyed, and nothing is paced (a QP sends
 *                                as fast as its engine ticks let it).
 * @param lineRateBitsPerSecond   the rate a QP starts at, recovers to, and is paced at while unthrottled.
 * @param minRateBitsPerSecond    the floor of a cut (rpg_min_rate).
 * @param g                       alpha's gain (paper 1/256; Mellanox dce_tcp_g 1019/1024 keeps 1019/1024
 *                                of alpha, i.e. g = 5/1024).
 * @param initialAlpha            alpha at the first CNP (Mellanox initial_alpha_value 1023/1024).
 * @param alphaUpdatePeriodNanos  K: alpha decays by (1 - g) each period without a CNP (paper 55 µs).
 * @param rateIncreasePeriodNanos T: the rate-increase timer (paper 55 µs; Mellanox rpg_time_reset 300 µs).
 * @param byteCounterBytes        B: bytes sent per rate-increase event (paper 10 MB; Mellanox rpg_byte_reset
 *                                32767).
 * @param fastRecoveryThreshold   F: increase events of fast recovery before additive increase (paper 5).
 * @param additiveIncreaseBitsPerSecond R_AI (paper 40 Mb/s; Mellanox rpg_ai_rate 5 Mb/s).
 * @param hyperIncreaseBitsPerSecond    R_HAI (paper 200 Mb/s as we read it; Mellanox rpg_hai_rate 50 Mb/s).
 * @param cnpIntervalNanos        NP: at most one CNP per QP per interval (paper 50 µs).
 * @param pacingBurstBytes        the depth of the QP's pacing token bucket: bytes a QP that fell behind its
 *                                schedule (was idle, or waited for the next engine tick) may send back to
 *                                back. It must cover one engine tick at line rate, or the tick granularity,
 *                                not the rate, caps the QP; it should stay below the switches' ECN threshold,
 *                                or a QP's own bursts mark CE.
 */
public record DcqcnConfig(
    boolean enabled,
    long lineRateBitsPerSecond,
    long minRateBitsPerSecond,
    double g,
    double initialAlpha,
    long alphaUpdatePeriodNanos,
    long rateIncreasePeriodNanos,
    long byteCounterBytes,
    int fastRecoveryThreshold,
    long additiveIncreaseBitsPerSecond,
    long hyperIncreaseBitsPerSecond,
    long cnpIntervalNanos,
    int pacingBurstBytes)
{
    /** 64 KiB: five microseconds at 100 Gb/s, well under a 100 KiB ECN threshold. */
    public static final int DEFAULT_PACING_BURST_BYTES = 64 * 1024;

    /** 100 Gb/s, the emulated fabric's links: an unthrottled QP is paced at this rate, as its wire would. */
    public static final long DEFAULT_LINE_RATE = 100_000_000_000L;

    public DcqcnConfig
    {
        if (lineRateBitsPerSecond <= 0 || minRateBitsPerSecond <= 0 || minRateBitsPerSecond > lineRateBitsPerSecond)
        {
            throw new IllegalArgumentException("rates must satisfy 0 < min <= line: " + minRateBitsPerSecond + ", " +
                lineRateBitsPerSecond);
        }
        if (!(g > 0 && g < 1) || !(initialAlpha > 0 && initialAlpha <= 1))
        {
            throw new IllegalArgumentException("g must be in (0, 1) and the initial alpha in (0, 1]: " + g + ", " +
                initialAlpha);
        }
        if (alphaUpdatePeriodNanos <= 0 || rateIncreasePeriodNanos <= 0 || byteCounterBytes <= 0 ||
            fastRecoveryThreshold < 1 || cnpIntervalNanos < 0)
        {
            throw new IllegalArgumentException("periods, byte counter and threshold must be positive");
        }
        if (pacingBurstBytes < 1)
        {
            throw new IllegalArgumentException("pacing burst must be positive: " + pacingBurstBytes);
        }
    }

    /**
     * @return the paper's parameters at {@link #DEFAULT_LINE_RATE}, enabled.
     */
    public static DcqcnConfig paperDefaults()
    {
        return paperDefaults(DEFAULT_LINE_RATE);
    }

    /**
     * @param lineRateBitsPerSecond the line rate.
     * @return the paper's parameters, enabled.
     */
    public static DcqcnConfig paperDefaults(final long lineRateBitsPerSecond)
    {
        return new DcqcnConfig(
            true,
            lineRateBitsPerSecond,
            1_000_000L,
            1.0 / 256,
            1.0,
            TimeUnit.MICROSECONDS.toNanos(55),
            TimeUnit.MICROSECONDS.toNanos(55),
            10L * 1024 * 1024,
            5,
            40_000_000L,
            200_000_000L,
            TimeUnit.MICROSECONDS.toNanos(50),
            DEFAULT_PACING_BURST_BYTES);
    }

    /**
     * @param lineRateBitsPerSecond the line rate.
     * @return the ConnectX (MLNX_OFED) firmware defaults, enabled (alpha's update period there is 1 µs).
     */
    public static DcqcnConfig mellanoxDefaults(final long lineRateBitsPerSecond)
    {
        return new DcqcnConfig(
            true,
            lineRateBitsPerSecond,
            1_000_000L,
            5.0 / 1024,
            1023.0 / 1024,
            TimeUnit.MICROSECONDS.toNanos(1),
            TimeUnit.MICROSECONDS.toNanos(300),
            32767,
            1,
            5_000_000L,
            50_000_000L,
            TimeUnit.MICROSECONDS.toNanos(4),
            DEFAULT_PACING_BURST_BYTES);
    }

    /**
     * @return these parameters with DCQCN off.
     */
    public DcqcnConfig disabled()
    {
        return new DcqcnConfig(false, lineRateBitsPerSecond, minRateBitsPerSecond, g, initialAlpha,
            alphaUpdatePeriodNanos, rateIncreasePeriodNanos, byteCounterBytes, fastRecoveryThreshold,
            additiveIncreaseBitsPerSecond, hyperIncreaseBitsPerSecond, cnpIntervalNanos, pacingBurstBytes);
    }

    /**
     * @param bytes the pacing token bucket's depth.
     * @return these parameters with it.
     */
    public DcqcnConfig withPacingBurstBytes(final int bytes)
    {
        return new DcqcnConfig(enabled, lineRateBitsPerSecond, minRateBitsPerSecond, g, initialAlpha,
            alphaUpdatePeriodNanos, rateIncreasePeriodNanos, byteCounterBytes, fastRecoveryThreshold,
            additiveIncreaseBitsPerSecond, hyperIncreaseBitsPerSecond, cnpIntervalNanos, bytes);
    }
}
