package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.Psn;

import java.util.SplittableRandom;

/**
 * The outbound paths of one spray connection (docs/PROTOCOL.md S6, S7): each path's send window, RTT estimate
 * and congestion window, its UDP source port (its route through the fabric), whether it is live, when it was
 * last acknowledged and probed; and the decisions made from them: which path the next packet takes (S7.2), when
 * a lossy or slow path changes route (S7.3), failure and restore (S7.4, S7.5), which path control packets
 * take back (S6.4), how a path without RTT samples is timed (S6.8), and when a path's data and control
 * packets move to a new source port so that ECMP spreads the connection evenly (S7.7).
 * <p>
 * The per-path arrays are package-private for the connection's timers to read without calls; the decisions
 * that change several of them are methods. Allocation-free after construction.
 */
final class PathScheduler
{
    private static final long NONE = PathLentTimes.NONE;
    private static final int PATH_SPACING = 1 << 18;
    // S7.3: a path's loss rate is measured over its last 256 to 512 packets: the sample being filled and the
    // one before it. It is judged on every loss once the two hold at least MIN_LOSS_SAMPLE packets, because a
    // lossy path's window collapses and it may take very long to send 256 more. RTT is judged every 256 packets.
    private static final int MIN_LOSS_SAMPLE = 32;
    private static final int LAST_ACK_SEQUENCE = 0;
    private static final int WRR_CURRENT = 1;
    private static final int SAMPLE_SENT = 2;
    private static final int SAMPLE_LOST = 3;
    private static final int PREVIOUS_SENT = 4;
    private static final int PREVIOUS_LOST = 5;
    private static final int PORT_PACKETS = 6;
    private static final int PORT_BUDGET = 7;
    private static final int PARKED_NEXT_PSN = 8;
    /** The data packets' UDP source port in the low 16 bits, the control packets' in the high 16 (issue 13). */
    private static final int PORTS = 9;
    private static final int TIMEOUTS = 10;
    private static final int STRIDE = 11;
    /** The most paths a connection has (S1.3). */
    static final int MAX_PATHS = 64;

    private final int paths;
    private final SprayConfig config;
    private final SplittableRandom random;

    /**
     * The paths' send windows, indexed by path: while the connection has traffic the array lent with its tables
     * ({@link ConnectionStorage#windows}), while it is idle its engine's array of the shared empty window for its
     * shape (issue 13: an idle connection holds neither windows nor the array). Read it through this field, never
     * cached: it changes at {@link #unparkWindows} and {@link #parkWindows}.
     */
    PathSendWindow[] sendWindows;
    /** Every path's RTT estimate (S6.8), indexed by path. */
    final RttEstimator rtt;
    /** Every path's congestion window (S8.2), indexed by path. */
    final PathCongestionControl congestionWindows;
    /**
     * The paths' times lent with the send windows ({@link PathLentTimes}); while the windows are parked, the idle
     * connections' shared set, which nothing writes or reads.
     */
    PathLentTimes times;
    /**
     * The scheduler's own per-path integers, path-major in one array (issue 13: one array header for all of them,
     * not one per field): the last ACK sequence taken (S6.5; whether one was is a bit of {@link #ackSequenceSeen}),
     * the weighted round robin's credit
     * (S7.2), the packets sent and lost in the loss sample being filled and the one before (S7.3), packets placed on
     * the path's source port and how many it takes before rotating (S7.7), the next PSN of a path whose send
     * window is parked (S6.1; all of a window's state while it is empty), the path's UDP source port and the source
     * port of the control packets sent on it in one int (S7.7: the path's port, except that it does not rotate; it
     * moves when the path changes route for cause, S7.3, S7.5) and its timeouts in a row none answered by an ACK (S7.4).
     */
    private final int[] pathInts;
    /**
     * S7.2, S7.4.1: bit {@code path} set while the path is ACTIVE (clear while FAILED: the paths' states, issue 13:
     * no array of them), and while it is ACTIVE and has not timed out since its last ACK: kept where states and
     * timeouts change, so that {@link #pick} visits only the paths that may take data.
     */
    private long activePaths;
    private long answeringPaths;
    /** Bit {@code path}: an ACK of the path was taken, so its last ACK sequence is one (S6.5). */
    private long ackSequenceSeen;
    // S7.3: loss rates and RTTs of all paths, sorted for their median: the engine's, lent for one call
    private final double[] scratch;
    // S6.8: the slowest sampled path's estimates, for paths without samples (refreshed every tick)
    private long siblingSrtt;
    private long siblingRttvar;
    // S8.4's window rate as last computed, and the change count of its inputs then (issue 13: the sender asks for it
    // on every pass, at 64 B about once a packet, and it costs a division per live path; it changes with an ACK's RTT
    // sample, a round's window, a path failed or restored)
    // (the counts are ints that may wrap: a key is only compared for equality with the previous call's, and 2^32
    // changes never pass between two passes; windowRateMtu 0: never computed)
    private double windowRate;
    private int windowRateInputs;
    private int windowRateMtu;
    // counts the changes of what the window rate reads besides the windows: the active set, the paths' srtt (each
    // sample and reset) and the sibling SRTT
    private int pathChanges;
    // S6.8.1: loss samples ended since the late margin last narrowed
    private int lateMarginRounds;
    // S7.6: since when every path is failed
    private long allFailedSince = NONE;

    /**
     * What the path schedulers of one engine's connections share (issue 13: an idle connection holds only its own
     * state): the RTT estimators' limits and the windows' parameters, which come from the engine's configuration,
     * and the scratch the median of S7.3 is sorted in (engine thread only).
     */
    static final class Shared
    {
        final RttEstimator.Limits rttLimits;
        final PathCongestionControl.Parameters windowParameters;
        final double[] scratch;

        Shared(final SprayConfig config, final int paths)
        {
            rttLimits = new RttEstimator.Limits(config.rtoMinNanos, config.rtoMaxNanos,
                config.ackDelayNanos + config.rtoSlackNanos, config.lateMarginMaxNanos,
                new ReorderWindow(config.reorderWindowNanos, config.reorderWindowMaxNanos));
            windowParameters = new PathCongestionControl.Parameters(config.initialWindow, config.maxWindow,
                config.gain, 1.0);
            scratch = new double[paths];
        }
    }

    PathScheduler(
        final int paths, final SprayConfig config, final SplittableRandom random, final int initialPsn,
        final int sourcePortBase)
    {
        this(paths, config, random, initialPsn, sourcePortBase, null, null, new Shared(config, paths));
    }

    /**
     * @param idleWindows null: the paths' send windows (and their array) are the scheduler's own, for good; otherwise
     *                    {@code paths} entries naming one empty window without records ({@link #idleWindows}), shared
     *                    by idle connections, which {@link #sendWindows} is until the connection lends it windows
     *                    ({@link #unparkWindows}; issue 13: an idle connection holds no window, only each path's
     *                    next PSN).
     * @param idleTimes   with {@code idleWindows}: the times idle connections name ({@link PathLentTimes}), else null.
     * @param shared     made from {@code config}, for at least {@code paths} paths.
     */
    PathScheduler(
        final int paths, final SprayConfig config, final SplittableRandom random, final int initialPsn,
        final int sourcePortBase, final PathSendWindow[] idleWindows, final PathLentTimes idleTimes,
        final Shared shared)
    {
        this(paths, config, random, initialPsn, sourcePortBase, idleWindows, idleTimes, shared, 0, 0);
    }

    /**
     * As above, for a connection to the peer at {@code peerHigh:peerLow} (its plane 0 address, 128 bits): the late
     * margin starts from that peer's seed and goes back to it (S6.8.1, {@link LateMarginSeeds}).
     */
    PathScheduler(
        final int paths, final SprayConfig config, final SplittableRandom random, final int initialPsn,
        final int sourcePortBase, final PathSendWindow[] idleWindows, final PathLentTimes idleTimes,
        final Shared shared, final long peerHigh, final long peerLow)
    {
        if (shared.scratch.length < paths)
        {
            throw new IllegalArgumentException("scratch for " + shared.scratch.length + " paths, need " + paths);
        }
        if (null != idleWindows && idleWindows.length != paths)
        {
            throw new IllegalArgumentException(idleWindows.length + " idle windows for " + paths + " paths");
        }
        this.paths = paths;
        this.config = config;
        this.random = random;
        sendWindows = null == idleWindows ? new PathSendWindow[paths] : idleWindows;
        rtt = new RttEstimator(paths, shared.rttLimits, config.initialRttNanos, peerHigh, peerLow);
        congestionWindows = new PathCongestionControl(paths, shared.windowParameters);
        attachTimes(null == idleTimes ? new PathLentTimes(paths) : idleTimes);
        scratch = shared.scratch;
        pathInts = new int[paths * STRIDE];
        for (int path = 0; path < paths; path++)
        {
            final int firstPsn = initialPsn(initialPsn, path);
            if (null == idleWindows)
            {
                sendWindows[path] = new PathSendWindow(firstPsn);
            }
            pathInts[path * STRIDE + PARKED_NEXT_PSN] = firstPsn;
            final int port = (sourcePortBase + path) & 0xFFFF;
            ports(path * STRIDE, port, port);
            pathInts[path * STRIDE + PORT_BUDGET] = rotationBudget();
        }
        activePaths = paths == Long.SIZE ? -1L : (1L << paths) - 1; // every path starts ACTIVE, answering
        answeringPaths = activePaths;
    }

    /** @return the first PSN of a path's sequence space, given the connection's initial PSN (S6.1). */
    static int initialPsn(final int initialPsn, final int path)
    {
        return Psn.add(initialPsn, path * PATH_SPACING);
    }

    // ---- send windows lent while the connection has traffic (issue 13)

    /** @return what idle connections of {@code paths} paths name as their send windows: every entry {@code idle}. */
    static PathSendWindow[] idleWindows(final PathSendWindow idle, final int paths)
    {
        final PathSendWindow[] windows = new PathSendWindow[paths];
        java.util.Arrays.fill(windows, idle);
        return windows;
    }

    /**
     * The connection has traffic: its paths' send windows are {@code lent} (empty, from its engine's pool, the
     * array too: {@link #sendWindows} is it from now), each restarted at the path's parked next PSN, with a set of
     * {@link PathLentTimes}. Allocation-free.
     */
    void unparkWindows(final PathSendWindow[] lent, final PathLentTimes times)
    {
        if (lent.length != paths)
        {
            throw new IllegalArgumentException(lent.length + " windows lent for " + paths + " paths");
        }
        attachTimes(times);
        for (int path = 0; path < paths; path++)
        {
            lent[path].reset(pathInts[path * STRIDE + PARKED_NEXT_PSN]);
        }
        sendWindows = lent;
    }

    /**
     * The connection went idle: each path's send window, empty, goes back with its tables (the array too); only its
     * next PSN stays here, and {@link #sendWindows} is {@code idleWindows} (every entry the shape's empty window
     * without records, {@link #idleWindows}) until {@link #unparkWindows}; the times go back too, the idle
     * connections' shared set named instead.
     */
    void parkWindows(final PathSendWindow[] idleWindows, final PathLentTimes idleTimes)
    {
        if (idleWindows.length != paths)
        {
            throw new IllegalArgumentException(idleWindows.length + " idle windows for " + paths + " paths");
        }
        for (int path = 0; path < paths; path++)
        {
            if (sendWindows[path].outstanding() != 0)
            {
                throw new IllegalStateException("path " + path + " has packets outstanding: " + sendWindows[path]);
            }
        }
        attachTimes(idleTimes);
        for (int path = 0; path < paths; path++)
        {
            pathInts[path * STRIDE + PARKED_NEXT_PSN] = sendWindows[path].nextPsn();
        }
        sendWindows = idleWindows;
    }

    private void attachTimes(final PathLentTimes times)
    {
        this.times = times;
    }

    /** @return whether the path's send window is parked: the connection holds none ({@link #parkWindows}). */
    boolean isParked(final int path)
    {
        return !sendWindows[path].isAttached();
    }

    /** @return whether the path is ACTIVE (S7.4: else FAILED). */
    boolean isActive(final int path)
    {
        return (activePaths & (1L << path)) != 0;
    }

    /** @return {@link SprayConnection#ACTIVE} or {@link SprayConnection#FAILED} (S7.4). */
    int state(final int path)
    {
        return isActive(path) ? SprayConnection.ACTIVE : SprayConnection.FAILED;
    }

    /** @return the PSN the path's next new packet takes (S6.1), its window lent or parked. */
    int nextPsn(final int path)
    {
        return isParked(path) ? pathInts[path * STRIDE + PARKED_NEXT_PSN] : sendWindows[path].nextPsn();
    }

    /**
     * What {@link PathSendWindow#onAck} answers for a parked (so empty) window: an ACK fits it only with the
     * cumulative PSN at the path's next PSN, and acknowledges nothing.
     *
     * @return 0, or -1 when the ACK does not fit (stale or forged).
     */
    int onAckOfParked(final int path, final int cumulativePsn)
    {
        return cumulativePsn == pathInts[path * STRIDE + PARKED_NEXT_PSN] ? 0 : -1;
    }

    // ---- ACKs

    /** @return whether an ACK of the path with this sequence number is older than one already taken (S6.5). */
    boolean isStaleAck(final int path, final int ackSequence)
    {
        final int at = path * STRIDE;
        return (ackSequenceSeen & (1L << path)) != 0 && ackSequence - pathInts[at + LAST_ACK_SEQUENCE] <= 0;
    }

    /**
     * A retransmission timeout fired on the path (S6.8) at {@code now}, the loss detector's to report. Its data port
     * is suspect from now (S7.7.1) until an ACK of the path or {@code suspectPort} from now.
     *
     * @return the path's timeouts in a row now, none answered by an ACK: at {@code failAfterTimeouts} it fails (S7.4).
     */
    int onTimeout(final int path, final long now)
    {
        answeringPaths &= ~(1L << path);
        if (!isParked(path)) // the idle connections' shared set is never written
        {
            final PortMemory ports = times.ports;
            ports.advance(now);
            final PathSendWindow window = sendWindows[path];
            final long since = window.outstanding() > 0 ? window.oldestSentAtNanos() : now;
            ports.suspect(planeOf(path), sourcePort(path), since, now + config.suspectPortNanos);
        }
        return ++pathInts[path * STRIDE + TIMEOUTS];
    }

    /** @return the path's timeouts in a row, none answered by an ACK (S7.4). */
    int consecutiveTimeouts(final int path)
    {
        return pathInts[path * STRIDE + TIMEOUTS];
    }

    /** @return whether the path timed out since its last ACK (S7.4.1: its overdue packets may go elsewhere). */
    boolean timedOutSinceAck(final int path)
    {
        return pathInts[path * STRIDE + TIMEOUTS] > 0;
    }

    /** An ACK of the path was taken: it answers, its timeouts end. */
    void onAckTaken(final int path, final int ackSequence, final long now)
    {
        ackSequenceSeen |= 1L << path;
        pathInts[path * STRIDE + LAST_ACK_SEQUENCE] = ackSequence;
        if (!isParked(path)) // the idle connections' shared set is never written
        {
            times.lastAckAt[path] = now;
            times.ports.advance(now);
            if (pathInts[path * STRIDE + TIMEOUTS] > 0)
            {
                times.ports.answered(planeOf(path), sourcePort(path)); // S7.7.1: a loss, not a dead route
            }
        }
        pathInts[path * STRIDE + TIMEOUTS] = 0;
        answeringPaths |= activePaths & (1L << path);
    }

    // ---- S7.2: which path the next packet takes

    /**
     * Smooth weighted round robin over the ACTIVE paths with window space, weight = free window.
     *
     * @return the path, or -1 if none has room.
     */
    int pick()
    {
        // S7.4.1: a path that timed out and has not been acknowledged since gets no data while another
        // live path has not timed out: its packets would wait for another RTO
        final long candidates = answeringPaths != 0 ? answeringPaths : activePaths;
        // S7.7: a path due to rotate with packets still in flight waits for them while another path has room
        int best = pick(candidates, config.rotateMinPackets > 0);
        if (best < 0 && config.rotateMinPackets > 0)
        {
            best = pick(candidates, false);
        }
        if (best >= 0)
        {
            placedOnPort(best);
        }
        return best;
    }

    private int pick(final long candidates, final boolean skipDraining)
    {
        int total = 0;
        int best = -1;
        int bestCredit = 0;
        for (long left = candidates; left != 0; left &= left - 1) // in path order: ties go to the lower path
        {
            final int path = Long.numberOfTrailingZeros(left);
            final int at = path * STRIDE;
            final int outstanding = sendWindows[path].outstanding();
            if (skipDraining && outstanding > 0 && pathInts[at + PORT_PACKETS] >= pathInts[at + PORT_BUDGET])
            {
                continue;
            }
            final int free = Math.min(congestionWindows.window(path), PathSendWindow.CAPACITY) - outstanding;
            if (free <= 0)
            {
                continue;
            }
            final int credit = pathInts[at + WRR_CURRENT] + free;
            pathInts[at + WRR_CURRENT] = credit;
            total += free;
            if (best < 0 || credit > bestCredit)
            {
                best = path;
                bestCredit = credit;
            }
        }
        if (best >= 0)
        {
            pathInts[best * STRIDE + WRR_CURRENT] -= total;
        }
        return best;
    }

    /** @return the path's smooth weighted round robin credit (S7.2), for tests. */
    int roundRobinCredit(final int path)
    {
        return pathInts[path * STRIDE + WRR_CURRENT];
    }

    // ---- S7.7: source-port rotation

    /**
     * A packet goes on the path: once the path's port has carried its budget and nothing of the path is in flight,
     * the path moves to a new port first. Only then: a path is FIFO (S6.2) because its packets share one route, so a
     * packet on a new route must not overtake one still on the old route, where S6.5 would take the gap for loss.
     */
    void placedOnPort(final int path)
    {
        if (config.rotateMinPackets > 0 && portSpent(path) && sendWindows[path].outstanding() == 0)
        {
            final long provenAt = times.answeredSentAt[path];
            if (!isParked(path) && pathInts[path * STRIDE + TIMEOUTS] == 0 && provenAt != NONE)
            {
                times.ports.healthy(planeOf(path), sourcePort(path), provenAt); // its run, acknowledged in full
            }
            sourcePort(path, newSourcePort(path));
            pathInts[path * STRIDE + PORT_PACKETS] = 0;
            pathInts[path * STRIDE + PORT_BUDGET] = rotationBudget();
            // the RTT estimate goes on: restarting it every run cost goodput under loss (SprayReorderTest at 10 %:
            // 0.749 and 0.482 of lossless against 0.753 and 0.505), and routes 25-50 us apart time nothing out
        }
        pathInts[path * STRIDE + PORT_PACKETS]++;
    }

    /** @return whether the packet just placed on the path is the last of its port's budget: it asks for an ACK. */
    boolean endsPortRun(final int path)
    {
        final int at = path * STRIDE;
        return config.rotateMinPackets > 0 && pathInts[at + PORT_PACKETS] == pathInts[at + PORT_BUDGET];
    }

    // S7.7: the path's port carried its budget
    boolean portSpent(final int path)
    {
        final int at = path * STRIDE;
        return pathInts[at + PORT_PACKETS] >= pathInts[at + PORT_BUDGET];
    }

    /**
     * @return the source port of a control packet sent on the path now. Control packets do not rotate: an ACK's route
     * is part of the RTT its path's sender measures (S6.8), and moving it under that estimate makes packets that were
     * not lost time out (measured in {@code SprayReorderTest}, 25 and 50 us between routes: 5 and 111 needless
     * retransmissions when ACKs rotated every 16-32).
     */
    int controlPort(final int path)
    {
        return pathInts[path * STRIDE + PORTS] >>> 16;
    }

    /** @return the UDP source port of the path's data packets now (S7.3, S7.7): its route through the fabric. */
    int sourcePort(final int path)
    {
        return pathInts[path * STRIDE + PORTS] & 0xFFFF;
    }

    /** The path's data packets take another source port, another route (S7.5: a failed path probes on a new one). */
    void sourcePort(final int path, final int port)
    {
        final int at = path * STRIDE;
        ports(at, port, pathInts[at + PORTS] >>> 16);
    }

    private void ports(final int at, final int sourcePort, final int controlPort)
    {
        pathInts[at + PORTS] = (sourcePort & 0xFFFF) | controlPort << 16;
    }

    private int rotationBudget()
    {
        final int min = config.rotateMinPackets;
        return min <= 0 ? Integer.MAX_VALUE : min + random.nextInt(config.rotateMaxPackets - min + 1);
    }

    // ---- S7.3: repathing a lossy or slow path

    /** @return true when the path's sample is full: the caller ends it ({@link #endLossSample}). */
    boolean countSent(final int path)
    {
        return ++pathInts[path * STRIDE + SAMPLE_SENT] >= PathSendWindow.CAPACITY;
    }

    void countLost(final int path)
    {
        pathInts[path * STRIDE + SAMPLE_LOST]++;
    }

    /** Starts the path's next sample. @return whether the path should change route (lossy, or slow). */
    boolean endLossSample(final int path)
    {
        final int at = path * STRIDE;
        pathInts[at + PREVIOUS_SENT] = pathInts[at + SAMPLE_SENT];
        pathInts[at + PREVIOUS_LOST] = pathInts[at + SAMPLE_LOST];
        if (++lateMarginRounds >= paths)
        {
            // S6.8.1: the connection's late margin narrows once per P samples (every 256 x P packets it sends)
            lateMarginRounds = 0;
            rtt.decayLateMargin();
        }
        rtt.reorderWindow().onSampleEnded(); // S6.5-3: one more sample; clean unless a spurious loss came since
        pathInts[at + SAMPLE_SENT] = 0;
        pathInts[at + SAMPLE_LOST] = 0;
        for (int other = 0; other < paths; other++)
        {
            scratch[other] = rtt.srttNanos(other);
        }
        final double medianRtt = Median.ofFirst(scratch, paths);
        return isLossy(path) || (rtt.hasSample(path) && rtt.srttNanos(path) > config.repathRttFactor * medianRtt);
    }

    /** @return whether the path loses more than repathLoss while most paths lose under half of it. */
    boolean isLossy(final int path)
    {
        for (int other = 0; other < paths; other++)
        {
            final int at = other * STRIDE;
            final int sent = pathInts[at + PREVIOUS_SENT] + pathInts[at + SAMPLE_SENT];
            final int lost = pathInts[at + PREVIOUS_LOST] + pathInts[at + SAMPLE_LOST];
            scratch[other] = sent < MIN_LOSS_SAMPLE ? 0 : (double)lost / sent;
        }
        return scratch[path] > config.repathLoss && Median.ofFirst(scratch, paths) < config.repathLoss / 2;
    }

    /** A new route for the path: a new source port, its RTT estimate and loss samples start over. */
    void repath(final int path)
    {
        final int at = path * STRIDE;
        final int port = newSourcePort(path);
        ports(at, port, port);
        pathInts[at + PORT_PACKETS] = 0;
        rtt.reset(path, config.initialRttNanos);
        pathChanges++; // its srtt is the initial one again: an input of the window rate
        pathInts[at + SAMPLE_SENT] = 0;
        pathInts[at + SAMPLE_LOST] = 0;
        pathInts[at + PREVIOUS_SENT] = 0;
        pathInts[at + PREVIOUS_LOST] = 0;
    }

    /**
     * An RTT sample of the path (S6.8.1; negative: none, the packet was retransmitted): into its estimator, and
     * counted as a change of the window rate's inputs ({@link #windowRate}), as every change of a path's srtt is.
     */
    void onRttSample(final int path, final long rttNanos)
    {
        if (rttNanos >= 0)
        {
            rtt.onSample(path, rttNanos);
            pathChanges++;
        }
    }

    /**
     * @return the path's next data port (S7.3, S7.5, S7.7): while its plane has a suspect port, one proven healthy
     * since (S7.7.1, {@link PortMemory#drawHealthy}); else an unused port at random in 49152-65535, not suspect.
     */
    int newSourcePort(final int path)
    {
        final int plane = planeOf(path);
        final PortMemory ports = times.ports;
        final int healthy = isParked(path) ? -1 : ports.drawHealthy(plane, random, this);
        if (healthy >= 0)
        {
            return healthy;
        }
        while (true)
        {
            final int port = unusedSourcePort();
            if (isParked(path) || !ports.isSuspect(plane, port))
            {
                return port;
            }
        }
    }

    // an unused port chosen at random in 49152-65535
    int unusedSourcePort()
    {
        while (true)
        {
            final int port = 49152 + random.nextInt(16384);
            if (!inUse(port))
            {
                return port;
            }
        }
    }

    /** @return whether a path's data packets go on the port now. */
    boolean inUse(final int port)
    {
        boolean used = false;
        for (int path = 0; path < paths; path++)
        {
            used |= sourcePort(path) == port;
        }
        return used;
    }

    private int planeOf(final int path)
    {
        return SprayFrames.planeOf(path, config.planes);
    }

    // ---- S7.4, S7.5, S7.6: failure and restore

    /** Marks the path FAILED, its first RESYNC probe due a probe interval from now. */
    void fail(final int path, final long now)
    {
        pathChanges++;
        activePaths &= ~(1L << path);
        answeringPaths &= ~(1L << path);
        if (activePaths == 0)
        {
            allFailedSince = now;
        }
        times.nextResyncAt[path] = now + config.probeIntervalNanos;
    }

    /** A failed path's probe was acknowledged: it carries data again, from a fresh window and estimate. */
    void restore(final int path, final long now)
    {
        final int at = path * STRIDE;
        ports(at, sourcePort(path), sourcePort(path)); // S7.5: probed back on a new route, ACKs too
        pathInts[at + PORT_PACKETS] = 0;
        allFailedSince = NONE;
        congestionWindows.reset(path, now);
        rtt.reset(path, config.initialRttNanos);
        pathInts[at + TIMEOUTS] = 0;
        pathChanges++;
        activePaths |= 1L << path;
        answeringPaths |= 1L << path;
    }

    /** @return whether every path stayed failed for {@code connectionTimeout} at {@code now} (S7.6). */
    boolean allFailedFor(final long timeoutNanos, final long now)
    {
        return allFailedSince != NONE && now - allFailedSince >= timeoutNanos;
    }

    // the reverse direction's path of the same index, or any live one if it failed (S6.4)
    int controlPath(final int path)
    {
        if (isActive(path))
        {
            return path;
        }
        for (int other = 0; other < paths; other++)
        {
            if (isActive(other))
            {
                return other;
            }
        }
        return path;
    }

    // ---- timing

    // S7.4.1: whether another live path was acknowledged at or after `sinceNanos`. At: a worker reads its clock once
    // per loop and sends what the loop's ACKs let it, so a sibling's ACK and the packets it clocked out share one time;
    // strictly after, a path that died under the last packets of an ACK-clocked burst timed out as if every path were
    // silent, and its packets moved only once overdue (CI run 15: 4.13 RTOs on the lab's silent link)
    boolean othersAcknowledgedSince(final int path, final long sinceNanos)
    {
        for (int other = 0; other < paths; other++)
        {
            if (other != path && isActive(other) && times.lastAckAt[other] != NONE &&
                times.lastAckAt[other] >= sinceNanos)
            {
                return true;
            }
        }
        return false;
    }

    // S7.4.1: how long after a packet was sent its ACK is due on a live path: the RTO's own estimate (S6.8)
    // before the rtoMin clamp and the backoff, so that the packets still in flight are left where they are. By the most
    // variable sibling's variation, not the path's own: S6.8-3 leaves the late margin out once a sibling answers past
    // this, and a path's own, smaller, variation did so for stalls the margin had learnt (more spurious timeouts in
    // SprayFreshConnectionRtoTest), though it found a blackholed link sooner (benchmarks/RESULTS.md section 62)
    long ackExpectedWithinNanos(final int path)
    {
        final long rttvar = Math.max(rtt.rttvarNanos(path), siblingRttvar);
        return rtt.srttNanos(path, siblingSrtt) + Math.max(4 * rttvar, config.ackDelayNanos + config.rtoSlackNanos);
    }

    // S6.8: a path without RTT samples of its own is timed by the slowest sampled path of the connection
    void refreshSiblingEstimates()
    {
        long srtt = 0;
        long rttvar = 0;
        for (int path = 0; path < paths; path++)
        {
            if (rtt.hasSample(path) && isActive(path))
            {
                srtt = Math.max(srtt, rtt.srttNanos(path));
                rttvar = Math.max(rttvar, rtt.rttvarNanos(path));
            }
        }
        if (srtt != siblingSrtt)
        {
            pathChanges++;
            siblingSrtt = srtt;
        }
        siblingRttvar = rttvar;
    }

    /** @return the slowest sampled live path's smoothed RTT (S6.8), 0 if none has samples. */
    long siblingSrtt()
    {
        return siblingSrtt;
    }

    /**
     * @return the path's retransmission timeout (S6.8): with the late margin learnt from spurious timeouts (S6.8.1)
     * unless another live path has already acknowledged a packet sent after this path's oldest was due, which a
     * descheduled host cannot cause (it delays every path's answers alike) and a dead link does.
     */
    long rtoNanos(final int path)
    {
        // nothing outstanding (a gauge asks): no oldest packet, so none was due and the path is not silent alone
        final boolean silentAlone = rtt.lateMarginNanos() > 0 && sendWindows[path].outstanding() > 0 &&
            othersAnsweredSentAfter(path, sendWindows[path].oldestSentAtNanos() + ackExpectedWithinNanos(path));
        return rtt.rtoNanos(path, siblingSrtt, siblingRttvar, !silentAlone);
    }

    /**
     * S6.8.1: a timeout of the path was spurious: its backoff is undone and the connection's late margin, which all
     * its paths share (a descheduled thread delays them all), widens to cover the packet that was late.
     *
     * @param lateRttNanos the round trip of the packet the timeout gave up on.
     */
    void onSpuriousTimeout(final int path, final long lateRttNanos)
    {
        rtt.onSpuriousTimeout(path, lateRttNanos);
    }

    /** S6.8.1: whether another live path acknowledged a first transmission sent after {@code sentAfterNanos}. */
    boolean othersAnsweredSentAfter(final int path, final long sentAfterNanos)
    {
        for (int other = 0; other < paths; other++)
        {
            if (other != path && isActive(other) && times.answeredSentAt[other] != NONE &&
                times.answeredSentAt[other] > sentAfterNanos)
            {
                return true;
            }
        }
        return false;
    }

    /** S6.8.1: a first transmission of the path sent at {@code sentAtNanos} was acknowledged. */
    void answered(final int path, final long sentAtNanos)
    {
        final long[] answeredSentAt = times.answeredSentAt;
        if (answeredSentAt[path] == NONE || sentAtNanos > answeredSentAt[path])
        {
            answeredSentAt[path] = sentAtNanos;
        }
    }

    /** @return the path's smoothed RTT, or its sibling's while it has no sample (S6.8). */
    long srttNanos(final int path)
    {
        return rtt.srttNanos(path, siblingSrtt);
    }

    /**
     * @return S8.4: the sum over live paths of cwnd x MTU / srtt, bytes per nanosecond; computed again only when one
     * of its inputs changed since the last call (each counts its changes: the sum of the counts names the inputs).
     */
    double windowRate(final int mtu)
    {
        final int inputs = congestionWindows.windowChanges() + pathChanges;
        if (inputs != windowRateInputs || mtu != windowRateMtu)
        {
            windowRate = computeWindowRate(mtu);
            windowRateInputs = inputs;
            windowRateMtu = mtu;
        }
        return windowRate;
    }

    private double computeWindowRate(final int mtu)
    {
        double rate = 0;
        for (int path = 0; path < paths; path++)
        {
            if (isActive(path))
            {
                rate += (double)congestionWindows.window(path) * mtu / Math.max(1, rtt.srttNanos(path, siblingSrtt));
            }
        }
        return rate;
    }

    /** @return whether no packet is in flight on any path. */
    boolean nothingOutstanding()
    {
        for (int path = 0; path < paths; path++)
        {
            if (sendWindows[path].outstanding() > 0)
            {
                return false;
            }
        }
        return true;
    }
}
