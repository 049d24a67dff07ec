package io.spraynic.conformance;

import io.spraynic.conformance.ToyResponder.Fault;

import java.io.IOException;
import java.util.Arrays;
import java.util.Map;

import static io.spraynic.conformance.ToyResponder.ROTATE_PACKETS;
import static io.spraynic.conformance.ToyResponder.SLOW_NANOS;

/**
 * {@link ToyResponder}'s READ responses on the way out, over the connection's paths ({@link ToyPath}): each new
 * packet on the next path in turn that has window room (S7.2; one path at a time with {@link Fault#NO_SPRAY}), the
 * window (S8.2) of each path and pacing (S8.4), what an ACK shows missing sent again (S6.5, S6.6), stale ACKs ignored
 * (S5.1-2), each path's RTO (S6.8), a path that fails after {@link ToyResponder#FAIL_AFTER_TIMEOUTS} timeouts left for
 * the others (S7.4) and probed back with RESYNC (S7.5), a path moved to another of the toy's source ports on
 * loss (S7.3-1) or on RTT (S7.3-2), and the ports it rotates (S7.7) with its faults.
 */
final class ToyReadSender
{
    /** S8.2: the gain of a path's CE estimate. */
    private static final double GAIN = 1.0 / 16;
    /** S7.3: repathLoss, and the packets a path sends before its loss rate counts. */
    private static final double REPATH_LOSS = 0.05;
    private static final int REPATH_MIN_SAMPLE = 32;
    /** S7.3-2: repathRttFactor, and the RTT samples of a round, at whose end a path's RTT is judged. */
    private static final int REPATH_RTT_FACTOR = 3;
    static final int RTT_ROUND = 32;

    private final java.util.Set<Fault> faults;
    private final UdpLink link;
    /** The other sockets: a path re-paths (S7.3) to the next in turn; the first is where rotation (S7.7) goes. */
    private final UdpLink[] spareLinks;
    private final UdpLink otherLink;
    private int nextSpare;

    ToyReadSender(final java.util.Set<Fault> faults, final UdpLink link, final UdpLink[] spareLinks)
    {
        this.faults = faults;
        this.link = link;
        this.spareLinks = spareLinks;
        this.otherLink = spareLinks[0];
    }

    /** Sets up the paths of a new connection: path i's PSNs from {@code firstPsn + i * 2^18} (S5.4). */
    void open(final ToyConnection c, final int paths, final int firstPsn)
    {
        c.sendPaths = new ToyPath[paths];
        for (int i = 0; i < paths; i++)
        {
            c.sendPaths[i] = new ToyPath(i, (firstPsn + i * SprayWire.PATH_PSN_STRIDE) & SprayWire.PSN_MASK, link);
        }
    }

    /** @return the socket the control packets of {@code path} go from (S7.3: a re-path moves it, S7.7 never). */
    UdpLink controlLink(final ToyConnection c, final int path)
    {
        return null == c.sendPaths || path >= c.sendPaths.length ? link : c.sendPaths[path].controlLink;
    }

    /**
     * An ACK of one of the toy's paths: a stale one (S5.1-2) is ignored; on a failed path, the ACK of its RESYNC
     * probe restores it (S7.5); otherwise what it acknowledges is forgotten, and what it shows missing below the
     * highest PSN acknowledged is sent again with RETRANSMIT on that path (S6.5, S6.6).
     */
    void onAck(final ToyConnection c, final Packet p) throws IOException
    {
        final int index = p.h8(0);
        final int sequence = p.h32(44);
        if (index >= c.ackTaken.length ||
            sequence - c.ackTaken[index] <= 0 && !faults.contains(Fault.ACCEPT_STALE_ACK))
        {
            return;
        }
        c.ackTaken[index] = sequence - c.ackTaken[index] > 0 ? sequence : c.ackTaken[index];
        final ToyPath path = c.sendPaths[index];
        final long now = System.nanoTime();
        if (path.failed)
        {
            if (p.h24(5) == ((path.probePsn + 1) & SprayWire.PSN_MASK))
            {
                path.failed = false; // S7.5: active again, with a fresh window
                path.freshWindow();
                sendWithinWindow(c);
            }
            return;
        }
        path.timeouts = 0;
        c.rateHintMbps = p.h32(40);
        c.answerAt = now + SLOW_NANOS;
        path.lastAckHeard = now;
        final int cumulative = p.h24(5);
        final int outstanding = path.unacknowledged.size();
        for (final int psn : path.unacknowledged.headMap(cumulative).keySet())
        {
            sampleRtt(c, path, psn, now);
        }
        path.unacknowledged.headMap(cumulative).clear();
        int highest = cumulative - 1;
        for (int i = 1; i < SprayWire.SACK_BITS; i++)
        {
            if (ScriptedPeer.sackBit(p, i))
            {
                if (null != path.unacknowledged.remove(cumulative + i))
                {
                    sampleRtt(c, path, cumulative + i, now);
                }
                highest = cumulative + i;
                if (cumulative + i < path.routeStartPsn)
                {
                    path.oldRouteAckedTo = Math.max(path.oldRouteAckedTo, cumulative + i); // S6.5-2
                }
            }
        }
        endOfRound(path, outstanding - path.unacknowledged.size(), p.h16(2));
        judgeByDuplicates(c, path, p.h8(4));
        if (SprayWire.psnDistance(path.afterLastCopy, highest) >= 0)
        {
            // S6.8-1 (c): it acknowledged a PSN first sent after every copy, so whatever they made is in it or in an
            // earlier ACK: they make none from now on, the last timeout's own included
            path.otherCopies = 0;
            path.timeoutUndecided = false;
        }
        for (final Map.Entry<Integer, byte[]> lost : path.unacknowledged.headMap(highest).entrySet())
        {
            if (heldOnOldRoute(path, lost.getKey(), highest, now) || !path.resent.add(lost.getKey()))
            {
                continue;
            }
            path.otherCopies++; // S6.8-1 (c): a copy that may make a duplicate, sent after this ACK was written
            path.afterLastCopy = path.nextPsn;
            if (path.sampleLost.add(lost.getKey()) && !faults.contains(Fault.NO_REPATH) &&
                path.lossRate() > REPATH_LOSS && medianLoss(c) < REPATH_LOSS / 2 &&
                (path.moves == 0 || path.sampleSent >= SprayWire.SACK_BITS))
            {
                repath(path); // S7.3-1: judged at the loss, the resend goes by the new route
            }
            sendAgain(path, lost.getValue());
        }
        sendWithinWindow(c);
    }

    /**
     * S6.5-2: whether a packet in a gap below {@code highest} was left on the path's old route and only the new
     * route's packets are acknowledged above it, and it is not yet overdue by the old route's estimate.
     */
    private boolean heldOnOldRoute(final ToyPath path, final int psn, final int highest, final long now)
    {
        final Long sent = path.sentAt.get(psn);
        return path.routeStartPsn >= 0 && psn < path.routeStartPsn && highest >= path.routeStartPsn &&
            path.oldRouteAckedTo < psn && null != sent && now - sent < path.oldRouteExpectedNanos;
    }

    /** S7.3: the path's data and control packets move to the toy's next spare source port (not the one it is on). */
    private void repath(final ToyPath path)
    {
        if (!path.unacknowledged.isEmpty() && !faults.contains(Fault.NO_LEFT_BEHIND_HOLD))
        {
            // S6.5-2: what is outstanding stays on the old route; timed by that route's estimate
            path.routeStartPsn = path.nextPsn;
            path.oldRouteAckedTo = -1;
            path.oldRouteExpectedNanos = path.rtoSampled ?
                path.rtoSrtt + Math.max(4 * path.rtoRttvar, ToyResponder.RTO_SLACK_NANOS) : ToyResponder.RTO_MIN_NANOS;
        }
        UdpLink next = spareLinks[nextSpare++ % spareLinks.length];
        if (next == path.controlLink)
        {
            next = spareLinks[nextSpare++ % spareLinks.length];
        }
        path.dataLink = path.controlLink = next;
        path.portPackets = 0;
        path.moves++;
        path.restartEstimators();
    }

    /**
     * @return the median over the connection's live paths of their loss rates (S7.3-1; a path with fewer than 32
     * packets counts as losing none).
     */
    private static double medianLoss(final ToyConnection c)
    {
        final double[] values = new double[c.sendPaths.length];
        int n = 0;
        for (final ToyPath q : c.sendPaths)
        {
            if (!q.failed)
            {
                values[n++] = q.lossRate();
            }
        }
        if (n == 0)
        {
            return 0;
        }
        Arrays.sort(values, 0, n);
        return values[(n - 1) / 2];
    }

    /**
     * @return the median RTT of the packets the connection's other live paths sent between {@code from} and {@code
     * to} (System.nanoTime()), -1 when fewer than a quarter round of them were acknowledged: the round trips the
     * path's own round is judged against (S7.3-2). Packets sent at the same time cross the same queues of both hosts
     * (the peer's socket is one FIFO for every path), so a stall or backlog of either host (on a loaded host: 120 ms
     * round trips on a path the suite did not slow, 32 packets sent within 0.2 ms and acknowledged together, against
     * a slowed path's latest 28 ms) lengthens their round trips as much as the path's, and only a slower route
     * stands out.
     */
    private static long othersRtt(final ToyConnection c, final ToyPath path, final long from, final long to)
    {
        final int n = c.rttCount < 0 ? ToyConnection.RTT_HISTORY : Math.min(c.rttCount, ToyConnection.RTT_HISTORY);
        final long[] values = new long[n];
        int m = 0;
        for (int i = 0; i < n; i++)
        {
            final int q = c.rttPath[i];
            if (q != path.index && !c.sendPaths[q].failed && c.rttSentAt[i] - from >= 0 && to - c.rttSentAt[i] >= 0)
            {
                values[m++] = c.rttNanos[i];
            }
        }
        if (m < RTT_ROUND / 4)
        {
            return -1;
        }
        Arrays.sort(values, 0, m);
        return values[m / 2];
    }

    /**
     * An RTT sample of a packet acknowledged without having gone again (Karn), for the RTO (S6.8.1) and for S7.3-2:
     * at the end of each {@link #RTT_ROUND} samples of the path, their median is judged against 3 x the median of
     * the other live paths' round trips of packets sent over the same time ({@link #othersRtt}; a round they sent
     * too little in is not judged), and two rounds judged slow in a row move it to the next spare port.
     */
    private void sampleRtt(final ToyConnection c, final ToyPath path, final int psn, final long now)
    {
        final Long sent = path.sentAt.remove(psn);
        if (null == sent || path.resent.contains(psn))
        {
            return;
        }
        final long rtt = now - sent;
        path.answeredSentAt = Math.max(path.answeredSentAt, sent);
        // S6.8.1: rttvar first, from the old srtt; a sample ends the backoff
        if (path.rtoSampled)
        {
            path.rtoRttvar += (Math.abs(path.rtoSrtt - rtt) - path.rtoRttvar) / 4;
            path.rtoSrtt += (rtt - path.rtoSrtt) / 8;
        }
        else
        {
            path.rtoSrtt = rtt;
            path.rtoRttvar = rtt / 2;
            path.rtoSampled = true;
        }
        path.backoff = 0;
        c.recordRtt(path.index, sent, rtt);
        path.roundFirstSent = path.roundCount == 0 ? sent : Math.min(path.roundFirstSent, sent);
        path.roundLastSent = path.roundCount == 0 ? sent : Math.max(path.roundLastSent, sent);
        path.roundSamples[path.roundCount++] = rtt;
        if (path.roundCount < RTT_ROUND)
        {
            return;
        }
        final long[] round = path.roundSamples.clone();
        Arrays.sort(round);
        path.roundRttNanos = round[RTT_ROUND / 2];
        path.roundCount = 0;
        final long others = othersRtt(c, path, path.roundFirstSent, path.roundLastSent);
        if (others >= 0)
        {
            path.slowRounds = path.roundRttNanos > REPATH_RTT_FACTOR * others ? path.slowRounds + 1 : 0;
        }
        if (!faults.contains(Fault.NO_REPATH_RTT) && path.slowRounds >= 2)
        {
            repath(path);
        }
    }

    /**
     * S8.2: a round ends when its ACKs acknowledged a window of packets; with CE echoed in it the window shrinks by
     * alpha / 2 (alpha the smoothed fraction of marked packets), else it grows by one, up to 256.
     */
    private void endOfRound(final ToyPath path, final int acknowledged, final int marked)
    {
        path.roundAcknowledged += acknowledged;
        path.roundMarked += marked;
        if (path.roundAcknowledged < (int)path.window)
        {
            return;
        }
        if (path.roundMarked > 0 && !faults.contains(Fault.IGNORE_CE))
        {
            path.alpha = (1 - GAIN) * path.alpha + GAIN *
                Math.min(1.0, (double)path.roundMarked / path.roundAcknowledged);
            path.window = Math.max(1, path.window * (1 - path.alpha / 2));
        }
        else
        {
            path.window = Math.min(SprayWire.SACK_BITS, path.window + 1);
        }
        path.roundAcknowledged = 0;
        path.roundMarked = 0;
    }

    /**
     * Sends the held READ_RESPONSEs, each on the next path in turn that has window room (all of them on one path
     * with {@link Fault#NO_WINDOW}) at that path's next PSN, as the pacer lets them go: with a rateHint, a packet's
     * payload plus 128 B at that rate after the one before, no burst.
     */
    void sendWithinWindow(final ToyConnection c) throws IOException
    {
        final boolean paced = c.rateHintMbps > 0 && !faults.contains(Fault.IGNORE_RATE_HINT);
        final long now = System.nanoTime();
        if (faults.contains(Fault.SLOW) && now < c.answerAt)
        {
            return;
        }
        while (!c.held.isEmpty() && (!paced || now >= c.nextSendAt))
        {
            final ToyPath path = nextPath(c);
            if (null == path)
            {
                break;
            }
            if ((faults.contains(Fault.ROTATE_DRAINED) || faults.contains(Fault.ROTATE_IN_FLIGHT)) &&
                path.portPackets >= ROTATE_PACKETS)
            {
                path.dataLink = path.dataLink == link ? otherLink : link; // S7.7: the control port stays
                path.portPackets = 0;
            }
            path.portPackets++;
            path.sampleSent++;
            final byte[] packet = c.held.pollFirst();
            final int psn = path.nextPsn;
            path.nextPsn = (psn + 1) & SprayWire.PSN_MASK;
            packet[9] = (byte)(psn >> 16); // the BTH's PSN
            packet[10] = (byte)(psn >> 8);
            packet[11] = (byte)psn;
            packet[SprayWire.BTH_LENGTH] = (byte)path.index; // SETH path
            if (paced)
            {
                c.nextSendAt = Math.max(c.nextSendAt, now) +
                    (packet.length - SprayWire.BTH_LENGTH - SprayWire.SETH_LENGTH + 128) * 8_000L / c.rateHintMbps;
            }
            if (path.unacknowledged.isEmpty())
            {
                path.lastAckHeard = System.nanoTime(); // RFC 6298 5.1: the timer starts with the first packet out
            }
            path.unacknowledged.put(psn, packet);
            path.sentAt.put(psn, System.nanoTime());
            sendData(path, packet);
            c.lastSent = System.nanoTime();
        }
    }

    /**
     * @return the path the next new packet goes on: the next live one in turn after the last used (S7.2) whose
     * window has room and that is not due to rotate with packets outstanding (S7.7: it drains first); with
     * {@link Fault#NO_SPRAY} only the first live path; null when none may take one now.
     */
    private ToyPath nextPath(final ToyConnection c)
    {
        final int paths = c.sendPaths.length;
        for (int k = 0; k < paths; k++)
        {
            final ToyPath path = c.sendPaths[(c.nextPath + k) % paths];
            if (path.failed)
            {
                continue;
            }
            final boolean room = faults.contains(Fault.NO_WINDOW) || path.unacknowledged.size() < (int)path.window;
            final boolean draining = faults.contains(Fault.ROTATE_DRAINED) && path.portPackets >= ROTATE_PACKETS &&
                !path.unacknowledged.isEmpty();
            if (faults.contains(Fault.NO_SPRAY))
            {
                return room && !draining && path.index == firstLive(c) ? path : null;
            }
            if (room && !draining)
            {
                c.nextPath = (path.index + 1) % paths;
                return path;
            }
        }
        return null;
    }

    private static int firstLive(final ToyConnection c)
    {
        for (final ToyPath path : c.sendPaths)
        {
            if (!path.failed)
            {
                return path.index;
            }
        }
        return -1;
    }

    /**
     * S6.8: each path's timer. A path whose oldest packet waited its RTO times out: after
     * {@link ToyResponder#FAIL_AFTER_TIMEOUTS} in a row it fails when another path lives (S7.4), else its oldest
     * packet goes again.
     *
     * @return whether any path timed out.
     */
    boolean checkTimers(final ToyConnection c, final long now) throws IOException
    {
        boolean any = false;
        for (final ToyPath path : c.sendPaths)
        {
            if (path.failed || path.unacknowledged.isEmpty() ||
                now - path.lastAckHeard <= rtoNanos(path) + marginNanos(c, path))
            {
                continue;
            }
            any = true;
            path.lastAckHeard = now;
            if (++path.timeouts >= ToyResponder.FAIL_AFTER_TIMEOUTS && failOver(c, path))
            {
                continue;
            }
            onTimeout(path);
        }
        return any;
    }

    /**
     * S7.4: {@code path} failed. When another path lives, its outstanding packets go again as new packets ahead of
     * what is held, on the live paths at their PSNs (the placement is the packet's own, S4.2), and it is probed
     * (S7.5).
     *
     * @return whether it failed (else the caller retransmits on the path, S6.8: every path as silent).
     */
    private boolean failOver(final ToyConnection c, final ToyPath path) throws IOException
    {
        if (faults.contains(Fault.NO_FAILOVER))
        {
            return false;
        }
        boolean another = false;
        for (final ToyPath q : c.sendPaths)
        {
            another |= q != path && !q.failed;
        }
        if (!another)
        {
            return false;
        }
        path.failed = true;
        path.lastProbeAt = System.nanoTime() - ToyResponder.PROBE_INTERVAL_NANOS;
        final java.util.List<byte[]> pending = new java.util.ArrayList<>(path.unacknowledged.values());
        pending.removeIf(ToyReadSender::isProbe); // a probe standing in for data the region lost (S9.3.2) moves nowhere
        java.util.Collections.reverse(pending);
        for (final byte[] packet : pending)
        {
            packet[SprayWire.BTH_LENGTH + 1] &= (byte)~SprayWire.SETH_RETRANSMIT; // new packets, not retransmissions
            c.held.addFirst(packet);
        }
        path.unacknowledged.clear();
        path.resent.clear();
        path.sentAt.clear();
        path.freshWindow();
        sendWithinWindow(c);
        return true;
    }

    /** S7.5: a RESYNC probe of each failed path every {@link ToyResponder#PROBE_INTERVAL_NANOS}, at its next PSN. */
    void probeFailedPaths(final ToyConnection c, final long now) throws IOException
    {
        for (final ToyPath path : c.sendPaths)
        {
            if (!path.failed || now - path.lastProbeAt < ToyResponder.PROBE_INTERVAL_NANOS ||
                faults.contains(Fault.NO_PROBE_BACK))
            {
                continue;
            }
            path.lastProbeAt = now;
            path.probePsn = path.nextPsn;
            path.nextPsn = (path.probePsn + 1) & SprayWire.PSN_MASK; // the probe occupies its PSN (S5.2)
            link.send(FrameBuilder.bth(SprayWire.PROBE, c.peerCid, path.probePsn, false).u8(path.index)
                .u8(SprayWire.PRBH_RESYNC).u16(0).u8(0).u24(path.probePsn).controlTag(c.sendKey).bytes(), false,
                UdpLink.NOT_ECT);
        }
    }

    /**
     * S6.8.1: {@code min(C, max(rtoMin, min(C, srtt + max(4 * rttvar, rtoSlack))) * 2^b)} with the ceiling
     * {@code C = max(rtoMax, srtt + rtoSlack)} (S6.8-4: rtoMax never takes it below the path's srtt); rtoMin before
     * any sample. No late margin (lateMarginMax 0, S6.8).
     */
    long rtoNanos(final ToyPath path)
    {
        if (faults.contains(Fault.RTO_CAPPED))
        {
            return ToyResponder.RTO_MIN_NANOS;
        }
        final int backoff = faults.contains(Fault.NO_BACKOFF) ? 0 : path.backoff;
        return Math.min(ceilingNanos(path), unbackedRtoNanos(path) << backoff);
    }

    // S6.8.1's C: rtoMax never takes the RTO below the path's own srtt (S6.8-4)
    private static long ceilingNanos(final ToyPath path)
    {
        return Math.max(ToyResponder.RTO_MAX_NANOS, path.rtoSrtt + ToyResponder.RTO_SLACK_NANOS);
    }

    /** @return the path's RTO before the backoff (and without a late margin, which the toy adds apart). */
    private long unbackedRtoNanos(final ToyPath path)
    {
        if (faults.contains(Fault.RTO_CAPPED))
        {
            return ToyResponder.RTO_MIN_NANOS;
        }
        return !path.rtoSampled ? ToyResponder.RTO_MIN_NANOS : Math.max(ToyResponder.RTO_MIN_NANOS,
            Math.min(ceilingNanos(path), path.rtoSrtt + Math.max(4 * path.rtoRttvar, ToyResponder.RTO_SLACK_NANOS)));
    }

    /**
     * S6.8.1, S6.8-3: the late margin in the path's RTO: none while a sibling has acknowledged a first transmission
     * sent after the path was due (its timer's start plus its RTO without the margin), unless
     * {@link Fault#MARGIN_KEPT_ALONE}.
     */
    private long marginNanos(final ToyConnection c, final ToyPath path)
    {
        if (c.lateMarginNanos == 0 || faults.contains(Fault.MARGIN_KEPT_ALONE))
        {
            return c.lateMarginNanos;
        }
        final long due = path.lastAckHeard + rtoNanos(path);
        for (final ToyPath sibling : c.sendPaths)
        {
            if (sibling != path && !sibling.failed && sibling.answeredSentAt - due > 0)
            {
                return 0;
            }
        }
        return c.lateMarginNanos;
    }

    /**
     * S6.8: a timeout of the path: the oldest packet goes again at its PSN with RETRANSMIT, the RTO backs off (S6.8-6),
     * and this timeout is the one S6.8-1 judges; the one before it, superseded, counts among the other copies.
     */
    private void onTimeout(final ToyPath path) throws IOException
    {
        path.backoff = Math.min(16, path.backoff + 1);
        if (path.timeoutUndecided)
        {
            path.otherCopies++;
        }
        path.timeoutUndecided = true;
        final Map.Entry<Integer, byte[]> oldest = path.unacknowledged.firstEntry();
        final Long sent = path.sentAt.remove(oldest.getKey()); // Karn: no sample from a packet sent twice
        final long now = System.nanoTime();
        // the transmission before this copy: the last copy of the same PSN, else its first (unknown: one RTO ago)
        path.beforeCopyAt = path.copyPsn == oldest.getKey() ? path.copyAt : null != sent ? sent : now - rtoNanos(path);
        path.copyPsn = oldest.getKey();
        path.copyAt = now;
        path.afterLastCopy = path.nextPsn;
        sendAgain(path, oldest.getValue());
    }

    /**
     * S6.8-1 (c): an ACK reporting more duplicates than the path's other copies could make shows that the last
     * timeout's copy arrived after its PSN had: the timeout was spurious, its backoff is undone. Otherwise the report
     * uses up that many of the other copies' (a simplification of S6.8-1's bookkeeping: it only ever sees fewer).
     * With {@link Fault#LATE_MARGIN} a spurious timeout widens the connection's late margin as S6.8.1's table says
     * (S6.8-2): at least doubled, and at least 1.25 x how much longer than the RTO without it the packet took from
     * the transmission before the copy to this ACK.
     */
    private void judgeByDuplicates(final ToyConnection c, final ToyPath path, final int duplicates)
    {
        if (duplicates == 0 || faults.contains(Fault.NO_SPURIOUS_UNDO))
        {
            return;
        }
        if (path.timeoutUndecided && duplicates > path.otherCopies)
        {
            path.timeoutUndecided = false;
            path.backoff = 0;
            path.otherCopies = 0;
            if (faults.contains(Fault.LATE_MARGIN) || faults.contains(Fault.MARGIN_KEPT_ALONE))
            {
                // S6.8.1: at least doubled, and enough to cover how late the packet was with a quarter to spare
                final long late = System.nanoTime() - path.beforeCopyAt - unbackedRtoNanos(path);
                c.lateMarginNanos = Math.min(ToyResponder.LATE_MARGIN_MAX_NANOS,
                    Math.max(Math.max(2 * c.lateMarginNanos, ToyResponder.RTO_SLACK_NANOS),
                        faults.contains(Fault.MARGIN_DOUBLED_ONLY) ? 0 : late + late / 4));
            }
        }
        else
        {
            path.otherCopies = Math.max(0, path.otherCopies - duplicates);
        }
    }

    /** Sends {@code body} again at its PSN: data with RETRANSMIT (S6.6), a probe standing in for data as it is. */
    private void sendAgain(final ToyPath path, final byte[] body) throws IOException
    {
        if (isProbe(body))
        {
            path.dataLink.send(body, false, UdpLink.NOT_ECT);
            return;
        }
        final byte[] again = body.clone();
        again[SprayWire.BTH_LENGTH + 1] |= SprayWire.SETH_RETRANSMIT;
        sendData(path, again);
    }

    private static boolean isProbe(final byte[] body)
    {
        return (body[0] & 0xFF) == SprayWire.PROBE;
    }

    private void sendData(final ToyPath path, final byte[] body) throws IOException
    {
        path.dataLink.send(body, false, faults.contains(Fault.NOT_ECT_DATA) ? UdpLink.NOT_ECT : UdpLink.ECT_0);
    }
}

