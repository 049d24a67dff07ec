package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.wire.SelectiveAckHeader;

import java.lang.foreign.MemorySegment;

/**
 * The sender's view of one path's sequence space: the packets outstanding on it (at most 256, the
 * SACK window, docs/PROTOCOL.md S6.3) and, on every ACK, which of them arrived and which were lost.
 * <p>
 * Loss rule (S6.5): paths are FIFO, so a packet below the highest acknowledged PSN that is not
 * acknowledged was lost, at once: no duplicate-ACK threshold, no go-back-N. A retransmission keeps
 * its PSN (S6.6); the window remembers the highest PSN sent when it went out, and if a later ACK
 * acknowledges a PSN above that mark while the retransmission is still missing, it was lost too.
 * <p>
 * A path is FIFO only along one route (S6.5-2): after the path changed route with packets outstanding
 * ({@link #routeChanged}), a packet sent on the old route is not lost merely because a packet sent on the new one
 * arrived first. It is lost when a later packet of the old route is acknowledged, or once it is overdue by the
 * estimate the old route had; until then it is held, and walked again on the next ACK.
 * <p>
 * A fabric that reorders within one route (adaptive routing, a LAG that balances per packet) breaks S6.2 for every
 * packet, not only at a route change. With a reordering window {@code W > 0} (S6.5-3, RFC 8985's, kept in time) a
 * packet in a gap is lost only once a packet sent at least {@code W} after it is acknowledged; until then it is held
 * in the same way. {@code W = 0} is S6.5: a gap is loss.
 * <p>
 * Packets are named by an opaque {@code long} handle the engine chooses (where the packet's bytes
 * come from). Allocation-free; one instance per path and direction.
 */
public final class PathSendWindow
{
    /** Most packets outstanding on a path: the SACK bitmap's width. */
    public static final int CAPACITY = SelectiveAckHeader.SACK_BITS;

    /**
     * What an ACK tells the engine, packet by packet.
     */
    public interface Listener
    {
        /**
         * A packet arrived (was placed at the receiver).
         *
         * @param rttNanos RTT sample, or -1 when the packet was retransmitted (Karn: no sample).
         */
        void onAcked(long handle, int psn, long rttNanos);

        /**
         * A packet was lost; the engine retransmits it now and calls {@link #retransmitted} (before the next ACK:
         * {@link #onAck} reports a loss once per transmission and walks again only PSNs not yet judged).
         */
        void onLost(long handle, int psn);

        /**
         * S6.8.1: a packet taken off the path by {@link #relocate} before it was ever sent again was acknowledged: its
         * first transmission arrived after all. Called before {@link #onAcked} for it.
         *
         * @param rttNanos its round trip, first transmission to this ACK.
         */
        default void onRelocatedArrived(final int psn, final long rttNanos)
        {
        }

        /**
         * S6.8.1, S6.5-3: a packet sent again at its PSN was acknowledged. Called before {@link #onAcked} for it.
         *
         * @param handle           its handle: the placeholder's, for a packet a timeout relocated (S7.4.1).
         * @param sinceResendNanos time from its last transmission to this ACK: shorter than any round trip of the
         *                         path, it answers an earlier transmission (RFC 8985 S6.2).
         */
        default void onRetransmissionAcked(final long handle, final int psn, final long sinceResendNanos)
        {
        }
    }

    private static final byte FREE = 0;
    private static final byte OUTSTANDING = 1;
    private static final byte RETRANSMITTED = 2;
    private static final byte ACKED = 3;
    // outstanding, never sent again, its packet relocated to another path (S7.4.1): an ACK of it proves the
    // relocation spurious (S6.8.1)
    private static final byte RELOCATED = 4;
    private static final int SLOT_MASK = CAPACITY - 1;

    private long[] handles;
    private long[] sentAtNanos;
    private int[] retransmitMarks;
    private byte[] states;
    private Storage storage;
    private int basePsn;
    private int nextPsn;
    /** S6.5: every PSN from the base up to this one is acknowledged or was found lost (the highest acknowledged). */
    private int lossJudgedTo;
    /** The highest PSN acknowledged (at least the base): the end of the loss walk a timer makes ({@link #judgeHeld}). */
    private int highestAckedPsn;
    /** Outstanding packets in state {@code RETRANSMITTED}: while there are none, judged PSNs need no new walk. */
    private int retransmittedCount;
    /** The highest SACK bit set in the ACK being applied (0: none). */
    private int highestSacked;
    /**
     * S6.5-2: the first PSN sent on the path's current route. While {@link #basePsn} is before it, packets sent on an
     * earlier route are outstanding; otherwise it equals the base (kept within the window, like {@link #lossJudgedTo}).
     */
    private int routeStartPsn;
    /** S6.5-2: the highest PSN sent before {@link #routeStartPsn} that is acknowledged (at least the base less one). */
    private int oldRouteAckedTo;
    /** S6.5-2: how long after it was sent a packet of the old route is overdue (S7.4.1's estimate on that route). */
    private long oldRouteExpectedWithinNanos;

    public PathSendWindow(final int firstPsn)
    {
        this(firstPsn, new Storage());
    }

    /**
     * @param firstPsn the PSN of the first packet.
     * @param storage  the records, or null: a window without any, which stays empty (the one an idle connection's
     *                 paths name while their windows are parked, {@link PathScheduler#parkWindows}).
     */
    PathSendWindow(final int firstPsn, final Storage storage)
    {
        this.storage = storage;
        if (null != storage)
        {
            handles = storage.handles;
            sentAtNanos = storage.sentAtNanos;
            retransmitMarks = storage.retransmitMarks;
            states = storage.states;
        }
        reset(firstPsn);
    }

    /** @return whether the window has records: false for the empty one of idle connections. */
    boolean isAttached()
    {
        return null != storage;
    }

    /** @return whether nothing is outstanding, so that the window may go back to its pool. */
    boolean isDetachable()
    {
        return null != storage && outstanding() == 0;
    }

    /** Bytes of a window object without its records (S10.1): 12-byte header, 5 references, 8 ints, a long. */
    static final int BYTES = 72;

    /** The {@link #CAPACITY} records of one window. */
    static final class Storage
    {
        /** Bytes of one window's records (S10.1). */
        static final int BYTES = CAPACITY * (Long.BYTES + Long.BYTES + Integer.BYTES + 1);

        final long[] handles = new long[CAPACITY];
        final long[] sentAtNanos = new long[CAPACITY];
        final int[] retransmitMarks = new int[CAPACITY];
        final byte[] states = new byte[CAPACITY];
    }

    /**
     * Forgets every outstanding packet and starts again at {@code nextPsn} (a RESYNC, S7.5).
     */
    public void reset(final int nextPsn)
    {
        this.basePsn = nextPsn & Psn.MASK;
        this.nextPsn = this.basePsn;
        lossJudgedTo = this.basePsn;
        highestAckedPsn = this.basePsn;
        routeStartPsn = this.basePsn;
        oldRouteAckedTo = Psn.add(this.basePsn, -1);
        retransmittedCount = 0;
        if (null != states)
        {
            java.util.Arrays.fill(states, FREE); // a detached window's records are all free when it takes them
        }
    }

    /**
     * @return packets sent and not yet acknowledged.
     */
    public int outstanding()
    {
        return Psn.diff(nextPsn, basePsn);
    }

    public boolean isFull()
    {
        return outstanding() >= CAPACITY;
    }

    public int nextPsn()
    {
        return nextPsn;
    }

    /**
     * @return the oldest unacknowledged PSN (equal to {@link #nextPsn()} when none is outstanding).
     */
    public int basePsn()
    {
        return basePsn;
    }

    /**
     * @return when the oldest outstanding packet was (last) sent, or {@code Long.MAX_VALUE} if none.
     */
    public long oldestSentAtNanos()
    {
        return outstanding() == 0 ? Long.MAX_VALUE : sentAtNanos[basePsn & SLOT_MASK];
    }

    /**
     * @return when the newest outstanding packet was sent if it went only once (its answer is an RTT sample, S6.8.1),
     * else {@code Long.MIN_VALUE}.
     */
    public long newestFirstSentAtNanos()
    {
        final int slot = Psn.add(nextPsn, -1) & SLOT_MASK;
        return outstanding() == 0 || states[slot] == RETRANSMITTED ? Long.MIN_VALUE : sentAtNanos[slot];
    }

    /**
     * @return the handle of the oldest outstanding packet (for an RTO, S6.8); undefined if none.
     */
    public long oldestHandle()
    {
        return handles[basePsn & SLOT_MASK];
    }

    /**
     * Takes the next PSN for a new packet.
     *
     * @return its PSN.
     * @throws IllegalStateException when 256 are outstanding (the caller checks {@link #isFull()}).
     */
    public int send(final long handle, final long nowNanos)
    {
        if (isFull())
        {
            throw new IllegalStateException("path window full: " + CAPACITY + " packets outstanding");
        }
        final int psn = nextPsn;
        final int slot = psn & SLOT_MASK;
        handles[slot] = handle;
        sentAtNanos[slot] = nowNanos;
        states[slot] = OUTSTANDING;
        nextPsn = Psn.next(psn);
        return psn;
    }

    /**
     * Records that outstanding {@code psn} was sent again now (after {@link Listener#onLost} or an RTO).
     */
    public void retransmitted(final int psn, final long nowNanos)
    {
        final int slot = psn & SLOT_MASK;
        if (states[slot] != RETRANSMITTED && Psn.inRange(psn, basePsn, outstanding()))
        {
            retransmittedCount++;
        }
        states[slot] = RETRANSMITTED;
        sentAtNanos[slot] = nowNanos;
        retransmitMarks[slot] = Psn.add(nextPsn, -1);
    }

    /**
     * S6.5-2: the path's packets take a new route from the next one sent (S7.3): those outstanding now, left on the
     * old route, may arrive after the new route's first packets, so its gaps do not show them lost.
     *
     * @param expectedWithinNanos how long an ACK takes on the old route at most before it is overdue: S7.4.1's
     *                            {@code srtt + max(4 * rttvar, ackDelay + rtoSlack)} there, before the new route's
     *                            estimate replaces it.
     */
    public void routeChanged(final long expectedWithinNanos)
    {
        if (!hasOldRoute())
        {
            oldRouteAckedTo = Psn.add(basePsn, -1);
            oldRouteExpectedWithinNanos = expectedWithinNanos;
        }
        else
        {
            // a second change before the first route drained: the routes before it count as one, and their ACKs
            // seen since are kept (an ACK of the middle route seen before this change is not: a hole waits to be
            // overdue by the slower of their estimates)
            oldRouteExpectedWithinNanos = Math.max(oldRouteExpectedWithinNanos, expectedWithinNanos);
        }
        routeStartPsn = nextPsn;
    }

    /** @return whether packets sent on an earlier route of the path are outstanding (S6.5-2). */
    boolean hasOldRoute()
    {
        return Psn.isBefore(basePsn, routeStartPsn);
    }

    /**
     * Applies a SACK header: acknowledges, detects losses, slides the window.
     * <p>
     * Issue 13 (15 % of the poll thread when it walked the bitmap bit by bit): the bitmap is read a 64-bit word
     * at a time and only its set bits are visited; the loss walk covers only PSNs not already judged. Every PSN
     * below the highest one an earlier ACK acknowledged is acknowledged or {@code RETRANSMITTED} (that ACK found
     * it lost and the engine called {@link #retransmitted} since, as {@link Listener#onLost} asks), so it is
     * walked again only while some retransmission is outstanding, whose S6.6 mark a later ACK may overtake, or
     * while a packet of the path's old route is held (S6.5-2): the walk resumes at the first one held.
     *
     * @return packets newly acknowledged, or -1 when the ACK does not fit this window (stale or
     * forged: its cumulative PSN lies outside {@code [basePsn, nextPsn]}); nothing changes then.
     */
    public int onAck(final MemorySegment segment, final long sackOffset, final long nowNanos, final Listener listener)
    {
        return onAck(segment, sackOffset, nowNanos, 0, listener);
    }

    /**
     * Applies a SACK header as {@link #onAck(MemorySegment, long, long, Listener)} does, with a reordering window
     * (S6.5-3): a packet in a gap is held, not lost, while the highest PSN acknowledged was sent less than
     * {@code reorderWindowNanos} after it (after its last transmission, for a retransmission).
     *
     * @param reorderWindowNanos the window; 0: a gap is loss (S6.5).
     */
    public int onAck(final MemorySegment segment, final long sackOffset, final long nowNanos,
        final long reorderWindowNanos, final Listener listener)
    {
        final int cumulative = SelectiveAckHeader.cumulativePsn(segment, sackOffset);
        final int outstanding = outstanding();
        final int cumulativeDistance = Psn.diff(cumulative, basePsn);
        if (cumulativeDistance < 0 || cumulativeDistance > outstanding)
        {
            return -1;
        }

        int acked = 0;
        for (int d = 0; d < cumulativeDistance; d++)
        {
            acked += acknowledge(Psn.add(basePsn, d), nowNanos, listener);
        }
        acked += acknowledgeSacked(segment, sackOffset, cumulative, outstanding - cumulativeDistance, nowNanos,
            listener);
        final int highestSacked = this.highestSacked;

        if (highestSacked > 0)
        {
            final int highestAcked = Psn.add(cumulative, highestSacked);
            if (Psn.isAfter(highestAcked, highestAckedPsn))
            {
                highestAckedPsn = highestAcked;
            }
            final int from = retransmittedCount > 0 ? cumulativeDistance :
                Math.max(cumulativeDistance, Psn.diff(lossJudgedTo, basePsn));
            // S6.5-3: packets sent the window or more before the latest one acknowledged are lost; later ones are held
            final long lostIfSentBefore = sentAtNanos[highestAcked & SLOT_MASK] - reorderWindowNanos;
            final int judgedTo = (int)judgeGaps(from, highestAcked, reorderWindowNanos > 0, lostIfSentBefore, nowNanos,
                listener);
            if (Psn.isAfter(judgedTo, lossJudgedTo))
            {
                lossJudgedTo = judgedTo;
            }
        }

        while (basePsn != nextPsn && states[basePsn & SLOT_MASK] == ACKED)
        {
            states[basePsn & SLOT_MASK] = FREE;
            basePsn = Psn.next(basePsn);
        }
        if (Psn.isBefore(lossJudgedTo, basePsn))
        {
            lossJudgedTo = basePsn; // kept within [basePsn, nextPsn], so that serial comparison never wraps
        }
        if (Psn.isBefore(highestAckedPsn, basePsn))
        {
            highestAckedPsn = basePsn; // the same bound
        }
        if (Psn.isBefore(routeStartPsn, basePsn))
        {
            routeStartPsn = basePsn; // the old route drained: the same bound
        }
        return acked;
    }

    /** @return whether a packet below the highest PSN acknowledged is held (S6.5-2, S6.5-3), neither acked nor lost. */
    public boolean hasHeld()
    {
        return Psn.isBefore(lossJudgedTo, highestAckedPsn);
    }

    /**
     * Judges the held packets again without an ACK, as RFC 8985's reordering timer does: at a message's tail no later
     * ACK may come to do it. A packet held by S6.5-3 is lost once the time its ACK is due and the reordering window
     * have passed since it was sent (by then it would have been acknowledged, however reordered); one held by S6.5-2
     * once it is overdue on its old route.
     *
     * @param reorderWindowNanos the reordering window (0: none, S6.5).
     * @param rttNanos           how long after it was sent a packet's ACK is due on the path (S7.4.1's estimate).
     * @return packets found lost, each reported to {@code listener} as an ACK would.
     */
    public int judgeHeld(final long nowNanos, final long reorderWindowNanos, final long rttNanos, final Listener listener)
    {
        if (!hasHeld())
        {
            return 0;
        }
        final long judged = judgeGaps(Psn.diff(lossJudgedTo, basePsn), highestAckedPsn, reorderWindowNanos > 0,
            nowNanos - rttNanos - reorderWindowNanos, nowNanos, listener);
        lossJudgedTo = (int)judged;
        return (int)(judged >>> 32);
    }

    /*
     * The loss walk of S6.5 from distance `from` above the base up to the highest PSN acknowledged: a packet in a gap is
     * lost, or a retransmission whose S6.6 mark is overtaken, but for those S6.5-2 holds (sent on the old route, only
     * the new route acknowledged above them, not yet overdue there) and, when `reordering`, those S6.5-3 holds (sent
     * after `lostIfSentBefore`).
     * @return the first PSN held (highestAcked when none is) in the low 32 bits, the packets reported lost above them
     */
    private long judgeGaps(final int from, final int highestAcked, final boolean reordering, final long lostIfSentBefore,
        final long nowNanos, final Listener listener)
    {
        final int highestAckedDistance = Psn.diff(highestAcked, basePsn);
        final boolean oldRoute = hasOldRoute() && !Psn.isBefore(highestAcked, routeStartPsn);
        int judgedTo = highestAcked;
        long lost = 0;
        for (int d = from; d < highestAckedDistance; d++)
        {
            final int psn = Psn.add(basePsn, d);
            final int slot = psn & SLOT_MASK;
            final byte state = states[slot];
            if (state == RELOCATED)
            {
                listener.onLost(handles[slot], psn);
                lost++;
                continue;
            }
            // what the gap is above: the packet itself, or its retransmission's mark (S6.6)
            final int sentAbove = state == OUTSTANDING ? psn : retransmitMarks[slot];
            if (state != OUTSTANDING && (state != RETRANSMITTED || !Psn.isAfter(highestAcked, sentAbove)))
            {
                continue;
            }
            final long sentAt = sentAtNanos[slot];
            if (oldRoute && Psn.isBefore(sentAbove, routeStartPsn) && !Psn.isAfter(oldRouteAckedTo, sentAbove) &&
                nowNanos - sentAt < oldRouteExpectedWithinNanos || reordering && sentAt - lostIfSentBefore > 0)
            {
                if (judgedTo == highestAcked)
                {
                    judgedTo = psn; // walked again from here by the next ACK or timer
                }
                continue;
            }
            listener.onLost(handles[slot], psn);
            lost++;
        }
        return lost << 32 | (judgedTo & 0xFFFF_FFFFL);
    }

    // the SACK bits 1 to above - 1 (bit 0 is the cumulative PSN itself, missing by definition), most significant
    // bit first within each big-endian word, set bits only, in PSN order
    // @return packets newly acknowledged; highestSacked is the highest set bit's index then (0: none)
    private int acknowledgeSacked(
        final MemorySegment segment, final long sackOffset, final int cumulative, final int above, final long nowNanos,
        final Listener listener)
    {
        int acked = 0;
        int highestSacked = 0;
        if (above > 1)
        {
            final int lastWord = (above - 1) >>> 6;
            for (int word = 0; word <= lastWord; word++)
            {
                long bits = SelectiveAckHeader.sackWord(segment, sackOffset, word);
                if (word == 0)
                {
                    bits &= Long.MAX_VALUE;
                }
                if (word == lastWord)
                {
                    bits &= -1L << (64 - (above - (word << 6))); // 1 to 64 bits lie below nextPsn
                }
                while (bits != 0)
                {
                    final int bit = Long.numberOfLeadingZeros(bits);
                    highestSacked = (word << 6) + bit;
                    acked += acknowledge(Psn.add(cumulative, highestSacked), nowNanos, listener);
                    bits &= ~(Long.MIN_VALUE >>> bit);
                }
            }
        }
        this.highestSacked = highestSacked;
        return acked;
    }

    private int acknowledge(final int psn, final long nowNanos, final Listener listener)
    {
        final int slot = psn & SLOT_MASK;
        final byte state = states[slot];
        if (state != OUTSTANDING && state != RETRANSMITTED && state != RELOCATED)
        {
            return 0;
        }
        states[slot] = ACKED;
        if (Psn.isBefore(psn, routeStartPsn) && Psn.isAfter(psn, oldRouteAckedTo))
        {
            oldRouteAckedTo = psn; // S6.5-2: a packet of the old route arrived, so did what it sent before it
        }
        if (state == RETRANSMITTED)
        {
            retransmittedCount--;
        }
        final long sinceSent = nowNanos - sentAtNanos[slot];
        if (state == RELOCATED)
        {
            listener.onRelocatedArrived(psn, sinceSent);
        }
        else if (state == RETRANSMITTED)
        {
            listener.onRetransmissionAcked(handles[slot], psn, sinceSent);
        }
        listener.onAcked(handles[slot], psn, state != RETRANSMITTED ? sinceSent : -1);
        return 1;
    }

    /**
     * Takes the outstanding packets (last) sent at or before {@code sentBeforeNanos} off this path after its
     * RTO (S7.4.1): hands each handle other than {@code placeholder} to {@code sink} and leaves
     * {@code placeholder} (a payload-free probe) at its PSN.
     * The PSNs stay outstanding with their states and marks, so the path's sequence space has no hole: the
     * receiver must still see every PSN (S6.3), and a placeholder lost too is found by S6.5 and sent again.
     *
     * @return how many handles were handed over.
     */
    public int relocate(final long placeholder, final long sentBeforeNanos, final java.util.function.LongConsumer sink)
    {
        int moved = 0;
        for (int psn = basePsn; psn != nextPsn; psn = Psn.next(psn))
        {
            final int slot = psn & SLOT_MASK;
            if ((states[slot] == OUTSTANDING || states[slot] == RETRANSMITTED) && handles[slot] != placeholder &&
                sentAtNanos[slot] <= sentBeforeNanos)
            {
                sink.accept(handles[slot]);
                handles[slot] = placeholder;
                if (states[slot] == OUTSTANDING)
                {
                    states[slot] = RELOCATED;
                }
                moved++;
            }
        }
        return moved;
    }

    /**
     * Hands every outstanding packet to {@code sink} and empties the window (a failed path's packets
     * move to live paths, S7.4).
     *
     * @return how many were handed over.
     */
    public int drain(final java.util.function.LongConsumer sink)
    {
        int moved = 0;
        while (basePsn != nextPsn)
        {
            final int slot = basePsn & SLOT_MASK;
            if (states[slot] == OUTSTANDING || states[slot] == RETRANSMITTED || states[slot] == RELOCATED)
            {
                sink.accept(handles[slot]);
                moved++;
            }
            states[slot] = FREE;
            basePsn = Psn.next(basePsn);
        }
        lossJudgedTo = basePsn;
        highestAckedPsn = basePsn;
        retransmittedCount = 0;
        return moved;
    }

    public String toString()
    {
        return "PathSendWindow{basePsn=" + basePsn + ", nextPsn=" + nextPsn + ", outstanding=" + outstanding() + '}';
    }
}
