package io.spraynic.conformance;

import io.spraynic.conformance.ToyResponder.Fault;

import java.io.IOException;
import java.util.Map;

import static io.spraynic.conformance.ToyResponder.ROTATE_PACKETS;
import static io.spraynic.conformance.ToyResponder.SLOW_NANOS;

/**
 * {@link ToyResponder}'s READ responses on the way out: the window (S8.2) and pacing (S8.4) of the one path it sends
 * on, what an ACK shows missing sent again (S6.5, S6.6), stale ACKs ignored (S5.1-2), a path that fails after
 * {@link ToyResponder#FAIL_AFTER_TIMEOUTS} timeouts left for another (S7.4) and probed back with RESYNC (S7.5), and
 * the source ports it rotates (S7.7) and re-paths (S7.3) with its faults. It does not spray (S7.2-1, a SHOULD).
 */
final class ToyReadSender
{
    /** S8.2: the gain of a path's CE estimate. */
    private static final double GAIN = 1.0 / 16;

    private final java.util.Set<Fault> faults;
    private final UdpLink link;
    /** With a ROTATE_ or REPATH fault: a second socket, the other source port data alternates to; else null. */
    private final UdpLink rotatedLink;
    private UdpLink dataLink;
    /** The socket of the toy's ACKs of path 0: moved by a re-path (S7.3), never by rotation (S7.7); others use link. */
    private UdpLink controlLink;
    private int portPackets;
    /** {@link Fault#REPATH}: data packets sent since the last move, and the PSNs of those found lost. */
    private int sampleSent;
    private final java.util.Set<Integer> sampleLost = new java.util.HashSet<>();

    ToyReadSender(final java.util.Set<Fault> faults, final UdpLink link, final UdpLink rotatedLink)
    {
        this.faults = faults;
        this.link = link;
        this.rotatedLink = rotatedLink;
        this.dataLink = link;
        this.controlLink = link;
    }

    /** @return the socket the ACKs of path 0 go from (S7.3: a re-path moves it). */
    UdpLink controlLink()
    {
        return controlLink;
    }

    /**
     * An ACK of the toy's path 0: a stale one (S5.1-2) is ignored; what it acknowledges is forgotten, and what it
     * shows missing below the highest PSN acknowledged is sent again with RETRANSMIT (S6.5, S6.6).
     */
    void onAck(final ToyConnection c, final Packet p) throws IOException
    {
        final int path = p.h8(0);
        final int sequence = p.h32(44);
        if (path >= c.ackTaken.length ||
            sequence - c.ackTaken[path] <= 0 && !faults.contains(Fault.ACCEPT_STALE_ACK))
        {
            return;
        }
        c.ackTaken[path] = sequence - c.ackTaken[path] > 0 ? sequence : c.ackTaken[path];
        if (path != c.activePath)
        {
            // S7.5: the ACK of a failed path's RESYNC probe makes it active again, with a fresh window
            if (path == c.failedPath && p.h24(5) == ((c.probePsn + 1) & SprayWire.PSN_MASK))
            {
                c.failedPath = -1;
                moveTo(c, path);
            }
            return; // it sends on one path: no other has packets to acknowledge
        }
        c.timeouts = 0;
        c.rateHintMbps = p.h32(40);
        c.answerAt = System.nanoTime() + SLOW_NANOS;
        c.lastAckHeard = System.nanoTime();
        final int cumulative = p.h24(5);
        final int outstanding = c.unacknowledged.size();
        final long now = System.nanoTime();
        for (final int psn : c.unacknowledged.headMap(cumulative).keySet())
        {
            sampleRtt(c, psn, now);
        }
        c.unacknowledged.headMap(cumulative).clear();
        int highest = cumulative - 1;
        for (int i = 1; i < SprayWire.SACK_BITS; i++)
        {
            if (ScriptedPeer.sackBit(p, i))
            {
                if (null != c.unacknowledged.remove(cumulative + i))
                {
                    sampleRtt(c, cumulative + i, now);
                }
                highest = cumulative + i;
            }
        }
        endOfRound(c, outstanding - c.unacknowledged.size(), p.h16(2));
        judgeByDuplicates(c, p.h8(4));
        for (final Map.Entry<Integer, byte[]> lost : c.unacknowledged.headMap(highest).entrySet())
        {
            if (!c.resent.add(lost.getKey()))
            {
                continue;
            }
            c.otherCopies++; // S6.8-1 (c): a copy that may make a duplicate, sent after this ACK was written
            if (faults.contains(Fault.REPATH) && sampleLost.add(lost.getKey()) && sampleSent >= 32 &&
                sampleLost.size() * 20 > sampleSent)
            {
                // S7.3: a new route for data and ACKs alike
                dataLink = controlLink = dataLink == link ? rotatedLink : link;
                sampleSent = 0;
                sampleLost.clear();
            }
            final byte[] again = lost.getValue().clone();
            again[SprayWire.BTH_LENGTH + 1] |= SprayWire.SETH_RETRANSMIT;
            sendData(again);
        }
        sendWithinWindow(c);
    }

    /**
     * An RTT sample of a packet acknowledged without having gone again (Karn) for the RTO (S6.8.1); with
     * {@link Fault#REPATH_RTT}, the move of path 0 when its smoothed RTT exceeds 3 x the lowest since its last move.
     */
    private void sampleRtt(final ToyConnection c, final int psn, final long now)
    {
        final Long sent = c.sentAt.remove(psn);
        if (null == sent || c.resent.contains(psn))
        {
            return;
        }
        final long rtt = now - sent;
        // S6.8.1: rttvar first, from the old srtt; a sample ends the backoff
        if (c.rtoSampled)
        {
            c.rtoRttvar += (Math.abs(c.rtoSrtt - rtt) - c.rtoRttvar) / 4;
            c.rtoSrtt += (rtt - c.rtoSrtt) / 8;
        }
        else
        {
            c.rtoSrtt = rtt;
            c.rtoRttvar = rtt / 2;
            c.rtoSampled = true;
        }
        c.backoff = 0;
        if (!faults.contains(Fault.REPATH_RTT))
        {
            return;
        }
        c.srttNanos = 0 == c.rttSamples ? rtt : c.srttNanos + (rtt - c.srttNanos) / 8;
        c.rttSamples++;
        if (c.rttSamples >= 8)
        {
            c.lowestSrttNanos = Math.min(c.lowestSrttNanos, c.srttNanos);
        }
        if (c.rttSamples >= 32 && c.srttNanos > 3 * c.lowestSrttNanos)
        {
            dataLink = controlLink = dataLink == link ? rotatedLink : link;
            c.rttSamples = 0;
            c.lowestSrttNanos = Long.MAX_VALUE;
        }
    }

    /**
     * S8.2: a round ends when its ACKs acknowledged a window of packets; with CE echoed in it the window shrinks by
     * alpha / 2 (alpha the smoothed fraction of marked packets), else it grows by one, up to 256.
     */
    private void endOfRound(final ToyConnection c, final int acknowledged, final int marked)
    {
        c.roundAcknowledged += acknowledged;
        c.roundMarked += marked;
        if (c.roundAcknowledged < (int)c.window)
        {
            return;
        }
        if (c.roundMarked > 0 && !faults.contains(Fault.IGNORE_CE))
        {
            c.alpha = (1 - GAIN) * c.alpha + GAIN * Math.min(1.0, (double)c.roundMarked / c.roundAcknowledged);
            c.window = Math.max(1, c.window * (1 - c.alpha / 2));
        }
        else
        {
            c.window = Math.min(SprayWire.SACK_BITS, c.window + 1);
        }
        c.roundAcknowledged = 0;
        c.roundMarked = 0;
    }

    /**
     * Sends the held READ_RESPONSEs the window has room for (all of them with {@link Fault#NO_WINDOW}) and the
     * pacer lets go: with a rateHint, a packet's payload plus 128 B at that rate after the one before, no burst.
     */
    void sendWithinWindow(final ToyConnection c) throws IOException
    {
        final int window = faults.contains(Fault.NO_WINDOW) ? Integer.MAX_VALUE : (int)c.window;
        final boolean paced = c.rateHintMbps > 0 && !faults.contains(Fault.IGNORE_RATE_HINT);
        final long now = System.nanoTime();
        if (faults.contains(Fault.SLOW) && now < c.answerAt)
        {
            return;
        }
        while (!c.held.isEmpty() && c.unacknowledged.size() < window && (!paced || now >= c.nextSendAt))
        {
            if ((faults.contains(Fault.ROTATE_DRAINED) || faults.contains(Fault.ROTATE_IN_FLIGHT)) &&
                portPackets >= ROTATE_PACKETS)
            {
                if (faults.contains(Fault.ROTATE_DRAINED) && !c.unacknowledged.isEmpty())
                {
                    break; // due to rotate: wait for the path to drain
                }
                dataLink = dataLink == link ? rotatedLink : link;
                portPackets = 0;
            }
            portPackets++;
            sampleSent++;
            final Map.Entry<Integer, byte[]> next = c.held.pollFirstEntry();
            if (paced)
            {
                c.nextSendAt = Math.max(c.nextSendAt, now) +
                    (next.getValue().length - SprayWire.BTH_LENGTH - SprayWire.SETH_LENGTH + 128) * 8_000L / c.rateHintMbps;
            }
            if (c.unacknowledged.isEmpty())
            {
                c.lastAckHeard = System.nanoTime(); // RFC 6298 5.1: the timer starts with the first packet out
            }
            c.unacknowledged.put(next.getKey(), next.getValue());
            c.sentAt.put(next.getKey(), System.nanoTime());
            sendData(next.getValue());
            c.lastSent = System.nanoTime();
        }
    }

    /**
     * S7.4: the active path failed. When another path has not, its packets move there: sent again as new packets,
     * at that path's PSNs, with what was held; the failed path is then probed (S7.5).
     *
     * @return whether they moved (else the caller retransmits on the path, S6.8: every path as silent).
     */
    boolean failOver(final ToyConnection c) throws IOException
    {
        if (faults.contains(Fault.NO_FAILOVER))
        {
            return false;
        }
        for (int path = 0; path < c.nextPsnOf.length; path++)
        {
            if (path != c.activePath && path != c.failedPath)
            {
                c.failedPath = c.activePath;
                c.lastProbeAt = System.nanoTime() - ToyResponder.PROBE_INTERVAL_NANOS;
                moveTo(c, path);
                return true;
            }
        }
        return false;
    }

    /** S7.5: a RESYNC probe of the failed path every {@link ToyResponder#PROBE_INTERVAL_NANOS}, at its next PSN. */
    void probeFailedPath(final ToyConnection c, final long now) throws IOException
    {
        if (c.failedPath < 0 || now - c.lastProbeAt < ToyResponder.PROBE_INTERVAL_NANOS ||
            faults.contains(Fault.NO_PROBE_BACK))
        {
            return;
        }
        c.lastProbeAt = now;
        c.probePsn = c.nextPsnOf[c.failedPath];
        c.nextPsnOf[c.failedPath] = (c.probePsn + 1) & SprayWire.PSN_MASK; // the probe occupies its PSN (S5.2)
        link.send(FrameBuilder.bth(SprayWire.PROBE, c.peerCid, c.probePsn, false).u8(c.failedPath)
            .u8(SprayWire.PRBH_RESYNC).u16(0).u8(0).u24(c.probePsn).controlTag(c.sendKey).bytes(), false,
            UdpLink.NOT_ECT);
    }

    /**
     * Makes {@code path} the one the toy sends on: what was outstanding or held there goes again, in order, as new
     * packets of that path (its PSNs, its index in the SETH; the placement is the packet's own, S4.2), with a fresh
     * window (S7.5, S8.2).
     */
    private void moveTo(final ToyConnection c, final int path) throws IOException
    {
        final java.util.List<byte[]> pending = new java.util.ArrayList<>(c.unacknowledged.values());
        pending.addAll(c.held.values());
        c.nextPsnOf[c.activePath] = c.nextPsn;
        c.activePath = path;
        c.nextPsn = c.nextPsnOf[path];
        c.unacknowledged.clear();
        c.held.clear();
        c.resent.clear();
        c.sentAt.clear();
        for (final byte[] packet : pending)
        {
            final byte[] moved = packet.clone();
            moved[9] = (byte)(c.nextPsn >> 16); // the BTH's PSN
            moved[10] = (byte)(c.nextPsn >> 8);
            moved[11] = (byte)c.nextPsn;
            moved[SprayWire.BTH_LENGTH] = (byte)path; // SETH path
            moved[SprayWire.BTH_LENGTH + 1] &= (byte)~SprayWire.SETH_RETRANSMIT; // new packets, not retransmissions
            c.held.put(c.nextPsn, moved);
            c.nextPsn = (c.nextPsn + 1) & SprayWire.PSN_MASK;
        }
        c.window = ToyResponder.INITIAL_WINDOW;
        c.alpha = 0;
        c.roundAcknowledged = 0;
        c.roundMarked = 0;
        c.timeouts = 0;
        c.backoff = 0;
        c.timeoutUndecided = false;
        c.otherCopies = 0;
        c.lastAckHeard = System.nanoTime();
        sendWithinWindow(c);
    }

    /**
     * S6.8.1: {@code min(C, max(rtoMin, min(C, srtt + max(4 * rttvar, rtoSlack))) * 2^b)} with the ceiling
     * {@code C = max(rtoMax, srtt + rtoSlack)} (S6.8-4: rtoMax never takes it below the path's srtt); rtoMin before
     * any sample. No late margin (lateMarginMax 0, S6.8).
     */
    long rtoNanos(final ToyConnection c)
    {
        if (faults.contains(Fault.RTO_CAPPED))
        {
            return ToyResponder.RTO_MIN_NANOS;
        }
        final long ceiling = Math.max(ToyResponder.RTO_MAX_NANOS, c.rtoSrtt + ToyResponder.RTO_SLACK_NANOS);
        final long unbacked = !c.rtoSampled ? ToyResponder.RTO_MIN_NANOS : Math.max(ToyResponder.RTO_MIN_NANOS,
            Math.min(ceiling, c.rtoSrtt + Math.max(4 * c.rtoRttvar, ToyResponder.RTO_SLACK_NANOS)));
        return Math.min(ceiling, unbacked << (faults.contains(Fault.NO_BACKOFF) ? 0 : c.backoff));
    }

    /**
     * S6.8: a timeout of the path: the oldest packet goes again at its PSN with RETRANSMIT, the RTO backs off (S6.8-6),
     * and this timeout is the one S6.8-1 judges; the one before it, superseded, counts among the other copies.
     */
    void onTimeout(final ToyConnection c) throws IOException
    {
        c.backoff = Math.min(16, c.backoff + 1);
        if (c.timeoutUndecided)
        {
            c.otherCopies++;
        }
        c.timeoutUndecided = true;
        final Map.Entry<Integer, byte[]> oldest = c.unacknowledged.firstEntry();
        c.sentAt.remove(oldest.getKey()); // Karn: no sample from a packet sent twice
        final byte[] again = oldest.getValue().clone();
        again[SprayWire.BTH_LENGTH + 1] |= SprayWire.SETH_RETRANSMIT;
        sendData(again);
    }

    /**
     * S6.8-1 (c): an ACK reporting more duplicates than the path's other copies could make shows that the last
     * timeout's copy arrived after its PSN had: the timeout was spurious, its backoff is undone. Otherwise the report
     * uses up that many of the other copies' (a simplification of S6.8-1's bookkeeping: it only ever sees fewer).
     */
    private void judgeByDuplicates(final ToyConnection c, final int duplicates)
    {
        if (duplicates == 0 || faults.contains(Fault.NO_SPURIOUS_UNDO))
        {
            return;
        }
        if (c.timeoutUndecided && duplicates > c.otherCopies)
        {
            c.timeoutUndecided = false;
            c.backoff = 0;
            c.otherCopies = 0;
            c.spuriousTimeouts++;
        }
        else
        {
            c.otherCopies = Math.max(0, c.otherCopies - duplicates);
        }
    }

    void sendData(final byte[] body) throws IOException
    {
        dataLink.send(body, false, faults.contains(Fault.NOT_ECT_DATA) ? UdpLink.NOT_ECT : UdpLink.ECT_0);
    }
}
