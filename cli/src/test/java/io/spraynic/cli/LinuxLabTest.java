package io.spraynic.cli;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Linux ECMP lab ({@code deploy/lab}) does what its knobs say, measured with kernel UDP flows from host A to host B
 * (the script's flow generator) against the routers' own counters: flows spread over all four equal-cost links of each
 * plane; a drop fraction loses that fraction, every loss counted by the router that dropped it; CE marks appear above
 * the threshold rate and only on ECT packets; TBF holds a link to its rate, and the large packets it dropped on a core
 * link are counted apart from the small ones (left one router, never reached the other); a link taken down carries
 * nothing until it comes back; {@code down} leaves no namespace or interface behind, also after an {@code up} killed half-way, and never
 * touches a namespace it did not make. Needs root, nftables, tc and python3 (CI runs as root; the launcher installs
 * them).
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LinuxLabTest
{
    private static final long PID = ProcessHandle.current().pid();
    private static final String ID = "t" + PID % 10_000;
    private static final String KILLED_ID = "k" + PID % 10_000;
    private static final int LINKS = 4;
    private static LinuxLab lab;
    private static List<String> rootLinksBefore;

    @BeforeAll
    static void up() throws Exception
    {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
            "SKIPPED: network namespaces, veth, nftables and tc need root");
        for (final String tool : List.of("/usr/bin/python3", "/usr/sbin/nft", "/usr/sbin/tc", "/usr/sbin/ip"))
        {
            Assumptions.assumeTrue(Files.isExecutable(Path.of(tool)), "SKIPPED: " + tool + " is missing (./spraynic test " +
                "installs it)");
        }
        rootLinksBefore = rootLinks();
        lab = LinuxLab.up(ID, "--hosts", "3");
    }

    @AfterAll
    static void down()
    {
        if (null != lab)
        {
            lab.close();
        }
    }

    @Test
    @Order(1)
    void shouldSpreadFlowsOverEveryLinkOfEachPlaneWithinAQuarterOfAnEvenShare() throws Exception
    {
        final Map<String, Long> before = lab.counters();
        final Map<String, String> sent = lab.traffic("--flows", "1024", "--packets", "6", "--size", "64");
        final Map<String, Long> after = lab.counters();
        for (final int plane : new int[]{1, 2})
        {
            final long received = received(sent, plane);
            assertEquals(sent(sent, plane), received, "plane " + plane + " lost nothing: " + sent);
            final long[] perLink = new long[LINKS];
            long total = 0;
            for (int k = 1; k <= LINKS; k++)
            {
                perLink[k - 1] = delta(before, after, "p" + plane + "l" + k, "ab", "forwarded_packets");
                total += perLink[k - 1];
            }
            // each datagram crossed exactly one core link; besides them router A's own IPv6 neighbour discovery
            assertTrue(total >= received && total <= received + 32, "plane " + plane + ": " + total + " for " + received);
            final double share = total / (double)LINKS;
            double spread = 0;
            for (final long count : perLink)
            {
                spread = Math.max(spread, Math.abs(count - share) / share);
            }
            System.out.printf(Locale.ROOT, "linux lab: plane %d, 1024 flows, packets per link %s: even share %.0f, " +
                "largest deviation %.1f %%%n", plane, java.util.Arrays.toString(perLink), share, 100 * spread);
            assertTrue(spread <= 0.25, "plane " + plane + ": " + java.util.Arrays.toString(perLink));
        }
    }

    @Test
    @Order(1)
    void shouldMeasureRoundTripsToAHostFromItsRouterOverIpv4AndIpv6() throws Exception
    {
        // here the host's kernel answers; on a --host-stack none lab the NIC process does (LinuxLabTransferTest)
        final Map<String, String> v4 = lab.rtt("b", 20);
        assertEquals("20", v4.get("received"), v4.toString());
        assertEquals("10.1.2.10", v4.get("address"), v4.toString());
        assertEquals("r1b", v4.get("from"), v4.toString());
        final double min = Double.parseDouble(v4.get("min_ms"));
        final double median = Double.parseDouble(v4.get("median_ms"));
        final double max = Double.parseDouble(v4.get("max_ms"));
        assertTrue(min > 0 && min <= median && median <= max && max < 10_000, v4.toString());
        final Map<String, String> v6 = LinuxLab.flat(lab.run("rtt", "a", "--plane", "2", "--family", "6", "--count",
            "5", "--flat"));
        assertEquals("5", v6.get("received"), v6.toString());
        assertEquals("fd00:2:1::10", v6.get("address"), v6.toString());
        final IllegalStateException refused = org.junit.jupiter.api.Assertions.assertThrows(
            IllegalStateException.class, () -> lab.run("rtt", "z"));
        assertTrue(refused.getMessage().contains("no host 'z'"), refused.getMessage());
    }

    @Test
    @Order(2)
    void shouldSpreadIpv6FlowsToo() throws Exception
    {
        final Map<String, Long> before = lab.counters();
        final Map<String, String> sent = lab.traffic("--family", "6", "--flows", "256", "--packets", "2", "--size", "64");
        final Map<String, Long> after = lab.counters();
        for (final int plane : new int[]{1, 2})
        {
            assertEquals(sent(sent, plane), received(sent, plane), "IPv6 plane " + plane + ": " + sent);
            for (int k = 1; k <= LINKS; k++)
            {
                assertTrue(delta(before, after, "p" + plane + "l" + k, "ab", "forwarded_packets") > 0,
                    "IPv6 flows cross link " + k + " of plane " + plane);
            }
        }
    }

    @Test
    @Order(3)
    void shouldLoseTheDropFractionOfEachLinkAndCountEveryLoss() throws Exception
    {
        lab.set("p1", "--drop", "1%");
        try
        {
            final Map<String, Long> before = lab.counters();
            final Map<String, String> sent = lab.traffic("--planes", "1", "--flows", "256", "--packets", "100",
                "--size", "64", "--pps", "0");
            final Map<String, Long> after = lab.counters();
            final long lost = sent(sent, 1) - received(sent, 1);
            long dropped = 0;
            for (int k = 1; k <= LINKS; k++)
            {
                dropped += delta(before, after, "p1l" + k, "ab", "dropped_packets");
            }
            final double loss = lost / (double)sent(sent, 1);
            System.out.printf(Locale.ROOT, "linux lab: 1 %% drop on each of plane 1's links: %d of %d lost = %.3f %%; " +
                "the routers dropped %d%n", lost, sent(sent, 1), 100 * loss, dropped);
            assertEquals("0", sent.get("socket_drops"), "the receiver kept up: " + sent);
            // the drop rule takes any packet on the link, router A's own IPv6 neighbour discovery too (a few in a
            // run, so at 1 % seldom one of them): every lost datagram is a counted drop, and the drops besides are few
            assertTrue(dropped >= lost && dropped <= lost + 2,
                "every loss is a router's counted drop: " + lost + " lost, " + dropped + " dropped");
            // 25,600 datagrams at p = 1 %: sigma = 0.062 %; the bounds sit at about 4.8 sigma
            assertTrue(loss >= 0.007 && loss <= 0.013, "loss " + loss);
        }
        finally
        {
            lab.set("p1", "--drop", "0");
        }
    }

    @Test
    @Order(4)
    void shouldMarkCeAboveTheThresholdRateOnlyAndOnlyOnEctPackets() throws Exception
    {
        final int threshold = 400; // packets per second, per link
        final int burst = 4; // packets: the marking queue's depth (the lab's default would be max(4, 1/50 s))
        lab.set("p1", "--ce-above", threshold + "pps/" + burst);
        try
        {
            // below: 256 datagrams in about a second, some 64 a second per link
            Map<String, Long> before = lab.counters();
            final Map<String, String> slow = lab.traffic("--planes", "1", "--flows", "256", "--packets", "1",
                "--ecn", "ect0", "--pps", "256");
            assertEquals(256L, received(slow, 1), slow.toString());
            assertEquals("0", slow.get("planes.1.ce"), "no mark below the threshold: " + slow);
            assertEquals("256", slow.get("planes.1.ect0"), "ECT(0) crosses the routers unchanged: " + slow);
            assertEquals(0L, ceMarks(before, lab.counters()));

            // above: as fast as the sender goes (thousands a second), ECT(0) gets CE past the threshold's allowance
            before = lab.counters();
            final Map<String, String> fast = lab.traffic("--planes", "1", "--flows", "256", "--packets", "30",
                "--ecn", "ect0", "--pps", "0");
            final long marked = ceMarks(before, lab.counters());
            final long ce = Long.parseLong(fast.get("planes.1.ce"));
            final long unmarked = Long.parseLong(fast.get("planes.1.ect0"));
            final double seconds = Double.parseDouble(fast.get("planes.1.send_seconds"));
            System.out.printf(Locale.ROOT, "linux lab: CE above %d pps per link: %d ECT(0) datagrams in %.2f s, %d " +
                "marked CE, %d not%n", threshold, sent(fast, 1), seconds, ce, unmarked);
            assertEquals(sent(fast, 1), received(fast, 1), "marking loses nothing: " + fast);
            assertEquals(marked, ce, "every CE the receiver read is a router's counted mark");
            assertTrue(ce > 0, "marks above the threshold: " + fast);
            // what passes unmarked is the threshold's allowance: rate x time + burst, per link (and some slack)
            final double allowance = LINKS * (threshold * (seconds + 0.5) + burst);
            assertTrue(unmarked <= allowance, unmarked + " unmarked > allowance " + allowance);

            // not-ECT traffic at the same rate is never marked (the routers would have to drop it instead)
            before = lab.counters();
            final Map<String, String> notEct = lab.traffic("--planes", "1", "--flows", "256", "--packets", "30",
                "--ecn", "not-ect", "--pps", "0");
            assertEquals("0", notEct.get("planes.1.ce"), notEct.toString());
            assertEquals(sent(notEct, 1), Long.parseLong(notEct.get("planes.1.not_ect")), notEct.toString());
            assertEquals(0L, ceMarks(before, lab.counters()));
        }
        finally
        {
            lab.set("p1", "--ce-above", "off");
        }
    }

    @Test
    @Order(5)
    void shouldHoldALinkToItsTbfRate() throws Exception
    {
        lab.set("p1b", "--rate", "4mbit");
        try
        {
            final Map<String, Long> before = lab.counters();
            // about 24 Mbit/s offered into 4 Mbit/s for about a second
            final Map<String, String> sent = lab.traffic("--planes", "1", "--flows", "64", "--packets", "45",
                "--size", "1000", "--pps", "3000");
            final Map<String, Long> after = lab.counters();
            final double rate = Double.parseDouble(sent.get("planes.1.receive_bits_per_second"));
            final long shaped = delta(before, after, "p1b", "down", "rate_limit_dropped_packets");
            System.out.printf(Locale.ROOT, "linux lab: TBF 4 Mbit/s on p1b: received %.2f Mbit/s, %d of %d " +
                "datagrams, the qdisc dropped %d%n", rate / 1e6, received(sent, 1), sent(sent, 1), shaped);
            assertTrue(rate >= 3.0e6 && rate <= 5.0e6, "received " + rate + " bit/s");
            assertEquals(sent(sent, 1) - received(sent, 1), shaped, "every loss is the qdisc's drop: " + sent);
        }
        finally
        {
            lab.set("p1b", "--rate", "off");
        }
    }

    @Test
    @Order(5)
    void shouldCountTheLargePacketsATbfDroppedOnACoreLinkAndNotTheSmallOnes() throws Exception
    {
        // 2 Mbit/s on each of plane 1's core links; about 6 Mbit/s of 1028-byte IP packets offered to each
        lab.set("p1", "--rate", "2mbit");
        try
        {
            Map<String, Long> before = lab.counters();
            final Map<String, String> large = lab.traffic("--planes", "1", "--flows", "64", "--packets", "45",
                "--size", "1000", "--pps", "3000");
            Map<String, Long> after = lab.counters();
            assertEquals("0", large.get("socket_drops"), "the receiver kept up: " + large);
            final long lost = sent(large, 1) - received(large, 1);
            long linkDropped = 0;
            long tbfDropped = 0;
            long arrived = 0;
            for (int k = 1; k <= LINKS; k++)
            {
                final String link = "p1l" + k;
                final long dropped = delta(before, after, link, "ab", "link_dropped_large_packets");
                assertEquals(delta(before, after, link, "ab", "forwarded_large_packets") -
                    delta(before, after, link, "ab", "received_large_packets"), dropped, link + ": left less arrived");
                linkDropped += dropped;
                tbfDropped += delta(before, after, link, "ab", "rate_limit_dropped_packets");
                arrived += delta(before, after, link, "ab", "received_large_packets");
            }
            System.out.printf(Locale.ROOT, "linux lab: TBF 2 Mbit/s on plane 1's core links, 1028-byte packets: %d " +
                "of %d lost; large packets that left router A and never reached router B %d; the qdiscs dropped %d%n",
                lost, sent(large, 1), linkDropped, tbfDropped);
            assertTrue(lost > sent(large, 1) / 4, "the links were over their rate: " + large);
            // read after the flow generator's 0.3 s wait (a TBF queues at most 50 ms), nothing is in flight: every
            // datagram lost is one the far router did not see arrive, and every one it saw reached host B
            assertEquals(lost, linkDropped, "every loss counted on its link: " + large);
            assertEquals(received(large, 1), arrived, "what reached router B reached host B: " + large);
            // the qdiscs' own count takes any packet, router A's few IPv6 neighbour discovery ones too
            assertTrue(linkDropped <= tbfDropped && tbfDropped <= linkDropped + 2, linkDropped + " vs " + tbfDropped);

            // small packets the TBF drops (ACK-sized) are the qdisc's drops but not large ones
            before = lab.counters();
            final Map<String, String> small = lab.traffic("--planes", "1", "--flows", "64", "--packets", "100",
                "--size", "200", "--pps", "0");
            after = lab.counters();
            long smallTbf = 0;
            for (int k = 1; k <= LINKS; k++)
            {
                assertEquals(0L, delta(before, after, "p1l" + k, "ab", "link_dropped_large_packets"), "p1l" + k);
                smallTbf += delta(before, after, "p1l" + k, "ab", "rate_limit_dropped_packets");
            }
            assertTrue(smallTbf > 0 && smallTbf >= sent(small, 1) - received(small, 1),
                "the qdiscs dropped small packets, uncounted as large: " + smallTbf + ", " + small);
        }
        finally
        {
            lab.set("p1", "--rate", "off");
        }
    }

    @Test
    @Order(6)
    void shouldMoveTrafficOffALinkThatIsDownAndBackWhenItIsUp() throws Exception
    {
        lab.link("down", "p1l2");
        Map<String, Long> before = lab.counters();
        final Map<String, String> whileDown = lab.traffic("--planes", "1", "--flows", "256", "--packets", "4",
            "--size", "64");
        Map<String, Long> after = lab.counters();
        assertEquals(sent(whileDown, 1), received(whileDown, 1), "the other links carry it all: " + whileDown);
        assertEquals(0L, delta(before, after, "p1l2", "ab", "forwarded_packets"), "the downed link carries nothing");
        for (final int k : new int[]{1, 3, 4})
        {
            assertTrue(delta(before, after, "p1l" + k, "ab", "forwarded_packets") > 0, "link " + k + " carries traffic");
        }

        lab.link("up", "p1l2");
        before = lab.counters();
        final Map<String, String> backUp = lab.traffic("--planes", "1", "--flows", "256", "--packets", "4",
            "--size", "64");
        after = lab.counters();
        assertEquals(sent(backUp, 1), received(backUp, 1), backUp.toString());
        assertTrue(delta(before, after, "p1l2", "ab", "forwarded_packets") > 0, "the link carries traffic again");

        // a whole plane: the kernel deletes the IPv4 multipath route whose every nexthop went down; up brings it back
        lab.link("down", "p1");
        final Map<String, String> planeDown = lab.traffic("--flows", "16", "--packets", "2", "--size", "64");
        assertEquals(0L, received(planeDown, 1), "plane 1 carries nothing: " + planeDown);
        assertEquals(sent(planeDown, 2), received(planeDown, 2), "plane 2 carries its own: " + planeDown);
        lab.link("up", "p1");
        before = lab.counters();
        final Map<String, String> planeUp = lab.traffic("--planes", "1", "--flows", "256", "--packets", "4",
            "--size", "64");
        after = lab.counters();
        assertEquals(sent(planeUp, 1), received(planeUp, 1), "plane 1 carries traffic again: " + planeUp);
        for (int k = 1; k <= 4; k++)
        {
            assertTrue(delta(before, after, "p1l" + k, "ab", "forwarded_packets") > 0, "link " + k + " is back");
        }
        assertTrue(lab.run("exec", "r1a", "--", "ip", "route").contains("nexthop via"), "the multipath route is back");
    }

    /**
     * {@code balance packet}: one flow's packets take every core link of the plane in turn, evenly, skipping a link that
     * is down, over IPv4 and IPv6; {@code balance flow} puts the flow back on one link (ECMP's hash).
     */
    @Test
    @Order(6)
    void shouldSendOneFlowOverEveryLinkInTurnWhenBalancedPerPacket() throws Exception
    {
        // a plane the lab lacks, or not a number, is refused with a reason (no traceback) and changes nothing
        for (final String[] bad : new String[][]{{"balance", "packet", "--plane", "3"}, {"balance", "packet", "--plane",
            "x"}, {"balance", "packet", "--plane", "1,0"}, {"balance", "packet", "--plane", "-1"}, {"balance", "packet",
            "--plane", "1;true"}, {"traffic", "--planes", "1,9", "--packets", "1"}})
        {
            final LinuxLab.Result refused = LinuxLab.script(lab.id(), bad);
            assertEquals(1, refused.exitCode(), String.join(" ", bad) + ": " + refused.output());
            assertTrue(refused.output().contains("plane numbers 1-2") && !refused.output().contains("Traceback"),
                String.join(" ", bad) + ": " + refused.output());
        }
        assertTrue(lab.run("status").contains("plane 1: balanced per flow"), "nothing changed by a refusal");
        lab.balance("packet");
        try
        {
            for (final String family : new String[]{"4", "6"})
            {
                final Map<String, Long> before = lab.counters();
                final Map<String, String> sent = lab.traffic("--planes", "1", "--flows", "1", "--packets", "400",
                    "--size", "64", "--family", family);
                final Map<String, Long> after = lab.counters();
                assertEquals(sent(sent, 1), received(sent, 1), sent.toString());
                for (int k = 1; k <= 4; k++)
                {
                    final long carried = delta(before, after, "p1l" + k, "ab", "forwarded_packets");
                    assertTrue(carried >= 100 && carried <= 110, "IPv" + family + ": link " + k + " carries a quarter " +
                        "of the one flow (and a few packets of the routers' own): " + carried);
                }
            }
            lab.link("down", "p1l2");
            Map<String, Long> before = lab.counters();
            final Map<String, String> whileDown = lab.traffic("--planes", "1", "--flows", "1", "--packets", "300",
                "--size", "64");
            Map<String, Long> after = lab.counters();
            assertEquals(sent(whileDown, 1), received(whileDown, 1), whileDown.toString());
            assertEquals(0L, delta(before, after, "p1l2", "ab", "forwarded_packets"), "the downed link carries nothing");
            for (final int k : new int[]{1, 3, 4})
            {
                final long carried = delta(before, after, "p1l" + k, "ab", "forwarded_packets");
                assertTrue(carried >= 100 && carried <= 110, "link " + k + " carries a third: " + carried);
            }
            lab.link("up", "p1l2");
            lab.balance("flow");
            before = lab.counters();
            final Map<String, String> hashed = lab.traffic("--planes", "1", "--flows", "1", "--packets", "100",
                "--size", "64");
            after = lab.counters();
            assertEquals(sent(hashed, 1), received(hashed, 1), hashed.toString());
            int used = 0;
            for (int k = 1; k <= 4; k++)
            {
                used += delta(before, after, "p1l" + k, "ab", "forwarded_packets") >= 100 ? 1 : 0;
            }
            assertEquals(1, used, "ECMP again: the flow keeps one link");
            assertTrue(lab.run("status").contains("plane 1: balanced per flow"));
        }
        finally
        {
            lab.link("up", "p1l2");
            lab.balance("flow");
        }
    }

    /**
     * A silent failure: {@code link blackhole} drops every packet on the link, each way, and leaves it up and its
     * nexthop in the routes, so the routers go on hashing flows onto it (unlike {@code link down}, whose nexthop they
     * stop using at once): what it drops is every datagram lost, each counted; {@code restore} ends it.
     */
    @Test
    @Order(6)
    void shouldBlackholeALinkSilentlyKeepingItsRouteAndCountEveryDropUntilRestored() throws Exception
    {
        lab.link("blackhole", "p1l2");
        try
        {
            assertEquals("true", LinuxLab.flat(lab.run("status", "--flat")).get("knobs.p1l2.blackhole"));
            final String route = lab.run("exec", "r1a", "--", "ip", "route", "show", "10.1.2.0/24");
            final String core = lab.status().get("links.p1l2.ends.a.dev");
            assertTrue(route.contains("dev " + core) && !route.contains("linkdown") && !route.contains("dead"),
                "the blackholed link's nexthop stays in the route, alive: " + route);
            Map<String, Long> before = lab.counters();
            final Map<String, String> whileBlackholed = lab.traffic("--planes", "1", "--flows", "256", "--packets",
                "4", "--size", "64");
            Map<String, Long> after = lab.counters();
            final long lost = sent(whileBlackholed, 1) - received(whileBlackholed, 1);
            final long dropped = delta(before, after, "p1l2", "ab", "dropped_packets");
            assertEquals(0L, delta(before, after, "p1l2", "ab", "forwarded_packets"), "nothing passes the blackhole");
            // about a quarter of 256 flows hash onto it; router a's own IPv6 neighbour discovery on the link may go
            // too (a packet or two)
            assertTrue(lost >= 4 * 32 && dropped >= lost && dropped <= lost + 2,
                "every datagram hashed onto it lost, each a counted drop: " + lost + " lost, " + dropped + " dropped; " +
                    whileBlackholed);
            assertEquals("0", whileBlackholed.get("socket_drops"), "the receiver kept up: " + whileBlackholed);

            lab.link("restore", "p1l2");
            assertEquals("false", LinuxLab.flat(lab.run("status", "--flat")).get("knobs.p1l2.blackhole"));
            before = lab.counters();
            final Map<String, String> restored = lab.traffic("--planes", "1", "--flows", "256", "--packets", "4",
                "--size", "64");
            after = lab.counters();
            assertEquals(sent(restored, 1), received(restored, 1), "restored, nothing is lost: " + restored);
            assertTrue(delta(before, after, "p1l2", "ab", "forwarded_packets") > 0, "the link carries traffic again");
            assertEquals(0L, delta(before, after, "p1l2", "ab", "dropped_packets"), "and drops nothing");
            assertRefused(LinuxLab.script(ID, "link", "blackhole", "p9l9"), "lab: no link 'p9l9'");
            assertRefused(LinuxLab.script(ID, "link", "restore", "p9l9"), "lab: no link 'p9l9'");
        }
        finally
        {
            lab.link("restore", "p1l2");
        }
    }

    @Test
    @Order(7)
    void shouldCarryAThirdHostIntoTheSameReceiver() throws Exception
    {
        final Map<String, String> sent = lab.traffic("--from", "c", "--flows", "64", "--packets", "2", "--size", "64");
        for (final int plane : new int[]{1, 2})
        {
            assertTrue(sent(sent, plane) > 0 && sent(sent, plane) == received(sent, plane), sent.toString());
        }
    }

    @Test
    @Order(8)
    void shouldRefuseUnknownLinksAndBadKnobs() throws Exception
    {
        assertRefused(LinuxLab.script(ID, "set", "p9l9", "--drop", "1%"), "lab: no link 'p9l9'");
        assertRefused(LinuxLab.script(ID, "set", "p1", "--drop", "2"), "is not a fraction in [0, 1]");
        assertRefused(LinuxLab.script(ID, "set", "p1", "--ce-above", "lots"), "is not a rate");
        assertRefused(LinuxLab.script(ID, "set", "p1", "--ce-above", "900pps/0"), "the burst is 1 to 100000 packets");
        assertRefused(LinuxLab.script(ID, "set", "p1", "--ce-above", "8mbit/4"), "is not a rate");
        assertRefused(LinuxLab.script(ID, "set", "p1", "--rate", "5000pps"), "is not a rate");
        assertTaken(LinuxLab.script(ID, "up"), "is up already");
        assertRefused(LinuxLab.script("Bad-Id", "status"), "1 to 5 of a-z and 0-9");
        assertRefused(LinuxLab.script("ab\n", "status"), "1 to 5 of a-z and 0-9");
        // a run whose pid is this one's mod 10,000: before, its failed up ran down, and this run's lab was gone
        final IllegalStateException taken = assertThrows(IllegalStateException.class, () -> LinuxLab.up(ID));
        assertTrue(taken.getMessage().contains("is another run's"), taken.getMessage());
        assertEquals(0, LinuxLab.script(ID, "status").exitCode(), "this run's lab is up still");
        assertFalse(namespaces(ID).isEmpty());
    }

    @Test
    @Order(9)
    void shouldLeaveNoNamespaceOrInterfaceBehindOnDown() throws Exception
    {
        assertFalse(namespaces(ID).isEmpty(), "the lab is up before down");
        // a process left running in the lab (a NIC whose test was killed): before, down deleted the namespace's name
        // and the namespace lived on, unnamed, with its veths and the process in it
        final Process left = new ProcessBuilder("ip", "netns", "exec", namespaces(ID).getFirst(), "sleep", "600").start();
        try
        {
            Thread.sleep(200);
            assertTrue(left.isAlive());
            lab.close();
            assertTrue(left.waitFor(10, TimeUnit.SECONDS), "down ended what ran in its namespaces");
        }
        finally
        {
            left.destroyForcibly();
        }
        assertEquals(List.of(), namespaces(ID), "down removed every namespace of the instance");
        assertRootNamespaceUntouched();
        final LinuxLab.Result again = LinuxLab.script(ID, "down");
        assertEquals(0, again.exitCode(), again.output());
        assertTrue(again.output().contains("nothing to remove"), again.output());
    }

    @Test
    @Order(10)
    void shouldRemoveAHalfBuiltLabAndNeverTouchANamespaceItDidNotMake() throws Exception
    {
        final String id = KILLED_ID;
        // a foreign namespace that happens to carry the lab's name: up refuses and leaves it be
        final String foreign = "spl" + id + "-r1b";
        command("ip", "netns", "add", foreign);
        try
        {
            assertTaken(LinuxLab.script(id, "up"), foreign + " exist and are not this lab's");
            assertEquals(List.of(foreign), namespaces(id), "up made nothing and left the foreign one");
            assertEquals(0, LinuxLab.script(id, "down").exitCode());
            assertEquals(List.of(foreign), namespaces(id), "down leaves what it did not make");
        }
        finally
        {
            command("ip", "netns", "del", foreign);
        }

        // an up stopped right after it claimed the id (an empty state file): up refuses, down removes the claim,
        // but not while a live up holds its lock
        final Path claim = Path.of("/run/spraynic-lab", id, "state.json");
        Files.createDirectories(claim.getParent());
        Files.createFile(claim);
        assertTaken(LinuxLab.script(id, "up"), "is up already");
        final Process holder = new ProcessBuilder("flock", "--close", claim.toString(), "sleep", "30").start();
        try
        {
            Thread.sleep(300);
            assertRefused(LinuxLab.script(id, "down"), "an up is under way");
            assertTrue(Files.exists(claim), "the claim of an up at work is left");
        }
        finally
        {
            holder.descendants().forEach(ProcessHandle::destroyForcibly);
            holder.destroyForcibly().waitFor();
        }
        final LinuxLab.Result unclaim = LinuxLab.script(id, "down");
        assertEquals(0, unclaim.exitCode(), unclaim.output());
        assertTrue(unclaim.output().contains("removed an unfinished claim"), unclaim.output());
        assertFalse(Files.exists(claim));

        // an up killed half-way: down removes what the state file says it made
        final Process up = new ProcessBuilder("/usr/bin/python3", LinuxLab.SCRIPT.toString(), "--id", id, "up")
            .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        try
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (namespaces(id).size() < 3 && up.isAlive() && System.nanoTime() < deadline)
            {
                Thread.sleep(20);
            }
            up.destroyForcibly().waitFor();
            assertFalse(namespaces(id).isEmpty(), "killed with namespaces made");
        }
        finally
        {
            final LinuxLab.Result down = LinuxLab.script(id, "down");
            assertEquals(0, down.exitCode(), down.output());
        }
        assertEquals(List.of(), namespaces(id), "down after a killed up removed everything");
        assertRootNamespaceUntouched();
    }

    // ---- helpers

    private static long sent(final Map<String, String> traffic, final int plane)
    {
        return Long.parseLong(traffic.get("planes." + plane + ".sent"));
    }

    private static long received(final Map<String, String> traffic, final int plane)
    {
        return Long.parseLong(traffic.get("planes." + plane + ".received"));
    }

    private static long delta(final Map<String, Long> before, final Map<String, Long> after, final String link,
        final String direction, final String counter)
    {
        final String key = "links." + link + ".directions." + direction + "." + counter;
        assertTrue(after.containsKey(key), key + " in " + after.keySet());
        return after.get(key) - before.getOrDefault(key, 0L);
    }

    private static long ceMarks(final Map<String, Long> before, final Map<String, Long> after)
    {
        long marks = 0;
        for (int k = 1; k <= LINKS; k++)
        {
            marks += delta(before, after, "p1l" + k, "ab", "ce_marked_packets");
        }
        return marks;
    }

    /** Refused because the id is another run's: the status on which a caller must not run down. */
    private static void assertTaken(final LinuxLab.Result result, final String reason)
    {
        assertEquals(LinuxLab.ID_TAKEN_STATUS, result.exitCode(), result.output());
        assertTrue(result.output().contains(reason), reason + " in " + result.output());
    }

    private static void assertRefused(final LinuxLab.Result result, final String reason)
    {
        assertEquals(1, result.exitCode(), result.output());
        assertTrue(result.output().contains(reason), reason + " in " + result.output());
    }

    /**
     * The lab makes every interface inside its own namespaces: none of its names ever shows up in the test's, and the
     * interfaces there before are there still (other tests on this machine may add theirs meanwhile, so no equality).
     */
    private static void assertRootNamespaceUntouched() throws Exception
    {
        final List<String> now = rootLinks();
        assertTrue(now.stream().noneMatch(name -> name.startsWith("spl" + ID) || name.startsWith("spl" + KILLED_ID)),
            now.toString());
        assertTrue(now.contains("lo") &&
            rootLinksBefore.stream().filter(name -> !name.startsWith("sp")).allMatch(now::contains),
            "before " + rootLinksBefore + ", now " + now);
    }

    private static List<String> namespaces(final String id) throws Exception
    {
        final List<String> own = new ArrayList<>();
        for (final String line : command("ip", "netns", "list").split("\n"))
        {
            if (line.startsWith("spl" + id + "-"))
            {
                own.add(line.split(" ")[0]);
            }
        }
        return own;
    }

    /** The interfaces of the namespace the tests run in, by name. */
    private static List<String> rootLinks() throws Exception
    {
        final List<String> names = new ArrayList<>();
        for (final String line : command("ip", "-o", "link", "show").split("\n"))
        {
            final String[] fields = line.split(": ");
            if (fields.length > 1)
            {
                names.add(fields[1].split("@")[0]);
            }
        }
        return names.stream().sorted().toList();
    }

    private static String command(final String... command) throws Exception
    {
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS), String.join(" ", command));
        assertEquals(0, p.exitValue(), String.join(" ", command) + ": " + out);
        return out;
    }
}
