package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.wire.SelectiveAckHeader;

/**
 * The receiver's side of the inbound paths of one spray connection (docs/PROTOCOL.md S6.3, S6.4, S7.5, S12.6):
 * each path's {@link PathReceiveWindow}, and when its ACK is due: at once for a packet that asks for one, opens
 * or closes a gap, is the first CE-marked one since the last ACK, is a duplicate or a probe, or is the
 * {@code ackEvery}-th since the last ACK; otherwise {@code ackDelay} after the first packet it has not
 * acknowledged. It keeps what the next ACK of each path carries (its CE count, its count of duplicates, S5.1-3, and
 * its ACK sequence number, which wraps) and the fair-share hint the last ACK told the peer (S8.3.2). Writing the ACK
 * is the caller's.
 * Allocation-free.
 */
final class AckScheduler
{
    /** {@link #onData}: out of the window, dropped (S6.3). */
    static final int DROP = 0;
    /** {@link #onData}: received before: acknowledge at once, nothing else. */
    static final int DUPLICATE = 1;
    /** {@link #onData}: new; its ACK can wait. */
    static final int ACCEPT = 2;
    /** {@link #onData}: new; acknowledge it once the message layer took it. */
    static final int ACCEPT_ACK_NOW = 3;

    private static final long NONE = Long.MIN_VALUE;
    private static final int SINCE_ACK = 0;
    /** CE marks (low 24 bits) and duplicates (high 8 bits, S5.1-3) since the path's last ACK, each saturating. */
    private static final int MARKS_SINCE_ACK = 1;
    private static final int CE_MASK = 0xFF_FFFF;
    private static final int DUPLICATES_SHIFT = 24;
    private static final int ACK_SEQUENCE = 2;
    private static final int STRIDE = 3;

    private final int paths;
    private final int ackEvery;
    private final long ackDelayNanos;
    private final TransportCounters counters;
    private final TransportCounters[] pathCounters;
    private final PathReceiveWindow receiveWindows;
    /**
     * Per path, path-major in one array (issue 13: one array header, not one per field): packets, CE marks and
     * duplicates since its last ACK (the last two packed in one int: an idle connection's bytes), the sequence of its
     * last ACK (S6.5).
     */
    private final int[] pathInts;
    /** Bit {@code path}: whether the path had a gap at its last packet (issue 13: a bit, not an int, a path). */
    private long hadGap;
    /** Bit {@code path}: whether an ACK of the path is owed at the end of the receive burst (S6.4-2). */
    private long ackOwed;
    private final long[] firstUnackedAt;
    private int advertisedHintMbps;
    /** The engine lists this connection among those owing ACKs at the end of the receive burst (S6.4-2). */
    private boolean listedOwing;

    /** @param initialPsn the connection's initial receive PSN (S6.1): each path's starts from it. */
    AckScheduler(
        final int paths, final int initialPsn, final SprayConfig config, final TransportCounters counters,
        final TransportCounters[] pathCounters)
    {
        this.paths = paths;
        this.ackEvery = config.ackEvery;
        this.ackDelayNanos = config.ackDelayNanos;
        this.counters = counters;
        this.pathCounters = pathCounters;
        receiveWindows = new PathReceiveWindow(paths, initialPsn);
        pathInts = new int[paths * STRIDE];
        firstUnackedAt = new long[paths];
        java.util.Arrays.fill(firstUnackedAt, NONE);
    }

    /**
     * A data packet arrived on {@code path} (its headers and tag checked, room for its message state made).
     *
     * @return {@link #DROP}, {@link #DUPLICATE}, {@link #ACCEPT} or {@link #ACCEPT_ACK_NOW}.
     */
    int onData(final int path, final int psn, final boolean ce, final boolean ackRequested, final long now)
    {
        final PathReceiveWindow window = receiveWindows;
        final int result = window.onPacket(path, psn);
        final TransportCounters pathCounter = pathCounters[path];
        counters.increment(SprayCounters.RX_PACKETS);
        pathCounter.increment(SprayCounters.RX_PACKETS);
        if (result == PathReceiveWindow.OUT_OF_WINDOW)
        {
            counters.increment(SprayCounters.OUT_OF_WINDOW);
            pathCounter.increment(SprayCounters.OUT_OF_WINDOW);
            return DROP;
        }
        if (result == PathReceiveWindow.DUPLICATE)
        {
            counters.increment(SprayCounters.DUPLICATES);
            pathCounter.increment(SprayCounters.DUPLICATES);
            countDuplicate(path);
            return DUPLICATE;
        }
        boolean ackAtOnce = ackRequested;
        if (ce)
        {
            counters.increment(SprayCounters.ECN_MARKS_RECEIVED);
            pathCounter.increment(SprayCounters.ECN_MARKS_RECEIVED);
            final int at = path * STRIDE + MARKS_SINCE_ACK;
            if ((pathInts[at] & CE_MASK) != CE_MASK)
            {
                pathInts[at]++;
            }
            ackAtOnce |= firstUnackedAt[path] == NONE;
        }
        final boolean gap = window.hasGap(path);
        final long bit = 1L << path;
        if (gap != ((hadGap & bit) != 0))
        {
            ackAtOnce = true;
            if (gap)
            {
                counters.increment(SprayCounters.SACK_GAPS);
                pathCounter.increment(SprayCounters.SACK_GAPS);
            }
            hadGap ^= bit;
        }
        if (firstUnackedAt[path] == NONE)
        {
            firstUnackedAt[path] = now;
        }
        if (++pathInts[path * STRIDE + SINCE_ACK] >= ackEvery)
        {
            ackAtOnce = true;
        }
        return ackAtOnce ? ACCEPT_ACK_NOW : ACCEPT;
    }

    /**
     * S12.6: the sender's next PSN is above everything it sent on the path: a RESYNC below what arrived (a
     * replayed one), not within half the PSN space ahead of the cumulative PSN, or not at the probe's own PSN,
     * cannot be the peer's.
     */
    boolean isResyncValid(final int path, final int nextPsn, final int probePsn)
    {
        final PathReceiveWindow window = receiveWindows;
        return Psn.diff(nextPsn, window.frontier(path)) >= 0 && Psn.diff(nextPsn, window.cumulativePsn(path)) >= 0 &&
            nextPsn == probePsn;
    }

    /**
     * A probe arrived on {@code path} (a RESYNC one checked with {@link #isResyncValid}); its ACK is due at once.
     * A probe occupies its PSN, so the ACK that answers it acknowledges a PSN above every packet sent before it
     * and S6.5 finds a lost tail; a RESYNC restarts the window at that PSN first (S7.5).
     */
    void onProbe(final int path, final int psn, final boolean resync)
    {
        final PathReceiveWindow window = receiveWindows;
        if (resync)
        {
            window.reset(path, psn);
        }
        if (window.onPacket(path, psn) == PathReceiveWindow.DUPLICATE && !resync)
        {
            countDuplicate(path); // S5.1-3: a timeout sent the probe again at a PSN that had arrived (S7.4.1)
        }
        hadGap = window.hasGap(path) ? hadGap | (1L << path) : hadGap & ~(1L << path);
    }

    /**
     * S6.4-2: an ACK of {@code path} is due at once, and goes out at the end of the receive burst, one for every
     * packet of the path in it ({@link #isListedOwing listed} first).
     */
    void oweAck(final int path)
    {
        ackOwed |= 1L << path;
    }

    /** @return whether an ACK of {@code path} is owed at the end of the receive burst; it is not any more. */
    boolean takeOwedAck(final int path)
    {
        final long bit = 1L << path;
        final boolean owed = (ackOwed & bit) != 0;
        ackOwed &= ~bit;
        return owed;
    }

    /** @return whether the engine lists the connection among those owing ACKs at the end of the receive burst. */
    boolean isListedOwing()
    {
        return listedOwing;
    }

    void listedOwing(final boolean listed)
    {
        listedOwing = listed;
    }

    /** @return whether the delayed ACK of {@code path} is due at {@code now}. */
    boolean isDue(final int path, final long now)
    {
        return firstUnackedAt[path] != NONE && now - firstUnackedAt[path] >= ackDelayNanos;
    }

    /** @return whether a packet of some path waits for its ACK. */
    boolean anyUnacknowledged()
    {
        for (int path = 0; path < paths; path++)
        {
            if (firstUnackedAt[path] != NONE)
            {
                return true;
            }
        }
        return false;
    }

    /** @return the receive windows of the paths: what their ACKs carry, read by path. */
    PathReceiveWindow windows()
    {
        return receiveWindows;
    }

    /** @return CE-marked packets of {@code path} since its last ACK. */
    int ceSinceAck(final int path)
    {
        return pathInts[path * STRIDE + MARKS_SINCE_ACK] & CE_MASK;
    }

    /**
     * @return S5.1-3: packets of {@code path} since its last ACK whose PSN had been received already (at most 255):
     * what shows the sender that a timeout sent again a packet that had arrived (S6.8-1 (c)).
     */
    int duplicatesSinceAck(final int path)
    {
        return pathInts[path * STRIDE + MARKS_SINCE_ACK] >>> DUPLICATES_SHIFT;
    }

    // S5.1-3: saturating at the field's 255
    private void countDuplicate(final int path)
    {
        final int at = path * STRIDE + MARKS_SINCE_ACK;
        if (pathInts[at] >>> DUPLICATES_SHIFT != SelectiveAckHeader.DUPLICATES_MAX)
        {
            pathInts[at] += 1 << DUPLICATES_SHIFT;
        }
    }

    /**
     * An ACK of {@code path} is being written now, telling the peer {@code hintMbps}: nothing of the path waits
     * for one any more.
     *
     * @return its ACK sequence number (one more than the last, wrapping: the sender compares them serially).
     */
    int ackSent(final int path, final int hintMbps)
    {
        advertisedHintMbps = hintMbps;
        pathInts[path * STRIDE + SINCE_ACK] = 0;
        pathInts[path * STRIDE + MARKS_SINCE_ACK] = 0;
        ackOwed &= ~(1L << path); // this ACK is the one owed
        firstUnackedAt[path] = NONE;
        return ++pathInts[path * STRIDE + ACK_SEQUENCE];
    }

    /**
     * S8.3.2: whether the share {@code hintMbps} fell by more than an eighth below what the last ACK told the
     * peer (a rise is not urgent).
     */
    boolean hintFellBelowAdvertised(final long hintMbps)
    {
        return hintMbps * 8 < (long)advertisedHintMbps * 7;
    }
}
