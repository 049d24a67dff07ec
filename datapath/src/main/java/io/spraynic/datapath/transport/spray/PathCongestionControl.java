package io.spraynic.datapath.transport.spray;

/**
 * The sender's ECN-driven AIMD window of each path of a connection (docs/PROTOCOL.md S8.2), DCTCP style. Over each
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
 * <p>
 * One instance holds every path of a connection, path-major in one {@code long[]}, methods taking the path (issue
 * 13: an idle connection's bytes; 8 objects and their array cost 496 B, this 304 B).
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

    // path-major, STRIDE longs a path (issue 13: one array for all paths' windows, not an object each)
    private static final int WINDOW = 0; // a double's bits
    private static final int ALPHA = 1; // a double's bits
    private static final int ROUND_START = 2;
    private static final int ROUND_COUNTS = 3; // packets acknowledged in the round (low int), CE-marked (high int)
    private static final int STRIDE = 4;
    /** The most paths one instance holds: a bit of {@link #decreasedThisRound} each. */
    static final int MAX_PATHS = Long.SIZE;

    private final Parameters parameters;
    private final long[] state;
    /** Bit {@code path}: whether the path's window was decreased in its current round. */
    private long decreasedThisRound;
    /** Counts the writes of any path's window: what {@link #window(int)} answers. */
    private int windowChanges;

    /**
     * One path's window.
     *
     * @param initialWindow packets allowed outstanding at the start (S8.2: 16).
     * @param maxWindow     most packets outstanding (S8.2: 256, the SACK window).
     * @param gain          {@code g} (S8.2: 1/16).
     */
    public PathCongestionControl(final int initialWindow, final int maxWindow, final double gain)
    {
        this(initialWindow, maxWindow, gain, 1.0);
    }

    /**
     * One path's window.
     *
     * @param lossFactor the window is multiplied by this on a loss, at most once per round; 1 ignores loss.
     */
    public PathCongestionControl(final int initialWindow, final int maxWindow, final double gain, final double lossFactor)
    {
        this(1, new Parameters(initialWindow, maxWindow, gain, lossFactor));
    }

    /** The windows of {@code paths} paths configured by {@code parameters}, shared with the engine's connections. */
    PathCongestionControl(final int paths, final Parameters parameters)
    {
        if (paths < 1 || paths > MAX_PATHS)
        {
            throw new IllegalArgumentException("need 1 <= paths <= " + MAX_PATHS + " (got " + paths + ")");
        }
        this.parameters = parameters;
        state = new long[paths * STRIDE];
        for (int path = 0; path < paths; path++)
        {
            reset(path, 0);
        }
    }

    /**
     * Starts the path over (restored after failure, S7.5).
     */
    public void reset(final int path, final long nowNanos)
    {
        window(path, parameters.initialWindow);
        state[path * STRIDE + ALPHA] = Double.doubleToRawLongBits(0);
        startRound(path, nowNanos);
    }

    /**
     * @param acked    packets of the path newly acknowledged by an ACK.
     * @param ceMarked of those, how many the receiver saw CE-marked (the ACK's CE count).
     * @param srttNanos the path's smoothed RTT: the length of a round.
     */
    public void onAck(final int path, final int acked, final int ceMarked, final long nowNanos, final long srttNanos)
    {
        final int at = path * STRIDE;
        final long counts = state[at + ROUND_COUNTS];
        final int roundAcked = (int)counts + acked;
        final int roundMarked = (int)(counts >>> 32) + ceMarked;
        state[at + ROUND_COUNTS] = counts(roundAcked, roundMarked);
        if (roundAcked >= window(path) || nowNanos - state[at + ROUND_START] >= srttNanos)
        {
            endRound(path, roundAcked, roundMarked, nowNanos);
        }
    }

    /**
     * A loss on the path (S6.5): multiply by {@code parameters.lossFactor}, once per round (nothing by default).
     */
    public void onLoss(final int path, final long nowNanos)
    {
        final long bit = 1L << path;
        if (parameters.lossFactor < 1 && (decreasedThisRound & bit) == 0)
        {
            window(path, Math.max(1, exactWindow(path) * parameters.lossFactor));
            decreasedThisRound |= bit;
        }
    }

    private void endRound(final int path, final int roundAcked, final int roundMarked, final long nowNanos)
    {
        if (roundAcked > 0)
        {
            final int at = path * STRIDE;
            final boolean decreased = (decreasedThisRound & (1L << path)) != 0;
            final double fraction = Math.min(1.0, (double)roundMarked / roundAcked);
            final double alpha = (1 - parameters.gain) * alpha(path) + parameters.gain * fraction;
            state[at + ALPHA] = Double.doubleToRawLongBits(alpha);
            if (roundMarked > 0)
            {
                if (!decreased)
                {
                    window(path, Math.max(1, exactWindow(path) * (1 - alpha / 2)));
                }
            }
            else if (!decreased)
            {
                window(path, Math.min(parameters.maxWindow, exactWindow(path) + 1));
            }
        }
        startRound(path, nowNanos);
    }

    private void startRound(final int path, final long nowNanos)
    {
        state[path * STRIDE + ROUND_START] = nowNanos;
        state[path * STRIDE + ROUND_COUNTS] = 0;
        decreasedThisRound &= ~(1L << path);
    }

    private static long counts(final int roundAcked, final int roundMarked)
    {
        return ((long)roundMarked << 32) | (roundAcked & 0xFFFF_FFFFL);
    }

    private double exactWindow(final int path)
    {
        return Double.longBitsToDouble(state[path * STRIDE + WINDOW]);
    }

    /**
     * @return a count (wrapping) that moves whenever a path's window is set: while it stays the same, {@link #window(int)}
     * answers as before for every path (a cache's key).
     */
    public int windowChanges()
    {
        return windowChanges;
    }

    private void window(final int path, final double window)
    {
        windowChanges++;
        state[path * STRIDE + WINDOW] = Double.doubleToRawLongBits(window);
    }

    /**
     * @return packets the path may have outstanding.
     */
    public int window(final int path)
    {
        return (int)exactWindow(path);
    }

    public double alpha(final int path)
    {
        return Double.longBitsToDouble(state[path * STRIDE + ALPHA]);
    }

    /** @return the path's window and alpha, for diagnostics (allocates). */
    public String toString(final int path)
    {
        return String.format("PathCongestionControl{window=%.2f, alpha=%.4f}", exactWindow(path), alpha(path));
    }

    public String toString()
    {
        final StringBuilder sb = new StringBuilder("PathCongestionControl{");
        for (int path = 0; path < state.length / STRIDE; path++)
        {
            sb.append(path == 0 ? "" : ", ").append(String.format("%d: window=%.2f, alpha=%.4f", path,
                exactWindow(path), alpha(path)));
        }
        return sb.append('}').toString();
    }
}
