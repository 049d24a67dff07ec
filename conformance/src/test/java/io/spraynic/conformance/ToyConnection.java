package io.spraynic.conformance;

import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;

/** One connection of {@link ToyResponder}: its keys, its paths' PSN state, its refusals and READ responses. */
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
    /**
     * The paths the toy sends READ responses on (S7.2), set up by {@link ToyReadSender#open}, and the one whose turn
     * is next.
     */
    ToyPath[] sendPaths;
    int nextPath;
    /** S6.8.1: the late margin learnt, one for all the paths (only with {@link ToyResponder.Fault#LATE_MARGIN}). */
    long lateMarginNanos;
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
    /** READ_RESPONSEs not sent yet, in order: each takes its path and PSN when it goes (S7.2). */
    final java.util.ArrayDeque<byte[]> held = new java.util.ArrayDeque<>();
    /** S8.4: the share the last ACK gave (Mb/s, 0: none), and when the pacer lets the next packet go. */
    int rateHintMbps;
    long nextSendAt;
    /** With {@link ToyResponder.Fault#SLOW}: when the held READ_RESPONSEs may go. */
    long answerAt;
    /** S7.3-2: the connection's latest RTT samples, every path's (a ring): path, when the packet went, its RTT. */
    static final int RTT_HISTORY = 1024;
    final int[] rttPath = new int[RTT_HISTORY];
    final long[] rttSentAt = new long[RTT_HISTORY];
    final long[] rttNanos = new long[RTT_HISTORY];
    int rttCount;

    /** Records an RTT sample of {@code path}'s packet sent at {@code sentAt} in the ring. */
    void recordRtt(final int path, final long sentAt, final long rtt)
    {
        final int i = rttCount++ & (RTT_HISTORY - 1); // RTT_HISTORY is a power of two
        rttPath[i] = path;
        rttSentAt[i] = sentAt;
        rttNanos[i] = rtt;
    }

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
