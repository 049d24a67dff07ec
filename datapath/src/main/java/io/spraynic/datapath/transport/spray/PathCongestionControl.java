package io.spraynic.datapath.transport.spray;

/**
 * The sender's ECN-driven AIMD window of one path (docs/PROTOCOL.md S8.2), DCTCP style. Over each
 * round trip it counts packets acknowledged and CE marks echoed; at the end of the round:
 * <ul>
 *   <li>{@code alpha <- (1 - g) alpha + g F}, F the fraction of CE-marked packets in the round;</li>
 *   <li>with marks, {@code cwnd <- max(1, cwnd (1 - alpha / 2))}; without, {@code cwnd += 1}.</li>
 * </ul>
 * A loss halves the window at most once per round. The window stays in {@code [1, maxWindow]}
 * packets. Allocation-free, no clock inside: callers pass time.
 */
public final class PathCongestionControl
{
    private final double gain;
    private final int maxWindow;
    private final int initialWindow;
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
        if (initialWindow < 1 || maxWindow < initialWindow || maxWindow > PathSendWindow.CAPACITY || gain <= 0 || gain > 1)
        {
            throw new IllegalArgumentException("need 1 <= initialWindow <= maxWindow <= " + PathSendWindow.CAPACITY +
                " and 0 < gain <= 1 (got " + initialWindow + ", " + maxWindow + ", " + gain + ")");
        }
        this.initialWindow = initialWindow;
        this.maxWindow = maxWindow;
        this.gain = gain;
        reset(0);
    }

    /**
     * Starts over (a path restored after failure, S7.5).
     */
    public void reset(final long nowNanos)
    {
        window = initialWindow;
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
     * A loss on this path (S6.5): halve, once per round.
     */
    public void onLoss(final long nowNanos)
    {
        if (!decreasedThisRound)
        {
            window = Math.max(1, window / 2);
            decreasedThisRound = true;
        }
    }

    private void endRound(final long nowNanos)
    {
        if (roundAcked > 0)
        {
            final double fraction = Math.min(1.0, (double)roundMarked / roundAcked);
            alpha = (1 - gain) * alpha + gain * fraction;
            if (roundMarked > 0)
            {
                if (!decreasedThisRound)
                {
                    window = Math.max(1, window * (1 - alpha / 2));
                }
            }
            else if (!decreasedThisRound)
            {
                window = Math.min(maxWindow, window + 1);
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
