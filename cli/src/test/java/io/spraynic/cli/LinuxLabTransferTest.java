package io.spraynic.cli;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.spraynic.cli.CliTestSupport.javaCommand;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A first spray transfer across the Linux ECMP lab, with what the NIC accepts today: a {@code spraynic nic} serving
 * in host B and a {@code spraynic transfer} visiting it from host A, each on {@code net_af_packet} over its host's
 * plane-1 interface, with kernel routers and four equal-cost links between them (see {@link #PLANES}). Each NIC is
 * given its address with its prefix and its gateway ({@code --ip 10.1.1.2/24 --gateway 10.1.1.1}) and the visitor
 * only B's addresses: the NICs resolve their gateways by ARP and send to them (the lab still gives the routers
 * permanent neighbour entries for the hosts, {@code --static-neighbours}). The transfer
 * verifies every byte, the routers' counters show it crossing the core links both ways, and B's router took every
 * frame B sent (addressed right); the packets per link are reported. Then the same with 1 % random loss on every core
 * link. Both ends allow 64 paths ({@link #PATHS}), and
 * each direction's packets cross all four links (64 flows leave a link empty with a probability of 4 x (3/4)^64, about
 * 4e-8). Not asserted: that every link is within a quarter of an even share (issue 14's goal): the routers hash the 64
 * source ports like 64 random flows, and 64 random flows over 4 links land within 12..20 a link only 49 % of the time
 * (exactly, and measured with {@code ip route get} on the lab's routers over every block of 64 consecutive ports).
 * Until both ends allowed 64 paths the connection had 8 (the serving NIC's default), 8 flows over 4 links: 1 to 4
 * per link.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class LinuxLabTransferTest
{
    private static final long PID = ProcessHandle.current().pid();
    private static final long MAX_ARP_FRAMES = 8;
    private static final String ID = "x" + PID % 10_000;
    private static final int LINKS = 4;
    private static final long SIZE = 8 << 20;
    /** Spray paths, on both ends: a connection has the smaller of its ends' limits (PROTOCOL.md S9.1). */
    private static final String PATHS = "64";
    /**
     * Plane 1 only. Over both planes the transfer also completes, verified, but B's plane-2 frames never leave B's
     * segment: the CONNECT carries A's own MAC per plane and B sends plane 2 to it, where plane 1 answers the MAC the
     * CONNECT came from (the router's); r2b drops every one (measured: "B sent 4812 frames into plane 2, its router
     * took 0"), and A's paths then concentrate on a few links. That is for the NIC's neighbour resolution to fix.
     */
    private static final int PLANES = 1;
    private static LinuxLab lab;

    @BeforeAll
    static void up() throws Exception
    {
        Assumptions.assumeTrue("root".equals(System.getProperty("user.name")),
            "SKIPPED: network namespaces, veth, nftables and AF_PACKET need root");
        for (final String tool : List.of("/usr/bin/python3", "/usr/sbin/nft", "/usr/sbin/tc", "/usr/sbin/ip"))
        {
            Assumptions.assumeTrue(Files.isExecutable(Path.of(tool)), "SKIPPED: " + tool + " is missing");
        }
        lab = LinuxLab.up(ID, "--host-stack", "none", "--static-neighbours", "--planes", Integer.toString(PLANES));
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
    void shouldCompleteVerifiedSprayTransfersOverEveryEcmpLinkCleanAndAtOnePercentLoss(@TempDir final Path dir)
        throws Exception
    {
        final Map<String, String> status = lab.status();
        final Path served = Files.createDirectory(dir.resolve("served"));
        final Path runDir = Files.createDirectory(dir.resolve("run"));
        final Path nicOut = dir.resolve("nic.out");
        final List<String> serve = new ArrayList<>(List.of("ip", "netns", "exec", lab.netns("b")));
        serve.addAll(javaCommand(List.of("nic", "--config", config(dir, "b", status).toString(), "--mode", "spray",
            "--ip", addresses(status, "b"), "--gateway", gateways(status, "b"), "--expose", Long.toString(SIZE), "--paths", PATHS, "--exchange",
            served.toString(), "--seconds", "250")));
        final ProcessBuilder nicBuilder = new ProcessBuilder(serve).redirectErrorStream(true)
            .redirectOutput(nicOut.toFile());
        nicBuilder.environment().put("SPRAYNIC_RUN_DIR", runDir.toString());
        final Process nic = nicBuilder.start();
        try
        {
            final Path addr = served.resolve("nic.addr");
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (!Files.exists(addr) && nic.isAlive() && System.nanoTime() < deadline)
            {
                Thread.sleep(50);
            }
            assertTrue(Files.exists(addr), "the serving NIC published its address: " + Files.readString(nicOut));
            final String toA = Files.readString(addr); // B's addresses, nothing else

            for (final String drop : List.of("0", "1%"))
            {
                lab.set("core", "--drop", drop);
                final Path visitDir = Files.createDirectory(dir.resolve("visit-" + drop.replace("%", "pct")));
                Files.writeString(visitDir.resolve("nic.addr.tmp"), toA);
                Files.move(visitDir.resolve("nic.addr.tmp"), visitDir.resolve("nic.addr"), StandardCopyOption.ATOMIC_MOVE);
                final Map<String, Long> before = lab.counters();
                final List<String> visit = new ArrayList<>(List.of("ip", "netns", "exec", lab.netns("a")));
                visit.addAll(javaCommand(List.of("transfer", "--config", config(dir, "a", status).toString(), "--mode", "spray",
                    "--peer-kind", "nic", "--ip", addresses(status, "a"), "--gateway", gateways(status, "a"), "--paths", PATHS, "--exchange",
                    visitDir.toString(), "--size", Long.toString(SIZE), "--timeout", "90", "--json")));
                final Path clientOut = dir.resolve("client-" + visitDir.getFileName() + ".out");
                final ProcessBuilder clientBuilder = new ProcessBuilder(visit).redirectErrorStream(true)
                    .redirectOutput(clientOut.toFile());
                clientBuilder.environment().put("SPRAYNIC_RUN_DIR", runDir.toString());
                final Process client = clientBuilder.start();
                try
                {
                    final boolean done = client.waitFor(150, TimeUnit.SECONDS);
                    final String out = Files.readString(clientOut);
                    assertTrue(done, "the visit ended in time: " + out);
                    assertEquals(0, client.exitValue(), out + " nic: " + Files.readString(nicOut));
                    assertTrue(out.contains("\"verified\":true"), out);
                    final Map<String, Long> after = lab.counters();
                    report(drop, out, before, after);
                }
                finally
                {
                    client.destroyForcibly();
                }
            }
        }
        finally
        {
            nic.destroyForcibly();
            lab.set("core", "--drop", "0");
        }
    }

    private static void report(final String drop, final String visit, final Map<String, Long> before,
        final Map<String, Long> after)
    {
        final StringBuilder text = new StringBuilder();
        long dropped = 0;
        for (int plane = 1; plane <= PLANES; plane++)
        {
            for (final String direction : List.of("ab", "ba"))
            {
                final long[] perLink = new long[LINKS];
                long packets = 0;
                long bytes = 0;
                int used = 0;
                for (int k = 1; k <= LINKS; k++)
                {
                    final String key = "links.p" + plane + "l" + k + ".directions." + direction + ".";
                    perLink[k - 1] = delta(before, after, key + "forwarded_packets");
                    bytes += delta(before, after, key + "forwarded_bytes");
                    dropped += delta(before, after, key + "dropped_packets");
                    packets += perLink[k - 1];
                    used += perLink[k - 1] > 0 ? 1 : 0;
                }
                double spread = 0;
                for (final long count : perLink)
                {
                    spread = Math.max(spread, Math.abs(count - packets / (double)LINKS) / (packets / (double)LINKS));
                }
                text.append(String.format(Locale.ROOT, "plane %d %s %s, %d of %d links (largest deviation %.0f %%); ",
                    plane, direction, Arrays.toString(perLink), used, LINKS, 100 * spread));
                // the WRITEs cross from A to B, the READ responses back: each the whole 8 MiB, through the routers
                assertTrue(bytes >= SIZE, "plane " + plane + " " + direction + " carried the transfer: " + text);
                assertEquals(LINKS, used, "64 paths crossed every link of plane " + plane + " " + direction + ": " + text);
            }
            // what B's NIC sent towards its router, and what the router took in: all of it, addressed to its MAC
            final String key = "links.p" + plane + "b.directions.up.";
            final long sentByB = delta(before, after, key + "tx_packets");
            final long taken = delta(before, after, key + "forwarded_packets");
            text.append(String.format(Locale.ROOT, "B sent %d frames into plane %d, its router took %d; ", sentByB,
                plane, taken));
            // the difference is ARP, which a router takes in but does not forward: B's NIC asks its gateway again
            // when the entry goes stale (30 s), a frame or two a run
            assertTrue(sentByB - taken >= 0 && sentByB - taken <= MAX_ARP_FRAMES, text.toString());
        }
        System.out.println("linux lab spray transfer, drop " + drop + ": " + visit.strip() + "; routers dropped " +
            dropped + "; packets per core link: " + text);
        assertEquals("0".equals(drop), dropped == 0, "the routers dropped packets exactly when told to: " + dropped);
    }

    private static long delta(final Map<String, Long> before, final Map<String, Long> after, final String key)
    {
        return after.get(key) - before.getOrDefault(key, 0L);
    }

    /** The host's address with its prefix in each plane the NIC uses, comma-separated (--ip). */
    private static String addresses(final Map<String, String> status, final String host)
    {
        return perPlane(status, host, "ipv4");
    }

    /** The host's gateway in each plane the NIC uses, comma-separated (--gateway). */
    private static String gateways(final Map<String, String> status, final String host)
    {
        return perPlane(status, host, "gateway");
    }

    private static String perPlane(final Map<String, String> status, final String host, final String key)
    {
        final List<String> values = new ArrayList<>();
        for (int plane = 1; plane <= PLANES; plane++)
        {
            values.add(status.get("hosts." + host + ".planes." + plane + "." + key));
        }
        return String.join(",", values);
    }

    /**
     * A net_af_packet port per plane, on the host's plane interfaces; socket rings of 8192 frames. The
     * parameters are those {@code spraynic transfer} fills (file_prefix, queues).
     */
    private static Path config(final Path dir, final String host, final Map<String, String> status) throws IOException
    {
        final StringBuilder toml = new StringBuilder(String.join("\n", "[eal]", "lcores = \"0\"", "no_huge = true",
            "memory_mb = 512", "no_pci = true", "file_prefix = \"${file_prefix:-spraynic-lab-" + host + "-" + ID + "}\"", ""));
        for (int plane = 1; plane <= PLANES; plane++)
        {
            toml.append(String.join("\n", "", "[[port]]", "name = \"afp" + (plane - 1) + "\"", "kind = \"vdev\"",
                "device = \"net_af_packet" + (plane - 1) + "\"",
                "args = { iface = \"" + status.get("hosts." + host + ".planes." + plane + ".dev") +
                    "\", qpairs = \"${queues:-1}\", blocksz = 4096, framesz = 2048, framecnt = 8192 }",
                "rx_queues = ${queues:-1}", "tx_queues = ${queues:-1}", "promiscuous = true", ""));
        }
        return Files.writeString(dir.resolve(host + ".toml"), toml.toString());
    }
}
