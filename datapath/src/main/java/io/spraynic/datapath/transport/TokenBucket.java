package io.spraynic.datapath.transport;

/**
 * A token bucket in nanoseconds of credit: {@code perSecond} tokens a second on average, at most {@code burst} at
 * once, the first burst available at once. It bounds what a NIC sends in answer to frames anyone can send (ARP and
 * neighbour replies, echo replies, CONNECT_RETRY and CONNECT_REJECT), so that a flood of requests cannot make it a
 * reflector beyond that rate. One thread; no allocation; a clock that goes back refills nothing.
 */
public final class TokenBucket
{
    private final long costNanos;
    private final long depthNanos;
    private long creditNanos;
    private long refilledAtNanos = Long.MIN_VALUE;

    /**
     * @param perSecond tokens a second, 1 or more (more than 10^9 count as 10^9).
     * @param burst     tokens at once, 1 or more.
     */
    public TokenBucket(final int perSecond, final int burst)
    {
        if (perSecond < 1 || burst < 1)
        {
            throw new IllegalArgumentException("a rate of " + perSecond + "/s in bursts of " + burst +
                " is not allowed: both must be 1 or more");
        }
        this.costNanos = Math.max(1, 1_000_000_000L / perSecond);
        this.depthNanos = costNanos * burst; // at most 10^9 x (2^31 - 1): well within a long
        this.creditNanos = depthNanos;
    }

    /** @return whether a token was taken at {@code nowNanos} (false: none left, nothing taken). */
    public boolean tryTake(final long nowNanos)
    {
        if (refilledAtNanos == Long.MIN_VALUE)
        {
            refilledAtNanos = nowNanos;
        }
        else if (nowNanos - refilledAtNanos > 0)
        {
            creditNanos = Math.min(depthNanos, creditNanos + Math.min(nowNanos - refilledAtNanos, depthNanos));
            refilledAtNanos = nowNanos;
        }
        if (creditNanos < costNanos)
        {
            return false;
        }
        creditNanos -= costNanos;
        return true;
    }
}
