package io.spraynic.cli;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static io.spraynic.cli.LabPeers.format;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Spray across the Linux ECMP lab: a {@code spraynic nic} serving in host B and a {@code spraynic transfer} visiting
 * it from host A, each on {@code net_af_packet} over its host's interfaces in both planes ({@code
 * -Dspraynic.lab.port=af_xdp}: {@code net_af_xdp}; {@code =udp}: kernel UDP sockets on its addresses; {@link LabPeers#PORT}), with kernel routers and four
 * equal-cost links between the routers of each plane ({@link LabPeers}). Each NIC is given its own addresses with
 * their prefixes and its gateways; the visitor only B's addresses. The transfer writes and reads back every byte.
 * <ul>
 * <li>Clean: every ECMP link of every plane carries within a quarter of an even share of each direction's packets
 * (issue 14's goal), counted by the routers over the part timed after a verified warm-up. Spray's paths rotate their source ports every 16 to 32 packets
 * (PROTOCOL.md S7.7): 64 fixed ports hashed over 4 links land within that only about half the time.</li>
 * <li>1 % random loss on every core link, each direction, the core links limited to 10 Mbit/s ({@link #CORE_RATE})
 * (with {@code -Dspraynic.lab.ceAbove=auto} the routers mark CE above 85 % of that in data packets, {@link #CE_ABOVE}:
 * an ECN fabric, RESULTS.md sections 58 and 61; spray's data packets then within a quarter of an even share on each
 * plane's links is asserted), the RoCEv2 NICs told the links' rate ({@link #ROCEV2_LINE_RATE}): verified, and retransmitted ÷ lost at most 1.1 per direction (A's WRITEs, B's READ responses), both counted by the
 * routers: data packets are IP packets of 512 bytes or more, those sent twice are the ones the core links saw beyond
 * the transfer's own, and those lost the random drops and the ones that left a router onto a link and never reached
 * the far one (the TBF's queue drops); then RoCEv2 over the same links and loss, measured the same way, spray's
 * goodput at least 3 times its at that rate (issue 14's goal). Each visit is measured after a verified warm-up
 * over the same connection, the routers' counters read while the visitor holds between the two ({@link #timed});
 * RoCEv2's local ACK timeout is derived from round trips measured to B's NIC ({@link RoceAckTimeout}).</li>
 * </ul>
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class LinuxLabTransferTest
{
    private static final String ID = "x" + ProcessHandle.current().pid() % 10_000;
    static final int LINKS = 4;
    static final int PLANES = Integer.getInteger("spraynic.lab.planes", 2);
    static final int PATHS = 64;
    /** The NICs' path MTU: 1024, the largest RoCE MTU the lab's 1500-byte veth links carry. */
    static final int PATH_MTU = 1024;
    /**
     * 48 MiB: about 24,000 data packets per plane and direction, some 1,000 port runs of 16-32 packets over 4 links
     * (fewer where a path cannot drain: its run goes on). Measured worst links, cold: 19.9 and 23.6 % at 32 MiB, 22.3 %
     * at 48 MiB; fixed ports 30.6 to 62.6 % (RESULTS.md section 18); warm: 3.6-14.5 % (sections 45, 46, 68, 69).
     */
    private static final long SPREAD_SIZE = 48L << 20;
    private static final long FIXED_PORTS_SIZE = 8L << 20;
    /**
     * The spread test's warm-up ({@link #WARMUP}): 8 MiB, the loss test's, enough for the JIT (RESULTS.md section 38);
     * its packets are left out of the judged counts, which cover the timed 48 MiB alone.
     */
    private static final long SPREAD_WARMUP = 8L << 20;
    private static final long LOSS_SIZE = 8L << 20;
    private static final long ROCE_SIZE = 2L << 20;
    /**
     * Each transport's visit at 1 % loss first writes and reads back as much as it then measures, over the same
     * connection or queue pair, verified, and only the part after it is measured (RESULTS.md section 38): every visit
     * is a fresh JVM, and without it the JIT compiled the datapath during the measurement (section 30). The same rule
     * for both: 8 MiB for spray, 2 MiB for RoCEv2 (whose go-back-N took 8 MiB at 1 % loss past its retry limit at a
     * load of 7 per core). {@code -Dspraynic.lab.warmup=false} measures cold, as before.
     */
    static final boolean WARMUP = !"false".equals(System.getProperty("spraynic.lab.warmup"));
    /**
     * {@code -Dspraynic.lab.warmupFactor=N}: the loss test's visits warm up with N times what they then measure (B
     * exposes as much), both transports alike (default 1). After a warm-up as large as the timed part the per-packet
     * methods of B's NIC were still being compiled by C2 in the timed part (RESULTS.md section 48).
     */
    static final int WARMUP_FACTOR = Math.max(1, Math.min(16, Integer.getInteger("spraynic.lab.warmupFactor", 1)));
    /**
     * The loss test's spray visit after its warm-up times the warm-up's connection ({@code same}, default: the JVM and
     * the connection both warm) or a new one ({@code -Dspraynic.lab.warmupConnection=fresh}: a warm JVM, a connection
     * whose paths' round trips and margins start again). RoCEv2 always times the warm-up's queue pair.
     */
    static final String WARMUP_CONNECTION = System.getProperty("spraynic.lab.warmupConnection", "same");
    /**
     * {@code -Dspraynic.lab.compareAckTimeout=12}: after the loss test's RoCEv2 visit, a second one on a new queue pair
     * with this exponent, reported beside it (not asserted: at 12, 16.8 ms, it failed with RETRY_EXC_ERR on loaded
     * hosts, which is what the comparison shows), for what the derived timeout costs or saves.
     */
    static final String COMPARE_ACK_TIMEOUT = System.getProperty("spraynic.lab.compareAckTimeout");
    /**
     * {@code -Dspraynic.lab.cpushare=true}: where the host's CPUs go over each warm visit's timed part
     * ({@code deploy/lab/cpushare}: per-CPU user, system, softirq and idle, NET_RX/NET_TX softirqs, the busiest
     * processes and threads), printed after it; {@code -Dspraynic.lab.perf=true} adds {@code perf record -a -g}'s
     * report by command and object. Both transports are measured the same way (RESULTS.md section 48).
     */
    static final boolean CPUSHARE = Boolean.getBoolean("spraynic.lab.cpushare") || Boolean.getBoolean("spraynic.lab.perf");
    static final boolean PERF = Boolean.getBoolean("spraynic.lab.perf");
    /**
     * {@code -Dspraynic.lab.settleJit=SECONDS} (at most 25, under the serving NIC's 30 s idle timeout; default 0: not
     * at all): while a warm visit holds, wait until the JIT compiler threads of the visitor and of B's NIC are quiet.
     * A diagnostic: on a loaded host the C2 compiler took more of both processes' CPU in the timed part than their poll
     * threads did, and it did so also after they had been quiet at the hold (RESULTS.md section 48): the timed part
     * makes compiles of its own, so waiting does not remove them.
     */
    static final int SETTLE_JIT_SECONDS = Math.min(25, Integer.getInteger("spraynic.lab.settleJit", 0));
    /** The loss test's counters samplers: its counts come from the visitor and the routers, not from them. */
    private static final int LOSS_SAMPLER_MILLIS = 50;
    /**
     * The loss test's TBF rate on every core link, each direction: 10mbit unless {@code -Dspraynic.lab.coreRate=R}
     * ({@code off}: unlimited, as before). On unlimited veth links the hosts' CPUs, not the links, bound the goodput
     * and RoCEv2's single path per plane costs it little (spray ÷ RoCEv2 1.3 warm, RESULTS.md section 52); the issue's
     * goal compares the transports on links that bound them, where RoCEv2's queue pair gets one link and spray all
     * eight. 10 Mbit/s rather than 25: at 6-9 runnable threads per core spray made 22-49 Mb/s whatever the rate, while
     * RoCEv2 gets some 40 % of its one link (4 Mb/s at 10 Mbit/s, 8 at 25), so at 25 Mbit/s the ratio fell to 4.0 and
     * spray's slowest run would have given 2.8 (RESULTS.md section 53).
     */
    static final String CORE_RATE = coreRate(System.getProperty("spraynic.lab.coreRate", "10mbit"));
    /** The loss test's default core rate, where spray ÷ RoCEv2 is judged ({@link #RATE_LIMITED_GOODPUT_RATIO}). */
    static final String JUDGED_CORE_RATE = "10mbit";
    /**
     * Spray ÷ RoCEv2 goodput asserted on the default core rate's links: the goal (3). Measured 10-15 on a quiet
     * host at 25 Mbit/s per link (RESULTS.md section 52), and at 6-9 runnable threads per core 7.2-11.7 at 10 Mbit/s
     * (6 runs), 3.8-7.1 at 15, 4.0-4.1 at 25 and 2.8-4.1 at 200 Mbit/s, where the links no longer bound either
     * transport (section 53). At another rate, or on unlimited links, it is reported, not judged.
     */
    static final double RATE_LIMITED_GOODPUT_RATIO = 3.0;
    /** A TBF rate as {@code --rate} takes it, for {@link #bitsPerSecond}. */
    private static final Pattern BIT_RATE = Pattern.compile("(\\d+(?:\\.\\d+)?)(bit|kbit|mbit|gbit)");
    /**
     * A spray data packet's frame as the TBF counts it (Ethernet 14, IPv4 20, UDP 8, BTH 12, SETH 28, the payload,
     * ICRC 4; a RETH's 16 more on a message's first): RoCEv2's are smaller (no SETH), so a packet rate derived from
     * spray's is below the link's rate for both.
     */
    static final int DATA_FRAME_BYTES = 14 + 20 + 8 + 12 + 28 + PATH_MTU + 4;
    /**
     * The fraction of the TBF's rate in data packets above which the routers mark: the rest of the link is the
     * reverse direction's ACKs (not-ECT, so not counted by the marking limit: up to one of some 70-100 bytes per data
     * packet, under 10 % of the bytes) and headroom for the TBF's queue to drain while the senders answer the marks.
     */
    static final double CE_FRACTION = 0.85;
    /**
     * The marking limit's burst in packets: the depth of the virtual queue (drained at the marking rate) above which
     * ECT packets get CE, as a switch marks at a queue of a few packets; the TBF holds some 14 of spray's frames in
     * its bucket and 56 more in its 50 ms queue before it drops, so marks start well before. The lab's own default
     * (1/50 s of the rate, 19 packets here) is {@code -Dspraynic.lab.ceBurst=0}.
     */
    static final int CE_BURST = Integer.getInteger("spraynic.lab.ceBurst", 4);
    /**
     * CE marking on every core link, the same for both transports: {@code -Dspraynic.lab.ceAbove=auto}, on
     * rate-limited links, above {@link #CE_FRACTION} of the TBF's rate in spray's data packets ({@link #ceAbove}), as a
     * switch on an ECN fabric (PROTOCOL.md S8.2: spray slows down on marks, not on loss); {@code =R} the lab's
     * {@code --ce-above R} (e.g. 900pps, 900pps/4); {@code off} (the default) none. The RoCEv2 baseline's RETRY_EXC_ERR on
     * marked links (3 of 9 runs in section 58) was its DCQCN told a 100 Gb/s line ({@link #ROCEV2_LINE_RATE}), and with
     * marks spray keeps its links' queues and spreads evenly; but it is not yet the default: on a loaded host 7 of 23
     * marked runs kept a plane-direction over {@link #MARKED_SPREAD} (section 61), and marked, spray is judged against
     * its random drops alone (~80 a direction), where its spurious timeouts (section 60) crossed 1.1 in a few runs.
     */
    static final String CE_ABOVE = ceAbove(System.getProperty("spraynic.lab.ceAbove", "off"), CORE_RATE);
    /**
     * Issue 14's spread goal, asserted on the loss test's spray visit when the links mark CE: each core link of a plane
     * carries within this fraction of an even share of each direction's data packets (marks hold a link over its share
     * back; unmarked, bursts into the TBFs spread them up to 94 %, RESULTS.md section 59: reported, not asserted).
     * Marked, 16 of 23 runs kept every plane-direction within it and all 23 within 40 % (section 61), so this fails
     * about one run in three; {@code -Dspraynic.lab.markedSpread=0.4} asserts the bound every run kept.
     */
    static final double MARKED_SPREAD = Double.parseDouble(System.getProperty("spraynic.lab.markedSpread", "0.25"));
    /**
     * What the RoCEv2 NICs are told of the fabric, as an operator configures a NIC's DCQCN for its links ({@code nic} and
     * {@code transfer}'s {@code --rocev2-line-rate}): {@code -Dspraynic.lab.rocev2LineRate=auto} (the default), the
     * core links' TBF rate when they are limited, else nothing; {@code off} nothing, the NIC's default 100 Gb/s line and
     * the paper's DCQCN steps (40 Mb/s every 55 us, four times a 10 Mb/s link a step: RESULTS.md section 61); else a
     * rate. DCQCN's steps, floor, byte counter and pacing burst follow it ({@code DcqcnConfig.forLineRate}), and
     * {@code -Dspraynic.lab.dcqcn=NAME=VALUE,...} sets single parameters after it.
     */
    static final String ROCEV2_LINE_RATE = rocev2LineRate(System.getProperty("spraynic.lab.rocev2LineRate", "auto"),
        CORE_RATE);
    static final List<String> DCQCN_PARAMETERS = System.getProperty("spraynic.lab.dcqcn", "").isBlank() ? List.of() :
        List.of(System.getProperty("spraynic.lab.dcqcn").split(","));
    private static LinuxLab lab;

    @BeforeAll
    static void up() throws Exception
    {
        lab = LinuxLab.upForNics(ID, 2);
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
        lab.set("all", "--drop", "0", "--ce-above", "off", "--rate", "off");
    }

    @Test
    void shouldSpreadASprayTransferEvenlyOverEveryEcmpLinkOfEveryPlane(@TempDir final Path dir) throws Exception
    {
        try (LabPeers peers = new LabPeers(lab, dir, PLANES))
        {
            // without rotation, for comparison (reported, not asserted; -Dspraynic.lab.compare=true); then with it
            final double fixed = Boolean.getBoolean("spraynic.lab.compare") ?
                spread(peers.portRotation("off"), FIXED_PORTS_SIZE, "fixed ports") : Double.NaN;
            final double rotating = spread(peers.portRotation("16-32"), SPREAD_SIZE, "ports rotating every 16-32");
            // The goal, asserted: every warm run of the DPDK kinds recorded since the warm-up came (RESULTS.md
            // sections 45, 46, 68, 69) kept its worst link within 3.6-14.5 %, and chance alone (deploy/lab/
            // spread_model.py --packets 24576) never passes 25 % in 4,000 trials, median 7.3 %. Section 18's cold
            // runs measured 15-30 % before the warm-up; fixed ports 30-63 %.
            assertTrue(rotating <= 0.25, "every link within 25 % of an even share: " + rotating + " (fixed: " +
                fixed + ")");
        }
    }

    private static double spread(final LabPeers peers, final long size, final String what) throws Exception
    {
        final LabPeers.Served served = peers.serve("b", "spray", size, PATHS);
        final long warmup = WARMUP ? Math.min(size, SPREAD_WARMUP) : 0;
        final Timed timed = timed(peers, served, size, warmup, PATHS, 120, 180);
        final Map<String, Long> before = timed.before();
        final Map<String, Long> after = timed.after();
        final LabPeers.Result result = timed.result();
        LabPeers.stop(served);
        assertEquals(0, result.exitCode(), result.output());
        assertTrue(result.verified(), result.output());
        final StringBuilder text = new StringBuilder();
        double worst = 0;
        for (int plane = 1; plane <= PLANES; plane++)
        {
            for (final String direction : List.of("ab", "ba"))
            {
                // data packets: ACKs keep their path's first port (S7.7) and are reported, not judged
                final long[] perLink = perLink(before, after, plane, direction, "forwarded_large_packets");
                final long[] all = perLink(before, after, plane, direction, "forwarded_packets");
                final double deviation = deviation(perLink);
                worst = Math.max(worst, deviation);
                text.append(format("plane %d %s data %s (%.1f %%), all packets %s (%.1f %%); ", plane, direction,
                    Arrays.toString(perLink), 100 * deviation, Arrays.toString(all), 100 * deviation(all)));
            }
        }
        System.out.println(format("linux lab spray spread, NICs on %s, %s, %s, load per core %.2f, %d MiB written " +
            "and read, %d paths, %.2f s: packets per core link over the timed part (largest deviation from an even share): %sworst " +
            "for data %.1f %%; data packets sent twice A->B %d, B->A %d (A's timeouts %d)", LabPeers.PORT.description(),
            what, warmup > 0 ?
            format("warm (after a verified warm-up of %d MiB over the same connection, %.2f s)", warmup >> 20,
            LabPeers.json(result.output(), "warmupSeconds")) : "cold", loadPerCore(), size >> 20, PATHS,
            result.seconds(), text, 100 * worst,
            sentTwiceAndLost(before, after, "ab", size)[0], sentTwiceAndLost(before, after, "ba", size)[0],
            result.connection("timeouts")));
        return worst;
    }

    @Test
    void shouldResendEveryLossTheRoutersMadeAtOnePercentLossBesideRoceV2(@TempDir final Path dir)
        throws Exception
    {
        lab.set("core", "--drop", "1%");
        if (null != CORE_RATE)
        {
            lab.set("core", "--rate", CORE_RATE);
        }
        if (null != CE_ABOVE)
        {
            lab.set("core", "--ce-above", CE_ABOVE);
        }
        try (LabPeers peers = new LabPeers(lab, dir, PLANES).samplerMillis(LOSS_SAMPLER_MILLIS)
            .warmupConnection(WARMUP_CONNECTION).rocev2Dcqcn(ROCEV2_LINE_RATE, DCQCN_PARAMETERS))
        {
            final double loadBefore = loadPerCore();
            final LabPeers.Served served = peers.serve("b", "spray", LOSS_SIZE * WARMUP_FACTOR, PATHS);
            final Timed spray = timed(peers, served, LOSS_SIZE, PATHS, 120, 180);
            final Map<String, Long> before = spray.before();
            final Map<String, Long> after = spray.after();
            final Map<String, Long> atB = spray.atB();
            final Map<String, Long> smallestAtB = served.counters().smallest();
            LabPeers.stop(served);
            assertEquals(0, spray.result().exitCode(), spray.result().output());
            assertTrue(spray.result().verified(), spray.result().output());
            final long[] sprayAb = sentTwiceAndLost(before, after, "ab", LOSS_SIZE);
            final long[] sprayBa = sentTwiceAndLost(before, after, "ba", LOSS_SIZE);
            final String sprayShaping = shaping(before, after);
            // spray's figures first, so that a RoCEv2 failure below does not lose them
            System.out.println(format("linux lab at 1 %% loss, spray%s, load per core %.2f: %d MiB each way in %.2f " +
                "s; A->B data packets lost %s, sent twice %d (%.3f); B->A lost %s, sent twice %d (%.3f); A's counts: %s",
                WARMUP ? format(" after a verified warm-up of %.2f s, timed on %s", LabPeers.json(
                spray.result().output(), "warmupSeconds"), WARMUP_CONNECTION.equals("fresh") ? "a fresh connection" :
                "the same connection") : " cold", loadPerCore(), LOSS_SIZE >> 20, spray.result().seconds(),
                lostText(sprayAb), sprayAb[0], ratio(sprayAb[0], sprayAb[1]), lostText(sprayBa), sprayBa[0],
                ratio(sprayBa[0], sprayBa[1]),
                WARMUP ? spray.result().output().replaceAll("(?s).*\"timed\":(\\{[^}]*}).*", "$1").strip() :
                "lost " + spray.result().connection("lost") + ", timeouts " + spray.result().connection("timeouts")));

            final LabPeers.Served roce = peers.serve("b", "rocev2", ROCE_SIZE * WARMUP_FACTOR, 1);
            final Timed rcTimed = timed(peers, roce, ROCE_SIZE, 1, 150, 200);
            final LabPeers.Result rc = rcTimed.result();
            System.out.println("linux lab at 1 % loss, spray's NIC ports over the timed part: " + spray.portDrops());
            System.out.println("linux lab at 1 % loss, RoCEv2: local ACK timeout exponent " +
                rcTimed.ackTimeout().describe() + format(", %d MiB each way in %.2f s, %s", ROCE_SIZE >> 20,
                rc.seconds(), rc.verified() ? "verified" : "NOT verified: " + rc.output().strip()) + "; its NIC ports " +
                "over the timed part: " + rcTimed.portDrops());
            final long[] rcAb = sentTwiceAndLost(rcTimed.before(), rcTimed.after(), "ab", ROCE_SIZE);
            final String rcShaping = shaping(rcTimed.before(), rcTimed.after());
            if (null != COMPARE_ACK_TIMEOUT)
            {
                compareAckTimeout(peers, roce, rcTimed);
            }
            final double loadAfter = loadPerCore();
            final LabPeers.Result sprayResult = spray.result();
            final double sprayGbps = 2 * LOSS_SIZE * 8 / sprayResult.seconds() / 1e9;
            final double rcGbps = 2 * ROCE_SIZE * 8 / rc.seconds() / 1e9;
            final String text = format("spray %d MiB each way in %.2f s (%.1f Mb/s): A->B data packets lost %s, " +
                "sent twice %d (%.3f; A's own count: lost %d, retransmitted %d); B->A lost %s, sent twice %d (%.3f); " +
                "RoCEv2 RC %d MiB each way in %.2f s (%.1f Mb/s, %s): A->B lost %s, sent twice %d (%.2f); spray / " +
                "RoCEv2 goodput %.1f", LOSS_SIZE >> 20, sprayResult.seconds(), 1e3 * sprayGbps, lostText(sprayAb),
                sprayAb[0], ratio(sprayAb[0], sprayAb[1]), sprayResult.connection("lost"),
                sprayResult.connection("retransmitted"), lostText(sprayBa), sprayBa[0], ratio(sprayBa[0], sprayBa[1]),
                ROCE_SIZE >> 20, rc.seconds(), 1e3 * rcGbps,
                rc.verified() ? "verified" : "NOT verified: " + rc.output().strip(), lostText(rcAb), rcAb[0],
                ratio(rcAb[0], rcAb[1]), sprayGbps / rcGbps);
            // why A sent more than the routers dropped: what A took for lost, what B received twice, and how long
            // the paths' round trips were against the RTO's ceiling (rtoMax, 10 ms)
            final String why = format("A->B: %d data packets lost on the core links, A sent %d twice (lost %d, " +
                "retransmitted %d, moved %d; RTOs %d of which found spurious %d (by B's report of duplicates %d), tail " +
                "probes %d, ACKs taken %d, stale " +
                "%d); B received %d twice and saw %d gaps; A's paths' smoothed RTT %.2f-%.2f ms (smallest and largest " +
                "seen), B's %.2f-%.2f ms; B->A: %d lost, B sent %d twice (lost %d, retransmitted %d; RTOs %d of " +
                "which found spurious %d, tail probes %d); A received %d twice", sprayAb[1], sprayAb[0],
                sprayResult.connection("lost"),
                sprayResult.connection("retransmitted"), sprayResult.connection("moved"),
                sprayResult.connection("timeouts"), sprayResult.connection("spurious_timeouts"),
                sprayResult.connection("spurious_timeouts_reported"), sprayResult.connection("probes_sent"), sprayResult.connection("acks_received"),
                sprayResult.connection("acks_stale"), grown(spray.atBWarm(), atB, "duplicates"),
                grown(spray.atBWarm(), atB, "sack_gaps"), sprayResult.smallestSrttMillis(),
                sprayResult.largestSrttMillis(), LabPeers.smallestSrttMillis(smallestAtB),
                LabPeers.largestSrttMillis(atB), sprayBa[1], sprayBa[0], grown(spray.atBWarm(), atB, "lost"),
                grown(spray.atBWarm(), atB, "retransmitted"), grown(spray.atBWarm(), atB, "timeouts"),
                grown(spray.atBWarm(), atB, "spurious_timeouts"), grown(spray.atBWarm(), atB, "probes_sent"),
                spray.visitorGrown("duplicates"));
            System.out.println("linux lab at 1 % loss on every core link, NICs on " + LabPeers.PORT.description() +
                (WARMUP ? format(", each visit " +
                "after a verified warm-up " + (WARMUP_FACTOR == 1 ? "as large as" : WARMUP_FACTOR + " times") +
                " its timed part (spray's took %.2f s, timed on %s; RoCEv2's %.2f " +
                "s)", LabPeers.json(sprayResult.output(), "warmupSeconds"), WARMUP_CONNECTION.equals("fresh") ?
                "a fresh connection" : "the same connection", LabPeers.json(rc.output(), "warmupSeconds")) :
                ", cold (no warm-up)") + format(", load per core %.2f before, %.2f after", loadBefore, loadAfter) +
                "; RoCEv2's local ACK timeout exponent " + rcTimed.ackTimeout().describe() +
                (null == CORE_RATE ? "" : ", core links limited to " + CORE_RATE + " each way (TBF)") +
                (null == CE_ABOVE ? "" : ", CE above " + CE_ABOVE) +
                ", RoCEv2 NICs told a line rate of " + (null == ROCEV2_LINE_RATE ? "none (100 Gb/s)" : ROCEV2_LINE_RATE) +
                (DCQCN_PARAMETERS.isEmpty() ? "" : " and DCQCN " + DCQCN_PARAMETERS) +
                ": " + text + "; " + why + (null == CORE_RATE && null == CE_ABOVE ? "" : "; spray: " + sprayShaping +
                "; RoCEv2: " + rcShaping));
            assertTrue(sprayAb[2] > 0 && sprayBa[2] > 0, "the routers dropped data both ways: " + text);
            assertTrue(sprayAb[0] >= sprayAb[1] && sprayBa[0] >= sprayBa[1], "every loss was sent again: " + text);
            // The goal, retransmitted / lost <= 1.1 each way, judged on the warm measurement: every warm run
            // met it at 5 to 13 runnable threads per core (1.000-1.053, RESULTS.md section 38), while cold runs in the
            // same hour measured 1.0-2.5 A->B and 1.6-3.5 B->A (a fresh JVM's JIT, descheduled poll threads and a
            // connection that has not yet learnt its paths' RTTs: late ACKs taken for losses, section 30). Cold
            // (-Dspraynic.lab.warmup=false) it is reported, not asserted.
            // A fresh connection after the warm-up (-Dspraynic.lab.warmupConnection=fresh) is a cold connection in a
            // warm process: reported beside the warm one (RESULTS.md section 45), the goal being the warm one's.
            if (WARMUP && !WARMUP_CONNECTION.equals("fresh"))
            {
                assertTrue(ratio(sprayAb[0], sprayAb[1]) <= 1.1 && ratio(sprayBa[0], sprayBa[1]) <= 1.1,
                    "spray retransmitted / lost at most 1.1 each way over the timed part: " + text + "; " + why);
            }
            assertEquals(0, rc.exitCode(), text);
            assertTrue(rc.verified(), text);
            // Where the links bound the goodput, RoCEv2's queue pair gets one of the eight links and overruns it, going
            // back N from each loss its queue made; spray spreads over all of them and resends only what was lost
            if (JUDGED_CORE_RATE.equals(CORE_RATE))
            {
                assertTrue(sprayGbps / rcGbps >= RATE_LIMITED_GOODPUT_RATIO, "spray / RoCEv2 goodput at least " +
                    RATE_LIMITED_GOODPUT_RATIO + " on core links limited to " + CORE_RATE + ": " + text);
            }
            if (null != CE_ABOVE)
            {
                double worst = 0;
                for (int plane = 1; plane <= PLANES; plane++)
                {
                    for (final String direction : List.of("ab", "ba"))
                    {
                        worst = Math.max(worst, deviation(perLink(before, after, plane, direction,
                            "forwarded_large_packets")));
                    }
                }
                assertTrue(worst <= MARKED_SPREAD, format("on marked links every core link within %.0f %% of an " +
                    "even share of spray's data packets, each plane and direction: worst %.1f %%; %s", 100 *
                    MARKED_SPREAD, 100 * worst, sprayShaping));
            }
        }
    }

    /** {@code auto}: the core rate (null on unlimited links); {@code off} or empty: null; else as given. */
    static String rocev2LineRate(final String property, final String coreRate)
    {
        if (property.isBlank() || "off".equals(property))
        {
            return null;
        }
        return "auto".equals(property) ? coreRate : property;
    }

    /** {@code off} (or empty): null, no limit; else the rate, checked by the lab when it is set. */
    private static String coreRate(final String property)
    {
        return property.isBlank() || "off".equals(property) ? null : property;
    }

    /**
     * {@code auto}: on a rate-limited link, {@link #CE_FRACTION} of its rate in {@link #DATA_FRAME_BYTES} frames per
     * second with a burst of {@link #CE_BURST} (none on unlimited links); {@code off} or empty: none; else as given.
     */
    static String ceAbove(final String property, final String coreRate)
    {
        if (property.isBlank() || "off".equals(property))
        {
            return null;
        }
        if (!"auto".equals(property))
        {
            return property;
        }
        if (null == coreRate)
        {
            return null;
        }
        final long pps = (long)(CE_FRACTION * bitsPerSecond(coreRate) / (8.0 * DATA_FRAME_BYTES));
        return pps + "pps" + (CE_BURST > 0 ? "/" + CE_BURST : "");
    }

    /** A TBF rate as the lab takes it (e.g. 10mbit, 2.5gbit) in bits per second. */
    static double bitsPerSecond(final String rate)
    {
        final Matcher m = BIT_RATE.matcher(rate.strip().toLowerCase(Locale.ROOT));
        if (!m.matches())
        {
            throw new IllegalArgumentException("not a rate in bits: " + rate);
        }
        final double unit = switch (m.group(2))
        {
            case "kbit" -> 1e3;
            case "mbit" -> 1e6;
            case "gbit" -> 1e9;
            default -> 1;
        };
        return Double.parseDouble(m.group(1)) * unit;
    }

    /** @return a direction's lost data packets and their two parts, from {@link #sentTwiceAndLost}. */
    static String lostText(final long[] sentTwiceAndLost)
    {
        return format("%d (random drops %d + link drops %d)", sentTwiceAndLost[1], sentTwiceAndLost[2],
            sentTwiceAndLost[3]);
    }

    /** A second RoCEv2 visit at {@link #COMPARE_ACK_TIMEOUT} after {@code first}'s, on a queue pair of its own. */
    private static void compareAckTimeout(final LabPeers peers, final LabPeers.Served first, final Timed firstTimed)
        throws Exception
    {
        LabPeers.stop(first); // one RoCEv2 NIC on B's interfaces at a time
        peers.rocev2AckTimeout(COMPARE_ACK_TIMEOUT);
        try
        {
            final LabPeers.Served roce = peers.serve("b", "rocev2", ROCE_SIZE * WARMUP_FACTOR, 1);
            final Timed compared = timed(peers, roce, ROCE_SIZE, 1, 150, 200);
            final long[] ab = sentTwiceAndLost(compared.before(), compared.after(), "ab", ROCE_SIZE);
            final long[] firstAb = sentTwiceAndLost(firstTimed.before(), firstTimed.after(), "ab", ROCE_SIZE);
            System.out.println(format("linux lab at 1 %% loss, RoCEv2 at two local ACK timeouts, load per core %.2f: " +
                "exponent %s: %.2f s, %.1f Mb/s, A->B dropped %d, sent twice %d (%.2f), %s; exponent %s: %.2f s, %.1f " +
                "Mb/s, A->B dropped %d, sent twice %d (%.2f), %s", loadPerCore(), firstTimed.ackTimeout().describe(),
                firstTimed.result().seconds(), 2 * ROCE_SIZE * 8 / firstTimed.result().seconds() / 1e6, firstAb[1],
                firstAb[0], ratio(firstAb[0], firstAb[1]), firstTimed.result().verified() ? "verified" : "NOT verified",
                compared.ackTimeout().describe(), compared.result().seconds(),
                2 * ROCE_SIZE * 8 / compared.result().seconds() / 1e6, ab[1], ab[0], ratio(ab[0], ab[1]),
                compared.result().verified() ? "verified" : "NOT verified: " + compared.result().output().strip()));
        }
        catch (final IllegalStateException failed)
        {
            System.out.println("linux lab at 1 % loss, RoCEv2 at exponent " + COMPARE_ACK_TIMEOUT + " failed: " +
                failed.getMessage());
        }
        finally
        {
            peers.rocev2AckTimeout(LabPeers.ROCEV2_ACK_TIMEOUT);
        }
    }

    /**
     * A visit's measured part: the routers' counters and B's when the visitor held after its warm-up ({@code before},
     * {@code atBWarm}) and when it ended ({@code after}; {@code atB} the largest values B's sampler saw since).
     */
    record Timed(LabPeers.Result result, Map<String, Long> before, Map<String, Long> after, Map<String, Long> atBWarm,
        Map<String, Long> atB, RoceAckTimeout.Choice ackTimeout, Map<String, Long> atAWarm)
    {
        /**
         * @return what each NIC's af_packet ports could not take or send over the timed part (DPDK's rx missed: the
         * socket ring was full when the kernel had a frame for it; rx no mbuf; tx errors), A's and B's, summed over
         * their ports; "n/a" without a warm-up (no reading at its start).
         */
        String portDrops()
        {
            if (atAWarm.isEmpty())
            {
                return "n/a (cold)";
            }
            if (LabPeers.PORT == LabPortKind.UDP)
            {
                return "n/a (kernel UDP sockets: no DPDK port statistics)";
            }
            return format("A rx missed %d, rx no mbuf %d, tx errors %d, rx packets %d; B rx missed %d, rx no mbuf " +
                "%d, tx errors %d, rx packets %d", port(atAWarm, result.counters(), "rx missed"),
                port(atAWarm, result.counters(), "rx no mbuf"), port(atAWarm, result.counters(), "tx errors"),
                port(atAWarm, result.counters(), "rx packets"), port(atBWarm, atB, "rx missed"),
                port(atBWarm, atB, "rx no mbuf"), port(atBWarm, atB, "tx errors"), port(atBWarm, atB, "rx packets"));
        }

        /**
         * @return how much the visitor's connection counter {@code name} grew over the timed part: the largest value
         * its sampler saw after the hold less the value read at the hold (a connection's counters are cumulative);
         * without a warm-up, the largest value seen.
         */
        long visitorGrown(final String name)
        {
            return LabPeers.connection(result.counters(), name) - LabPeers.connection(atAWarm, name);
        }

        /** @return how much B's connection counter {@code name} grew over the timed part (as {@link #visitorGrown}). */
        long servedGrown(final String name)
        {
            return LabPeers.connection(atB, name) - LabPeers.connection(atBWarm, name);
        }

        /** @return how much a DPDK port statistic grew from {@code from} to {@code to}, summed over the ports. */
        static long port(final Map<String, Long> from, final Map<String, Long> to, final String statistic)
        {
            long sum = 0;
            for (final Map.Entry<String, Long> e : to.entrySet())
            {
                if (e.getKey().startsWith("port ") && e.getKey().endsWith(": dpdk " + statistic))
                {
                    sum += e.getValue() - from.getOrDefault(e.getKey(), 0L);
                }
            }
            return sum;
        }
    }

    /**
     * Visits {@code served} from A after a warm-up of {@code size} bytes ({@link #WARMUP}), reading the routers'
     * counters (and B's) while the visitor holds between its warm-up and its timed part: what the routers dropped
     * and forwarded in the timed part is all counted, and the warm-up's not. Without a warm-up, the counters are read around the visit.
     */
    static Timed timed(final LabPeers peers, final LabPeers.Served served, final long size, final int paths,
        final int timeoutSeconds, final int awaitSeconds) throws Exception
    {
        return timed(peers, served, size, WARMUP ? size * WARMUP_FACTOR : 0, paths, timeoutSeconds, awaitSeconds);
    }

    /** {@link #timed(LabPeers, LabPeers.Served, long, int, int, int)} after a warm-up of {@code warmup} bytes (0: none). */
    static Timed timed(final LabPeers peers, final LabPeers.Served served, final long size, final long warmup,
        final int paths, final int timeoutSeconds, final int awaitSeconds) throws Exception
    {
        return timed(peers, served, size, warmup, paths, timeoutSeconds, awaitSeconds, () -> { });
    }

    /** What a test changes in the lab while a visit holds after its warm-up, before the routers' counters are read. */
    @FunctionalInterface
    interface AtHold
    {
        void run() throws Exception;
    }

    /**
     * {@link #timed(LabPeers, LabPeers.Served, long, long, int, int, int)}, running {@code atHold} while the visit
     * holds after its warm-up (with none, before it starts): the timed part alone meets what it sets.
     */
    static Timed timed(final LabPeers peers, final LabPeers.Served served, final long size, final long warmup,
        final int paths, final int timeoutSeconds, final int awaitSeconds, final AtHold atHold) throws Exception
    {
        if (warmup == 0)
        {
            atHold.run();
        }
        final LabPeers.Visit visit = peers.visit("a", served, size, paths, timeoutSeconds, warmup);
        final Map<String, Long> atBWarm;
        final Map<String, Long> atAWarm;
        if (warmup > 0)
        {
            visit.awaitWarm(awaitSeconds);
            atBWarm = served.counters().current();
            atAWarm = visit.counters().current();
            if (SETTLE_JIT_SECONDS > 0)
            {
                System.out.println("linux lab, " + served.mode() + "'s visit holding after its warm-up: " +
                    awaitCompilersQuiet(SETTLE_JIT_SECONDS, visit.process().pid(), served.process().pid()) +
                    format("; compiled methods (jcmd Compiler.codelist): A %d, B %d",
                    compiledMethods(visit.process().pid()), compiledMethods(served.process().pid())));
            }
            served.counters().restart();
            visit.counters().restart();
            atHold.run();
        }
        else
        {
            atBWarm = Map.of();
            atAWarm = Map.of();
        }
        final Map<String, Long> before = peers.lab().counters();
        final Process cpushare = warmup > 0 && CPUSHARE ? cpushare(visit, served) : null;
        if (warmup > 0)
        {
            visit.go();
        }
        final LabPeers.Result result = visit.await(awaitSeconds);
        final Map<String, Long> after = peers.lab().counters();
        if (warmup > 0 && SETTLE_JIT_SECONDS > 0)
        {
            System.out.println("linux lab, " + served.mode() + "'s timed part over: B's NIC's compiled methods " +
                compiledMethods(served.process().pid()));
        }
        if (null != cpushare)
        {
            cpushare.waitFor(120, TimeUnit.SECONDS);
            cpushare.destroyForcibly();
            System.out.println("linux lab, where the CPUs went in " + served.mode() + "'s timed part: " +
                java.nio.file.Files.readString(cpushareOutput(visit)).strip());
        }
        return new Timed(result, before, after, atBWarm, served.counters().snapshot(), visit.ackTimeout(), atAWarm);
    }

    /**
     * Waits until the JIT compiler threads of {@code pids} used at most one clock tick (10 ms) together over half a
     * second, or {@code maxSeconds} passed. @return what it waited and what the compilers used meanwhile, in words.
     */
    static String awaitCompilersQuiet(final int maxSeconds, final long... pids)
        throws java.io.IOException, InterruptedException
    {
        final long start = System.nanoTime();
        final long deadline = start + TimeUnit.SECONDS.toNanos(maxSeconds);
        final long first = compilerTicks(pids);
        long last = first;
        boolean quiet = false;
        while (!quiet && System.nanoTime() < deadline)
        {
            Thread.sleep(500);
            final long now = compilerTicks(pids);
            quiet = now - last <= 1;
            last = now;
        }
        return format("the JIT compilers of the visitor and B's NIC %s after %.1f s of the hold, in which they used " +
            "%d clock ticks", quiet ? "quiet" : "NOT quiet", (System.nanoTime() - start) / 1e9, last - first);
    }

    /** @return how many compiled methods a JVM's code cache holds ({@code jcmd PID Compiler.codelist}), -1: unknown. */
    private static long compiledMethods(final long pid)
    {
        try
        {
            final Path jcmd = Path.of(ProcessHandle.current().info().command().orElseThrow()).resolveSibling("jcmd");
            final Process process = new ProcessBuilder(jcmd.toString(), Long.toString(pid), "Compiler.codelist")
                .redirectErrorStream(true).start();
            final long lines = new String(process.getInputStream().readAllBytes()).lines().count();
            return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0 ? lines : -1;
        }
        catch (final java.io.IOException | InterruptedException | RuntimeException e)
        {
            return -1;
        }
    }

    /** @return the CPU time (clock ticks) of the JIT compiler threads of {@code pids}, from /proc. */
    private static long compilerTicks(final long... pids) throws java.io.IOException
    {
        long ticks = 0;
        for (final long pid : pids)
        {
            try (java.util.stream.Stream<Path> tasks = java.nio.file.Files.list(Path.of("/proc", Long.toString(pid),
                "task")))
            {
                for (final Path task : tasks.toList())
                {
                    try
                    {
                        final String stat = java.nio.file.Files.readString(task.resolve("stat"));
                        if (stat.contains("(C2 CompilerThre") || stat.contains("(C1 CompilerThre"))
                        {
                            final String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
                            ticks += Long.parseLong(fields[11]) + Long.parseLong(fields[12]);
                        }
                    }
                    catch (final java.io.IOException gone)
                    {
                        // a thread that ended between listing and reading: nothing to count
                    }
                }
            }
        }
        return ticks;
    }

    private static Path cpushareOutput(final LabPeers.Visit visit)
    {
        return visit.output().resolveSibling(visit.output().getFileName() + ".cpushare");
    }

    /**
     * Starts {@code deploy/lab/cpushare} over {@code visit} (until it ends) and {@code served}, and waits for its
     * first reading, so that the visit's timed part starts after it.
     */
    private static Process cpushare(final LabPeers.Visit visit, final LabPeers.Served served) throws Exception
    {
        final Path ready = visit.output().resolveSibling(visit.output().getFileName() + ".cpushare-ready");
        final List<String> command = new java.util.ArrayList<>(List.of("python3",
            LinuxLab.SCRIPT.resolveSibling("cpushare").toString(), "--until", Long.toString(visit.process().pid()),
            "--watch", Long.toString(served.process().pid()), "--ready", ready.toString(), "--max-seconds", "180",
            "--label", visit.process().pid() + "=A's " + served.mode() + " visitor",
            "--label", served.process().pid() + "=B's " + served.mode() + " NIC"));
        if (PERF)
        {
            command.addAll(List.of("--perf", visit.output().resolveSibling(visit.output().getFileName() +
                ".perf.data").toString()));
        }
        final Process process = new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(cpushareOutput(visit).toFile()).start();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!java.nio.file.Files.exists(ready) && process.isAlive() && System.nanoTime() < deadline)
        {
            Thread.sleep(10);
        }
        return process;
    }

    /**
     * @return what the core links' TBF queues dropped (all sizes; of them data packets: lost on the link), the
     * packets per link (data, over the timed part) and the routers' CE marks, per direction.
     */
    static String shaping(final Map<String, Long> before, final Map<String, Long> after)
    {
        final StringBuilder perLink = new StringBuilder();
        for (int plane = 1; plane <= PLANES; plane++)
        {
            for (final String direction : List.of("ab", "ba"))
            {
                final long[] data = perLink(before, after, plane, direction, "forwarded_large_packets");
                perLink.append(format("plane %d %s %s (%.1f %%), lost on each %s; ", plane, direction,
                    Arrays.toString(data), 100 * deviation(data),
                    Arrays.toString(perLink(before, after, plane, direction, "link_dropped_large_packets"))));
            }
        }
        return format("data packets per core link (largest deviation from an even share): %sTBF dropped A->B %d " +
            "(data %d), B->A %d (data %d); CE marked A->B %d, B->A %d", perLink,
            sum(before, after, "ab", "rate_limit_dropped_packets"), sum(before, after, "ab", "link_dropped_large_packets"),
            sum(before, after, "ba", "rate_limit_dropped_packets"), sum(before, after, "ba", "link_dropped_large_packets"),
            sum(before, after, "ab", "ce_marked_packets"), sum(before, after, "ba", "ce_marked_packets"));
    }

    /**
     * @return {data packets sent more than once, data packets lost, of them dropped by the random-drop rule, of them
     * lost on the link after it} in a direction over the core links, from the routers' counters: every data packet
     * the sender put on a core link was dropped by the rule or forwarded onto the link, and a transfer of
     * {@code bytes} needs {@code bytes / PATH_MTU} of them. A forwarded one the far router did not see arrive was lost
     * on the link: the TBF's queue drops of data packets (its own counter also takes ACKs), or the receiving kernel's.
     */
    static long[] sentTwiceAndLost(final Map<String, Long> before, final Map<String, Long> after,
        final String direction, final long bytes)
    {
        final long dropped = sum(before, after, direction, "dropped_large_packets");
        final long linkDropped = sum(before, after, direction, "link_dropped_large_packets");
        final long sent = sum(before, after, direction, "forwarded_large_packets") + dropped;
        return new long[] {sent - bytes / PATH_MTU, dropped + linkDropped, dropped, linkDropped};
    }

    static long[] perLink(
        final Map<String, Long> before, final Map<String, Long> after, final int plane, final String direction,
        final String counter)
    {
        final long[] perLink = new long[LINKS];
        for (int k = 1; k <= LINKS; k++)
        {
            perLink[k - 1] = LinuxLab.delta(before, after,
                "links.p" + plane + "l" + k + ".directions." + direction + "." + counter);
        }
        return perLink;
    }

    static long sum(final Map<String, Long> before, final Map<String, Long> after, final String direction,
        final String counter)
    {
        long sum = 0;
        for (int plane = 1; plane <= PLANES; plane++)
        {
            sum += Arrays.stream(perLink(before, after, plane, direction, counter)).sum();
        }
        return sum;
    }

    /** @return the largest deviation of a link's count from the links' mean, as a fraction of the mean. */
    static double deviation(final long[] perLink)
    {
        final double mean = Arrays.stream(perLink).sum() / (double)perLink.length;
        double worst = 0;
        for (final long count : perLink)
        {
            worst = Math.max(worst, Math.abs(count - mean) / Math.max(1, mean));
        }
        return worst;
    }

    /** @return how much a connection counter of B's grew from {@code atWarm} (0 without a warm-up) to {@code atEnd}. */
    static long grown(final Map<String, Long> atWarm, final Map<String, Long> atEnd, final String name)
    {
        return LabPeers.connection(atEnd, name) - LabPeers.connection(atWarm, name);
    }

    /** @return the one-minute load average divided by the cores. */
    static double loadPerCore() throws java.io.IOException
    {
        final String[] fields = java.nio.file.Files.readString(Path.of("/proc/loadavg")).split("\\s+");
        return Double.parseDouble(fields[0]) / Runtime.getRuntime().availableProcessors();
    }

    static double ratio(final long a, final long b)
    {
        return b == 0 ? Double.NaN : (double)a / b;
    }
}
