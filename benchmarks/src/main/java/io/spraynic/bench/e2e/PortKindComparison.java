package io.spraynic.bench.e2e;

import io.spraynic.apps.exchange.PeerExchange;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.datapath.nic.NicConnection;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PmdConfigs;
import io.spraynic.pmd.PortConfig;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;

/**
 * One run, one JVM, the same verified transfer (two embedded NICs, {@link PeerExchange}: {@code bytes} written each
 * way in 64 KiB RDMA WRITEs, both directions at once) in spray and in RoCEv2 mode over four kinds of port, in
 * interleaved rounds so that a loaded host's drift falls on all of them alike:
 * <ul>
 *     <li>{@code net_ring}: a crossed DPDK ring pair, no kernel at all (the reference);</li>
 *     <li>{@code net_af_packet}: each NIC on one end of a veth pair (AF_PACKET sockets);</li>
 *     <li>{@code net_af_xdp}: each NIC on one end of another veth pair (AF_XDP sockets, native XDP on veth);</li>
 *     <li>{@code udp}: kernel UDP sockets on loopback, 127.0.0.1 and 127.0.0.2 (no DPDK for these two NICs);</li>
 *     <li>{@code udp6}: the same over IPv6, both NICs on {@code ::1} (loopback's one IPv6 address) on two UDP
 *     ports, each sending to the other's.</li>
 * </ul>
 * Arguments: {@code AFP_A AFP_B AFX_A AFX_B [bytes] [rounds] [kinds]}: the veth ends, created beforehand (see
 * {@code benchmarks/port-kinds.sh}, which creates and removes them); {@code kinds}, comma-separated, a subset
 * to run ({@code net_ring} always runs: the reference). Needs root for the veth PMDs. Prints one
 * line per transfer and a summary with each kind's median goodput and its ratio to {@code net_ring}.
 */
public final class PortKindComparison
{
    private static final String[] KINDS = {"net_ring", "net_af_packet", "net_af_xdp", "udp", "udp6"};
    /**
     * The {@code net_af_xdp} preset's data room: the PMD registers the mbuf pool as its UMEM, and the kernel refuses
     * (XDP_UMEM_REG: EINVAL, "Failed to create umem") a chunk, one mbuf, over a 4 KiB page, which the default 4 KiB
     * MTU mbufs (4,672 B each) are. One pool for every kind, so all carry the same 2 KiB frames (the path MTU is 1024).
     */
    private static final int AF_XDP_DATA_ROOM = 2176;

    private PortKindComparison()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        if (args.length < 4)
        {
            System.err.println("usage: PortKindComparison AFP_A AFP_B AFX_A AFX_B [bytes] [rounds] [kinds]");
            System.exit(2);
        }
        final long bytes = args.length > 4 ? Long.parseLong(args[4]) : 16L << 20;
        final int rounds = args.length > 5 ? Integer.parseInt(args[5]) : 3;
        final List<String> kinds = new ArrayList<>(List.of(KINDS));
        if (args.length > 6)
        {
            final List<String> chosen = List.of(args[6].split(","));
            kinds.removeIf(kind -> !kind.equals("net_ring") && !chosen.contains(kind));
        }
        final List<PortConfig> ports = new ArrayList<>(List.of(
            // the veths' MTU, not the ring pairs' 4 KiB default: 2 KiB mbufs (AF_XDP_DATA_ROOM) for every kind
            PortConfig.ringPair("ring_a", "ring_b").withDescriptors(1024, 1024).withMtu(PortConfig.DEFAULT_MTU),
            PortConfig.ringPair("ring_b", "ring_a").withDescriptors(1024, 1024).withMtu(PortConfig.DEFAULT_MTU)));
        if (kinds.contains("net_af_packet"))
        {
            ports.add(PortConfig.vdev("afp_a", "net_af_packet0", "iface=" + args[0] + ",qpairs=1").withPromiscuous(true));
            ports.add(PortConfig.vdev("afp_b", "net_af_packet1", "iface=" + args[1] + ",qpairs=1").withPromiscuous(true));
        }
        if (kinds.contains("net_af_xdp"))
        {
            ports.add(PortConfig.vdev("afx_a", "net_af_xdp0", "iface=" + args[2] + ",start_queue=0,queue_count=1")
                .withPromiscuous(true));
            ports.add(PortConfig.vdev("afx_b", "net_af_xdp1", "iface=" + args[3] + ",start_queue=0,queue_count=1")
                .withPromiscuous(true));
        }
        final NicConfig config = NicConfig.of(EalConfig.DEFAULT.withFilePrefix("spraynic-kinds-" + ProcessHandle.current().pid())
            .withLogLevels(List.of("lib.eal:warning")), MempoolConfig.DEFAULT.withMbufs(32767).withDataRoom(AF_XDP_DATA_ROOM),
            ports);
        final Map<String, List<Double>> gbps = new LinkedHashMap<>();
        final Path dir = Files.createTempDirectory("spraynic-kinds");
        try (DpdkNic dpdk = DpdkNic.start(config))
        {
            for (int round = 0; round < rounds; round++)
            {
                for (final NicConnection.Kind mode : NicConnection.Kind.values())
                {
                    for (final String kind : kinds)
                    {
                        final double rate = transfer(dpdk, kind, mode, bytes, dir.resolve(kind + "-" + mode + "-" + round));
                        gbps.computeIfAbsent(kind + " " + mode.name().toLowerCase(Locale.ROOT), k -> new ArrayList<>()).add(rate);
                        System.out.printf(Locale.ROOT, "round %d %-14s %-6s %8.3f Gb/s each way%n", round, kind,
                            mode.name().toLowerCase(Locale.ROOT), rate);
                    }
                }
            }
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "%-22s %10s %10s %s%n", "port mode", "median", "÷ net_ring", "rounds (Gb/s each way)");
        for (final Map.Entry<String, List<Double>> entry : gbps.entrySet())
        {
            final String mode = entry.getKey().substring(entry.getKey().indexOf(' ') + 1);
            final double median = median(entry.getValue());
            final double ring = median(gbps.get("net_ring " + mode));
            System.out.printf(Locale.ROOT, "%-22s %10.3f %10.2f %s%n", entry.getKey(), median, median / ring,
                entry.getValue().stream().map(v -> String.format(Locale.ROOT, "%.3f", v)).toList());
        }
    }

    private static double median(final List<Double> values)
    {
        final double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return sorted.length % 2 == 1 ? sorted[sorted.length / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }

    /** @return goodput each way, Gb/s, of one verified transfer; a failed one ends the run. */
    private static double transfer(final DpdkNic dpdk, final String kind, final NicConnection.Kind mode, final long bytes,
        final Path directory) throws Exception
    {
        Files.createDirectories(directory);
        final EmbeddedNic[] nics = new EmbeddedNic[2];
        final CountersFile[] counters = new CountersFile[2];
        final int udpPort = 20_000 + new SplittableRandom().nextInt(40_000);
        try
        {
            for (int h = 0; h < 2; h++)
            {
                counters[h] = CountersFile.create(directory, "nic" + h, 4096);
                final EmbeddedNicConfig nic = new EmbeddedNicConfig().mode(mode).workers(1).planes(1)
                    .connections(8, 4, 1024).sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig)
                    // RC gives up after 8 ACK time-outs: make them 1 s, so a starved host measures slowness, not failure
                    .rocevRetry(io.spraynic.datapath.transport.rocev2.RcConnectionAttributes.ackTimeoutNanos(18), 7);
                if (kind.equals("udp"))
                {
                    final String ip = "127.0.0." + (h + 1);
                    nics[h] = EmbeddedNic.startOnDpdk(PmdConfigs.preset("udp", Map.of("ip", ip, "port",
                        Integer.toString(udpPort), "peer_port", Integer.toString(udpPort))), nic, counters[h], UnaryOperator.identity());
                }
                else if (kind.equals("udp6"))
                {
                    nics[h] = EmbeddedNic.startOnDpdk(PmdConfigs.preset("udp", Map.of("ip", "::1", "port",
                        Integer.toString(udpPort + h), "peer_port", Integer.toString(udpPort + 1 - h))), nic, counters[h],
                        UnaryOperator.identity());
                }
                else
                {
                    final String port = switch (kind)
                    {
                        case "net_ring" -> "ring_";
                        case "net_af_packet" -> "afp_";
                        default -> "afx_";
                    } + (h == 0 ? "a" : "b");
                    nic.local(0, 0x0A63_0001 + h, 0x0200_0A63_0001L + h);
                    nics[h] = EmbeddedNic.start(nic, new PacketPort[][]{{dpdk.packetPort(port, 0)}}, counters[h]);
                }
            }
            final PeerExchange.Pair both = PeerExchange.runBoth(nics[0], nics[1], directory, bytes, 64 * 1024,
                Duration.ofSeconds(300));
            final PeerExchange.Result client = both.client();
            final PeerExchange.Result serverResult = both.server();
            nics[0] = null;
            nics[1] = null;
            if (!client.verified() || !serverResult.verified())
            {
                throw new IllegalStateException(kind + " " + mode + ": not verified: " + client.toJson() + " " +
                    serverResult.toJson());
            }
            return bytes * 8.0 / Math.max(client.nanos(), serverResult.nanos());
        }
        finally
        {
            for (int h = 0; h < 2; h++)
            {
                if (null != nics[h])
                {
                    nics[h].close();
                }
                if (null != counters[h])
                {
                    counters[h].close();
                }
            }
        }
    }
}
