package io.spraynic.datapath.transport.spray;

/**
 * The reordering window of S6.5-3, one per engine (a fabric's reordering within a route is the fabric's, not one
 * connection's, so what one connection learns serves the others, and an idle connection holds nothing of it): a packet
 * in a gap is lost only once a packet sent at least this long after it is acknowledged.
 * <p>
 * The window is at least the configured floor ({@link SprayConfig#reorderWindowNanos}, 0 by default: a gap is loss,
 * S6.5). With a ceiling above the floor ({@link SprayConfig#reorderWindowMaxNanos}) it adapts as RFC 8985's does: each
 * loss found spurious (a gap's copy acknowledged sooner after it was sent than any round trip of its path, so the
 * original had arrived; or a receiver's report of duplicates not taken for the path's undecided timeout) at least doubles it,
 * from 1 us, up to the ceiling, unless the loss was judged before the last widening (a burst of losses that one
 * reordering made widens it once, not once each); it narrows by a quarter (to the floor below 1 us) after every
 * {@link #NARROW_AFTER_SAMPLES} loss samples (S7.3's, 256 packets of a path each, of any connection of the engine)
 * with no spurious loss, so a fabric that stops reordering stops paying for it. A path holds its gaps by at most a cap
 * it gives ({@link #nanos(long)}). Engine thread only;
 * allocation-free.
 */
final class ReorderWindow
{
    /** The least a window learnt grows to at its first spurious loss. */
    static final long FIRST_WIDENING_NANOS = 1_000;
    /** Loss samples (256 packets of a path each) with no spurious loss after which what was learnt narrows. */
    static final int NARROW_AFTER_SAMPLES = 64;
    private static final long NEVER = Long.MIN_VALUE;

    private final long floorNanos;
    private final long maxNanos;
    private long learntNanos;
    private long spuriousLosses;
    private int cleanSamples;
    private long widenedAtNanos = NEVER;

    /**
     * @param floorNanos the window it never goes below (0: a gap is loss until it learns otherwise).
     * @param maxNanos   the most it learns; at or below the floor it does not adapt.
     */
    ReorderWindow(final long floorNanos, final long maxNanos)
    {
        if (floorNanos < 0 || maxNanos < 0)
        {
            throw new IllegalArgumentException("reorder window floor and ceiling must be >= 0: " + floorNanos + ", " +
                maxNanos);
        }
        this.floorNanos = floorNanos;
        this.maxNanos = Math.max(floorNanos, maxNanos);
    }

    /** @return the window now, as learnt: what a gap's packets are held by (S6.5-3), before {@link #nanos(long)}. */
    long nanos()
    {
        return Math.max(floorNanos, learntNanos);
    }

    /**
     * @param capNanos the most a path's gaps may be held by what was learnt (RFC 8985 holds its window to the path's
     *                 {@code srtt}: reordering longer than that is not told from loss much sooner than by a timeout).
     * @return the window a path's gaps are held by: what was learnt, at most {@code capNanos}, at least the floor.
     */
    long nanos(final long capNanos)
    {
        return Math.max(floorNanos, Math.min(learntNanos, capNanos));
    }

    /** @return whether it learns from spurious losses (its ceiling is above its floor). */
    boolean adapts()
    {
        return maxNanos > floorNanos;
    }

    /**
     * A packet a gap showed lost had arrived after all (reordering beyond the window): the window at least doubles,
     * if it has not widened since that loss was judged.
     *
     * @param judgedAtNanos when the loss was judged (its copy sent).
     * @param nowNanos      now.
     */
    void onSpuriousLoss(final long judgedAtNanos, final long nowNanos)
    {
        spuriousLosses++;
        cleanSamples = 0;
        if (!adapts() || widenedAtNanos != NEVER && judgedAtNanos - widenedAtNanos < 0)
        {
            return; // judged with a narrower window than today's
        }
        widenedAtNanos = nowNanos;
        learntNanos = Math.min(maxNanos, Math.max(2 * nanos(), FIRST_WIDENING_NANOS));
    }

    /** A path of a connection ended a loss sample (S7.3): after enough with no spurious loss, the window narrows. */
    void onSampleEnded()
    {
        if (learntNanos != 0 && ++cleanSamples >= NARROW_AFTER_SAMPLES)
        {
            cleanSamples = 0;
            learntNanos = RttEstimator.narrowed(learntNanos); // a quarter narrower, nothing below 1 us
        }
    }

    /** @return losses found spurious since the engine started (S6.5-3's evidence of reordering). */
    long spuriousLosses()
    {
        return spuriousLosses;
    }
}
