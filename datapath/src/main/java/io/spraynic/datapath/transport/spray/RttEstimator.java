package io.spraynic.datapath.transport.spray;

/**
 * Smoothed RTT and retransmission timeout of one path (docs/PROTOCOL.md S6.8), RFC 6298 style:
 * {@code srtt} and {@code rttvar} with gains 1/8 and 1/4, {@code rto = srtt + 4 rttvar} clamped to
 * {@code [rtoMin, rtoMax]}, doubled on each consecutive timeout. Samples come only from packets
 * acknowledged without retransmission (Karn). Times in nanoseconds.
 */
public final class RttEstimator
{
    private final long rtoMinNanos;
    private final long rtoMaxNanos;
    private long srttNanos;
    private long rttvarNanos;
    private int backoff;
    private boolean sampled;

    public RttEstimator(final long rtoMinNanos, final long rtoMaxNanos, final long initialRttNanos)
    {
        if (rtoMinNanos <= 0 || rtoMaxNanos < rtoMinNanos || initialRttNanos <= 0)
        {
            throw new IllegalArgumentException("need 0 < rtoMin <= rtoMax and initialRtt > 0 (got " + rtoMinNanos + ", " +
                rtoMaxNanos + ", " + initialRttNanos + ")");
        }
        this.rtoMinNanos = rtoMinNanos;
        this.rtoMaxNanos = rtoMaxNanos;
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
        final long base = Math.max(rtoMinNanos, Math.min(rtoMaxNanos, srttNanos + 4 * rttvarNanos));
        return Math.min(rtoMaxNanos, base << backoff);
    }
}
