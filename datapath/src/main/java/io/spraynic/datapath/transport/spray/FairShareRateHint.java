package io.spraynic.datapath.transport.spray;

/**
 * The receiver's side of two-sided congestion control (docs/PROTOCOL.md S8.3): its ingress
 * capacity divided among the senders that are active, returned to each in every ACK so that a
 * sender starts at its fair share instead of probing for it, and an incast of N senders settles at
 * C / N within a round trip or two.
 * <p>
 * A sender is active if it delivered data within the activity window or has a message partly delivered
 * (its packets may all be queued or lost for longer than the window: in an incast they are, and counting
 * it out would raise everyone else's share). Data arrivals are O(1) stores; the count of active senders is
 * refreshed by {@link #refresh(long)} on the timer tick, not per packet.
 */
public final class FairShareRateHint
{
    private final long capacityMbps;
    private final long activityWindowNanos;
    private final long[] lastDataNanos;
    private final boolean[] busy;
    private int active;

    /**
     * @param capacityMbps        ingress capacity, Mb/s (the ports' line rate).
     * @param activityWindowNanos how recently a sender must have sent to count (S8.3: 2 x srtt, >= 20 us).
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
     * Data arrived from sender {@code index} (a connection's slot).
     */
    public void onData(final int index, final long nowNanos)
    {
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
            final long last = lastDataNanos[i];
            if (busy[i] || (last != Long.MIN_VALUE && nowNanos - last <= activityWindowNanos))
            {
                count++;
            }
        }
        active = count;
    }

    /**
     * Sender {@code index} has (or no longer has) a message partly delivered: it counts as active meanwhile.
     */
    public void busy(final int index, final boolean isBusy)
    {
        busy[index] = isBusy;
    }

    /**
     * @return senders counted as active.
     */
    public int activeSenders()
    {
        return active;
    }

    /**
     * @return each active sender's share of the capacity, Mb/s (the whole capacity when none is active).
     */
    public int hintMbps()
    {
        return (int)Math.min(Integer.MAX_VALUE, capacityMbps / Math.max(1, active));
    }
}
