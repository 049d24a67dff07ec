package io.spraynic.datapath.transport.spray;

/**
 * The receiver's side of two-sided congestion control (docs/PROTOCOL.md S8.3): its ingress
 * capacity divided among the senders that are active, returned to each in every ACK so that a
 * sender starts at its fair share instead of probing for it, and an incast of N senders settles at
 * C / N within a round trip or two.
 * <p>
 * A sender is active if it delivered data or a probe (S8.3.1) within the activity window or has a message
 * partly delivered (its packets may all be queued or lost for longer than the window: in an incast they are,
 * and counting it out would raise everyone else's share). With two or more active senders the share is
 * lowered by up to an eighth in proportion to the recent fraction of CE-marked arrivals (S8.3.3), so that a
 * queue built before the senders knew their share drains. Arrivals are O(1) stores; the count of active
 * senders and the marked fraction are refreshed by {@link #refresh(long)} on the timer tick, not per packet.
 */
public final class FairShareRateHint
{
    /** S8.3.3: at most an eighth of the share is held back while the queue towards this end is above marking. */
    static final double DRAIN = 1.0 / 8;
    /** Arrivals a marked fraction is measured over before it is folded into the average. */
    static final int MARK_SAMPLE = 16;

    private final long capacityMbps;
    private final long activityWindowNanos;
    private final long[] lastDataNanos;
    private final boolean[] busy;
    private int active;
    private int arrivals;
    private int markedArrivals;
    private double markedFraction;

    /**
     * @param capacityMbps        ingress capacity, Mb/s (the ports' line rate).
     * @param activityWindowNanos how recently a sender must have sent to count (S8.3: 20 us).
     * @param maxSenders          connections this receiver may have.
     */
    public FairShareRateHint(final long capacityMbps, final long activityWindowNanos, final int maxSenders)
    {
        if (capacityMbps <= 0 || activityWindowNanos <= 0 || maxSenders < 1)
        {
            throw new IllegalArgumentException("capacity, activity window and senders must be positive (got " +
                capacityMbps + ", " + activityWindowNanos + ", " + maxSenders + ")");
        }
        this.capacityMbps = capacityMbps;
        this.activityWindowNanos = activityWindowNanos;
        this.lastDataNanos = new long[maxSenders];
        this.busy = new boolean[maxSenders];
        java.util.Arrays.fill(lastDataNanos, Long.MIN_VALUE);
    }

    /**
     * Data (or a probe, S8.3.1) arrived from sender {@code index} (a connection's slot).
     *
     * @param congestionExperienced whether the fabric marked it CE (S8.3.3).
     */
    public void onData(final int index, final long nowNanos, final boolean congestionExperienced)
    {
        arrivals++;
        if (congestionExperienced)
        {
            markedArrivals++;
        }
        if (lastDataNanos[index] == Long.MIN_VALUE || nowNanos - lastDataNanos[index] > activityWindowNanos)
        {
            active++; // newly active: counted now, so its first ACK already carries the shared rate
        }
        lastDataNanos[index] = nowNanos;
    }

    /**
     * Recounts the active senders (timer tick).
     */
    public void refresh(final long nowNanos)
    {
        int count = 0;
        for (int i = 0; i < lastDataNanos.length; i++)
        {
            if (isActive(i, nowNanos))
            {
                count++;
            }
        }
        active = count;
        if (count == 0)
        {
            markedFraction = 0;
            arrivals = 0;
            markedArrivals = 0;
        }
        else if (arrivals >= MARK_SAMPLE)
        {
            markedFraction = (markedFraction + (double)markedArrivals / arrivals) / 2;
            arrivals = 0;
            markedArrivals = 0;
        }
    }

    /**
     * Sender {@code index} has (or no longer has) a message partly delivered: it counts as active meanwhile.
     */
    public void busy(final int index, final boolean isBusy)
    {
        busy[index] = isBusy;
    }

    /**
     * @param index a sender (a connection's slot).
     * @param nowNanos the time.
     * @return whether that sender counts as active now: its share is worth telling it when the share changes.
     */
    public boolean isActive(final int index, final long nowNanos)
    {
        final long last = lastDataNanos[index];
        return busy[index] || (last != Long.MIN_VALUE && nowNanos - last <= activityWindowNanos);
    }

    /**
     * @return senders counted as active.
     */
    public int activeSenders()
    {
        return active;
    }

    /**
     * @return each active sender's share of the capacity, Mb/s (the whole capacity when none is active), at
     * least 1: 0 on the wire means no hint (S8.3), which would leave a sender of a share under 1 Mb/s unpaced.
     */
    public int hintMbps()
    {
        // a lone sender, paced at most at its own line rate, cannot be what fills the queue into this end: its
        // marks come from elsewhere in the fabric, which its own per-path windows answer (S8.2)
        final double drain = active > 1 ? 1 - DRAIN * markedFraction : 1;
        final double share = (double)capacityMbps / Math.max(1, active) * drain;
        return (int)Math.clamp((long)share, 1, Integer.MAX_VALUE);
    }

    /** @return the recent fraction of arrivals marked CE (S8.3.3), smoothed. */
    public double markedFraction()
    {
        return markedFraction;
    }
}
