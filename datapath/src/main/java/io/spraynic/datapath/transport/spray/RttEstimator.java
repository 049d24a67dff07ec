package io.spraynic.datapath.transport.spray;

/**
 * Smoothed RTT and retransmission timeout of one path (docs/PROTOCOL.md S6.8), RFC 6298 style:
 * {@code srtt} and {@code rttvar} with gains 1/8 and 1/4, {@code rto = srtt + max(4 rttvar, slack)} clamped
 * to {@code [rtoMin, rtoMax]}, doubled on each consecutive timeout. Samples come only from packets
 * acknowledged without retransmission (Karn). Times in nanoseconds.
 * <p>
 * The slack is there because a fabric with steady queues gives RTT samples so alike that {@code rttvar}
 * falls to a few hundred nanoseconds, while the ACK of the oldest packet may wait up to the receiver's
 * {@code ackDelay} plus a timer tick: without it, paths whose RTT exceeds {@code rtoMin} time out on
 * packets that were not lost (measured: 84 spurious RTOs in a 64 MiB transfer with 50 us of path skew).
 * A path without samples of its own takes the estimate of its slowest sibling path that has some
 * ({@link #rtoNanos(long, long)}), not the configured initial RTT.
 * <p>
 * The late margin (S6.8.1) is learnt: a timeout found spurious ({@link #onSpuriousTimeout}: the packet it gave up on
 * arrived after all) widens it to cover how late that packet was, at least doubling it, up to its cap; each clean
 * sample round narrows it by a quarter ({@link #decayLateMargin}), as RACK adapts its reordering window (RFC 8985).
 * The connection keeps one margin for all its paths ({@link PathScheduler}): descheduling is the hosts', not a
 * route's.
 * It is added above the clamped RTO and raises the ceiling with it, so that a host whose threads are descheduled
 * for longer than {@code rtoMax} stops timing out packets that are merely waiting for a CPU.
 */
public final class RttEstimator
{
    /**
     * The bounds an estimator works within, the same for every path of a connection: held once, not per path
     * (issue 13: an idle connection's bytes).
     */
    static final class Limits
    {
        final long rtoMinNanos;
        final long rtoMaxNanos;
        final long slackNanos;
        final long lateMarginMaxNanos;

        /**
         * @param slackNanos         least margin of the RTO above {@code srtt} (S6.8: the peer's {@code ackDelay}
         *                           plus the timer granularity).
         * @param lateMarginMaxNanos the most the late margin learnt from spurious timeouts may grow to (S6.8.1; 0:
         *                           none is learnt).
         */
        Limits(final long rtoMinNanos, final long rtoMaxNanos, final long slackNanos, final long lateMarginMaxNanos)
        {
            if (rtoMinNanos <= 0 || rtoMaxNanos < rtoMinNanos || slackNanos < 0 || lateMarginMaxNanos < 0)
            {
                throw new IllegalArgumentException("need 0 < rtoMin <= rtoMax, slack >= 0 and lateMarginMax >= 0 (got " +
                    rtoMinNanos + ", " + rtoMaxNanos + ", " + slackNanos + ", " + lateMarginMaxNanos + ")");
            }
            this.rtoMinNanos = rtoMinNanos;
            this.rtoMaxNanos = rtoMaxNanos;
            this.slackNanos = slackNanos;
            this.lateMarginMaxNanos = lateMarginMaxNanos;
        }
    }

    private final Limits limits;
    private long srttNanos;
    private long minRttNanos;
    private long lateMarginNanos;
    private long rttvarNanos;
    private int backoff;
    private boolean sampled;

    public RttEstimator(final long rtoMinNanos, final long rtoMaxNanos, final long initialRttNanos)
    {
        this(rtoMinNanos, rtoMaxNanos, initialRttNanos, 0);
    }

    /**
     * @param slackNanos least margin of the RTO above {@code srtt} (S6.8: the peer's {@code ackDelay} plus
     *                   the timer granularity).
     */
    public RttEstimator(final long rtoMinNanos, final long rtoMaxNanos, final long initialRttNanos, final long slackNanos)
    {
        this(rtoMinNanos, rtoMaxNanos, initialRttNanos, slackNanos, 0);
    }

    /**
     * @param slackNanos         least margin of the RTO above {@code srtt} (S6.8: the peer's {@code ackDelay} plus
     *                           the timer granularity).
     * @param lateMarginMaxNanos the most the late margin learnt from spurious timeouts may grow to (S6.8.1; 0: none
     *                           is learnt).
     */
    public RttEstimator(
        final long rtoMinNanos,
        final long rtoMaxNanos,
        final long initialRttNanos,
        final long slackNanos,
        final long lateMarginMaxNanos)
    {
        this(new Limits(rtoMinNanos, rtoMaxNanos, slackNanos, lateMarginMaxNanos), initialRttNanos);
    }

    /** An estimator within {@code limits}, shared with the other paths of its connection. */
    RttEstimator(final Limits limits, final long initialRttNanos)
    {
        if (initialRttNanos <= 0)
        {
            throw new IllegalArgumentException("need initialRtt > 0 (got " + initialRttNanos + ")");
        }
        this.limits = limits;
        reset(initialRttNanos);
    }

    /**
     * Forgets the history (re-pathing, S7.3): the path's route changed. The late margin stays: it measures the
     * hosts' scheduling, not the route.
     */
    public void reset(final long initialRttNanos)
    {
        srttNanos = initialRttNanos;
        rttvarNanos = initialRttNanos / 2;
        minRttNanos = Long.MAX_VALUE;
        backoff = 0;
        sampled = false;
    }

    public void onSample(final long rttNanos)
    {
        if (rttNanos < 0)
        {
            return;
        }
        if (!sampled)
        {
            srttNanos = rttNanos;
            rttvarNanos = rttNanos / 2;
            sampled = true;
        }
        else
        {
            rttvarNanos += (Math.abs(srttNanos - rttNanos) - rttvarNanos) / 4;
            srttNanos += (rttNanos - srttNanos) / 8;
        }
        minRttNanos = Math.min(minRttNanos, rttNanos);
        backoff = 0;
    }

    /**
     * S6.8.1: the timeout of a packet that arrived after all was spurious: its backoff is undone and the late margin
     * grows to cover the packet's round trip, at least doubling, up to its cap.
     *
     * @param lateRttNanos the round trip of the packet the timeout gave up on (sent to acknowledged).
     */
    public void onSpuriousTimeout(final long lateRttNanos)
    {
        backoff = 0;
        if (limits.lateMarginMaxNanos == 0)
        {
            return;
        }
        final long shortBy = Math.max(0, lateRttNanos - rto(srttNanos, rttvarNanos, 0));
        lateMarginNanos = Math.min(limits.lateMarginMaxNanos,
            Math.max(Math.max(2 * lateMarginNanos, Math.max(limits.slackNanos, 1_000)), shortBy + shortBy / 4));
    }

    /** S6.8.1: the connection's late margin, learnt on another of its paths (at most the cap). */
    public void lateMarginNanos(final long nanos)
    {
        lateMarginNanos = Math.max(0, Math.min(limits.lateMarginMaxNanos, nanos));
    }

    /** S6.8.1: a sample round without a spurious timeout: the late margin narrows by a quarter. */
    public void decayLateMargin()
    {
        lateMarginNanos -= lateMarginNanos >> 2;
        if (lateMarginNanos < 1_000)
        {
            lateMarginNanos = 0;
        }
    }

    /** @return the margin learnt from spurious timeouts (S6.8.1), added to the RTO while no sibling path shows this one dead. */
    public long lateMarginNanos()
    {
        return lateMarginNanos;
    }

    /**
     * @return the least RTT sampled since the last reset ({@code Long.MAX_VALUE} without one): an ACK of a
     * retransmission that comes sooner after it than this answers the original (RFC 8985 S6.2, S6.8.1).
     */
    public long minRttNanos()
    {
        return minRttNanos;
    }

    /**
     * A retransmission timeout fired: back off.
     */
    public void onTimeout()
    {
        if (backoff < 16)
        {
            backoff++;
        }
    }

    public long srttNanos()
    {
        return srttNanos;
    }

    public long rttvarNanos()
    {
        return rttvarNanos;
    }

    public boolean hasSample()
    {
        return sampled;
    }

    public int consecutiveTimeouts()
    {
        return backoff;
    }

    public long rtoNanos()
    {
        return rto(srttNanos, rttvarNanos, lateMarginNanos);
    }

    /**
     * The RTO of this path, which when it has no sample of its own (S6.8) is computed from the larger of its
     * initial estimate and a sibling path's, taken as a first sample would be ({@code rttvar = srtt / 2}): a
     * path's first packets must not time out merely because its route is slower than the configured initial
     * RTT, or than the paths measured so far.
     *
     * @param siblingSrttNanos   the largest smoothed RTT of the connection's sampled paths (0: none).
     * @param siblingRttvarNanos the largest RTT variation of those paths.
     */
    public long rtoNanos(final long siblingSrttNanos, final long siblingRttvarNanos)
    {
        return rtoNanos(siblingSrttNanos, siblingRttvarNanos, true);
    }

    /**
     * @param withLateMargin whether the learnt late margin (S6.8.1) is added: not while a sibling path shows this
     *                       one silent alone, so that a dead link is found as fast as without it.
     * @return as {@link #rtoNanos(long, long)}.
     */
    public long rtoNanos(final long siblingSrttNanos, final long siblingRttvarNanos, final boolean withLateMargin)
    {
        final long margin = withLateMargin ? lateMarginNanos : 0;
        // as if the sibling's RTT were this path's first sample (RFC 6298: rttvar = R / 2, so RTO = 3 R): its
        // route may well be slower than every path measured so far
        return sampled ? rto(srttNanos, rttvarNanos, margin) : rto(Math.max(srttNanos, siblingSrttNanos),
            Math.max(rttvarNanos, Math.max(siblingRttvarNanos, siblingSrttNanos / 2)), margin);
    }

    /**
     * @return the smoothed RTT, or for a path without samples the larger of it and {@code siblingSrttNanos}.
     */
    public long srttNanos(final long siblingSrttNanos)
    {
        return sampled ? srttNanos : Math.max(srttNanos, siblingSrttNanos);
    }

    private long rto(final long srtt, final long rttvar, final long lateMargin)
    {
        // rtoMax bounds the variation's share, never the RTO below srtt + slack: on a loaded host a path's round
        // trip can exceed rtoMax (measured on the Linux ECMP lab: srtt up to 1.5 s against rtoMax 200 ms), and an
        // RTO under it times out every packet of the path
        final long ceiling = Math.max(limits.rtoMaxNanos, srtt + limits.slackNanos);
        final long base = Math.max(limits.rtoMinNanos, Math.min(ceiling, srtt + Math.max(4 * rttvar, limits.slackNanos)));
        return Math.min(ceiling + lateMargin, (base + lateMargin) << backoff);
    }
}
