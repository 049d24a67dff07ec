package io.spraynic.datapath.transport.spray;

/**
 * Smoothed RTT and retransmission timeout of each path of a connection (docs/PROTOCOL.md S6.8), RFC 6298 style:
 * {@code srtt} and {@code rttvar} with gains 1/8 and 1/4, {@code rto = srtt + max(4 rttvar, slack)} clamped
 * to {@code [rtoMin, rtoMax]}, doubled on each consecutive timeout. Samples come only from packets
 * acknowledged without retransmission (Karn). Times in nanoseconds.
 * <p>
 * The slack is there because a fabric with steady queues gives RTT samples so alike that {@code rttvar}
 * falls to a few hundred nanoseconds, while the ACK of the oldest packet may wait up to the receiver's
 * {@code ackDelay} plus a timer tick: without it, paths whose RTT exceeds {@code rtoMin} time out on
 * packets that were not lost (measured: 84 spurious RTOs in a 64 MiB transfer with 50 us of path skew).
 * A path without samples of its own takes the estimate of its slowest sibling path that has some
 * ({@link #rtoNanos(long, long)}), not the configured initial RTT.
 * <p>
 * The late margin (S6.8.1) is learnt: a timeout found spurious ({@link #onSpuriousTimeout}: the packet it gave up on
 * arrived after all) widens it to cover how late that packet was, at least doubling it, up to its cap; each clean
 * sample round narrows it by a quarter ({@link #decayLateMargin}), as RACK adapts its reordering window (RFC 8985).
 * One margin serves all the paths: descheduling is the hosts', not a route's; for the same reason a new connection
 * starts from the margin its engine's connections to the same peer learnt last, which ages while none changes it
 * ({@link LateMarginSeeds}, issue 14; per peer, so that a peer lying about duplicates widens only its own).
 * It is added above the clamped RTO and raises the ceiling with it, so that a host whose threads are descheduled
 * for longer than {@code rtoMax} stops timing out packets that are merely waiting for a CPU.
 * <p>
 * One instance holds every path of a connection, path-major in one {@code long[]}, methods taking the path (issue
 * 13: an idle connection's bytes; 8 estimator objects and their array cost 496 B, this 312 B).
 */
public final class RttEstimator
{
    /**
     * The bounds an estimator works within, the same for every path of a connection: held once, not per path
     * (issue 13: an idle connection's bytes).
     */
    static final class Limits
    {
        final long rtoMinNanos;
        final long rtoMaxNanos;
        final long slackNanos;
        final long lateMarginMaxNanos;
        /**
         * S6.5-3: the engine's reordering window, which its connections' loss walks hold gaps by, held here with the
         * other timing an engine's connections share (and so by no idle connection).
         */
        final ReorderWindow reorderWindow;
        /**
         * S6.8.1: the late margins the engine's connections learnt last, one per peer host: a new connection starts
         * from its peer's, since the margin measures the hosts, not the connection (issue 14: a fresh connection in a
         * warm process started from 0 and timed out every path's packets before it learnt again what its elders
         * knew); per peer, since it is learnt from the peer's word, and a lying peer's must stay its own. Each ages
         * ({@link #ageLateMarginSeed}): what a quiet engine learnt long ago says little of its hosts now.
         */
        final LateMarginSeeds seeds = new LateMarginSeeds();

        /**
         * @param slackNanos         least margin of the RTO above {@code srtt} (S6.8: the peer's {@code ackDelay}
         *                           plus the timer granularity).
         * @param lateMarginMaxNanos the most the late margin learnt from spurious timeouts may grow to (S6.8.1; 0:
         *                           none is learnt).
         */
        Limits(final long rtoMinNanos, final long rtoMaxNanos, final long slackNanos, final long lateMarginMaxNanos)
        {
            this(rtoMinNanos, rtoMaxNanos, slackNanos, lateMarginMaxNanos, new ReorderWindow(0, 0));
        }

        /** @param reorderWindow the engine's reordering window (S6.5-3). */
        Limits(final long rtoMinNanos, final long rtoMaxNanos, final long slackNanos, final long lateMarginMaxNanos,
            final ReorderWindow reorderWindow)
        {
            if (rtoMinNanos <= 0 || rtoMaxNanos < rtoMinNanos || slackNanos < 0 || lateMarginMaxNanos < 0)
            {
                throw new IllegalArgumentException("need 0 < rtoMin <= rtoMax, slack >= 0 and lateMarginMax >= 0 (got " +
                    rtoMinNanos + ", " + rtoMaxNanos + ", " + slackNanos + ", " + lateMarginMaxNanos + ")");
            }
            this.rtoMinNanos = rtoMinNanos;
            this.rtoMaxNanos = rtoMaxNanos;
            this.slackNanos = slackNanos;
            this.lateMarginMaxNanos = lateMarginMaxNanos;
            this.reorderWindow = reorderWindow;
        }

        /**
         * @return the late margin a new connection to the peer at {@code peerHigh:peerLow} (128 bits) starts from
         * (S6.8.1): what the engine's connections to it learnt or narrowed last, aged; 0 for a peer without one.
         */
        long lateMarginSeedNanos(final long peerHigh, final long peerLow)
        {
            return seeds.seed(seeds.key(peerHigh, peerLow));
        }

        /**
         * S6.8.1: the engine's tick. A seed narrows by a quarter, as a clean round narrows a connection's margin, for
         * each {@code quietNanos} in which no connection to its peer learnt or narrowed its margin (below 1 us it is
         * 0), so that a connection opened after a quiet spell does not wait on a margin its hosts may no longer need
         * before it resends a packet lost where no probe finds it (S6.7). O(1): seeds age when read or written.
         *
         * @param quietNanos the engine's {@code connectionTimeout}: beyond it, silence is not trusted either.
         */
        void ageLateMarginSeed(final long nowNanos, final long quietNanos)
        {
            seeds.tick(nowNanos, quietNanos);
        }
    }

    // path-major, STRIDE longs a path (issue 13: one array for all paths' estimates, not an object each)
    private static final int SRTT = 0;
    private static final int RTTVAR = 1;
    private static final int MIN_RTT = 2;
    private static final int BACKOFF = 3;
    private static final int STRIDE = 4;
    /** The most paths one estimator holds: a bit of {@link #sampled} each. */
    static final int MAX_PATHS = Long.SIZE;

    private final Limits limits;
    private final long[] state;
    /** Bit {@code path}: whether the path has an RTT sample since its last reset. */
    private long sampled;
    /** S6.8.1: one margin for all the paths (descheduling is the hosts', not a route's). */
    private long lateMarginNanos;
    /** S6.8.1: the key of the peer (its plane 0 address) whose seed the margin starts from and goes back to. */
    private final int peerSeedKey;

    /** One path's estimator. */
    public RttEstimator(final long rtoMinNanos, final long rtoMaxNanos, final long initialRttNanos)
    {
        this(rtoMinNanos, rtoMaxNanos, initialRttNanos, 0);
    }

    /**
     * One path's estimator.
     *
     * @param slackNanos least margin of the RTO above {@code srtt} (S6.8: the peer's {@code ackDelay} plus
     *                   the timer granularity).
     */
    public RttEstimator(final long rtoMinNanos, final long rtoMaxNanos, final long initialRttNanos, final long slackNanos)
    {
        this(rtoMinNanos, rtoMaxNanos, initialRttNanos, slackNanos, 0);
    }

    /**
     * One path's estimator.
     *
     * @param slackNanos         least margin of the RTO above {@code srtt} (S6.8: the peer's {@code ackDelay} plus
     *                           the timer granularity).
     * @param lateMarginMaxNanos the most the late margin learnt from spurious timeouts may grow to (S6.8.1; 0: none
     *                           is learnt).
     */
    public RttEstimator(
        final long rtoMinNanos,
        final long rtoMaxNanos,
        final long initialRttNanos,
        final long slackNanos,
        final long lateMarginMaxNanos)
    {
        this(1, new Limits(rtoMinNanos, rtoMaxNanos, slackNanos, lateMarginMaxNanos), initialRttNanos);
    }

    /** The estimators of {@code paths} paths within {@code limits}, shared with the engine's other connections. */
    /** @return the engine's reordering window (S6.5-3), shared with its limits. */
    ReorderWindow reorderWindow()
    {
        return limits.reorderWindow;
    }

    RttEstimator(final int paths, final Limits limits, final long initialRttNanos)
    {
        this(paths, limits, initialRttNanos, 0, 0);
    }

    /**
     * @param peerHigh the peer's address (on plane 0) as 128 bits, first 64: whose seed the late margin starts from
     *                 and goes back to (S6.8.1).
     * @param peerLow  its last 64 bits ({@code ::ffff:a.b.c.d} for IPv4).
     */
    RttEstimator(final int paths, final Limits limits, final long initialRttNanos, final long peerHigh,
        final long peerLow)
    {
        if (initialRttNanos <= 0 || paths < 1 || paths > MAX_PATHS)
        {
            throw new IllegalArgumentException("need initialRtt > 0 and 1 <= paths <= " + MAX_PATHS + " (got " +
                initialRttNanos + ", " + paths + ")");
        }
        this.limits = limits;
        state = new long[paths * STRIDE];
        for (int path = 0; path < paths; path++)
        {
            reset(path, initialRttNanos);
        }
        peerSeedKey = limits.seeds.key(peerHigh, peerLow);
        lateMarginNanos = limits.seeds.seed(peerSeedKey);
    }

    /**
     * Forgets the path's history (re-pathing, S7.3): its route changed. The late margin stays: it measures the
     * hosts' scheduling, not the route.
     */
    public void reset(final int path, final long initialRttNanos)
    {
        final int at = path * STRIDE;
        state[at + SRTT] = initialRttNanos;
        state[at + RTTVAR] = initialRttNanos / 2;
        state[at + MIN_RTT] = Long.MAX_VALUE;
        state[at + BACKOFF] = 0;
        sampled &= ~(1L << path);
    }

    public void onSample(final int path, final long rttNanos)
    {
        if (rttNanos < 0)
        {
            return;
        }
        final int at = path * STRIDE;
        if (!hasSample(path))
        {
            state[at + SRTT] = rttNanos;
            state[at + RTTVAR] = rttNanos / 2;
            sampled |= 1L << path;
        }
        else
        {
            final long srtt = state[at + SRTT];
            state[at + RTTVAR] += (Math.abs(srtt - rttNanos) - state[at + RTTVAR]) / 4;
            state[at + SRTT] = srtt + (rttNanos - srtt) / 8;
        }
        state[at + MIN_RTT] = Math.min(state[at + MIN_RTT], rttNanos);
        state[at + BACKOFF] = 0;
    }

    /**
     * S6.8.1: the path's timeout of a packet that arrived after all was spurious: its backoff is undone and the
     * late margin of all the paths grows to cover the packet's round trip, at least doubling, up to its cap.
     *
     * @param lateRttNanos the round trip of the packet the timeout gave up on (sent to acknowledged).
     */
    public void onSpuriousTimeout(final int path, final long lateRttNanos)
    {
        final int at = path * STRIDE;
        state[at + BACKOFF] = 0;
        if (limits.lateMarginMaxNanos == 0)
        {
            return;
        }
        final long shortBy = Math.max(0, lateRttNanos - rto(path, state[at + SRTT], state[at + RTTVAR], 0));
        lateMarginNanos = Math.min(limits.lateMarginMaxNanos,
            Math.max(Math.max(2 * lateMarginNanos, Math.max(limits.slackNanos, 1_000)), shortBy + shortBy / 4));
        limits.seeds.changed(peerSeedKey, lateMarginNanos);
    }

    /** S6.8.1: a sample round without a spurious timeout: the late margin narrows by a quarter. */
    public void decayLateMargin()
    {
        if (lateMarginNanos == 0)
        {
            return; // nothing learnt here: leave the peer's seed to the connections that learnt one
        }
        lateMarginNanos = narrowed(lateMarginNanos);
        limits.seeds.changed(peerSeedKey, lateMarginNanos);
    }

    /** @return the late margin a quarter narrower, 0 below 1 us (S6.8.1). */
    static long narrowed(final long marginNanos)
    {
        final long narrower = marginNanos - (marginNanos >> 2);
        return narrower < 1_000 ? 0 : narrower;
    }

    /** @return the margin learnt from spurious timeouts (S6.8.1), added to the RTO while no sibling path shows a path dead. */
    public long lateMarginNanos()
    {
        return lateMarginNanos;
    }

    /**
     * @return the least RTT sampled on the path since its last reset ({@code Long.MAX_VALUE} without one): an ACK of
     * a retransmission that comes sooner after it than this answers the original (RFC 8985 S6.2, S6.8.1).
     */
    public long minRttNanos(final int path)
    {
        return state[path * STRIDE + MIN_RTT];
    }

    /**
     * A retransmission timeout fired on the path: back off.
     */
    public void onTimeout(final int path)
    {
        final int at = path * STRIDE + BACKOFF;
        if (state[at] < 16)
        {
            state[at]++;
        }
    }

    public long srttNanos(final int path)
    {
        return state[path * STRIDE + SRTT];
    }

    public long rttvarNanos(final int path)
    {
        return state[path * STRIDE + RTTVAR];
    }

    public boolean hasSample(final int path)
    {
        return (sampled & (1L << path)) != 0;
    }

    public int consecutiveTimeouts(final int path)
    {
        return (int)state[path * STRIDE + BACKOFF];
    }

    public long rtoNanos(final int path)
    {
        return rto(path, srttNanos(path), rttvarNanos(path), lateMarginNanos);
    }

    /**
     * The RTO of the path, which when it has no sample of its own (S6.8) is computed from the larger of its
     * initial estimate and a sibling path's, taken as a first sample would be ({@code rttvar = srtt / 2}): a
     * path's first packets must not time out merely because its route is slower than the configured initial
     * RTT, or than the paths measured so far.
     *
     * @param siblingSrttNanos   the largest smoothed RTT of the connection's sampled paths (0: none).
     * @param siblingRttvarNanos the largest RTT variation of those paths.
     */
    public long rtoNanos(final int path, final long siblingSrttNanos, final long siblingRttvarNanos)
    {
        return rtoNanos(path, siblingSrttNanos, siblingRttvarNanos, true);
    }

    /**
     * @param withLateMargin whether the learnt late margin (S6.8.1) is added: not while a sibling path shows this
     *                       one silent alone, so that a dead link is found as fast as without it.
     * @return as {@link #rtoNanos(int, long, long)}.
     */
    public long rtoNanos(
        final int path, final long siblingSrttNanos, final long siblingRttvarNanos, final boolean withLateMargin)
    {
        final long margin = withLateMargin ? lateMarginNanos : 0;
        final long srtt = srttNanos(path);
        final long rttvar = rttvarNanos(path);
        // as if the sibling's RTT were this path's first sample (RFC 6298: rttvar = R / 2, so RTO = 3 R): its
        // route may well be slower than every path measured so far
        return hasSample(path) ? rto(path, srtt, rttvar, margin) : rto(path, Math.max(srtt, siblingSrttNanos),
            Math.max(rttvar, Math.max(siblingRttvarNanos, siblingSrttNanos / 2)), margin);
    }

    /**
     * @return the path's smoothed RTT, or for a path without samples the larger of it and {@code siblingSrttNanos}.
     */
    public long srttNanos(final int path, final long siblingSrttNanos)
    {
        final long srtt = srttNanos(path);
        return hasSample(path) ? srtt : Math.max(srtt, siblingSrttNanos);
    }

    private long rto(final int path, final long srtt, final long rttvar, final long lateMargin)
    {
        // rtoMax bounds the variation's share, never the RTO below srtt + slack: on a loaded host a path's round
        // trip can exceed rtoMax (measured on the Linux ECMP lab: srtt up to 1.5 s against rtoMax 200 ms), and an
        // RTO under it times out every packet of the path
        final long ceiling = Math.max(limits.rtoMaxNanos, srtt + limits.slackNanos);
        final long base = Math.max(limits.rtoMinNanos, Math.min(ceiling, srtt + Math.max(4 * rttvar, limits.slackNanos)));
        return Math.min(ceiling + lateMargin, (base + lateMargin) << consecutiveTimeouts(path));
    }
}
