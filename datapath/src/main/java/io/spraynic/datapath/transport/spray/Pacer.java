package io.spraynic.datapath.transport.spray;

/**
 * A connection's pacer (docs/PROTOCOL.md S8.4) and start budget (S8.3.1). New data leaves while the token
 * bucket holds tokens; each packet sent, new or retransmitted, takes its payload plus {@link #OVERHEAD} bytes,
 * so the rate is a line rate like the peer's hint. The bucket fills at the rate the connection computes
 * ({@link SprayConnection#pacingRate}), up to a burst of {@code burstNanos} at that rate (at least one packet,
 * at most {@code burstBytes}). A start after more than {@code activityWindow} without new data may send only
 * {@code startBudget} bytes before the first ACK brings the receiver's share; that ACK then restarts the
 * bucket empty. Allocation-free.
 */
final class Pacer
{
    /**
     * Bytes a data packet takes on the wire besides its payload (Ethernet, IPv4, UDP, BTH, SETH, RETH, ImmDt,
     * ICRC, FCS, preamble and gap, rounded up).
     */
    static final int OVERHEAD = 128;

    private static final long NONE = Long.MIN_VALUE;

    private final SprayConfig config;
    private final int mtu;
    private double tokens;
    private long lastRefillAt = NONE;
    private long lastNewDataAt = NONE; // S8.3.1: a start after a longer pause is announced by a probe
    private long startBudgetLeft = -1; // new data bytes still allowed before the first ACK; -1: no limit

    Pacer(final SprayConfig config, final int mtu)
    {
        this.config = config;
        this.mtu = mtu;
        this.tokens = config.burstBytes;
    }

    /**
     * Starts a refill at {@code now}.
     *
     * @return nanoseconds since the last one, or 0 when there is nothing to add (the first call, or no time
     * passed): then {@link #refill} need not be called.
     */
    long advance(final long now)
    {
        if (lastRefillAt == NONE)
        {
            lastRefillAt = now;
            return 0;
        }
        final long elapsed = now - lastRefillAt;
        lastRefillAt = now;
        return elapsed > 0 ? elapsed : 0;
    }

    /** Adds the tokens of {@code elapsedNanos} at {@code rate} bytes per nanosecond, up to the bucket's depth. */
    void refill(final long elapsedNanos, final double rate)
    {
        final double depth = Math.max(mtu + OVERHEAD, Math.min(config.burstBytes, rate * config.burstNanos));
        tokens = Math.min(depth, tokens + rate * elapsedNanos);
    }

    boolean hasTokens()
    {
        return tokens > 0;
    }

    /** A packet of {@code payload} bytes left: it takes its tokens (possibly below zero). */
    void take(final int payload)
    {
        tokens -= payload + OVERHEAD;
    }

    double tokens()
    {
        return tokens;
    }

    // ---- S8.3.1

    /** @return whether new data now is a start: the start budget applies and no new data left for a while. */
    boolean isStart(final long now)
    {
        return config.startBudgetBytes >= 0 &&
            (lastNewDataAt == NONE || now - lastNewDataAt > config.activityWindowNanos);
    }

    /** A start was announced by a probe: from now only the start budget may leave before the first ACK. */
    void startAnnounced()
    {
        startBudgetLeft = config.startBudgetBytes;
    }

    /** @return whether the start budget is spent: new data waits for the share the first ACK brings. */
    boolean startBudgetSpent()
    {
        return startBudgetLeft == 0;
    }

    void newDataSent(final long now, final int payload)
    {
        lastNewDataAt = now;
        if (startBudgetLeft > 0)
        {
            startBudgetLeft = Math.max(0, startBudgetLeft - payload);
        }
    }

    /**
     * An ACK brought the peer's share. The first after a start paces from an empty bucket, so the wait for it
     * does not turn into a burst at the new rate on top of the start budget already sent.
     */
    void onShare(final long now)
    {
        if (startBudgetLeft >= 0)
        {
            startBudgetLeft = -1;
            tokens = Math.min(tokens, 0);
            lastRefillAt = now;
        }
    }
}
