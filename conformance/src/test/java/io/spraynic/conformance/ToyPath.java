package io.spraynic.conformance;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * One path of a {@link ToyConnection} as {@link ToyReadSender} sends on it: its PSN space (S5.4: from 1000 +
 * index x 2^18, never wrapping in a test), what it has outstanding, its window (S8.2), its RTO (S6.8), whether it
 * failed (S7.4) and its RESYNC probe (S7.5), and the source ports its data and control packets go from (S7.3, S7.7).
 */
final class ToyPath
{
    final int index;
    int nextPsn;
    /** READ_RESPONSEs sent on the path and not yet acknowledged, by PSN. */
    final TreeMap<Integer, byte[]> unacknowledged = new TreeMap<>();
    /**
     * READ_RESPONSEs an ACK showed missing and that went again: once each (the timer covers a lost resend), so
     * that a run of ACKs behind a lossy path does not resend every gap at each ACK and flood the socket.
     */
    final Set<Integer> resent = new HashSet<>();
    /** When each unacknowledged READ_RESPONSE first went, by PSN (none once it went again: Karn). */
    final Map<Integer, Long> sentAt = new HashMap<>();
    /** S8.2: the window in packets, its CE estimate, and the packets and CE echoes of this round. */
    double window = ToyResponder.INITIAL_WINDOW;
    double alpha;
    int roundAcknowledged;
    int roundMarked;
    /** Consecutive timeouts with no ACK (S7.4), and when the last ACK came or the timer last started. */
    int timeouts;
    long lastAckHeard = System.nanoTime();
    /**
     * S6.8: srtt and rttvar (S6.8.1's gains, from packets acknowledged without having gone again), whether it has a
     * sample, the backoff b; for S6.8-1 (c), whether the last timeout is not yet judged, the duplicates the path's
     * other copies may still make, and the PSN after the last copy (a PSN from it on was first sent after them all).
     */
    /** S6.8-3: the latest first send time of a packet of the path acknowledged (an RTT sample: sent once). */
    long answeredSentAt;
    long rtoSrtt;
    long rtoRttvar;
    boolean rtoSampled;
    int backoff;
    boolean timeoutUndecided;
    int otherCopies;
    int afterLastCopy;
    /** S6.8.1: the PSN the last timeout sent again, when, and when that PSN was sent before it (R' runs from then). */
    int copyPsn = -1;
    long copyAt;
    long beforeCopyAt;
    /** S7.4, S7.5: failed (its packets moved to the others), the PSN of its last RESYNC probe and when it went. */
    boolean failed;
    int probePsn;
    long lastProbeAt;
    /** The sockets its data and its control packets go from: a re-path (S7.3) moves both, a rotation (S7.7) data. */
    UdpLink dataLink;
    UdpLink controlLink;
    /** S7.7: data packets on the current data port. */
    int portPackets;
    /**
     * S7.3-1: data packets sent since the last move, and the PSNs of those found lost; and the moves so far. After a
     * move the toy judges loss again only over a whole window (256 packets), a move for each 32 packets of a steady
     * loss being more than a test needs to see.
     */
    int moves;
    int sampleSent;
    final Set<Integer> sampleLost = new HashSet<>();
    /**
     * S7.3-2: the RTT samples of the current round since the last move, and the median of the last whole round (-1:
     * none yet): a toy's smoothing that a loaded host's scheduling spikes move less than an EWMA over loopback round
     * trips of a fraction of a millisecond, which jumped past 3 x its siblings' at one spike.
     */
    final long[] roundSamples = new long[ToyReadSender.RTT_ROUND];
    int roundCount;
    long roundRttNanos = -1;
    /** When the packets of the current round's samples were sent: the first and the last (System.nanoTime()). */
    long roundFirstSent;
    long roundLastSent;
    /** The rounds judged slow in a row. */
    int slowRounds;
    /**
     * S6.5-2: after a move with packets outstanding, the first PSN sent on the new route (-1: none left behind), the
     * highest PSN of the old route acknowledged since, and how long after it went an old-route packet is overdue (the
     * RTO's estimate before the move restarted it).
     */
    int routeStartPsn = -1;
    int oldRouteAckedTo = -1;
    long oldRouteExpectedNanos;

    ToyPath(final int index, final int firstPsn, final UdpLink link)
    {
        this.index = index;
        this.nextPsn = firstPsn;
        this.afterLastCopy = firstPsn;
        this.dataLink = link;
        this.controlLink = link;
    }

    /** @return the loss rate over the path's sample since its last move, 0 below 32 packets (S7.3). */
    double lossRate()
    {
        return sampleSent < 32 ? 0 : (double)sampleLost.size() / sampleSent;
    }

    /** A new route (S7.3): its RTT and loss estimators restart; PSN space, window and margin go on. */
    void restartEstimators()
    {
        sampleSent = 0;
        sampleLost.clear();
        roundCount = 0;
        roundRttNanos = -1;
        slowRounds = 0;
        rtoSampled = false;
        rtoSrtt = 0;
        rtoRttvar = 0;
    }

    /** Back to a fresh window and timer (S7.5: a path restored; S8.2). */
    void freshWindow()
    {
        window = ToyResponder.INITIAL_WINDOW;
        alpha = 0;
        roundAcknowledged = 0;
        roundMarked = 0;
        timeouts = 0;
        backoff = 0;
        timeoutUndecided = false;
        otherCopies = 0;
        lastAckHeard = System.nanoTime();
    }
}
