package io.spraynic.cli;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.spraynic.cli.LabPeers.format;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Spray across the Linux ECMP lab ({@link LabPeers}, three hosts) when the routers mark, links fail and two senders
 * share one receiver's link:
 * <ul>
 * <li>CE marking by the routers above a packet rate on every core link, no loss: the sender hears the marks (ECN
 * counters both ends), slows down against the same transfer unmarked, and nothing is lost.</li>
 * <li>A core link taken down in the middle of a transfer (the routers hash its flows over the other three): the
 * transfer completes, verified; the longest time B's interface saw no packet after it is reported, with the
 * sender's timeouts and retransmissions.</li>
 * <li>A core link that fails silently in the middle of a transfer ({@code lab link blackhole}: its route kept, every
 * packet dropped), on the warm-up's connection and on a fresh one: verified, and every path of either NIC that went
 * silent had its packets resent within 3 of its RTOs; the recovery with their delivery is reported ({@link
 * PathRecovery}; benchmarks/RESULTS.md section 62).</li>
 * <li>Every core link of plane 1 down in the middle of a transfer, and up again: plane 1's paths fail (S7.4) and plane 2
 * carries the transfer alone, then the failed paths are probed back (S7.5) and both planes carry it again; verified,
 * the per-plane data packets of both NICs' paths reported for each phase.</li>
 * <li>Reordering within a route: the routers balance per packet ({@code lab balance packet}) and one core link of each
 * plane is slow: without a reordering window spray resends packets that were only late; with one that learns (S6.5-3),
 * it resends a tenth as many or fewer, and no more than 1.1 per loss.</li>
 * <li>Incast: A and C write into B at once through B's access links limited to 10 Mbit/s (TBF): both complete,
 * verified, and the Jain index of their shares of plane 1's link while both send is reported and at least 0.8. The
 * limit is below what the poll threads of three NIC processes on a 2-core CI host move together (12-17 Mbit/s
 * measured), so the link, not the CPU scheduler, is what the two senders share (at 100 Mbit/s a CI run measured a
 * CPU-bound 10.8 against 1.3 Mbit/s). Both senders warm up first and start their timed parts together.</li>
 * </ul>
 * Every visit is measured warm ({@link #WARM_FAULTS}): after a verified warm-up over the same connection, with what
 * each test judges counted over the part after it.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class LinuxLabFaultsTest
{
    private static final String ID = "f" + ProcessHandle.current().pid() % 10_000;
    private static final int PLANES = LinuxLabTransferTest.PLANES;
    private static final int PATHS = LinuxLabTransferTest.PATHS;
    private static final long SIZE = 8L << 20;
    /** The incast test's warm-up per sender: small, since it too crosses the 10 Mbit/s link. */
    private static final long INCAST_WARMUP = 1L << 20;
    /** Long enough for both planes, then plane 2 alone for {@link #PLANE_DOWN_WINDOW} packets, then both again. */
    private static final long PLANE_DOWN_SIZE = 32L << 20;
    private static final long PLANE_DOWN_WINDOW = 4_000;
    /**
     * The CE, link-down and plane-down tests measure warm, like the transfer tests (RESULTS.md sections 38, 45, 48):
     * each visit first writes and reads back a verified warm-up over the same connection and holds, and what the tests
     * judge and report (the routers' marks and drops, the NICs' counters, the samplers' smallest windows, stalls and
     * plane counts) is the part after it. {@code -Dspraynic.lab.warmup=false} measures cold, as before.
     */
    private static final boolean WARM_FAULTS = LinuxLabTransferTest.WARMUP;
    /** The link-down and plane-down tests' warm-up: 8 MiB (as the loss test's), to keep the tests' time bounded. */
    private static final long FAULT_WARMUP = 8L << 20;
    /**
     * Warm, a transfer is over before a link or a plane has gone down and come back: 8 MiB took 1.8 s at 9 runnable
     * threads per core, about what {@code lab link down} itself takes there (its link went down at the end), and 32
     * MiB ended before plane 1 was carrying data again. Warm, the link-down test moves 32 MiB, the plane-down test 64.
     */
    private static final long LINK_DOWN_SIZE = WARM_FAULTS ? 32L << 20 : SIZE;
    private static final long PLANE_DOWN_SIZE_MEASURED = WARM_FAULTS ? 2 * PLANE_DOWN_SIZE : PLANE_DOWN_SIZE;
    /** The reordering test's slow link per plane: its TBF queue delays a quarter of every path's packets. */
    private static final String REORDER_SLOW_LINK = System.getProperty("spraynic.lab.reorderSlowLink", "10mbit");
    /** The reordering test's learning window, microseconds ({@code --reorder-window}). */
    private static final String REORDER_WINDOW = System.getProperty("spraynic.lab.reorderWindow", "0-100000");
    private static LinuxLab lab;

    @BeforeAll
    static void up() throws Exception
    {
        lab = LinuxLab.upForNics(ID, 3);
    }

    @AfterAll
    static void down()
    {
        if (null != lab)
        {
            lab.close();
        }
    }

    @AfterEach
    void clean() throws Exception
    {
        lab.link("up", "core");
        lab.link("restore", "core");
        lab.set("all", "--drop", "0", "--ce-above", "off", "--rate", "off");
    }

    @Test
    void shouldSlowDownWithoutLossWhenTheRoutersMarkCe(@TempDir final Path dir) throws Exception
    {
        try (LabPeers peers = new LabPeers(lab, dir, PLANES))
        {
            final LabPeers.Served served = peers.serve("b", "spray", SIZE, PATHS);
            // both visits measured warm: each after a verified warm-up, unmarked, over the same connection; the
            // routers mark only the second's timed part (set while it holds), so what both judge is their timed parts
            final long warmup = WARM_FAULTS ? SIZE : 0;
            final LinuxLabTransferTest.Timed cleanTimed = LinuxLabTransferTest.timed(peers, served, SIZE, warmup, PATHS,
                120, 180);
            final LabPeers.Result clean = cleanTimed.result();
            assertTrue(clean.verified(), clean.output());
            final LinuxLabTransferTest.Timed markedTimed = LinuxLabTransferTest.timed(peers, served, SIZE, warmup,
                PATHS, 120, 180, () -> lab.set("core", "--ce-above", "100pps"));
            final LabPeers.Result marked = markedTimed.result();
            final Map<String, Long> before = markedTimed.before();
            final Map<String, Long> after = markedTimed.after();
            LabPeers.stop(served);
            assertTrue(marked.verified(), marked.output());
            final long ce = LinuxLabTransferTest.sum(before, after, "ab", "ce_marked_packets") +
                LinuxLabTransferTest.sum(before, after, "ba", "ce_marked_packets");
            final long dropped = LinuxLabTransferTest.sum(before, after, "ab", "dropped_packets") +
                LinuxLabTransferTest.sum(before, after, "ba", "dropped_packets");
            final long echoedToA = markedTimed.visitorGrown("ecn_marks_echoed");
            final long receivedByB = markedTimed.servedGrown("ecn_marks_received");
            final long sentTwice = LinuxLabTransferTest.sentTwiceAndLost(before, after, "ab", SIZE)[0];
            final double cleanGbps = 2 * SIZE * 8 / clean.seconds() / 1e9;
            final double markedGbps = 2 * SIZE * 8 / marked.seconds() / 1e9;
            final String text = format("%s; unmarked %.2f s (%.3f Gb/s); CE above 100 packets/s on every core link: " +
                "%.2f s (%.3f Gb/s), routers marked %d and dropped %d, B received %d marks, A heard %d echoed; A->B " +
                "data packets sent twice %d (A's count: lost %d, timeouts %d)", warmth(marked, warmup), clean.seconds(),
                cleanGbps, marked.seconds(), markedGbps, ce, dropped, receivedByB, echoedToA, sentTwice,
                marked.connection("lost"), marked.connection("timeouts"));
            System.out.println("linux lab CE marking: " + text + format("; smallest windows over the paths: %d packets " +
                "unmarked, %d marked", clean.smallestWindows(), marked.smallestWindows()));
            assertTrue(ce > 0 && receivedByB > 0 && echoedToA > 0, text);
            assertEquals(0, dropped, text);
            // Slowed down: the paths' congestion windows were cut (S8.3: by alpha / 2 per marked round), far below where
            // the unmarked transfer kept them. Its wall time shows it only where the window is what limits the rate:
            // on a host whose CPUs bound these 64 paths below the routers' marking rate it may not (6.66 s against
            // 10.50 s on one loaded run, 2.38 s against 2.77 s on another).
            assertTrue(marked.smallestWindows() < clean.smallestWindows() / 2, "the sender cut its windows: smallest " +
                marked.smallestWindows() + " packets over the paths against " + clean.smallestWindows() + " unmarked; " + text);
        }
    }

    /**
     * PROTOCOL.md S6.5-3 on kernel routers that balance per packet ({@code lab balance packet}: each packet of a flow
     * takes the next core link in turn, as a LAG balanced per packet does), one core link of each plane rate-limited so
     * that its queue delays what it carries: a path's packets arrive out of order, and the slow link's TBF drops some
     * (no rule drops any). Spray with no reordering window sends copies of packets that were only late (B receives them
     * twice: 987-1,290 in three runs, RESULTS.md section 82); with a window that learns, at most a tenth of that, and
     * retransmitted ÷ lost (counted by the routers) at most 1.1, issue 14's goal.
     */
    @Test
    void shouldResendLessOfWhatTheRoutersOnlyReorderedOnceItsWindowLearns(@TempDir final Path dir) throws Exception
    {
        lab.balance("packet");
        try
        {
            lab.set(PLANES == 2 ? "p2l1" : "p1l1", "p1l1", "--rate", REORDER_SLOW_LINK);
            final long[] strict = reorderedVisit(dir, "off", 1);
            long[] learning = reorderedVisit(dir, REORDER_WINDOW, 1);
            // the window judges copies sent for gaps (S6.5-3); copies sent because timers fired for packets that were
            // only late (S7.3) are another mechanism, which a host whose CPUs stall the sender or receiver past the
            // RTOs makes (a CI run: 344 timeouts, 197 found spurious, against 16-40 and 0-2 on a quiet host). Such a
            // run is disturbed, told, and measured once more; the counts do not tell the two kinds of copies apart
            if (learning[3] > Math.max(20, 2 * strict[3]))
            {
                System.out.println(format("linux lab reordering within a route: the window's run was disturbed (%d " +
                    "spurious timeouts, against %d without a window): measured once more", learning[3], strict[3]));
                learning = reorderedVisit(dir, REORDER_WINDOW, 2);
            }
            final String text = format("A->B data packets B received twice: no window %d (sent twice %d, lost %d), " +
                "window %s us %d (sent twice %d, lost %d)", strict[2], strict[0], strict[1], REORDER_WINDOW, learning[2],
                learning[0], learning[1]);
            System.out.println("linux lab reordering within a route: " + text);
            assertTrue(strict[2] > 100, "the routers reorder a path: " + text);
            assertTrue(learning[2] * 10 <= strict[2], "a learnt window takes a tenth as much reordering for loss: " + text);
            assertTrue(learning[0] <= learning[1] * 1.1 + 16, "retransmitted / lost at most 1.1: " + text);
        }
        finally
        {
            lab.balance("flow");
        }
    }

    // @return A->B data packets sent twice and lost (the routers' counts), received twice (B's), and A's timeouts found
    // spurious, over a warm visit's timed part
    private long[] reorderedVisit(final Path dir, final String window, final int attempt) throws Exception
    {
        try (LabPeers peers = new LabPeers(lab, dir.resolve("window-" + window + "-" + attempt), PLANES)
            .reorderWindow(window))
        {
            final LabPeers.Served served = peers.serve("b", "spray", SIZE, PATHS);
            final LinuxLabTransferTest.Timed timed = LinuxLabTransferTest.timed(peers, served, SIZE,
                WARM_FAULTS ? SIZE : 0, PATHS, 120, 180);
            LabPeers.stop(served);
            final LabPeers.Result result = timed.result();
            assertEquals(0, result.exitCode(), result.output());
            assertTrue(result.verified(), result.output());
            final long[] ab = LinuxLabTransferTest.sentTwiceAndLost(timed.before(), timed.after(), "ab", SIZE);
            System.out.println(format("linux lab reordering within a route, window %s: %s; %d MiB each way in %.2f s; " +
                "A->B sent twice %d, lost %s; A: lost %d, retransmitted %d, timeouts %d, spurious %d; B received twice %d",
                window, warmth(result, WARM_FAULTS ? SIZE : 0), SIZE >> 20, result.seconds(), ab[0],
                LinuxLabTransferTest.lostText(ab),
                timed.visitorGrown("lost"), timed.visitorGrown("retransmitted"), timed.visitorGrown("timeouts"),
                timed.visitorGrown("spurious_timeouts"), timed.servedGrown("duplicates")));
            return new long[]{ab[0], ab[1], timed.servedGrown("duplicates"), timed.visitorGrown("spurious_timeouts")};
        }
    }

    @Test
    void shouldCompleteVerifiedWhenACoreLinkGoesDownMidTransfer(@TempDir final Path dir) throws Exception
    {
        try (LabPeers peers = new LabPeers(lab, dir, PLANES);
            InterfaceSampler sampler = new InterfaceSampler(lab.netns("b")))
        {
            final LabPeers.Served served = peers.serve("b", "spray", LINK_DOWN_SIZE, PATHS);
            final String[] bDevs = new String[PLANES];
            for (int plane = 1; plane <= PLANES; plane++)
            {
                bDevs[plane - 1] = lab.status().get("hosts.b.planes." + plane + ".dev");
            }
            final long warmup = WARM_FAULTS ? FAULT_WARMUP : 0;
            final LabPeers.Visit visit = peers.visit("a", served, LINK_DOWN_SIZE, PATHS, 120, warmup);
            final Map<String, Long> atWarm = warm(visit, served, warmup).get(0);
            final long start = awaitPackets(sampler, bDevs, 3_000, visit);
            lab.link("down", "p1l2");
            final long downAt = System.nanoTime();
            final boolean midTransfer = visit.process().isAlive();
            final LabPeers.Result result = visit.await(180);
            assertEquals(0, result.exitCode(), result.output());
            assertTrue(result.verified(), result.output());
            final double stall = sampler.longestStallAfter(downAt, InterfaceSampler.RX_PACKETS, bDevs);
            final double before = sampler.longestStallAfter(start, InterfaceSampler.RX_PACKETS, bDevs);
            final String text = format("%s; %d MiB each way in %.2f s; p1l2 down %.2f s after B saw the first 3000 " +
                "packets of it%s; longest time B received nothing after that %.0f ms (sampled every %.0f ms; longest " +
                "before, from then %.0f ms); A: timeouts %d, path failures %d, lost %d, retransmitted %d, moved %d",
                warmth(result, warmup), LINK_DOWN_SIZE >> 20, result.seconds(), (downAt - start) / 1e9,
                midTransfer ? "" : " (AFTER the transfer had ended)", 1e3 * stall,
                1e3 * sampler.meanInterval(), 1e3 * before, result.connection("timeouts"),
                LabPeers.connection(result.counters(), "path_failures") - LabPeers.connection(atWarm, "path_failures"),
                result.connection("lost"), result.connection("retransmitted"), result.connection("moved"));
            System.out.println("linux lab link down mid-transfer: " + text);
            assertTrue(midTransfer, "the link went down while the transfer ran: " + text);
        }
    }

    /**
     * A core link that fails silently ({@code lab link blackhole}: every packet dropped each way, the link up and its
     * nexthop kept, so the routers go on hashing flows onto it) in the middle of a warm connection's transfer: only the
     * sender's timers can find it (S7.4.1, S7.4). Verified, and each path that went silent had its packets resent
     * within 3 of its RTOs ({@link PathRecovery}). The admin-down test above covers the routes' side.
     */
    @Test
    void shouldRecoverWithinThreeRtosWhenACoreLinkFailsSilentlyMidTransfer(@TempDir final Path dir) throws Exception
    {
        blackholeMidTransfer(dir, "same");
    }

    /** As above, on a fresh connection (in a warm process): the link fails during the connection's first transfer. */
    @Test
    void shouldRecoverWithinThreeRtosWhenACoreLinkFailsSilentlyOnAFreshConnection(@TempDir final Path dir)
        throws Exception
    {
        blackholeMidTransfer(dir, "fresh");
    }

    private static void blackholeMidTransfer(final Path dir, final String connection) throws Exception
    {
        try (LabPeers peers = new LabPeers(lab, dir, PLANES).warmupConnection(connection))
        {
            final LabPeers.Served served = peers.serve("b", "spray", LINK_DOWN_SIZE, PATHS);
            final long warmup = WARM_FAULTS ? FAULT_WARMUP : 0;
            final LabPeers.Visit visit = peers.visit("a", served, LINK_DOWN_SIZE, PATHS, 120, warmup);
            final Map<String, Long> atWarm = warm(visit, served, warmup).get(0);
            awaitSent(visit, LabPeers.connection(atWarm, "tx_packets") + 3_000);
            final Map<String, Long> routersBefore = lab.counters();
            final long failStart;
            final long failEnd;
            final boolean midTransfer;
            final List<PathRecovery.Sample> samplesA;
            final List<PathRecovery.Sample> samplesB;
            final String unread;
            // both senders: A writes, then reads back what B sends
            try (PathRecovery.Recorder recorderA = new PathRecovery.Recorder(visit.counters(), PATHS, 2);
                PathRecovery.Recorder recorderB = new PathRecovery.Recorder(served.counters(), PATHS, 2))
            {
                Thread.sleep(200); // readings from before the failure: the paths' RTOs at it
                failStart = System.nanoTime();
                lab.link("blackhole", "p1l2");
                failEnd = System.nanoTime();
                midTransfer = visit.process().isAlive();
                visit.process().waitFor(10, TimeUnit.SECONDS); // the recovery, and what the paths do after it
                samplesA = recorderA.samples();
                samplesB = recorderB.samples();
                unread = recorderA.unread() + " / " + recorderB.unread();
            }
            final LabPeers.Result result = visit.await(180);
            final Map<String, Long> routersAfter = lab.counters();
            LabPeers.stop(served);
            final long dropped = LinuxLab.delta(routersBefore, routersAfter, "links.p1l2.directions.ab.dropped_packets") +
                LinuxLab.delta(routersBefore, routersAfter, "links.p1l2.directions.ba.dropped_packets");
            assertTrue(samplesA.size() > 2 && samplesB.size() > 2, "the NICs' counters read: " + samplesA.size() +
                " and " + samplesB.size() + " readings; " + unread);
            // each NIC's silent paths, their copies' delivery from the other's count of them
            final PathRecovery.Result fromA = PathRecovery.analyse(samplesA, samplesB, failStart, failEnd);
            final PathRecovery.Result fromB = PathRecovery.analyse(samplesB, samplesA, failStart, failEnd);
            final String text = format("%s, %s connection; %d MiB each way in %.2f s; p1l2 blackholed by a command of " +
                "%.0f ms%s, which dropped %d packets; A's paths: %s; B's paths: %s; A: timeouts %d (spurious %d), path " +
                "failures %d, lost %d, retransmitted %d, moved %d", warmth(result, warmup),
                connection.equals("fresh") ? "a fresh" : "the warm-up's", LINK_DOWN_SIZE >> 20, result.seconds(),
                (failEnd - failStart) / 1e6, midTransfer ? "" : " (AFTER the transfer had ended)", dropped, fromA, fromB,
                result.connection("timeouts"), result.connection("spurious_timeouts"),
                LabPeers.connection(result.counters(), "path_failures") - LabPeers.connection(atWarm, "path_failures"),
                result.connection("lost"), result.connection("retransmitted"), result.connection("moved"));
            System.out.println("linux lab core link blackholed mid-transfer, NICs on " + LabPeers.PORT.description() +
                ": " + text);
            assertEquals(0, result.exitCode(), text + "\n" + result.output());
            assertTrue(result.verified(), text + "\n" + result.output());
            assertTrue(midTransfer, "the link failed while the transfer ran: " + text);
            assertTrue(dropped > 0 && fromA.cut().size() + fromB.cut().size() > 0, "the dead link took packets of the " +
                "transfer and a path went silent: " + text);
            // judged: from going silent to the resend, as the sender's counters show it; and that the receiver's
            // counters showed the copies' delivery (as many taken as the silent paths had lost by their resends).
            // The recovery to that delivery is reported, not judged: with a round trip added as an estimate, the
            // worst path took over 3 RTOs in 2 of 12 runs on a loaded host, where its resend took at most 2.25
            // (benchmarks/RESULTS.md section 62)
            assertTrue(Math.max(fromA.cut().isEmpty() ? 0 : fromA.worstResendRtos(), fromB.cut().isEmpty() ? 0 :
                fromB.worstResendRtos()) <= 3, "every silent path's packets resent within 3 RTOs: " + text);
            assertTrue((fromA.cut().isEmpty() || fromA.delivered()) && (fromB.cut().isEmpty() || fromB.delivered()),
                "the receiving NIC counted the copies of what the silent paths lost: " + text);
        }
    }

    /** Waits until the visitor's connection sent {@code packets} packets in all; throws if the visit ends or 120 s pass. */
    private static void awaitSent(final LabPeers.Visit visit, final long packets) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (LabPeers.connection(visit.counters().current(), "tx_packets") < packets)
        {
            if (!visit.process().isAlive() || System.nanoTime() > deadline)
            {
                throw new IllegalStateException("the visit did not send " + packets + " packets: " +
                    java.nio.file.Files.readString(visit.output()));
            }
            Thread.sleep(5);
        }
    }

    @Test
    void shouldCarryATransferOnTheOtherPlaneWhileAWholePlaneIsDownAndUseBothAgainOnceItIsBack(@TempDir final Path dir)
        throws Exception
    {
        Assumptions.assumeTrue(PLANES == 2, "SKIPPED: a plane down needs two planes (-Dspraynic.lab.planes=2)");
        try (LabPeers peers = new LabPeers(lab, dir, PLANES))
        {
            final LabPeers.Served served = peers.serve("b", "spray", PLANE_DOWN_SIZE_MEASURED, PATHS);
            final long warmup = WARM_FAULTS ? FAULT_WARMUP : 0;
            final LabPeers.Visit visit = peers.visit("a", served, PLANE_DOWN_SIZE_MEASURED, PATHS, 150, warmup);
            final List<Map<String, Long>> atWarm = warm(visit, served, warmup);
            final PlaneSample atStart = PlaneSample.of(atWarm.get(0), atWarm.get(1));
            // both planes carry data; then plane 1's core links go down
            PlaneSample.await(visit, served, s -> s.dataPackets(0) >= atStart.dataPackets(0) + 1_000 &&
                s.dataPackets(1) >= atStart.dataPackets(1) + 1_000, "both planes carrying data");
            final PlaneSample beforeDown = PlaneSample.of(visit.counters().snapshot(), served.counters().snapshot());
            lab.link("down", "p1");
            final long downAt = System.nanoTime();
            // plane 1's paths time out and fail (S7.4), every one of them (they all carried data); then plane 2 alone
            final PlaneSample fromSettled = PlaneSample.await(visit, served,
                s -> s.pathFailures() >= beforeDown.pathFailures() + PATHS / PLANES, "every path of plane 1 failing");
            final PlaneSample down = PlaneSample.await(visit, served,
                s -> s.dataPackets(1) >= fromSettled.dataPackets(1) + PLANE_DOWN_WINDOW, "plane 2 alone");
            lab.link("up", "p1");
            final long upAt = System.nanoTime();
            // S7.5: the failed paths' probes are answered again, the paths restored, and plane 1 takes data again
            final PlaneSample back = PlaneSample.await(visit, served,
                s -> s.dataPackets(0) >= down.dataPackets(0) + 1_000, "plane 1 carrying data again");
            final LabPeers.Result result = visit.await(180);
            final PlaneSample end = PlaneSample.of(result.counters(), served.counters().snapshot());
            LabPeers.stop(served);
            final String text = format("%s; %d MiB each way in %.2f s; data packets sent by A and B on plane 1 / plane 2: " +
                "before the plane went down %d / %d, while it was down (from %.0f ms after, when %d paths more had failed) " +
                "%d / %d, after it came back %d / %d (plane 1's first 1000 within %.0f ms of the links going up); " +
                "path failures %d, restores %d; A: timeouts %d, lost %d, retransmitted %d, moved %d, ACKs taken %d, stale %d, " +
                "largest smoothed RTT of a path %.1f ms", warmth(result, warmup), PLANE_DOWN_SIZE_MEASURED >> 20,
                result.seconds(), beforeDown.dataPackets(0), beforeDown.dataPackets(1),
                (fromSettled.nanos() - downAt) / 1e6, fromSettled.pathFailures() - beforeDown.pathFailures(),
                down.dataPackets(0) - fromSettled.dataPackets(0), down.dataPackets(1) - fromSettled.dataPackets(1),
                end.dataPackets(0) - down.dataPackets(0), end.dataPackets(1) - down.dataPackets(1),
                (back.nanos() - upAt) / 1e6, end.pathFailures() - atStart.pathFailures(),
                end.pathRestores() - atStart.pathRestores(), result.connection("timeouts"),
                result.connection("lost"), result.connection("retransmitted"), result.connection("moved"),
                result.connection("acks_received"), result.connection("acks_stale"),
                result.largestSrttMillis());
            System.out.println("linux lab plane 1 down mid-transfer and back: " + text);
            assertEquals(0, result.exitCode(), text + "\n" + result.output());
            assertTrue(result.verified(), text + "\n" + result.output());
            // plane 1 carried (next to) nothing while plane 2 carried the window
            assertTrue(down.dataPackets(0) - fromSettled.dataPackets(0) <= PLANE_DOWN_WINDOW / 100,
                "plane 1 carried no data while down: " + text);
            // and came back: restored paths, and both planes carrying data again
            assertTrue(end.pathRestores() - atStart.pathRestores() >= PATHS / 2, "plane 1's paths restored: " + text);
            assertTrue(end.dataPackets(0) - down.dataPackets(0) >= 1_000 &&
                end.dataPackets(1) - down.dataPackets(1) >= 1_000, "both planes carried data after: " + text);
        }
    }

    /**
     * For a visit started with a warm-up ({@code warmup > 0}): waits for it to hold after its verified warm-up, reads
     * its counters and the served NIC's, forgets what its sampler saw so far (so that its smallest and largest values
     * are the timed part's) and lets it go on; @return {the visitor's counters, B's} at the hold, empty without a
     * warm-up.
     */
    private static List<Map<String, Long>> warm(final LabPeers.Visit visit, final LabPeers.Served served,
        final long warmup) throws Exception
    {
        if (warmup == 0)
        {
            return List.of(Map.of(), Map.of());
        }
        visit.awaitWarm(200);
        final List<Map<String, Long>> atWarm = List.of(visit.counters().current(), served.counters().current());
        visit.counters().restart();
        visit.go();
        return atWarm;
    }

    /** @return how a visit was measured, for the printed line. */
    private static String warmth(final LabPeers.Result result, final long warmup)
    {
        return warmup == 0 ? "cold (no warm-up)" : format("warm (after a verified warm-up of %d MiB over the same " +
            "connection, %.2f s), load per core %s", warmup >> 20, LabPeers.json(result.output(), "warmupSeconds"),
            loadPerCore());
    }

    private static String loadPerCore()
    {
        try
        {
            return format("%.2f", LinuxLabTransferTest.loadPerCore());
        }
        catch (final java.io.IOException e)
        {
            return "unknown";
        }
    }

    /**
     * The spray connections' counters of a visitor and the NIC it visits at one moment, summed per plane (S7.1: path
     * i uses plane i mod planes).
     */
    record PlaneSample(long nanos, long[] dataPackets, long pathFailures, long pathRestores)
    {
        private static final Pattern PATH_TX = Pattern.compile("conn 0x[0-9a-f]+: path (\\d+) tx_packets");

        long dataPackets(final int plane)
        {
            return dataPackets[plane];
        }

        static PlaneSample of(final Map<String, Long> visitor, final Map<String, Long> served)
        {
            final long[] perPlane = new long[PLANES];
            for (final Map<String, Long> counters : List.of(visitor, served))
            {
                for (final Map.Entry<String, Long> e : counters.entrySet())
                {
                    final Matcher m = PATH_TX.matcher(e.getKey());
                    if (m.matches())
                    {
                        perPlane[Integer.parseInt(m.group(1)) % PLANES] += e.getValue();
                    }
                }
            }
            return new PlaneSample(System.nanoTime(), perPlane,
                LabPeers.connection(visitor, "path_failures") + LabPeers.connection(served, "path_failures"),
                LabPeers.connection(visitor, "path_restores") + LabPeers.connection(served, "path_restores"));
        }

        /** Samples every 10 ms until {@code until} holds; throws if the visit ends or 90 s pass first. */
        static PlaneSample await(final LabPeers.Visit visit, final LabPeers.Served served,
            final Predicate<PlaneSample> until, final String what) throws Exception
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            PlaneSample sample = null;
            while (System.nanoTime() < deadline)
            {
                sample = of(visit.counters().snapshot(), served.counters().snapshot());
                if (until.test(sample))
                {
                    return sample;
                }
                if (!visit.process().isAlive())
                {
                    throw new IllegalStateException("the visit ended before " + what + " (" + sample + "): " +
                        java.nio.file.Files.readString(visit.output()) + "\nA's counters: " +
                        connectionCounters(visit.counters().snapshot()) + "\nB's counters: " +
                        connectionCounters(served.counters().snapshot()) + "\nB's output: " +
                        java.nio.file.Files.readString(served.output()));
                }
                Thread.sleep(10);
            }
            throw new IllegalStateException("no " + what + " within 90 s: " + sample);
        }

        /** The non-zero connection-wide counters (not the per-path ones), for a failure's message. */
        static String connectionCounters(final Map<String, Long> counters)
        {
            final StringBuilder text = new StringBuilder();
            new java.util.TreeMap<>(counters).forEach((label, value) ->
            {
                if (value != 0 && label.matches("conn 0x[0-9a-f]+: [a-z_]+"))
                {
                    text.append(label.substring(label.indexOf(": ") + 2)).append('=').append(value).append(' ');
                }
            });
            return text.toString();
        }

        @Override
        public String toString()
        {
            return "data packets per plane " + java.util.Arrays.toString(dataPackets) + ", path failures " +
                pathFailures + ", restores " + pathRestores;
        }
    }

    @Test
    void shouldShareARateLimitedLinkFairlyBetweenTwoSenders(@TempDir final Path dir) throws Exception
    {
        lab.set(PLANES == 2 ? "p2b" : "p1b", "p1b", "--rate", "10mbit");
        try (LabPeers peers = new LabPeers(lab, dir, PLANES);
            InterfaceSampler sampler = new InterfaceSampler(lab.netns("r1a")))
        {
            final LabPeers.Served served = peers.serve("b", "spray", SIZE, PATHS);
            // both warm up first (verified), hold, and start their timed parts together: measured cold, the JVM
            // that started first compiled and sent alone while the other was still starting (Jain 0.70 at 10
            // runnable threads per core, RESULTS.md section 45)
            final long warmup = LinuxLabTransferTest.WARMUP ? INCAST_WARMUP : 0;
            final LabPeers.Visit fromA = peers.visit("a", served, SIZE, PATHS, 150, warmup);
            final LabPeers.Visit fromC = peers.visit("c", served, SIZE, PATHS, 150, warmup);
            long goNanos = 0;
            if (warmup > 0)
            {
                fromA.awaitWarm(200);
                fromC.awaitWarm(200);
                goNanos = System.nanoTime();
                fromA.go();
                fromC.go();
            }
            final LabPeers.Result a = fromA.await(200);
            final LabPeers.Result c = fromC.await(200);
            assertTrue(a.verified(), a.output());
            assertTrue(c.verified(), c.output());
            // the shares while both write: router a's access ends for A and C, bytes received from each
            final String devA = lab.status().get("links.p1a.ends.router.dev");
            final String devC = lab.status().get("links.p1c.ends.router.dev");
            final long timedFrom = goNanos;
            final double[] shares = overlapShares(sampler.samples().stream().filter(sample -> sample.nanos() >=
                timedFrom).toList(), devA, devC);
            final double jain = (shares[0] + shares[1]) * (shares[0] + shares[1]) /
                (2 * (shares[0] * shares[0] + shares[1] * shares[1]));
            final String text = format("%s, load per core %.2f: A %.2f s, C %.2f s for %d MiB each way; while both " +
                "wrote (%.2f s): A %.2f and C %.2f Mbit/s into router a; Jain index %.3f", warmup > 0 ? format("warm " +
                "(each after a verified warm-up of %d MiB, then both together)", warmup >> 20) : "cold",
                LinuxLabTransferTest.loadPerCore(), a.seconds(), c.seconds(), SIZE >> 20, shares[2],
                shares[0] * 8 / 1e6, shares[1] * 8 / 1e6, jain);
            System.out.println("linux lab incast through a 10 Mbit/s link: " + text);
            assertTrue(shares[2] > 0.5, "A and C sent together for a while: " + text);
            assertTrue(jain >= 0.8, text);
        }
    }

    /**
     * @return {bytes per second from A, from C, seconds} over the longest stretch in which both grew from sample to
     * sample.
     */
    private static double[] overlapShares(final List<InterfaceSampler.Sample> samples, final String devA,
        final String devC)
    {
        int bestFrom = 0;
        int bestTo = 0;
        int from = -1;
        for (int i = 1; i < samples.size(); i++)
        {
            final boolean both = samples.get(i).get(devA, InterfaceSampler.RX_BYTES) >
                samples.get(i - 1).get(devA, InterfaceSampler.RX_BYTES) + 2_000 &&
                samples.get(i).get(devC, InterfaceSampler.RX_BYTES) >
                    samples.get(i - 1).get(devC, InterfaceSampler.RX_BYTES) + 2_000;
            if (both)
            {
                from = from < 0 ? i - 1 : from;
                if (samples.get(i).nanos() - samples.get(from).nanos() >
                    samples.get(bestTo).nanos() - samples.get(bestFrom).nanos())
                {
                    bestFrom = from;
                    bestTo = i;
                }
            }
            else
            {
                from = -1;
            }
        }
        final double seconds = (samples.get(bestTo).nanos() - samples.get(bestFrom).nanos()) / 1e9;
        if (seconds <= 0)
        {
            return new double[] {0, 0, 0};
        }
        return new double[] {
            (samples.get(bestTo).get(devA, InterfaceSampler.RX_BYTES) -
                samples.get(bestFrom).get(devA, InterfaceSampler.RX_BYTES)) / seconds,
            (samples.get(bestTo).get(devC, InterfaceSampler.RX_BYTES) -
                samples.get(bestFrom).get(devC, InterfaceSampler.RX_BYTES)) / seconds, seconds};
    }

    /** Waits until B's interfaces received {@code packets} more than at the first sample; @return when. */
    private static long awaitPackets(final InterfaceSampler sampler, final String[] devs, final long packets,
        final LabPeers.Visit visit) throws Exception
    {
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        long first = -1;
        while (System.nanoTime() < deadline && visit.process().isAlive())
        {
            final List<InterfaceSampler.Sample> samples = sampler.samples();
            if (!samples.isEmpty())
            {
                final InterfaceSampler.Sample last = samples.get(samples.size() - 1);
                long total = 0;
                for (final String dev : devs)
                {
                    total += last.get(dev, InterfaceSampler.RX_PACKETS);
                }
                first = first < 0 ? total : first;
                if (total - first >= packets)
                {
                    return last.nanos();
                }
            }
            Thread.sleep(20);
        }
        throw new IllegalStateException("B saw no transfer: " + visit.output());
    }
}
