package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.Psn;
import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.wire.SelectiveAckHeader;

import java.lang.foreign.MemorySegment;
import java.util.function.LongConsumer;

import static io.spraynic.datapath.transport.spray.SprayConnection.PROBE_HANDLE;

/**
 * The sender's ACK processing, loss detection and recovery of one spray connection (docs/PROTOCOL.md S6.5-S6.8,
 * S7.3-S7.5): which ACKs are taken (in ACK sequence order, inside the path's window); what one says packet by
 * packet (acknowledged: an RTT sample and the message's progress; lost below the highest acknowledged PSN of a
 * FIFO path, S6.5: a retransmission at the same PSN, S6.6); and what each path's timer finds (a retransmission
 * timeout, S6.8; packets relocated off a path that went silent while another answered, S7.4.1; a path failed
 * after repeated timeouts, its packets moved to live paths, S7.4; a failed path's RESYNC probe, S7.5; a probe on
 * a quiet path). Lossy paths change route (S7.3).
 * <p>
 * What it decides to send again goes into the connection's {@link RetransmitQueues}; the probes a timer asks for
 * are the caller's to write ({@link #onTimer} says which). Allocation-free.
 */
final class LossDetector implements PathSendWindow.Listener, LongConsumer
{
    /** {@link #onAckPacket}: the ACK was taken: the path's window, estimates and state are updated. */
    static final int ACK_TAKEN = 0;
    /** {@link #onAckPacket}: older than one taken, or outside the path's window: counted, nothing changed. */
    static final int ACK_STALE = 1;
    /** {@link #onAckPacket}: taken, but its path is failed and the ACK is not its probe's: nothing more. */
    static final int ACK_OF_FAILED_PATH = 2;

    /** {@link #onTimer}: nothing to do on the path. */
    static final int NOTHING = 0;
    /** {@link #onTimer}: a timeout was handled (packets queued again, relocated, or the path failed). */
    static final int RECOVERED = 1;
    /** {@link #onTimer}: the path is quiet: send a probe on it. */
    static final int PROBE = 2;
    /** {@link #onTimer}: the failed path's window restarted on a new route: send a RESYNC probe on it (S7.5). */
    static final int RESYNC = 3;
    /**
     * {@link #onTimer}: the path's oldest packet is due and only a sibling's answer can show it silent alone: send a
     * probe on path {@link #siblingToProbe()} (S6.8-7).
     */
    static final int PROBE_SIBLING = 4;

    // the paths' send windows, RTT estimates and congestion windows are read through the scheduler (issue 13: not
    // cached in every connection's detector)
    private final PathScheduler scheduler;
    private final RetransmitQueues resend;
    private final SendCompletions completions;
    private final Refusals refusals;
    private final SprayConfig config;
    private final TransportCounters counters;
    private final TransportCounters[] pathCounters;
    /** What the paths' timeouts left to judge: lent with the connection's tables ({@link #attach}). */
    private Timeouts timeouts;
    // the path whose packets accept() is handed: relocated off it (S7.4.1), or -1 while a failed path drains (S7.4)
    private int relocatingFrom;

    // ---- the ACK being applied
    private int ackPath;
    private long ackNow;
    private boolean probeAcked;
    private int siblingToProbe = -1;

    LossDetector(
        final PathScheduler scheduler,
        final RetransmitQueues resend,
        final SendCompletions completions,
        final Refusals refusals,
        final SprayConfig config,
        final TransportCounters counters,
        final TransportCounters[] pathCounters)
    {
        this(scheduler, resend, completions, refusals, config, counters, pathCounters,
            new Timeouts(scheduler.sendWindows.length));
    }

    /** @param timeouts the set to work on until {@link #attach} names another (a connection's lent one). */
    LossDetector(
        final PathScheduler scheduler,
        final RetransmitQueues resend,
        final SendCompletions completions,
        final Refusals refusals,
        final SprayConfig config,
        final TransportCounters counters,
        final TransportCounters[] pathCounters,
        final Timeouts timeouts)
    {
        this.scheduler = scheduler;
        this.resend = resend;
        this.completions = completions;
        this.refusals = refusals;
        this.config = config;
        this.counters = counters;
        this.pathCounters = pathCounters;
        this.timeouts = timeouts;
    }

    /**
     * Per path, what a timeout leaves to judge later: the wait before a failed path's next RESYNC probe (S7.5; 0
     * until its first) and, S6.8.1, whether its last timeout is not yet judged spurious or not, the PSN it sent again
     * and when that PSN had been sent before, the highest PSN sent before that copy; and, for S6.8-1 (c), how many
     * duplicates the path's other copies (packets sent again at their PSN) may yet make the receiver report, how many
     * of those are late copies (earlier timeouts' own, and placeholders of relocated packets: lateness, not reordering,
     * S6.5-3), and the highest PSN sent before the last of them. It matters only while the path has packets outstanding or is failed,
     * so an idle connection holds none (issue 13): a set comes and goes with the connection's tables, all zeros
     * (judgements left undecided when every packet was acknowledged can no longer be made: the packets are gone).
     */
    static final class Timeouts
    {
        final long[] resyncIntervals;
        final boolean[] undecided;
        final int[] psn;
        final long[] sentAt;
        final int[] copyMark;
        final int[] otherCopies;
        final int[] lateCopies;
        final int[] otherCopiesMark;

        Timeouts(final int paths)
        {
            resyncIntervals = new long[paths];
            undecided = new boolean[paths];
            psn = new int[paths];
            sentAt = new long[paths];
            copyMark = new int[paths];
            otherCopies = new int[paths];
            lateCopies = new int[paths];
            otherCopiesMark = new int[paths];
        }

        /** Back to zeros (a set returned to the pool). */
        void clear()
        {
            java.util.Arrays.fill(resyncIntervals, 0);
            java.util.Arrays.fill(undecided, false);
            java.util.Arrays.fill(psn, 0);
            java.util.Arrays.fill(sentAt, 0);
            java.util.Arrays.fill(copyMark, 0);
            java.util.Arrays.fill(otherCopies, 0);
            java.util.Arrays.fill(lateCopies, 0);
            java.util.Arrays.fill(otherCopiesMark, 0);
        }

        /** @return bytes of a set for {@code paths} paths (S10.1): eight arrays and the object. */
        static long bytes(final int paths)
        {
            return 16 + 7 * 16L + 2 * 8L * paths + 5 * 4L * paths + paths + 16;
        }
    }

    /**
     * Takes the timeouts set it works on: the connection's lent one while it has traffic, the pool bucket's shared
     * zeros while it is idle (read then by nothing: no path of an idle connection has packets out or is failed).
     */
    void attach(final Timeouts timeouts)
    {
        this.timeouts = timeouts;
    }

    // ---- ACKs (S6.5)

    /**
     * Takes the SACK header at {@code sack} (its path checked against the connection's paths): an ACK older than
     * one already taken (by its ACK sequence number, compared serially) or outside the path's window changes
     * nothing; otherwise its packets are acknowledged or found lost, the path answers (its timeouts end; a failed
     * path whose probe it acknowledges is restored, S7.5) and its congestion window grows or, on CE echoes,
     * shrinks (S8).
     *
     * @return {@link #ACK_TAKEN}, {@link #ACK_STALE} or {@link #ACK_OF_FAILED_PATH}.
     */
    int onAckPacket(final MemorySegment buffer, final long sack, final long now)
    {
        final int path = SelectiveAckHeader.path(buffer, sack);
        final int sequence = SelectiveAckHeader.ackSequence(buffer, sack);
        if (scheduler.isStaleAck(path, sequence))
        {
            counters.increment(SprayCounters.ACKS_STALE);
            return ACK_STALE;
        }
        // S9.3: before the packets it covers complete, so that a refused one waits for its NACK
        refusals.onPeerCount(SelectiveAckHeader.refusals(buffer, sack));
        final Timeouts timeouts = this.timeouts;
        final int copiesBefore = timeouts.otherCopies[path];
        final int lateCopiesBefore = timeouts.lateCopies[path];
        final int copiesMarkBefore = timeouts.otherCopiesMark[path];
        final int newlyAcked = onAck(path, buffer, sack, now);
        if (newlyAcked < 0)
        {
            counters.increment(SprayCounters.ACKS_STALE);
            return ACK_STALE;
        }
        if (!scheduler.isParked(path)) // a parked path's timeouts are the idle connections' shared zeros
        {
            onDuplicatesReported(path, buffer, sack, copiesBefore, lateCopiesBefore, copiesMarkBefore);
        }
        counters.increment(SprayCounters.ACKS_RECEIVED);
        pathCounters[path].increment(SprayCounters.ACKS_RECEIVED);
        final int ce = SelectiveAckHeader.ceCount(buffer, sack);
        if (ce > 0)
        {
            counters.add(SprayCounters.ECN_MARKS_ECHOED, ce);
            pathCounters[path].add(SprayCounters.ECN_MARKS_ECHOED, ce);
        }
        scheduler.onAckTaken(path, sequence, now);
        if (!scheduler.isActive(path))
        {
            if (!probeAcked)
            {
                return ACK_OF_FAILED_PATH;
            }
            restorePath(path, now);
        }
        scheduler.congestionWindows.onAck(path, newlyAcked, ce, now, scheduler.rtt.srttNanos(path));
        return ACK_TAKEN;
    }

    /**
     * Applies the SACK header at {@code sack} to the send window of {@code path}.
     *
     * @return packets newly acknowledged, or -1 when the ACK does not fit the window (nothing changed).
     */
    int onAck(final int path, final MemorySegment buffer, final long sack, final long now)
    {
        ackPath = path;
        ackNow = now;
        probeAcked = false;
        if (scheduler.isParked(path))
        {
            // an idle connection (a keepalive's ACK): its windows are empty and went back with its tables
            return scheduler.onAckOfParked(path, SelectiveAckHeader.cumulativePsn(buffer, sack));
        }
        return scheduler.sendWindows[path].onAck(buffer, sack, now, reorderWindowNanos(path), this);
    }

    /** @return whether the ACK last applied acknowledged a probe (what restores a failed path, S7.5). */
    boolean probeAcked()
    {
        return probeAcked;
    }

    public void onAcked(final long handle, final int psn, final long rttNanos)
    {
        scheduler.onRttSample(ackPath, rttNanos);
        if (rttNanos >= 0)
        {
            scheduler.answered(ackPath, ackNow - rttNanos);
        }
        if (handle == PROBE_HANDLE)
        {
            probeAcked = true;
            return;
        }
        completions.onPacketAcked(handle, ackNow);
    }

    // S6.8.1: a packet relocated at a timeout arrived on its first transmission: the timeout was spurious
    public void onRelocatedArrived(final int psn, final long rttNanos)
    {
        if (timeouts.undecided[ackPath])
        {
            onSpuriousTimeout(ackPath, rttNanos);
        }
    }

    // S6.8.1: the packet a timeout sent again is acknowledged sooner after it than any round trip of the path
    // (RFC 8985 S6.2): an earlier transmission arrived, the timeout was spurious; later than that, it may have been
    // the retransmission (Karn): undecided still, a relocated packet's arrival may yet show it spurious
    public void onRetransmissionAcked(final long handle, final int psn, final long sinceResendNanos)
    {
        final int path = ackPath;
        if (!scheduler.rtt.hasSample(path) || sinceResendNanos >= scheduler.rtt.minRttNanos(path))
        {
            return;
        }
        if (psn == timeouts.psn[path])
        {
            if (timeouts.undecided[path])
            {
                onSpuriousTimeout(path, ackNow - timeouts.sentAt[path]);
            }
        }
        else if (handle != PROBE_HANDLE)
        {
            // S6.5-3: a copy a gap sent (S6.5, S6.6) answered too soon: the packet was reordered, not lost (a
            // placeholder's copy is not counted: its packet was relocated by a timeout, S7.4.1, which is lateness)
            scheduler.rtt.reorderWindow().onSpuriousLoss(ackNow - sinceResendNanos, ackNow);
        }
    }

    private void onSpuriousTimeout(final int path, final long lateRttNanos)
    {
        endJudgement(path); // its copy may still arrive, and be reported, after this ACK
        counters.increment(SprayCounters.SPURIOUS_TIMEOUTS);
        scheduler.onSpuriousTimeout(path, lateRttNanos);
    }

    /**
     * S6.8-1 (c): the duplicates an ACK of the path reports. Each is the arrival of a copy (a packet sent again at its
     * PSN) after an earlier transmission of its PSN had arrived, and one copy makes at most one. Before this ACK the
     * path's copies other than the undecided timeout's own could make at most {@code copiesBefore} more (the ACK's
     * own losses, sent again after it was written, cannot be in it): more than that, and the timeout's copy was one
     * of them, so its PSN had arrived before it: the timeout was spurious. Otherwise the report uses up that many of
     * theirs; and an ACK that acknowledges a PSN first sent after the last of them was written after they all arrived
     * or were lost (the path is FIFO, S6.2): whatever they made is in it or in an earlier ACK, none is left to come.
     * A duplicate is charged to the late copies first: only more than they could make shows a gap's copy arriving
     * after its packet, reordering within the route (S6.5-3); a late packet shows the margin's business (S6.8-2), and
     * taking it for reordering widened the window that holds every gap of the path.
     */
    private void onDuplicatesReported(
        final int path, final MemorySegment buffer, final long sack, final int copiesBefore, final int lateCopiesBefore,
        final int copiesMarkBefore)
    {
        final Timeouts timeouts = this.timeouts;
        final int copiesSince = timeouts.otherCopies[path] - copiesBefore; // this ACK's losses, found just now
        final int lateCopiesSince = timeouts.lateCopies[path] - lateCopiesBefore;
        final int duplicates = SelectiveAckHeader.duplicates(buffer, sack);
        int left;
        int lateLeft;
        if (duplicates > copiesBefore && timeouts.undecided[path])
        {
            timeouts.undecided[path] = false; // its copy is spent: it arrived as this duplicate
            counters.increment(SprayCounters.SPURIOUS_TIMEOUTS);
            counters.increment(SprayCounters.SPURIOUS_TIMEOUTS_REPORTED);
            scheduler.onSpuriousTimeout(path, ackNow - timeouts.sentAt[path]);
            left = 0;
            lateLeft = 0;
        }
        else
        {
            if (duplicates > lateCopiesBefore)
            {
                // S6.5-3: a copy a gap sent arrived after its packet had: the gap was reordering
                scheduler.rtt.reorderWindow().onSpuriousLoss(ackNow - scheduler.srttNanos(path), ackNow);
            }
            left = Math.max(0, copiesBefore - duplicates);
            lateLeft = Math.max(0, lateCopiesBefore - duplicates);
            if (left > 0 && Psn.isAfter(highestAcknowledged(buffer, sack), copiesMarkBefore))
            {
                left = 0;
                lateLeft = 0;
            }
        }
        timeouts.otherCopies[path] = left + copiesSince;
        timeouts.lateCopies[path] = lateLeft + lateCopiesSince;
    }

    /** @return the highest PSN the SACK header at {@code sack} acknowledges, by its bitmap or cumulatively. */
    static int highestAcknowledged(final MemorySegment buffer, final long sack)
    {
        final int cumulative = SelectiveAckHeader.cumulativePsn(buffer, sack);
        for (int word = SelectiveAckHeader.SACK_BITS / Long.SIZE - 1; word >= 0; word--)
        {
            final long bits = SelectiveAckHeader.sackWord(buffer, sack, word);
            if (bits != 0)
            {
                return Psn.add(cumulative, word * Long.SIZE + Long.SIZE - 1 - Long.numberOfTrailingZeros(bits));
            }
        }
        return Psn.add(cumulative, -1);
    }

    // a packet of the path was sent again at its PSN (not by a timeout): it may arrive after its PSN did (S6.8-1 (c));
    // a payload-free one's is counted late (a placeholder's packet was relocated by a timeout, S7.4.1, and the window
    // learns from data)
    private void countCopy(final int path, final int mark, final boolean late)
    {
        timeouts.otherCopies[path]++;
        if (late)
        {
            timeouts.lateCopies[path]++;
        }
        timeouts.otherCopiesMark[path] = mark;
    }

    // S6.8.1: the path's last timeout is judged, or no longer can be: its copy counts among the others (S6.8-1 (c))
    private void endJudgement(final int path)
    {
        if (timeouts.undecided[path])
        {
            timeouts.undecided[path] = false;
            final int mark = timeouts.copyMark[path];
            final int others = timeouts.otherCopies[path];
            timeouts.otherCopies[path] = others + 1;
            timeouts.lateCopies[path]++;
            if (others == 0 || Psn.isAfter(mark, timeouts.otherCopiesMark[path]))
            {
                timeouts.otherCopiesMark[path] = mark;
            }
        }
    }

    public void onLost(final long handle, final int psn)
    {
        final int path = ackPath;
        final PathSendWindow window = scheduler.sendWindows[path];
        window.retransmitted(psn, ackNow);
        countCopy(path, Psn.add(window.nextPsn(), -1), handle == PROBE_HANDLE);
        if (handle != PROBE_HANDLE)
        {
            countLost(path);
            scheduler.congestionWindows.onLoss(path, ackNow);
            scheduler.countLost(path);
            if (scheduler.isLossy(path))
            {
                repath(path);
            }
        }
        resend.queueRetransmission(path, psn, handle);
    }

    // ---- timers (S6.8, S7.4, S7.4.1, S7.5)

    /** @return {@link #NOTHING}, {@link #RECOVERED}, {@link #PROBE}, {@link #RESYNC} or {@link #PROBE_SIBLING}. */
    int onTimer(final int path, final long now)
    {
        final PathSendWindow window = scheduler.sendWindows[path];
        if (!scheduler.isActive(path))
        {
            if (now >= scheduler.times.nextResyncAt[path])
            {
                scheduler.times.nextResyncAt[path] = now + nextResyncInterval(path);
                window.reset(window.nextPsn());
                scheduler.sourcePort(path, scheduler.newSourcePort(path)); // a new route (S7.5, S7.7.1)
                return RESYNC;
            }
            return NOTHING;
        }
        if (window.outstanding() == 0)
        {
            return NOTHING;
        }
        if (now - window.oldestSentAtNanos() >= scheduler.rtoNanos(path))
        {
            onTimeout(path, window, now);
            return RECOVERED;
        }
        if (window.hasHeld())
        {
            // S6.5-2, S6.5-3: packets held in gaps are lost once overdue, though no later ACK comes to say so
            ackPath = path;
            ackNow = now;
            if (window.judgeHeld(now, reorderWindowNanos(path), scheduler.srttNanos(path), this) > 0)
            {
                return RECOVERED;
            }
        }
        final int sibling = siblingToProbe(path, window.oldestSentAtNanos(), now);
        if (sibling >= 0)
        {
            siblingToProbe = sibling;
            return PROBE_SIBLING;
        }
        if (scheduler.timedOutSinceAck(path) &&
            scheduler.othersAcknowledgedSince(path, now - scheduler.ackExpectedWithinNanos(path)))
        {
            // S7.4.1: still no ACK since the timeout: a packet sent shortly before it is lost too once its ACK
            // is overdue, and goes again elsewhere without waiting for the next, backed-off, RTO
            relocatingFrom = path;
            if (window.relocate(PROBE_HANDLE, now - scheduler.ackExpectedWithinNanos(path), this) > 0)
            {
                return RECOVERED;
            }
        }
        final long quiet = Math.max(2 * scheduler.srttNanos(path), config.probeMinNanos);
        final long since = Math.max(Math.max(scheduler.times.lastAckAt[path], scheduler.times.lastProbeAt[path]),
            window.oldestSentAtNanos());
        return now - since >= quiet && !window.isFull() ? PROBE : NOTHING;
    }

    /**
     * S6.5-3: the window the path's gaps are held by: what the engine learnt, at most the larger of the path's
     * {@code srtt} and its RTO's margin above it (so that the hold's timer, {@code srtt + W}, comes no later than the
     * RTO), at least the configured floor.
     */
    private long reorderWindowNanos(final int path)
    {
        final ReorderWindow window = scheduler.rtt.reorderWindow();
        if (!window.adapts())
        {
            return window.nanos(); // fixed (0 by default: S6.5): no cap to work out on every ACK
        }
        final long srtt = scheduler.srttNanos(path);
        return window.nanos(Math.max(srtt, scheduler.ackExpectedWithinNanos(path) - srtt));
    }

    /** @return the path {@link #onTimer} last asked a probe on for a sibling ({@link #PROBE_SIBLING}). */
    int siblingToProbe()
    {
        return siblingToProbe;
    }

    /**
     * S6.8-7: the path's oldest packet is due (its RTO without the late margin and the backoff has passed), the late
     * margin keeps its timeout waiting, and no live sibling has answered, or has outstanding, a first transmission
     * sent after it was due. At a message's tail nothing more goes out that could show the path silent
     * alone (S6.8-3), so a probe goes on the live sibling that answered last: its answer shows it, or, when every
     * path is as late (a descheduled host), comes as late and shows nothing.
     *
     * @return that sibling, or -1: none is needed, one is on its way, or no sibling can take one.
     */
    private int siblingToProbe(final int path, final long oldestSentAt, final long now)
    {
        if (scheduler.rtt.lateMarginNanos() == 0)
        {
            return -1;
        }
        final long due = oldestSentAt + scheduler.ackExpectedWithinNanos(path);
        if (now <= due || scheduler.othersAnsweredSentAfter(path, due))
        {
            return -1;
        }
        final PathLentTimes times = scheduler.times;
        int best = -1;
        for (int other = 0; other < scheduler.sendWindows.length; other++)
        {
            if (other == path || !scheduler.isActive(other))
            {
                continue;
            }
            if (times.lastProbeAt[other] != PathLentTimes.NONE && times.lastProbeAt[other] > due ||
                scheduler.sendWindows[other].newestFirstSentAtNanos() > due)
            {
                return -1; // a packet or probe sent since is on its way: its answer will show it
            }
            if (times.lastAckAt[other] != PathLentTimes.NONE && !scheduler.sendWindows[other].isFull() &&
                (best < 0 || times.lastAckAt[other] > times.lastAckAt[best]))
            {
                best = other;
            }
        }
        return best;
    }

    private void onTimeout(final int path, final PathSendWindow window, final long now)
    {
        counters.increment(SprayCounters.TIMEOUTS);
        pathCounters[path].increment(SprayCounters.TIMEOUTS);
        scheduler.rtt.onTimeout(path);
        if (scheduler.onTimeout(path, now) >= config.failAfterTimeouts)
        {
            failPath(path, now);
            return;
        }
        final long oldestSentAt = window.oldestSentAtNanos();
        if (scheduler.othersAcknowledgedSince(path, oldestSentAt))
        {
            // S7.4.1: the path went silent for an RTO while another answered, so on a FIFO path nothing sent on
            // it since its oldest packet is known to have arrived: its overdue packets go again at once on the
            // other live paths, and it keeps payload-free probes at their PSNs, the oldest sent now, to find out
            // whether it is alive (an ACK) or dead (more timeouts, then S7.4)
            relocatingFrom = path;
            window.relocate(PROBE_HANDLE, Math.max(now - scheduler.ackExpectedWithinNanos(path), oldestSentAt),
                this);
        }
        // else every path is as silent (a queue in front of them all, or the peer): moving packets would only
        // add copies to that queue and undo the backoff, so the oldest is retransmitted here (S6.8)
        final int psn = window.basePsn();
        final long handle = window.oldestHandle(); // the placeholder when the oldest was relocated
        endJudgement(path); // the previous timeout's copy, if it was never judged
        timeouts.undecided[path] = true;
        timeouts.psn[path] = psn;
        timeouts.sentAt[path] = oldestSentAt;
        timeouts.copyMark[path] = Psn.add(window.nextPsn(), -1);
        window.retransmitted(psn, now);
        if (handle != PROBE_HANDLE)
        {
            countLost(path);
        }
        resend.queueRetransmission(path, psn, handle);
    }

    /**
     * S7.5: a RESYNC restarts the path's window, so the answer to the previous probe, if it is still on its way, no
     * longer fits it and restores nothing. The first waits {@code probeInterval} or twice the slowest live path's RTT,
     * whichever is longer; each one left unanswered doubles the wait, up to {@code rtoMax} (no answer takes longer) or
     * an eighth of {@code connectionTimeout} (S7.6), whichever is shorter: on a route whose round trip takes longer
     * than {@code probeInterval} (milliseconds on a loaded host) a path re-synchronized every interval is never
     * restored (measured on the Linux ECMP lab: after a whole plane was down and back, 16,715 stale ACKs, no path of
     * the plane restored, and the next READ failed with RETRY_EXC_ERR).
     */
    private long nextResyncInterval(final int path)
    {
        final long first = Math.max(config.probeIntervalNanos, 2 * scheduler.siblingSrtt());
        final long longest = Math.max(first, Math.min(config.rtoMaxNanos, config.connectionTimeoutNanos / 8));
        final long previous = timeouts.resyncIntervals[path];
        final long interval = previous == 0 ? first : Math.min(longest, 2 * previous);
        timeouts.resyncIntervals[path] = interval;
        return interval;
    }

    // S7.4: the path fails; its outstanding packets move to the live paths
    private void failPath(final int path, final long now)
    {
        timeouts.resyncIntervals[path] = 0;
        endJudgement(path);
        scheduler.fail(path, now);
        counters.increment(SprayCounters.PATH_FAILURES);
        pathCounters[path].increment(SprayCounters.PATH_FAILURES);
        relocatingFrom = -1;
        scheduler.sendWindows[path].drain(this);
    }

    // S7.5: a failed path's probe was acknowledged: it carries data again
    private void restorePath(final int path, final long now)
    {
        timeouts.resyncIntervals[path] = 0;
        endJudgement(path);
        scheduler.restore(path, now);
        counters.increment(SprayCounters.PATH_RESTORES);
        pathCounters[path].increment(SprayCounters.PATH_RESTORES);
    }

    /**
     * S7.3: a lossy or slow path changes route; packets it leaves on the old route are not lost by the new route's
     * gaps alone, only as the old route's own ACKs or estimate show (S6.5-2).
     */
    void repath(final int path)
    {
        if (!scheduler.isParked(path))
        {
            scheduler.sendWindows[path].routeChanged(scheduler.ackExpectedWithinNanos(path)); // before the reset
        }
        scheduler.repath(path);
        counters.increment(SprayCounters.REPATHS);
        pathCounters[path].increment(SprayCounters.REPATHS);
    }

    private void countLost(final int path)
    {
        counters.increment(SprayCounters.LOST);
        pathCounters[path].increment(SprayCounters.LOST);
    }

    /**
     * A packet a path's window handed over: from a failed path ({@code relocatingFrom} -1, S7.4) it moves to a live
     * one, not lost; from a path that timed out (S7.4.1) it is lost there and goes again on another live path. One
     * consumer for both, this detector itself (issue 13: no objects per connection for it).
     */
    public void accept(final long handle)
    {
        if (relocatingFrom < 0)
        {
            if (handle == PROBE_HANDLE)
            {
                return;
            }
            resend.queueMove(handle, RetransmitQueues.NOT_LOST);
            counters.increment(SprayCounters.MOVED);
            return;
        }
        resend.queueMove(handle, relocatingFrom);
        countLost(relocatingFrom);
    }
}

