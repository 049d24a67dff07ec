package io.spraynic.conformance;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The routes of the target's paths as the wire shows them: the UDP source port of each path's data and of its control
 * packets (S2.2). Source-port rotation (S7.7-1) may move a path to a new port only once the path has drained: the
 * suite plays the receiver of a READ's responses and holds its ACKs until the target pauses, so that a data packet on
 * a new port that arrives while a packet of the old port has had no ACK was sent before the target could know the old
 * one acknowledged. Re-pathing (S7.3-1) moves a lossy path for cause, control packets included, which rotation
 * never moves (S7.7): the suite drops a share of one path's READ responses and watches the source port of the ACKs
 * the target sends on that path index.
 */
final class RouteChecks extends Checks
{
    /**
     * The pause after which the suite acknowledges what it holds: far below the shortest RTO a target on shared cores
     * uses (S6.8: 5 ms), so that holding ACKs does not look like loss; an ACK sent early (a target descheduled
     * in the middle of a burst) only makes the check less strict, never wrong.
     */
    static final long HOLD_NANOS = ScriptedPeer.MILLI;
    /** 256 packets at MTU 256 over 4 paths: 64 a path, 2-4 runs of 16-32 (S11), below the 256 of a loss sample (S7.3). */
    private static final int ROTATION_READ_BYTES = 64 * 1024;
    private static final int ROTATION_MTU = 256;
    private static final int ROTATION_PATHS = 4;
    /** One in 4 of the lossy path's first transmissions dropped: 25 %, five times repathLoss (S11). */
    private static final int REPATH_LOSS_EVERY = 4;
    /**
     * Lossy READs before the check fails: a target whose ports fold onto a few sockets (SprayNIC's udp preset: 8)
     * may re-path to a port that folds onto the old socket; three in a row, 1 in 512.
     */
    private static final int REPATH_ATTEMPTS = 3;
    /** S7.3: the fewest packets a path's loss rate is judged from. */
    static final int REPATH_MIN_SAMPLE = 32;
    /**
     * How much later the suite sends its ACKs of the slow path (S7.3-2) at each look: 4 ms, then 8, 12 and 16 ms, so
     * that the slow path's RTT exceeds 3 x the others' even where theirs is milliseconds (a loaded host). Each step
     * is reached by {@link ScriptedPeer#SLOW_RAMP_NANOS} an ACK, so that no packet of the slow path times out (a loss
     * could move it for another cause, and a timed-out packet gives no RTT sample, S6.8): a step of 4 ms at once
     * came within a loaded host's jitter of the 5 ms by which a target on shared cores keeps its RTO above its RTT
     * (CI: 28 of the slow path's 531 packets sent again, the check not tested).
     */
    static final long SLOW_ACK_STEP_NANOS = 4 * ScriptedPeer.MILLI;
    /** Looks at the slow path's control port, each after {@link #SLOW_SAMPLE} packets with ACKs one step later. */
    private static final int SLOW_STEPS = 4;
    /**
     * First transmissions on the slow path between two looks at its control port: two of the 256-packet samples at
     * whose end a sender may judge the path (S7.3), so that at least one ends with the path's RTT estimate late.
     */
    private static final int SLOW_SAMPLE = 2 * SprayWire.SACK_BITS;
    /** How long the slow path may take to carry {@link #SLOW_SAMPLE} packets, each look. */
    private static final long SLOW_SAMPLE_NANOS = 10 * ANSWER_NANOS;


    /** S6.5-2: the left-behind check's first queue: room for a target's prompt copy to come before it is judged. */
    static final long LEFT_BEHIND_QUEUE_NANOS = 2 * SLOW_ACK_STEP_NANOS;
    /** S6.5-2: the most moves of the queued path the left-behind check judges. */
    private static final int LEFT_BEHIND_MOVES = 3;

    private final long base;
    private final int rkey;

    RouteChecks(final Target target, final UdpLink link, final List<CheckResult> results, final long regionOffset)
    {
        super(target, link, results);
        this.base = target.regionAddress() + regionOffset;
        this.rkey = target.rkey();
    }

    void runRotation(final ConnectRequest request) throws IOException
    {
        request.paths = ROTATION_PATHS;
        request.mtu = ROTATION_MTU;
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        must("multipath.port-rotation", "S7.7-1", "a path's data moves to a new UDP source port only once every data " +
            "packet of its old port was acknowledged (the suite holds its ACKs until the target pauses)", () ->
        {
            DataChecks.requireConnection(why);
            final Rotations rotations = new Rotations(c.paths);
            final boolean complete = readHoldingAcks(c, rotations);
            if (!rotations.violations.isEmpty())
            {
                return rotations.judge();
            }
            if (rotations.changes == 0)
            {
                throw new NotTested("the target moved no path to a new source port in " + rotations.dataPackets +
                    " data packets" + (complete ? "" : " (the READ did not complete)") + ": rotation off (S7.7 " +
                    "allows rotateMin 0) or its ports folded onto one socket");
            }
            return null;
        });
        closeQuietly(c);
    }

    void runRepath(final ConnectRequest request) throws IOException
    {
        request.paths = ROTATION_PATHS;
        request.mtu = ROTATION_MTU;
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        should("multipath.repath", "S7.3-1", "a path that loses 25 % of its data while the others lose none is moved " +
            "to a new source port: the target's ACKs on that path index leave its old control port", () ->
        {
            DataChecks.requireConnection(why);
            if (c.paths < 2)
            {
                throw new NotTested("the connection has one path");
            }
            final int lossy = pathTheTargetUses(c); // the lossy path
            final int before = controlPort(c, lossy);
            if (before < 0)
            {
                throw new NotTested("no ACK of a PROBE on path " + lossy + " to learn its control port from");
            }
            c.lossyPath = lossy;
            c.lossyEvery = REPATH_LOSS_EVERY;
            int after = before;
            int judged = 0;
            try
            {
                for (int attempt = 0; attempt < REPATH_ATTEMPTS && after == before; attempt++)
                {
                    final int seen = c.lossySeen;
                    c.read(0, base, rkey, ROTATION_READ_BYTES, 5 * ANSWER_NANOS);
                    if (c.lossySeen - seen >= REPATH_MIN_SAMPLE)
                    {
                        judged++;
                    }
                    after = controlPort(c, lossy);
                }
            }
            finally
            {
                c.lossyPath = -1;
            }
            if (after != before && after >= 0)
            {
                return null;
            }
            final String counts = c.lossyDropped + " of path " + lossy + "'s " + c.lossySeen + " first transmissions " +
                "dropped, none of the other paths'";
            if (judged == 0)
            {
                throw new NotTested("path " + lossy + " never carried " + REPATH_MIN_SAMPLE + " data packets in one " +
                    "READ (" + counts + ")");
            }
            return after < 0 ? "no ACK of a PROBE on path " + lossy + " after the lossy READs (" + counts + ")" :
                "the ACKs of path " + lossy + " kept source port " + before + " through " + REPATH_ATTEMPTS +
                " lossy READs (" + counts + ")";
        });
        closeQuietly(c);
    }

    void runRepathRtt(final ConnectRequest request) throws IOException
    {
        request.paths = ROTATION_PATHS;
        request.mtu = ROTATION_MTU;
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        should("multipath.repath-rtt", "S7.3-2", "a path whose ACKs come " + SLOW_ACK_STEP_NANOS / ScriptedPeer.MILLI +
            " to " + SLOW_STEPS * SLOW_ACK_STEP_NANOS / ScriptedPeer.MILLI + " ms late while the others' come at once is moved to a new source port (its ACKs leave their old control " +
            "port) and the other paths keep theirs", () ->
        {
            DataChecks.requireConnection(why);
            if (c.paths < 2)
            {
                throw new NotTested("the connection has one path");
            }
            // the slow path; the READ also gives every path the RTT samples the median is taken over
            final int slow = pathTheTargetUses(c);
            final int[] before = new int[c.paths];
            long probeRtt = 0; // the longest the target took to answer a probe: its RTT as the suite sees it
            for (int path = 0; path < c.paths; path++)
            {
                final long sent = System.nanoTime();
                before[path] = controlPort(c, path);
                probeRtt = Math.max(probeRtt, System.nanoTime() - sent);
            }
            if (before[slow] < 0)
            {
                throw new NotTested("no ACK of a PROBE on path " + slow + " to learn its control port from");
            }
            c.slowPath = slow;
            final int checkFrom = c.received.size();
            int after = before[slow];
            int judged = 0;
            int retransmitted = 0;
            int restores = 0;
            try
            {
                for (int step = 1; step <= SLOW_STEPS && after == before[slow]; step++)
                {
                    c.slowNanos = step * SLOW_ACK_STEP_NANOS;
                    final int seen = c.slowSeen;
                    final int received = c.received.size();
                    final long deadline = System.nanoTime() + SLOW_SAMPLE_NANOS;
                    while (c.slowSeen - seen < SLOW_SAMPLE && System.nanoTime() < deadline)
                    {
                        c.read(0, base, rkey, ROTATION_READ_BYTES, 5 * ANSWER_NANOS);
                    }
                    retransmitted += retransmissions(c.received.subList(received, c.received.size()), slow);
                    if (c.slowSeen - seen >= SLOW_SAMPLE)
                    {
                        judged++;
                    }
                    after = controlPort(c, slow);
                    if (after >= 0 && after != before[slow] &&
                        resynced(c, c.received.subList(received, c.received.size())).get(slow))
                    {
                        // failed and probed back on a new port (S7.5), for another cause: judged from there on
                        restores++;
                        before[slow] = after;
                    }
                }
            }
            finally
            {
                c.endSlowPath();
            }
            final String counts = c.slowSeen + " first transmissions on path " + slow + ", " + retransmitted +
                " retransmission(s) on it; the target answered a probe in " + probeRtt / 1_000 + " us at most";
            if (after != before[slow] && after >= 0)
            {
                final List<String> moved = new ArrayList<>();
                final java.util.BitSet restored = resynced(c, c.received.subList(checkFrom, c.received.size()));
                for (int path = 0; path < c.paths; path++)
                {
                    final int now = path == slow ? after : controlPort(c, path);
                    // a path failed and probed back (RESYNC, S7.5) moves for that cause, not judged here
                    if (path != slow && before[path] >= 0 && now >= 0 && now != before[path] && !restored.get(path))
                    {
                        moved.add("path " + path + " (" + before[path] + " to " + now + ")");
                    }
                }
                if (!moved.isEmpty())
                {
                    return "path " + slow + " moved from control port " + before[slow] + " to " + after + ", but so " +
                        "did the paths whose ACKs came at once: " + String.join(", ", moved) + " (" + counts + ")";
                }
                final String movedAt = "path " + slow + " moved from control port " + before[slow] + " to " + after +
                    " with its ACKs " + c.slowNanos / ScriptedPeer.MILLI + " ms late (step " +
                    c.slowNanos / SLOW_ACK_STEP_NANOS + " of " + SLOW_STEPS + ")";
                if (retransmitted * 20 > c.slowSeen)
                {
                    throw new NotTested(movedAt + ", but it lost over 5 % too, so loss may have moved it (S7.3-1): " +
                        counts);
                }
                measured(movedAt + "; the other paths kept theirs (" + counts + ")");
                return null;
            }
            if (judged == 0)
            {
                throw new NotTested("path " + slow + " never carried " + SLOW_SAMPLE + " data packets in " +
                    SLOW_SAMPLE_NANOS / ScriptedPeer.MILLI + " ms (" + counts + ")");
            }
            if (restores > 0 && after >= 0)
            {
                throw new NotTested("path " + slow + " failed and was probed back (RESYNC, S7.5) " + restores +
                    " time(s) during the check, and kept its port after (" + counts + ")");
            }
            return after < 0 ? "no ACK of a PROBE on path " + slow + " after the slow READs (" + counts + ")" :
                "the ACKs of path " + slow + " kept source port " + before[slow] + " through " + judged + " x " +
                SLOW_SAMPLE + " packets with ACKs " + SLOW_ACK_STEP_NANOS / ScriptedPeer.MILLI + " to " +
                c.slowNanos / ScriptedPeer.MILLI + " ms late (" + counts + ")";
        });
        closeQuietly(c);
    }

    void runRepathLeftBehind(final ConnectRequest request) throws IOException
    {
        request.paths = ROTATION_PATHS;
        request.mtu = ROTATION_MTU;
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        should("multipath.repath-left-behind", "S6.5-2", "a path whose route queues its packets " +
            LEFT_BEHIND_QUEUE_NANOS / ScriptedPeer.MILLI + " to " + (LEFT_BEHIND_QUEUE_NANOS + (SLOW_STEPS - 2) *
            SLOW_ACK_STEP_NANOS) / ScriptedPeer.MILLI + " ms while the others' answer at once is moved (S7.3-2); no " +
            "packet it left queued on the old port is sent again before a queue would have delivered it, although the " +
            "new port's packets, taken in at once, are acknowledged above them", () ->
        {
            DataChecks.requireConnection(why);
            if (c.paths < 2)
            {
                throw new NotTested("the connection has one path");
            }
            final int slow = pathTheTargetUses(c);
            c.queue.path = slow;
            // each move that left packets behind is judged, up to LEFT_BEHIND_MOVES: a target that sends a copy at
            // once shows it at the first whose copies beat the queue, and a loaded host's slow round trip hides
            // one move, not all of them
            int moves = 0;
            int leftBehind = 0;
            int judgeable = 0;
            int copiesBeforeTakenIn = 0;
            long queueing = 0;
            try
            {
                while (moves < LEFT_BEHIND_MOVES)
                {
                    // 8 ms, then 4 ms longer while the path keeps its port: the RTT re-path check's delays from its
                    // second
                    for (int step = 1; step < SLOW_STEPS && 0 == c.queue.changedAt; step++)
                    {
                        c.queue.queueNanos = LEFT_BEHIND_QUEUE_NANOS + (step - 1) * SLOW_ACK_STEP_NANOS;
                        final int seen = c.queue.seen;
                        final long deadline = System.nanoTime() + SLOW_SAMPLE_NANOS;
                        while (0 == c.queue.changedAt && c.queue.seen - seen < SLOW_SAMPLE &&
                            System.nanoTime() < deadline)
                        {
                            c.read(0, base, rkey, ROTATION_READ_BYTES, 5 * ANSWER_NANOS);
                        }
                    }
                    if (0 == c.queue.changedAt)
                    {
                        break;
                    }
                    moves++;
                    queueing = Math.max(queueing, c.queue.queueNanos);
                    c.collect(3 * c.queue.queueNanos); // the packets left behind are taken in, and any copies come
                    final List<String> early = new ArrayList<>();
                    judgeable += judgeMove(c, early);
                    leftBehind += c.queue.leftBehind.size();
                    copiesBeforeTakenIn += c.queue.leftBehindCopies.size();
                    if (!early.isEmpty())
                    {
                        return early.size() + " packet(s) left on path " + slow + "'s old port at its move " + moves +
                            " were sent again before a queue would have delivered them, once the new port's packets " +
                            "were acknowledged above them: " + String.join("; ", early.subList(0, Math.min(4,
                            early.size()))) + " (" + c.queue.leftBehind.size() + " left queued, queue up to " +
                            c.queue.queueNanos / ScriptedPeer.MILLI + " ms)";
                    }
                    c.queue.again(); // the new port queues as the old did, until the next move
                }
            }
            finally
            {
                c.endQueuedPath();
            }
            final String counts = moves + " move(s) of path " + slow + " with packets queued (queue up to " +
                queueing / ScriptedPeer.MILLI + " ms): " + leftBehind + " data packet(s) left on the old port, " +
                judgeable + " of them within half their queueing before the move; " + copiesBeforeTakenIn +
                " sent again before the suite took them in; " + c.queue.seen + " first transmissions queued" +
                (c.queue.unjudgedChanges == 0 ? "" : "; " + c.queue.unjudgedChanges + " move(s) that left only packets " +
                "queued over half their time passed over");
            if (moves == 0)
            {
                throw new NotTested("path " + slow + " moved to no new port with packets left queued on the old one, " +
                    "its route queueing up to " + c.queue.queueNanos / ScriptedPeer.MILLI + " ms (" + counts + "): S7.3-2 " +
                    "not triggered, or the target drains a path before it moves it");
            }
            if (judgeable == 0)
            {
                throw new NotTested("no packet left behind came within half its queueing before a move, so none " +
                    "could be judged (" + counts + ")");
            }
            measured(counts);
            return null;
        });
        closeQuietly(c);
    }

    /**
     * S6.5-2: judges the packets the queued path's last move left behind. A copy of packet p is too early when it
     * reached the suite before p's queueing less an eighth had passed since p did: a target that holds p until the
     * old route's estimate (the round trip it measured, queueing included, and more) sends none then, the eighth
     * being for the estimate's error; one that takes the new route's ACK as p's loss sends it a round trip after the
     * move. Judgeable are the packets that came within half their queueing before the move: 3/8 of it is left for
     * that round trip.
     *
     * @return the judgeable packets; each early copy is added to {@code early}.
     */
    private static int judgeMove(final ScriptedPeer c, final List<String> early)
    {
        int judgeable = 0;
        for (final java.util.Map.Entry<Integer, Long> left : c.queue.leftBehind.entrySet())
        {
            final long arrived = left.getValue();
            final long queueing = c.queue.leftBehindQueued.get(left.getKey());
            if (arrived + queueing / 2 > c.queue.changedAt) // as ScriptedPeer passes moves over
            {
                judgeable++;
            }
            final Long copy = c.queue.leftBehindCopies.get(left.getKey());
            if (null != copy && copy - arrived < queueing - queueing / 8)
            {
                early.add("PSN " + left.getKey() + " again " + (copy - arrived) / 1_000 + " us after it came, " +
                    (copy - c.queue.changedAt) / 1_000 + " us after the new port's first packet");
            }
        }
        return judgeable;
    }

    /** @return the paths of this connection on which {@code packets} hold a RESYNC probe (S7.5). */
    private static java.util.BitSet resynced(final ScriptedPeer c, final List<Packet> packets)
    {
        final java.util.BitSet paths = new java.util.BitSet();
        for (final Packet p : packets)
        {
            if (p.icrcValid && p.wholeHeaders() && p.opcode() == SprayWire.PROBE && p.destQp() == c.localCid() &&
                (p.h8(1) & SprayWire.PRBH_RESYNC) != 0)
            {
                paths.set(p.h8(0));
            }
        }
        return paths;
    }

    /** @return the data packets among {@code packets} sent again (SETH RETRANSMIT) on {@code path}. */
    private static int retransmissions(final List<Packet> packets, final int path)
    {
        int count = 0;
        for (final Packet p : packets)
        {
            if (p.icrcValid && p.wholeHeaders() && SprayWire.isData(p.opcode()) && p.h8(0) == path &&
                (p.h8(1) & SprayWire.SETH_RETRANSMIT) != 0)
            {
                count++;
            }
        }
        return count;
    }

    /** @return the source port of the target's ACK of a PROBE the suite sends on {@code path}, -1 when none came. */
    private static int controlPort(final ScriptedPeer c, final int path) throws IOException
    {
        final int psn = c.takePsn(path);
        c.send(c.probe(path, psn, 0, c.sendKey));
        final int expect = (psn + 1) & SprayWire.PSN_MASK;
        final Packet ack = c.awaitPacket(ANSWER_NANOS, p -> c.isAckOf(p, path) &&
            SprayWire.psnDistance(expect, p.h24(5)) >= 0);
        return null == ack ? -1 : ack.sourcePort;
    }

    /**
     * READs {@link #ROTATION_READ_BYTES} on path 0, answering nothing at once: whenever the target has sent nothing
     * for {@link #HOLD_NANOS}, one ACK of each path that received data since its last ACK. Feeds {@code rotations}.
     *
     * @return whether the READ completed within 10 s.
     */
    private boolean readHoldingAcks(final ScriptedPeer c, final Rotations rotations) throws IOException
    {
        final int msn = c.takeMsn(0);
        c.silent = true;
        try
        {
            c.send(c.readRequest(0, 0, msn, base, rkey, ROTATION_READ_BYTES));
            final ScriptedPeer.InboundRead read = c.inboundRead(0, msn);
            final long deadline = System.nanoTime() + 10 * ANSWER_NANOS;
            while (!read.complete() && System.nanoTime() < deadline)
            {
                final Packet p = c.awaitPacket(HOLD_NANOS, a -> true);
                if (null == p)
                {
                    for (int path = 0; path < c.paths; path++)
                    {
                        if (rotations.owed(path))
                        {
                            c.sendAck(path);
                            rotations.acknowledged(path);
                        }
                    }
                    continue;
                }
                if (!p.icrcValid || !p.wholeHeaders() || p.destQp() != c.localCid() || p.h8(0) >= c.paths)
                {
                    continue;
                }
                if (p.opcode() == SprayWire.PROBE && (p.h8(1) & SprayWire.PRBH_RESYNC) != 0)
                {
                    rotations.resync(p.h8(0), p.sourcePort);
                }
                else if (p.opcode() == SprayWire.PROBE)
                {
                    rotations.probe(p.h8(0));
                }
                else if (p.opcode() == SprayWire.READ_RESPONSE)
                {
                    rotations.data(p.h8(0), p.sourcePort, p.psn());
                }
            }
            return read.complete();
        }
        finally
        {
            c.silent = false;
            for (int path = 0; path < c.paths; path++)
            {
                c.sendAck(path);
            }
            c.collect(SILENCE_NANOS);
        }
    }

    /**
     * S7.7-1 judged from arrivals and the suite's ACKs: per path, the source port of its data and the data packets of
     * that port that arrived since the suite last acknowledged the path. A data packet on another port while any
     * are held is a violation. A RESYNC probe (S7.5: a failed path probed back on a new port, for cause) starts the
     * path afresh on the probe's port.
     */
    static final class Rotations
    {
        private final int[] ports;
        private final int[][] heldPsns;
        private final int[] held;
        /** Paths with a data packet or probe since the suite's last ACK of them (a probe may wait for one, S8.3.1). */
        private final boolean[] owed;
        final List<String> violations = new ArrayList<>();
        int changes;
        int dataPackets;

        Rotations(final int paths)
        {
            ports = new int[paths];
            Arrays.fill(ports, -1);
            heldPsns = new int[paths][SprayWire.SACK_BITS];
            held = new int[paths];
            owed = new boolean[paths];
        }

        void data(final int path, final int port, final int psn)
        {
            dataPackets++;
            if (ports[path] >= 0 && port != ports[path])
            {
                changes++;
                if (held[path] > 0)
                {
                    violations.add("path " + path + " moved from port " + ports[path] + " to " + port + " with " +
                        held[path] + " data packet(s) of the old port not yet acknowledged (PSNs " +
                        Arrays.toString(Arrays.copyOf(heldPsns[path], Math.min(held[path], 4))) +
                        (held[path] > 4 ? "..." : "") + ")");
                }
                held[path] = 0;
            }
            ports[path] = port;
            owed[path] = true;
            if (held[path] < SprayWire.SACK_BITS)
            {
                heldPsns[path][held[path]] = psn;
            }
            held[path]++;
        }

        void resync(final int path, final int port)
        {
            ports[path] = port;
            held[path] = 0;
            owed[path] = true;
        }

        void probe(final int path)
        {
            owed[path] = true;
        }

        /** @return whether the path received anything since the suite's last ACK of it. */
        boolean owed(final int path)
        {
            return owed[path];
        }

        void acknowledged(final int path)
        {
            held[path] = 0;
            owed[path] = false;
        }

        /** @return null when no path moved early, else the first moves (and how many in all). */
        String judge()
        {
            if (violations.isEmpty())
            {
                return null;
            }
            return String.join("; ", violations.subList(0, Math.min(3, violations.size()))) +
                (violations.size() > 3 ? "; " + violations.size() + " such moves in all" : "") + " (" + changes +
                " port changes in " + dataPackets + " data packets)";
        }
    }

    /** @return a path the target sends a READ's data on: 1 when it sprays, 0 when it sends everything on path 0. */
    private int pathTheTargetUses(final ScriptedPeer c) throws IOException
    {
        final java.util.BitSet used = new java.util.BitSet();
        for (final Packet p : c.read(0, base, rkey, ROTATION_READ_BYTES, 4 * ANSWER_NANOS).packets)
        {
            used.set(p.h8(0));
        }
        return used.nextSetBit(1) > 0 ? used.nextSetBit(1) : 0;
    }
}
