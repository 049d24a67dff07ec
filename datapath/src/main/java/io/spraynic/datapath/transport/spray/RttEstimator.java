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
 */
public final class RttEstimator
{
    private final long rtoMinNanos;
    private final long rtoMaxNanos;
    private final long slackNanos;
    private long srttNanos;
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
        if (rtoMinNanos <= 0 || rtoMaxNanos < rtoMinNanos || initialRttNanos <= 0 || slackNanos < 0)
        {
            throw new IllegalArgumentException("need 0 < rtoMin <= rtoMax and initialRtt > 0 (got " + rtoMinNanos + ", " +
                rtoMaxNanos + ", " + initialRttNanos + ")");
        }
        this.rtoMinNanos = rtoMinNanos;
        this.rtoMaxNanos = rtoMaxNanos;
        this.slackNanos = slackNanos;
        reset(initialRttNanos);
    }

    /**
     * Forgets the history (re-pathing, S7.3): the path's route changed.
     */
    public void reset(final long initialRttNanos)
    {
        srttNanos = initialRttNanos;
        rttvarNanos = initialRttNanos / 2;
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
        backoff = 0;
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
        return rto(srttNanos, rttvarNanos);
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
        // as if the sibling's RTT were this path's first sample (RFC 6298: rttvar = R / 2, so RTO = 3 R): its
        // route may well be slower than every path measured so far
        return sampled ? rto(srttNanos, rttvarNanos) : rto(Math.max(srttNanos, siblingSrttNanos),
            Math.max(rttvarNanos, Math.max(siblingRttvarNanos, siblingSrttNanos / 2)));
    }

    /**
     * @return the smoothed RTT, or for a path without samples the larger of it and {@code siblingSrttNanos}.
     */
    public long srttNanos(final long siblingSrttNanos)
    {
        return sampled ? srttNanos : Math.max(srttNanos, siblingSrttNanos);
    }

    private long rto(final long srtt, final long rttvar)
    {
        final long base = Math.max(rtoMinNanos, Math.min(rtoMaxNanos, srtt + Math.max(4 * rttvar, slackNanos)));
        return Math.min(rtoMaxNanos, base << backoff);
    }
}
