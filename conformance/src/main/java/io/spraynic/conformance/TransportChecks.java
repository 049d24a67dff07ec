package io.spraynic.conformance;

import java.io.IOException;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * ECN, congestion control and multipath as the wire shows them: the ECN field of what the target sends (S2.3), the
 * CE marks it echoes (S8.1), the window it keeps when its ACKs echo CE (S8.2), the PSN space of each path (S5.4),
 * spraying (S7.2), a path that goes dead (S7.4, S7.4.1) and its probing back (S7.5). The suite plays the receiver of
 * the target's READ responses and chooses what its ACKs say.
 */
final class TransportChecks extends Checks
{
    /** Silence that ends a round of the window check, unless the target's timer ends it first (see windows). */
    private static final long QUIET_NANOS = 4 * ScriptedPeer.MILLI;
    /**
     * Unmarked rounds before the marked ones. A round of a target that paces its window over its srtt (S8.4:
     * SprayNIC's packets come about 1 ms apart, a round lasting 13-70 ms, while the suite holds its ACKs) ends early
     * when the target or the suite is descheduled for longer than {@link #QUIET_NANOS}: on a veth at load 14 on 2
     * cores one round in seven was cut short. The window before any CE echo is the largest of these rounds and the
     * first marked one, so four of them (five rounds in all) leave it measured unless all five were cut; with two,
     * a veth run of session 17 and one of 32 in session 18 had all three cut (11, 9 and 7; 11, 6 and 4 packets of
     * a window of 17-19) and failed a target that keeps S8.2.
     */
    private static final int CLEAN_ROUNDS = 4;
    private static final int MARKED_ROUNDS = 7;
    /**
     * The share the rate check gives the target, and the READ it then asks for (256 packets at MTU 256: 393 ms):
     * low, so that a target that ignores it is caught even where its window alone holds it to a few Mb/s (9
     * packets a round trip of 7 ms on a loaded host).
     */
    static final int RATE_HINT_MBPS = 2;
    private static final int RATE_READ_BYTES = 64 * 1024;
    /** Bytes a packet costs against the rate besides its payload (S8.4). */
    private static final int PACKET_OVERHEAD = 128;
    /** Measurements of the window tried before the check gives up on a target that restarts it each time. */
    private static final int WINDOW_ATTEMPTS = 3;
    /** 512 packets at MTU 256: more than 11 rounds of a window that starts at 16, and than the SACK window. */
    private static final int WINDOW_READ_BYTES = 128 * 1024;
    /** READs the probe-back check makes, at most, while it waits for the dead path's RESYNC probe. */
    private static final int RESYNC_READS = 12;

    private final long base;
    private final int rkey;

    TransportChecks(final Target target, final UdpLink link, final List<CheckResult> results, final long regionOffset)
    {
        super(target, link, results);
        this.base = target.regionAddress() + regionOffset;
        this.rkey = target.rkey();
    }

    void runEcn(final ConnectRequest request) throws IOException
    {
        request.paths = 1; // one window to watch
        request.mtu = 256; // 64 KiB is 256 packets: rounds enough to see the window move
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        must("ecn.ce-echo", "S8.1-1", "CE-marked data draws ACKs whose ceCount adds up to the marked packets, ECE " +
            "set; unmarked data draws ceCount 0, ECE clear", () ->
        {
            DataChecks.requireConnection(why);
            final List<String> f = newFailures();
            final int marked = echoed(c, UdpLink.CE, 4 * c.mtu, f);
            if (marked != 4)
            {
                f.add("4 CE-marked packets echoed as " + marked);
            }
            final int clean = echoed(c, UdpLink.ECT_0, 4 * c.mtu, f);
            if (clean != 0)
            {
                f.add("4 ECT(0) packets echoed as " + clean + " CE marks");
            }
            return failures(f);
        });
        must("cc.ce-window", "S8.2-1", "the packets a path keeps outstanding shrink over round trips whose ACKs echo " +
            "every packet CE, and stay within 256", () ->
        {
            DataChecks.requireConnection(why);
            final List<String> earlier = new ArrayList<>();
            Rounds rounds = windows(c, WINDOW_READ_BYTES);
            while (null != rounds.disturbed() && earlier.size() + 1 < WINDOW_ATTEMPTS)
            {
                earlier.add(rounds.disturbed() + " " + rounds.detail());
                rounds = windows(c, WINDOW_READ_BYTES);
            }
            final String failed = judgeWindows(rounds);
            measured("packets per round: " + rounds.detail());
            return null == failed || earlier.isEmpty() ? failed : failed + "; not comparable before: " + earlier;
        });
        must("cc.rate-hint", "S8.4-1", "with the suite's ACKs carrying a rateHint of " + RATE_HINT_MBPS + " Mb/s, " +
            "a READ's responses arrive at most twice as fast (payload plus 128 B a packet)", () ->
        {
            DataChecks.requireConnection(why);
            return paced(c);
        });
        must("ecn.data-ect0", "S2.3-1", "every data packet the target sent arrived ECN-capable, ECT(0)", () ->
        {
            DataChecks.requireConnection(why);
            return codepoints(c, true, UdpLink.ECT_0);
        });
        should("ecn.control-not-ect", "S2.3-2", "every ACK, NACK and PROBE the target sent arrived Not-ECT", () ->
        {
            DataChecks.requireConnection(why);
            return codepoints(c, false, UdpLink.NOT_ECT);
        });
        closeQuietly(c);
    }

    /**
     * WRITEs {@code length} bytes on path 0 with ECN field {@code ecn}, the last packet asking for an ACK.
     *
     * @return the CE marks the ACKs of path 0 echoed from then until one covered the WRITE (failures into f).
     */
    private int echoed(final ScriptedPeer c, final int ecn, final int length, final List<String> f) throws IOException
    {
        final byte[] data = pattern(length, 61 + ecn);
        final ScriptedPeer.Message m = new ScriptedPeer.Message(SprayWire.WRITE, 0, c.takeMsn(0), length, 0,
            base + 64 * 1024 - length, rkey, 0);
        final int count = (length + c.mtu - 1) / c.mtu;
        final int[] psns = new int[count];
        final int from = c.received.size();
        for (final byte[] p : c.writePackets(m, data, null, psns))
        {
            c.send(p, ecn);
        }
        final int expect = (psns[count - 1] + 1) & SprayWire.PSN_MASK;
        if (null == c.awaitPacket(ANSWER_NANOS, a -> c.isAckOf(a, 0) && SprayWire.psnDistance(expect, a.h24(5)) >= 0))
        {
            f.add("no ACK covered the WRITE sent with ECN " + ecn);
        }
        c.collect(SILENCE_NANOS / 4); // an ACK the delay timer still owes
        int ce = 0;
        for (final Packet a : c.received.subList(from, c.received.size()))
        {
            if (c.isAckOf(a, 0))
            {
                final boolean ece = (a.h8(1) & SprayWire.SACKH_ECE) != 0;
                if (ece != (a.h16(2) > 0))
                {
                    f.add("an ACK with ceCount " + a.h16(2) + " has ECE " + (ece ? "set" : "clear"));
                }
                ce += a.h16(2);
            }
        }
        return ce;
    }

    /**
     * The packets a path let out in each round of {@link #windows}: -1 for the rounds after the READ completed.
     * {@code disturbed} says why the rounds cannot be compared (null when they can): the target failed the path and
     * restored it, which S7.5 and S8.2 say restarts its window and alpha, or a round drew nothing new.
     */
    record Rounds(int[] windows, String disturbed, String[] ends)
    {
        Rounds(final int[] windows, final String disturbed)
        {
            this(windows, disturbed, new String[0]);
        }

        /** @return each round's packets, how it ended and over how long its new packets came, for the report. */
        String detail()
        {
            return java.util.Arrays.toString(windows) + (ends.length == 0 ? "" : " ended " + String.join(", ", ends));
        }

        int last(final int fromEnd)
        {
            return windows[windows.length - 1 - fromEnd];
        }
    }

    /**
     * S8.2-1 judged from {@link Rounds}: no round above 256 packets, and after the marked rounds the path holds
     * fewer packets outstanding than before any CE echo reached the target: in the unmarked rounds and the first
     * marked one (sent before the first marked ACK). The larger of the rounds on each side is judged, so that one
     * round a descheduled target split in two (a pause above {@link #QUIET_NANOS}: 11 and 4 packets seen on a
     * loaded host) neither fails a target that keeps the clause nor passes one that ignores CE: with the clause's
     * rule the last two marked rounds hold 9-11 packets against 18 before, without it 23-24.
     *
     * @return null when it passed, else what failed.
     */
    static String judgeWindows(final Rounds rounds) throws NotTested
    {
        final int[] windows = rounds.windows();
        final String perRound = " (packets per round: " + rounds.detail() + ")";
        final List<String> f = newFailures();
        for (final int w : windows)
        {
            if (w > SprayWire.SACK_BITS)
            {
                f.add(w + " packets outstanding in one round (S6.3: at most 256)");
            }
        }
        if (!f.isEmpty())
        {
            return failures(f) + perRound;
        }
        if (null != rounds.disturbed())
        {
            throw new NotTested("in each of " + WINDOW_ATTEMPTS + " attempts " + rounds.disturbed() + perRound);
        }
        if (rounds.last(0) < 0)
        {
            throw new NotTested("the READ completed before " + windows.length + " rounds: the window never held " +
                "it back" + perRound);
        }
        int clean = 0;
        for (int r = 0; r <= CLEAN_ROUNDS; r++)
        {
            clean = Math.max(clean, windows[r]);
        }
        if (clean < 2)
        {
            throw new NotTested("the unmarked rounds carried " + clean + " packets: nothing to compare" + perRound);
        }
        final int after = Math.max(rounds.last(0), rounds.last(1));
        if (after >= clean)
        {
            return "after " + MARKED_ROUNDS + " round trips with every packet echoed CE the path still had " + after +
                " packets outstanding, against " + clean + " before" + perRound;
        }
        return null;
    }

    /**
     * READs {@code length} bytes on path 0 in rounds: the suite acknowledges nothing (but a round's start probe,
     * S8.3.1) until the target has sent nothing new for {@link #QUIET_NANOS} or shows that it waits for an ACK (a
     * retransmission or a probe after the round's first new packet: its timer fired, S6.7, S6.8), then
     * acknowledges the round in one ACK, echoing every packet of it as CE after the first {@link #CLEAN_ROUNDS}.
     * Ending a round at the target's first timeout keeps its timeouts from adding up to a path failure (S7.4)
     * where the suite is slow to see the quiet (a loaded host): a failed path comes back with a fresh window, and
     * the rounds before it say nothing about the rounds after.
     *
     * @return the new packets sent in each round, and whether the target restarted the path's window meanwhile.
     */
    private Rounds windows(final ScriptedPeer c, final int length) throws IOException
    {
        final int[] windows = new int[CLEAN_ROUNDS + MARKED_ROUNDS];
        java.util.Arrays.fill(windows, -1);
        final String[] ends = new String[windows.length];
        java.util.Arrays.fill(ends, "-");
        String disturbed = null;
        final int msn = c.takeMsn(0);
        final Set<Integer> seen = new HashSet<>();
        c.silent = true;
        try
        {
            c.send(c.readRequest(0, 0, msn, base, rkey, length));
            final ScriptedPeer.InboundRead read = c.inboundRead(0, msn);
            for (int round = 0; round < windows.length && !read.complete(); round++)
            {
                c.answerProbes = true;
                final long roundStart = System.nanoTime();
                final long roundEnd = roundStart + 10 * ANSWER_NANOS;
                long lastNew = roundStart;
                long firstNew = 0;
                int fresh = 0;
                String end = "limit";
                while (System.nanoTime() < roundEnd)
                {
                    // the quiet that ends a round counts from its first new packet: a target slower than that to
                    // answer an ACK (a loaded host) is waited for, up to ANSWER_NANOS
                    final long wait = fresh == 0 ? roundStart + ANSWER_NANOS : lastNew + QUIET_NANOS;
                    final Packet p = c.awaitPacket(wait - System.nanoTime(), a -> true);
                    if (null == p)
                    {
                        end = fresh == 0 ? "nothing" : "quiet";
                        break;
                    }
                    if (!p.icrcValid || !p.wholeHeaders() || p.destQp() != c.localCid())
                    {
                        continue;
                    }
                    final int opcode = p.opcode();
                    if (opcode == SprayWire.PROBE && (p.h8(1) & SprayWire.PRBH_RESYNC) != 0 && null == disturbed)
                    {
                        disturbed = "the target failed path 0 and restored it with a fresh window (S7.4, S7.5: a " +
                            "RESYNC probe in round " + round + ")";
                    }
                    if (opcode == SprayWire.READ_RESPONSE && (p.h8(1) & SprayWire.SETH_RETRANSMIT) == 0 &&
                        seen.add(p.psn()))
                    {
                        fresh++;
                        c.answerProbes = false;
                        lastNew = System.nanoTime();
                        firstNew = fresh == 1 ? lastNew : firstNew;
                    }
                    else if (fresh > 0 && (opcode == SprayWire.PROBE || SprayWire.isData(opcode)))
                    {
                        end = opcode == SprayWire.PROBE ? "probe" : "resent";
                        break;
                    }
                }
                windows[round] = fresh;
                ends[round] = (read.complete() ? "complete" : end) + (fresh == 0 ? "" :
                    String.format(java.util.Locale.ROOT, " %.1f+%.1f ms", (firstNew - roundStart) / 1e6,
                    (lastNew - firstNew) / 1e6));
                if (fresh == 0 && null == disturbed)
                {
                    disturbed = "the target sent nothing new for " + ANSWER_NANOS / ScriptedPeer.MILLI + " ms after " +
                        (round == 0 ? "the READ_REQUEST" : "the suite's ACK of round " + (round - 1));
                }
                c.sendAck(0, round < CLEAN_ROUNDS ? 0 : fresh);
            }
        }
        finally
        {
            c.silent = false;
            c.answerProbes = false;
            c.sendAck(0);
            c.collect(SILENCE_NANOS);
        }
        return new Rounds(windows, disturbed, ends);
    }

    /**
     * S8.4-1: gives the target a share of {@link #RATE_HINT_MBPS} in an ACK, READs {@link #RATE_READ_BYTES} (every
     * packet acknowledged at once, with the same share) and times the new READ_RESPONSEs as they arrive. The first
     * packet's bytes are left out (one packet of burst); the rest must not arrive faster than twice the share (the
     * slack a loaded host needs: a suite descheduled at the start sees the first packets late, in a bunch).
     *
     * @return null when it passed, else what failed.
     */
    private String paced(final ScriptedPeer c) throws IOException, NotTested
    {
        c.rateHintMbps = RATE_HINT_MBPS;
        try
        {
            c.sendAck(0);
            final int msn = c.takeMsn(0);
            c.send(c.readRequest(0, 0, msn, base, rkey, RATE_READ_BYTES));
            final ScriptedPeer.InboundRead read = c.inboundRead(0, msn);
            final Set<Integer> seen = new HashSet<>();
            final long[] first = {0};
            final long[] last = {0};
            final long[] bytes = {0};
            c.awaitPacket(8 * ANSWER_NANOS, p ->
            {
                if (p.icrcValid && p.opcode() == SprayWire.READ_RESPONSE && p.wholeHeaders() &&
                    p.destQp() == c.localCid() && p.h32(4) == msn && seen.add(p.psn()))
                {
                    last[0] = System.nanoTime();
                    if (seen.size() == 1)
                    {
                        first[0] = last[0];
                    }
                    else
                    {
                        bytes[0] += p.payload().length + PACKET_OVERHEAD;
                    }
                }
                return read.complete();
            });
            if (!read.complete())
            {
                return "the READ of " + RATE_READ_BYTES + " B did not complete in " + 8 * ANSWER_NANOS /
                    1_000_000_000L + " s at " + RATE_HINT_MBPS + " Mb/s: " + read.bytesPlaced + " B placed";
            }
            if (seen.size() < 16)
            {
                throw new NotTested("the READ came in " + seen.size() + " packets: too few to time");
            }
            final long nanos = Math.max(1, last[0] - first[0]);
            final double mbps = bytes[0] * 8_000.0 / nanos;
            return mbps <= 2 * RATE_HINT_MBPS ? null : String.format("%d packets after the first (%d B with their " +
                "headers) arrived in %.2f ms: %.0f Mb/s against a rateHint of %d Mb/s", seen.size() - 1, bytes[0],
                nanos / 1e6, mbps, RATE_HINT_MBPS);
        }
        finally
        {
            c.rateHintMbps = 0;
            c.sendAck(0);
            c.collect(SILENCE_NANOS / 4);
        }
    }

    /** @return null when every data packet (or every ACK, NACK, PROBE) arrived with {@code ecn}, else which did not. */
    private static String codepoints(final ScriptedPeer c, final boolean data, final int ecn) throws NotTested
    {
        final List<String> f = newFailures();
        int judged = 0;
        for (final Packet p : c.received)
        {
            final int op = p.opcode();
            if (!p.icrcValid || p.destQp() != c.localCid() || (data ? !SprayWire.isData(op) :
                op != SprayWire.ACK && op != SprayWire.NACK && op != SprayWire.PROBE))
            {
                continue;
            }
            if (p.ecn() < 0)
            {
                throw new NotTested("the suite's socket does not report the ECN field");
            }
            judged++;
            if (p.ecn() != ecn && f.size() < 4)
            {
                f.add(p + " arrived with ECN " + p.ecn());
            }
        }
        if (judged == 0)
        {
            throw new NotTested("no such packet arrived");
        }
        return failures(f);
    }

    void runMultipath(final ConnectRequest request) throws IOException
    {
        request.paths = 4;
        final Connection connection = open(request);
        final ScriptedPeer c = connection.peer();
        final String why = connection.why();
        final byte[] data = pattern(32 * 1024, 70);
        final boolean[] written = new boolean[1];
        final BitSet used = new BitSet();
        must("multipath.psn-spaces", "S5.4-1", "the target's first packet on each path i carries PSN initialPsn + i * " +
            "2^18 (its CONNECT_ACK's initialPsn)", () ->
        {
            DataChecks.requireConnection(why);
            written[0] = writeAcked(c, new ScriptedPeer.Message(SprayWire.WRITE, 0, c.takeMsn(0), data.length, 0, base,
                rkey, 0), data);
            if (!written[0])
            {
                throw new NotTested("the WRITE of the bytes to read back was not acknowledged");
            }
            final int from = c.received.size();
            final String read = readBack(c, 1, base, rkey, data, "the WRITE's bytes");
            final int initial = c.connectAck.h24(13);
            final BitSet seen = new BitSet();
            final List<String> f = newFailures();
            for (final Packet p : c.received.subList(from, c.received.size()))
            {
                if (p.icrcValid && p.destQp() == c.localCid() && p.wholeHeaders() &&
                    (p.opcode() == SprayWire.READ_RESPONSE || p.opcode() == SprayWire.PROBE) && p.h8(0) < c.paths &&
                    !seen.get(p.h8(0)))
                {
                    seen.set(p.h8(0));
                    final int start = (initial + p.h8(0) * SprayWire.PATH_PSN_STRIDE) & SprayWire.PSN_MASK;
                    if (p.psn() != start)
                    {
                        f.add("path " + p.h8(0) + " began at PSN " + p.psn() + ", not " + start);
                    }
                }
            }
            if (null != read)
            {
                f.add(read);
            }
            return failures(f);
        });
        should("multipath.spread", "S7.2-1", "a READ of 32 packets on a connection of 4 paths is sprayed over more " +
            "than one path", () ->
        {
            DataChecks.requireConnection(why);
            final ScriptedPeer.InboundRead read = c.read(0, base, rkey, data.length, 4 * ANSWER_NANOS);
            used.or(paths(read.packets));
            if (c.paths < 2)
            {
                throw new NotTested("the connection has one path");
            }
            return used.cardinality() > 1 ? null : "every READ_RESPONSE came on path(s) " + used;
        });
        // a path the target used (1 when it sprays, 0 when it sent everything on path 0): an unused one tests nothing
        final int dead = used.nextSetBit(1) > 0 ? used.nextSetBit(1) : 0;
        must("multipath.dead-path", "S7.4-1", "when one path the target uses delivers nothing (the suite drops it), " +
            "the target delivers that path's data on the others: a READ completes", () ->
        {
            DataChecks.requireConnection(why);
            if (!written[0] || c.paths < 2)
            {
                throw new NotTested(c.paths < 2 ? "the connection has one path" : "no bytes written to read back");
            }
            c.deadPaths.set(dead);
            final ScriptedPeer.InboundRead read = c.read(0, base, rkey, data.length, 5 * ANSWER_NANOS);
            if (!read.complete())
            {
                return "the READ did not complete with path " + dead + " dead: " + read.bytesPlaced + " of " +
                    data.length + " B in 5 s";
            }
            return java.util.Arrays.equals(read.data, data) ? null : "the bytes read back differ from those written";
        });
        should("multipath.probe-back", "S7.5-1", "the dead path is probed with RESYNC; once the suite answers again, " +
            "the path carries data again", () ->
        {
            DataChecks.requireConnection(why);
            if (!c.deadPaths.get(dead))
            {
                throw new NotTested("no path was made dead");
            }
            final List<String> f = newFailures();
            final Packet resync = awaitResync(c, dead);
            c.deadPaths.clear(dead);
            if (null == resync)
            {
                f.add("no RESYNC PROBE on path " + dead + " within " + RESYNC_READS + " READs of its death");
            }
            final Packet answered = c.awaitPacket(3 * ANSWER_NANOS, p -> isResync(c, p, dead));
            if (null == answered)
            {
                f.add("no RESYNC PROBE on path " + dead + " within 3 s once the suite answered again");
                return failures(f);
            }
            final BitSet after = new BitSet();
            for (int attempt = 0; attempt < 5 && !after.get(dead); attempt++)
            {
                after.or(paths(c.read(0, base, rkey, data.length, 4 * ANSWER_NANOS).packets));
            }
            if (!after.get(dead))
            {
                f.add("path " + dead + " carried no READ_RESPONSE in 5 READs after its probe was answered (used: " +
                    after + ")");
            }
            return failures(f);
        });
        closeQuietly(c);
    }

    /**
     * Waits for a RESYNC probe of the dead path (S7.5), READing meanwhile (at most {@link #RESYNC_READS} times, each
     * after a quarter-second wait): the other paths then carry first transmissions, and a target leaves its late
     * margin out of the dead path's RTO while they do (S6.8-3). On an idle connection every path is as silent, the
     * margin stays in each backed-off timeout (up to rtoMax plus lateMarginMax: 2.2 s in SprayNIC's shared-core
     * profile), and failAfterTimeouts of them may take longer than any fixed wait: one veth run of session 17 saw no
     * RESYNC within 3 s of an idle wait, after the suite's spurious timeouts had widened the target's margin.
     *
     * @return the probe, or null.
     */
    private Packet awaitResync(final ScriptedPeer c, final int dead) throws IOException
    {
        final int from = c.received.size();
        for (int attempt = 0; attempt < RESYNC_READS; attempt++)
        {
            final Packet waited = c.awaitPacket(ANSWER_NANOS / 4, p -> isResync(c, p, dead));
            if (null != waited)
            {
                return waited;
            }
            c.read(0, base, rkey, 16 * 1024, ANSWER_NANOS);
            for (final Packet p : c.received.subList(from, c.received.size()))
            {
                if (isResync(c, p, dead))
                {
                    return p;
                }
            }
        }
        return null;
    }

    private static boolean isResync(final ScriptedPeer c, final Packet p, final int path)
    {
        return p.icrcValid && p.opcode() == SprayWire.PROBE && p.wholeHeaders() && p.destQp() == c.localCid() &&
            p.h8(0) == path && (p.h8(1) & SprayWire.PRBH_RESYNC) != 0;
    }

    private static BitSet paths(final List<Packet> packets)
    {
        final BitSet used = new BitSet();
        for (final Packet p : new ArrayList<>(packets))
        {
            used.set(p.h8(0));
        }
        return used;
    }
}

