package io.spraynic.conformance;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

import static io.spraynic.conformance.ToyResponder.INITIAL_WINDOW;

/** One connection of {@link ToyResponder}: its keys, its one path's PSN state, its refusals and READ responses. */
final class ToyConnection
{
    int cid;
    int peerCid;
    long[] sendKey;
    long[] receiveKey;
    byte[] connectAck;
    int[] cumulative;
    BitSet[] above;
    int[] ackSequence;
    int[] ceSinceAck;
    /** S5.1-3: data packets of each path received again since its last ACK. */
    int[] duplicatesSinceAck;
    /** The next PSN of the path the toy sends on ({@link #activePath}); the others' wait in {@link #nextPsnOf}. */
    int nextPsn;
    /**
     * S7.4, S7.5: the one path the toy sends data on (0 until it fails), the next PSN of each path while another is
     * active, the failed path (-1: none) with the PSN of its last RESYNC probe and when it went, and the consecutive
     * timeouts of the active path.
     */
    int activePath;
    int[] nextPsnOf;
    int failedPath = -1;
    int probePsn;
    long lastProbeAt;
    int timeouts;
    int mtu;
    boolean closed;
    long lastHeard = System.nanoTime();
    long lastSent = System.nanoTime();
    int refusals;
    /** S9.3-3: per SEND (stream << 32 | msn) refused: {attempt, refusal, packets of it that arrived}. */
    final Map<Long, int[]> rnr = new HashMap<>();
    /** S10.2: the WRITEs holding a record (begun, not every packet arrived), by stream << 32 | msn. */
    final Map<Long, BitSet> openWrites = new HashMap<>();
    /** S10.2-1: the WRITEs refused for want of a record, and their refusal numbers, by stream << 32 | msn. */
    final Map<Long, Integer> refusedForResources = new HashMap<>();
    final boolean[] streamErrored = new boolean[2];
    final int[] erroredMsn = new int[2];
    final int[] erroredRefusal = new int[2];
    boolean queryAnswered;
    /** S12.7: per stream, the next MSN to complete and which MSNs above it completed (bit 0: that next one). */
    private final Map<Integer, int[]> nextToComplete = new HashMap<>();
    private final Map<Integer, BitSet> completed = new HashMap<>();
    /** The highest ackSequence taken of each path (S5.1-2). */
    int[] ackTaken;
    long lastAckHeard = System.nanoTime();
    /** READ_RESPONSEs sent and not yet acknowledged, by PSN (the toy's PSNs start at 1000 and never wrap). */
    final java.util.TreeMap<Integer, byte[]> unacknowledged = new java.util.TreeMap<>();
    /** READ_RESPONSEs the window holds back, by PSN (assigned in order: one path, so sending order is PSN order). */
    final java.util.TreeMap<Integer, byte[]> held = new java.util.TreeMap<>();
    /**
     * READ_RESPONSEs an ACK showed missing and that went again: once each (the timer covers a lost resend), so
     * that a run of ACKs behind a lossy path does not resend every gap at each ACK and flood the socket.
     */
    final java.util.Set<Integer> resent = new java.util.HashSet<>();
    /** S8.2: the window of path 0 in packets, its CE estimate, and the packets and CE echoes of this round. */
    double window = INITIAL_WINDOW;
    double alpha;
    int roundAcknowledged;
    int roundMarked;
    /** S8.4: the share the last ACK gave (Mb/s, 0: none), and when the pacer lets the next packet go. */
    int rateHintMbps;
    long nextSendAt;
    /** With {@link Fault#SLOW}: when the held READ_RESPONSEs may go. */
    long answerAt;
    /** When each unacknowledged READ_RESPONSE first went, by PSN (none once it went again: Karn). */
    final Map<Integer, Long> sentAt = new HashMap<>();
    /** {@link Fault#REPATH_RTT}: path 0's smoothed RTT, the lowest it had, and its samples since the last move. */
    long srttNanos;
    long lowestSrttNanos = Long.MAX_VALUE;
    int rttSamples;
    /**
     * S6.8: the RTO of the path it sends on: srtt and rttvar (S6.8.1's gains, from packets acknowledged without
     * having gone again), whether it has a sample, the backoff b; for S6.8-1 (c), whether the last timeout is not yet
     * judged, and the duplicates the path's other copies may still make; and the timeouts judged spurious.
     */
    long rtoSrtt;
    long rtoRttvar;
    boolean rtoSampled;
    int backoff;
    boolean timeoutUndecided;
    int otherCopies;
    int spuriousTimeouts;

    /**
     * S12.7: whether a packet of (stream, msn) may create message state: its MSN is below the stream's next to
     * complete plus {@link ToyResponder#MSN_WINDOW} (one below the next to complete is of a message already done,
     * and creates none). MSNs start at 0 (S1.5).
     */
    boolean inMsnWindow(final int stream, final int msn)
    {
        final int[] next = nextToComplete.get(stream);
        return msn - (null == next ? 0 : next[0]) < ToyResponder.MSN_WINDOW;
    }

    /** S12.7: (stream, msn) completed; the stream's next MSN to complete moves past every completed one. */
    void complete(final int stream, final int msn)
    {
        final int[] next = nextToComplete.computeIfAbsent(stream, k -> new int[1]);
        final int d = msn - next[0];
        if (d < 0 || d >= ToyResponder.MSN_WINDOW)
        {
            return;
        }
        final BitSet done = completed.computeIfAbsent(stream, k -> new BitSet());
        done.set(d);
        final int advance = done.nextClearBit(0);
        if (advance > 0)
        {
            completed.put(stream, done.get(advance, ToyResponder.MSN_WINDOW + advance));
            next[0] += advance;
        }
    }
}
