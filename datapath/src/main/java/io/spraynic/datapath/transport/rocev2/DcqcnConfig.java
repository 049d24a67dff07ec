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

    /** The most any rate may be: 100 Tb/s. */
    public static final long MAX_RATE = 100_000_000_000_000L;
    /** The longest timer or CNP interval: 10 s (a longer one never fires within a transfer). */
    public static final long MAX_PERIOD_NANOS = 10_000_000_000L;
    /** The largest byte counter: 1 GiB. */
    public static final long MAX_BYTE_COUNTER = 1L << 30;
    /** The largest fast-recovery threshold. */
    public static final int MAX_THRESHOLD = 1_000;
    /** The deepest pacing bucket: 16 MiB. */
    public static final int MAX_PACING_BURST = 16 << 20;
    /** The lowest floor a rate is cut to when derived for a very slow line: 1 kb/s. */
    public static final long MIN_DERIVED_RATE = 1_000L;
    /**
     * The smallest pacing bucket derived for a slow line: one 4 KiB-MTU frame's payload, so that a QP whose engine
     * ticks late (milliseconds on shared cores) may still send the frame it owes at once, while at 10 Mb/s it holds
     * some 3 ms of the line, below a switch's few-packet ECN threshold.
     */
    public static final int MIN_DERIVED_PACING_BURST = 4096;

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
        // hostile or mistyped values: a rate, period or count past these would stall a QP or overflow the law
        if (lineRateBitsPerSecond > MAX_RATE || additiveIncreaseBitsPerSecond < 1 ||
            additiveIncreaseBitsPerSecond > MAX_RATE || hyperIncreaseBitsPerSecond < 1 ||
            hyperIncreaseBitsPerSecond > MAX_RATE)
        {
            throw new IllegalArgumentException("rates must be 1 b/s..100 Tb/s: line " + lineRateBitsPerSecond +
                ", additive " + additiveIncreaseBitsPerSecond + ", hyper " + hyperIncreaseBitsPerSecond);
        }
        if (alphaUpdatePeriodNanos > MAX_PERIOD_NANOS || rateIncreasePeriodNanos > MAX_PERIOD_NANOS ||
            cnpIntervalNanos > MAX_PERIOD_NANOS || byteCounterBytes > MAX_BYTE_COUNTER ||
            fastRecoveryThreshold > MAX_THRESHOLD || pacingBurstBytes > MAX_PACING_BURST)
        {
            throw new IllegalArgumentException("periods at most 10 s, byte counter at most 1 GiB, threshold at most " +
                MAX_THRESHOLD + ", pacing burst at most 16 MiB");
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
     * The paper's parameters told the port's line rate, as an operator sets a NIC's DCQCN for its fabric (mlx5's
     * rpg_ai_rate, rpg_hai_rate, rpg_min_rate, rpg_byte_reset): at {@link #DEFAULT_LINE_RATE} or faster exactly
     * {@link #paperDefaults(long)}; on a slower line the increase steps (additive and hyper), the byte counter and the
     * pacing bucket scale with the line (the floor stays 1 Mb/s, or a tenth of a line slower than 10 Mb/s), so that
     * each increase event moves the same share of the line and the byte counter fires after the same time at line rate.
     * Without it a 10 Mb/s line gets 40 Mb/s steps every 55 us, four times the line per step, and DCQCN never holds a
     * QP below it (benchmarks/RESULTS.md section 61). The timers (T, K, the CNP interval) are not scaled: they are set
     * by the fabric's round trip, which the NIC does not know; an operator sets them with {@link #with}.
     *
     * @param lineRateBitsPerSecond the line rate.
     * @return the parameters, enabled.
     */
    public static DcqcnConfig forLineRate(final long lineRateBitsPerSecond)
    {
        final DcqcnConfig paper = paperDefaults(lineRateBitsPerSecond);
        if (lineRateBitsPerSecond >= DEFAULT_LINE_RATE)
        {
            return paper;
        }
        final double scale = (double)lineRateBitsPerSecond / DEFAULT_LINE_RATE;
        // the floor is not scaled: a QP cut to it must still send a frame well within an ACK timeout (1 Mb/s: 9 ms
        // for a 1 KiB-MTU frame, 35 ms for a 4 KiB one), or go-back-N's retries run out while it waits its turn
        final long minRate = Math.min(paper.minRateBitsPerSecond(),
            Math.max(MIN_DERIVED_RATE, lineRateBitsPerSecond / 10));
        return new DcqcnConfig(
            true,
            lineRateBitsPerSecond,
            minRate,
            paper.g(),
            paper.initialAlpha(),
            paper.alphaUpdatePeriodNanos(),
            paper.rateIncreasePeriodNanos(),
            Math.max(1, Math.round(paper.byteCounterBytes() * scale)),
            paper.fastRecoveryThreshold(),
            Math.max(1, Math.round(paper.additiveIncreaseBitsPerSecond() * scale)),
            Math.max(1, Math.round(paper.hyperIncreaseBitsPerSecond() * scale)),
            paper.cnpIntervalNanos(),
            (int)Math.max(MIN_DERIVED_PACING_BURST, Math.round(paper.pacingBurstBytes() * scale)));
    }

    /** The names {@link #with} takes, as an operator writes them (after mlx5's roce_rp / roce_np settings). */
    public static final java.util.List<String> PARAMETERS = java.util.List.of("enabled", "line_rate", "min_rate",
        "rate_ai", "rate_hai", "g", "initial_alpha", "alpha_period", "time_reset", "byte_reset", "threshold",
        "cnp_interval", "pacing_burst");

    /**
     * One parameter set by name, for the command line ({@code --dcqcn rate_ai=4kbit}) and the TOML config: rates in
     * bits per second with an optional unit ({@code 4000}, {@code 4kbit}, {@code 10mbit}, {@code 100gbit}), periods
     * with one ({@code 55us}, {@code 1ms}, {@code 500ns}), byte counts and the threshold as integers, {@code g} and
     * {@code initial_alpha} as fractions, {@code enabled} as true or false. The result is checked as every config is.
     *
     * @param name  one of {@link #PARAMETERS}.
     * @param value its value.
     * @return a copy with it.
     * @throws IllegalArgumentException naming the parameter, the value and what is allowed.
     */
    public DcqcnConfig with(final String name, final String value)
    {
        final String v = value.strip().toLowerCase(java.util.Locale.ROOT);
        try
        {
            final DcqcnConfig c = switch (name)
            {
                case "enabled" -> copy(bool(v), lineRateBitsPerSecond, minRateBitsPerSecond, g, initialAlpha,
                    alphaUpdatePeriodNanos, rateIncreasePeriodNanos, byteCounterBytes, fastRecoveryThreshold,
                    additiveIncreaseBitsPerSecond, hyperIncreaseBitsPerSecond, cnpIntervalNanos, pacingBurstBytes);
                case "line_rate" -> copy(enabled, rate(v), minRateBitsPerSecond, g, initialAlpha,
                    alphaUpdatePeriodNanos, rateIncreasePeriodNanos, byteCounterBytes, fastRecoveryThreshold,
                    additiveIncreaseBitsPerSecond, hyperIncreaseBitsPerSecond, cnpIntervalNanos, pacingBurstBytes);
                case "min_rate" -> copy(enabled, lineRateBitsPerSecond, rate(v), g, initialAlpha,
                    alphaUpdatePeriodNanos, rateIncreasePeriodNanos, byteCounterBytes, fastRecoveryThreshold,
                    additiveIncreaseBitsPerSecond, hyperIncreaseBitsPerSecond, cnpIntervalNanos, pacingBurstBytes);
                case "rate_ai" -> copy(enabled, lineRateBitsPerSecond, minRateBitsPerSecond, g, initialAlpha,
                    alphaUpdatePeriodNanos, rateIncreasePeriodNanos, byteCounterBytes, fastRecoveryThreshold,
                    rate(v), hyperIncreaseBitsPerSecond, cnpIntervalNanos, pacingBurstBytes);
                case "rate_hai" -> copy(enabled, lineRateBitsPerSecond, minRateBitsPerSecond, g, initialAlpha,
                    alphaUpdatePeriodNanos, rateIncreasePeriodNanos, byteCounterBytes, fastRecoveryThreshold,
                    additiveIncreaseBitsPerSecond, rate(v), cnpIntervalNanos, pacingBurstBytes);
                case "g" -> copy(enabled, lineRateBitsPerSecond, minRateBitsPerSecond, fraction(v), initialAlpha,
                    alphaUpdatePeriodNanos, rateIncreasePeriodNanos, byteCounterBytes, fastRecoveryThreshold,
                    additiveIncreaseBitsPerSecond, hyperIncreaseBitsPerSecond, cnpIntervalNanos, pacingBurstBytes);
                case "initial_alpha" -> copy(enabled, lineRateBitsPerSecond, minRateBitsPerSecond, g, fraction(v),
                    alphaUpdatePeriodNanos, rateIncreasePeriodNanos, byteCounterBytes, fastRecoveryThreshold,
                    additiveIncreaseBitsPerSecond, hyperIncreaseBitsPerSecond, cnpIntervalNanos, pacingBurstBytes);
                case "alpha_period" -> copy(enabled, lineRateBitsPerSecond, minRateBitsPerSecond, g, initialAlpha,
                    nanos(v), rateIncreasePeriodNanos, byteCounterBytes, fastRecoveryThreshold,
                    additiveIncreaseBitsPerSecond, hyperIncreaseBitsPerSecond, cnpIntervalNanos, pacingBurstBytes);
                case "time_reset" -> copy(enabled, lineRateBitsPerSecond, minRateBitsPerSecond, g, initialAlpha,
                    alphaUpdatePeriodNanos, nanos(v), byteCounterBytes, fastRecoveryThreshold,
                    additiveIncreaseBitsPerSecond, hyperIncreaseBitsPerSecond, cnpIntervalNanos, pacingBurstBytes);
                case "byte_reset" -> copy(enabled, lineRateBitsPerSecond, minRateBitsPerSecond, g, initialAlpha,
                    alphaUpdatePeriodNanos, rateIncreasePeriodNanos, integer(v), fastRecoveryThreshold,
                    additiveIncreaseBitsPerSecond, hyperIncreaseBitsPerSecond, cnpIntervalNanos, pacingBurstBytes);
                case "threshold" -> copy(enabled, lineRateBitsPerSecond, minRateBitsPerSecond, g, initialAlpha,
                    alphaUpdatePeriodNanos, rateIncreasePeriodNanos, byteCounterBytes, (int)Math.min(Integer.MAX_VALUE,
                    integer(v)), additiveIncreaseBitsPerSecond, hyperIncreaseBitsPerSecond, cnpIntervalNanos,
                    pacingBurstBytes);
                case "cnp_interval" -> copy(enabled, lineRateBitsPerSecond, minRateBitsPerSecond, g, initialAlpha,
                    alphaUpdatePeriodNanos, rateIncreasePeriodNanos, byteCounterBytes, fastRecoveryThreshold,
                    additiveIncreaseBitsPerSecond, hyperIncreaseBitsPerSecond, nanos(v), pacingBurstBytes);
                case "pacing_burst" -> copy(enabled, lineRateBitsPerSecond, minRateBitsPerSecond, g, initialAlpha,
                    alphaUpdatePeriodNanos, rateIncreasePeriodNanos, byteCounterBytes, fastRecoveryThreshold,
                    additiveIncreaseBitsPerSecond, hyperIncreaseBitsPerSecond, cnpIntervalNanos,
                    (int)Math.min(Integer.MAX_VALUE, integer(v)));
                default -> throw new IllegalArgumentException("is not one of " + String.join(", ", PARAMETERS));
            };
            return c;
        }
        catch (final IllegalArgumentException e)
        {
            throw new IllegalArgumentException("DCQCN parameter " + name + "=" + value + ": " + e.getMessage(), e);
        }
    }

    private static DcqcnConfig copy(final boolean enabled, final long line, final long min, final double g,
        final double initialAlpha, final long alphaPeriod, final long timeReset, final long byteReset,
        final int threshold, final long ai, final long hai, final long cnpInterval, final int burst)
    {
        return new DcqcnConfig(enabled, line, min, g, initialAlpha, alphaPeriod, timeReset, byteReset, threshold, ai,
            hai, cnpInterval, burst);
    }

    private static final java.util.regex.Pattern RATE =
        java.util.regex.Pattern.compile("(\\d{1,15}(?:\\.\\d{1,9})?)(bit|kbit|mbit|gbit)?");
    private static final java.util.regex.Pattern PERIOD =
        java.util.regex.Pattern.compile("(\\d{1,12})(ns|us|ms|s)");

    /** @return a rate in bits per second: digits with an optional unit bit, kbit, mbit or gbit. */
    public static long rate(final String text)
    {
        final java.util.regex.Matcher m = RATE.matcher(text.strip().toLowerCase(java.util.Locale.ROOT));
        if (!m.matches())
        {
            throw new IllegalArgumentException("not a rate: use bits per second with an optional unit, e.g. 4000, " +
                "4kbit, 10mbit, 100gbit");
        }
        final double unit = null == m.group(2) ? 1 : switch (m.group(2))
        {
            case "kbit" -> 1e3;
            case "mbit" -> 1e6;
            case "gbit" -> 1e9;
            default -> 1;
        };
        final double bits = Double.parseDouble(m.group(1)) * unit;
        if (!(bits >= 1 && bits <= MAX_RATE))
        {
            throw new IllegalArgumentException("a rate must be 1 bit/s..100 Tbit/s");
        }
        return Math.round(bits);
    }

    private static long nanos(final String text)
    {
        final java.util.regex.Matcher m = PERIOD.matcher(text);
        if (!m.matches())
        {
            throw new IllegalArgumentException("not a period: use an integer with a unit, e.g. 55us, 1ms, 500ns");
        }
        final long n = Long.parseLong(m.group(1));
        return switch (m.group(2))
        {
            case "ns" -> n;
            case "us" -> Math.multiplyExact(n, 1_000L);
            case "ms" -> Math.multiplyExact(n, 1_000_000L);
            default -> Math.multiplyExact(n, 1_000_000_000L);
        };
    }

    private static long integer(final String text)
    {
        if (!text.matches("\\d{1,12}"))
        {
            throw new IllegalArgumentException("not a whole number");
        }
        return Long.parseLong(text);
    }

    private static double fraction(final String text)
    {
        if (!text.matches("\\d{1,3}(\\.\\d{1,12})?|\\.\\d{1,12}"))
        {
            throw new IllegalArgumentException("not a fraction such as 0.00390625");
        }
        return Double.parseDouble(text);
    }

    private static boolean bool(final String text)
    {
        return switch (text)
        {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("must be true or false");
        };
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
