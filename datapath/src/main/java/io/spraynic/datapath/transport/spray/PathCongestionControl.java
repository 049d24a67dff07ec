package io.spraynic.datapath.transport.spray;

/**
 * The sender's ECN-driven AIMD window of one path (docs/PROTOCOL.md S8.2), DCTCP style. Over each
 * round trip it counts packets acknowledged and CE marks echoed; at the end of the round:
 * <ul>
 *   <li>{@code alpha <- (1 - g) alpha + g F}, F the fraction of CE-marked packets in the round;</li>
 *   <li>with marks, {@code cwnd <- max(1, cwnd (1 - alpha / 2))}; without, {@code cwnd += 1}.</li>
 * </ul>
 * Loss does not shrink the window by default (S8.2): on this fabric congestion shows as ECN marks
 * and the receiver's rate hint, while random loss is the fabric's fault, repaired by exact
 * retransmission (S6.5) and by moving off a bad route (S7.3). Cutting the window on every loss
 * made a 1 % random loss cost 28 % of goodput in the loss sweep; ignoring it costs 3 %. A
 * {@code lossFactor} below 1 restores a multiplicative decrease (at most once per round) for
 * fabrics without ECN. The window stays in {@code [1, maxWindow]} packets. Allocation-free, no
 * clock inside: callers pass time.
 */
public final class PathCongestionControl
{
    /** What every path of a connection is configured with: held once, not per path (issue 13). */
    static final class Parameters
    {
        final int initialWindow;
        final int maxWindow;
        final double gain;
        final double lossFactor;

        /**
         * @param initialWindow packets allowed outstanding at the start (S8.2: 16).
         * @param maxWindow     most packets outstanding (S8.2: 256, the SACK window).
         * @param gain          {@code g} (S8.2: 1/16).
         * @param lossFactor    the window is multiplied by this on a loss, at most once per round; 1 ignores loss.
         */
        Parameters(final int initialWindow, final int maxWindow, final double gain, final double lossFactor)
        {
            if (initialWindow < 1 || maxWindow < initialWindow || maxWindow > PathSendWindow.CAPACITY || gain <= 0 ||
                gain > 1 || lossFactor <= 0 || lossFactor > 1)
            {
                throw new IllegalArgumentException("need 1 <= initialWindow <= maxWindow <= " + PathSendWindow.CAPACITY +
                    ", 0 < gain <= 1 and 0 < lossFactor <= 1 (got " + initialWindow + ", " + maxWindow + ", " + gain +
                    ", " + lossFactor + ")");
            }
            this.initialWindow = initialWindow;
            this.maxWindow = maxWindow;
            this.gain = gain;
            this.lossFactor = lossFactor;
        }
    }

    private final Parameters parameters;
    private double window;
    private double alpha;
    private long roundStartNanos;
    private int roundAcked;
    private int roundMarked;
    private boolean decreasedThisRound;

    /**
     * @param initialWindow packets allowed outstanding at the start (S8.2: 16).
     * @param maxWindow     most packets outstanding (S8.2: 256, the SACK window).
     * @param gain          {@code g} (S8.2: 1/16).
     */
    public PathCongestionControl(final int initialWindow, final int maxWindow, final double gain)
    {
        this(initialWindow, maxWindow, gain, 1.0);
    }

    /**
     * @param lossFactor the window is multiplied by this on a loss, at most once per round; 1 ignores loss.
     */
    public PathCongestionControl(final int initialWindow, final int maxWindow, final double gain, final double lossFactor)
    {
        this(new Parameters(initialWindow, maxWindow, gain, lossFactor));
    }

    /** A window configured by {@code parameters}, shared with the other paths of its connection. */
    PathCongestionControl(final Parameters parameters)
    {
        this.parameters = parameters;
        reset(0);
    }

    /**
     * Starts over (a path restored after failure, S7.5).
     */
    public void reset(final long nowNanos)
    {
        window = parameters.initialWindow;
        alpha = 0;
        startRound(nowNanos);
    }

    /**
     * @param acked    packets newly acknowledged by an ACK.
     * @param ceMarked of those, how many the receiver saw CE-marked (the ACK's CE count).
     * @param srttNanos the path's smoothed RTT: the length of a round.
     */
    public void onAck(final int acked, final int ceMarked, final long nowNanos, final long srttNanos)
    {
        roundAcked += acked;
        roundMarked += ceMarked;
        if (roundAcked >= (int)window || nowNanos - roundStartNanos >= srttNanos)
        {
            endRound(nowNanos);
        }
    }

    /**
     * A loss on this path (S6.5): multiply by {@code parameters.lossFactor}, once per round (nothing by default).
     */
    public void onLoss(final long nowNanos)
    {
        if (parameters.lossFactor < 1 && !decreasedThisRound)
        {
            window = Math.max(1, window * parameters.lossFactor);
            decreasedThisRound = true;
        }
    }

    private void endRound(final long nowNanos)
    {
        if (roundAcked > 0)
        {
            final double fraction = Math.min(1.0, (double)roundMarked / roundAcked);
            alpha = (1 - parameters.gain) * alpha + parameters.gain * fraction;
            if (roundMarked > 0)
            {
                if (!decreasedThisRound)
                {
                    window = Math.max(1, window * (1 - alpha / 2));
                }
            }
            else if (!decreasedThisRound)
            {
                window = Math.min(parameters.maxWindow, window + 1);
            }
        }
        startRound(nowNanos);
    }

    private void startRound(final long nowNanos)
    {
        roundStartNanos = nowNanos;
        roundAcked = 0;
        roundMarked = 0;
        decreasedThisRound = false;
    }

    /**
     * @return packets the path may have outstanding.
     */
    public int window()
    {
        return (int)window;
    }

    public double alpha()
    {
        return alpha;
    }

    public String toString()
    {
        return String.format("PathCongestionControl{window=%.2f, alpha=%.4f}", window, alpha);
    }
}
