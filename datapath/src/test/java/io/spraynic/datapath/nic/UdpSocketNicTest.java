package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.BulkTransfer;
import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.telemetry.CountersFileReader;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.pmd.NicConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two embedded NICs in one JVM on kernel UDP sockets over loopback (NIC h's plane p at 127.1p.0.h+1), brought up
 * from {@code kind = "udp"} pmd-configs as {@code spraynic nic} does: no EAL, no hugepages, no root; verified
 * spray (with loss) and RoCEv2 transfers, and CE marks carried through the kernel to the receiving engine.
 * <p>
 * The same over IPv6 on {@code ::1}, the one IPv6 loopback address: both NICs have it on both planes, told apart
 * by their UDP ports (NIC h's plane p listens on {@code udpPort + 2h + p} and sends to the other's), so their
 * engines see 62-byte Ethernet/IPv6/UDP frames as on a DPDK port.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class UdpSocketNicTest
{
    private static final int PLANES = 2;

    @TempDir
    Path dir;

    private final int udpPort = 20_000 + new SplittableRandom().nextInt(40_000);
    private boolean ipv6;

    private String address(final int nic, final int plane)
    {
        return ipv6 ? "::1" : "127." + (10 + plane) + ".0." + (nic + 1);
    }

    /** @return the UDP port NIC {@code nic} listens on, on {@code plane}: one for all on IPv4 (distinct addresses). */
    private int listenPort(final int nic, final int plane)
    {
        return ipv6 ? udpPort + 2 * nic + plane : udpPort;
    }

    private NicConfig pmdConfig(final int nic)
    {
        final StringBuilder toml = new StringBuilder("[eal]\nlcores = \"0\"\nno_huge = true\nno_pci = true\n");
        for (int p = 0; p < PLANES; p++)
        {
            toml.append("[[port]]\nname = \"udp").append(p).append("\"\nkind = \"udp\"\ndevice = \"").append(address(nic, p))
                .append("\"\nargs = { port = \"").append(listenPort(nic, p)).append("\", peer_port = \"")
                .append(listenPort(1 - nic, p))
                .append("\", source_ports = \"8\" }\n");
        }
        return NicConfig.parse(toml.toString(), "udp-nic-" + nic);
    }

    private EmbeddedNic start(final int nic, final NicConnection.Kind mode, final CountersFile counters,
        final UnaryOperator<PacketPort> wrap)
    {
        final EmbeddedNicConfig config = new EmbeddedNicConfig().mode(mode).workers(1).planes(PLANES)
            .connections(8, 4, 1024).sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig)
            // RC fails after 8 time-outs without progress: 67 ms each by default, less than a loaded CI host (two
            // NICs' threads on two shared cores) may starve a poll thread; 1 s each here, as TransferUdpTest does
            .rocevRetry(io.spraynic.datapath.transport.rocev2.RcConnectionAttributes.ackTimeoutNanos(18), 7);
        return EmbeddedNic.startOnDpdk(pmdConfig(nic), config, counters, wrap);
    }

    private static void assertNoDpdkLoaded() throws IOException
    {
        final String maps = Files.readString(Path.of("/proc/self/maps"));
        assertFalse(maps.contains("librte_") || maps.contains("libspraynic_shim"),
            "a NIC on UDP sockets loads no DPDK library at all (so no EAL, hugepages or root)");
    }

    private void transfer(final NicConnection.Kind mode, final double lossRate) throws Exception
    {
        transfer(mode, lossRate, false);
    }

    private void transfer(final NicConnection.Kind mode, final double lossRate, final boolean hostile) throws Exception
    {
        final List<FaultInjectingPacketPort> lossy = new CopyOnWriteArrayList<>();
        final CountersFile[] counters = new CountersFile[2];
        final EmbeddedNic[] nics = new EmbeddedNic[2];
        try
        {
            for (int h = 0; h < 2; h++)
            {
                counters[h] = CountersFile.create(dir, "udp-" + mode + h, 8192);
                final long seed = 31L * h + 7;
                nics[h] = start(h, mode, counters[h], port ->
                {
                    if (lossRate == 0)
                    {
                        return port;
                    }
                    final FaultInjectingPacketPort faulty = new FaultInjectingPacketPort(port, seed + lossy.size(), lossRate,
                        0, 0, FaultInjectingPacketPort.Selector.ALL);
                    lossy.add(faulty);
                    return faulty;
                });
                for (int p = 0; p < PLANES; p++)
                {
                    assertEquals(ipv6 ? 0 : io.spraynic.datapath.wire.Wire.parseIpv4(address(h, p)), nics[h].localIpv4(p));
                    assertEquals(address(h, p), nics[h].localAddressText(p));
                }
            }
            assertNoDpdkLoaded();
            if (hostile)
            {
                attack(counters[1]);
            }
            final VerifiedExchange.Pair both = VerifiedExchange.runBoth(nics[0], nics[1], 8L << 20, 64 * 1024,
                Duration.ofSeconds(90));
            final VerifiedExchange.Result client = both.client();
            final VerifiedExchange.Result serverResult = both.server();
            nics[0] = null;
            nics[1] = null;
            assertTrue(client.verified(), client.describe());
            assertTrue(serverResult.verified(), serverResult.describe());
            assertEquals(8L << 20, serverResult.bytesEachWay());
            if (lossRate > 0)
            {
                assertTrue(lossy.stream().mapToLong(FaultInjectingPacketPort::dropped).sum() > 0, "loss was injected");
            }
            assertNoDpdkLoaded();
        }
        finally
        {
            closeAll(nics, counters);
        }
    }

    @Test
    void shouldTransferVerifiedSprayBothWaysOverUdpSocketsWithOnePercentLoss() throws Exception
    {
        transfer(NicConnection.Kind.SPRAY, 0.01);
    }

    /**
     * A plain socket on another loopback address throws random bytes, truncated BTHs and well-formed BTHs with
     * opcodes nobody registered at the server's port: the port drops what is no BTH, the parser what is no
     * packet of the transport, each counted by reason; then the transfer runs, verified.
     */
    @Test
    void shouldCountHostileDatagramsByReasonAndStillTransferVerified() throws Exception
    {
        transfer(NicConnection.Kind.SPRAY, 0, true);
    }

    private void attack(final CountersFile server) throws Exception
    {
        final int each = 200;
        final java.net.InetSocketAddress target = new java.net.InetSocketAddress(
            java.net.InetAddress.getByName(address(1, 0)), listenPort(1, 0));
        final SplittableRandom random = new SplittableRandom(11);
        try (java.net.DatagramSocket attacker = new java.net.DatagramSocket(
            new java.net.InetSocketAddress(java.net.InetAddress.getByName(ipv6 ? "::1" : "127.0.0.99"), 0)))
        {
            final byte[] bytes = new byte[1500];
            for (int i = 0; i < each; i++)
            {
                random.nextBytes(bytes);
                bytes[1] = (byte)(bytes[1] | 0x01); // transport version 1: no BTH of ours
                attacker.send(new java.net.DatagramPacket(bytes, 16 + random.nextInt(1400), target));
                attacker.send(new java.net.DatagramPacket(bytes, random.nextInt(16), target)); // truncated BTH
                random.nextBytes(bytes);
                bytes[0] = (byte)0xFF; // a manufacturer opcode nobody registered
                bytes[1] = 0;
                attacker.send(new java.net.DatagramPacket(bytes, 16 + random.nextInt(1000), target));
                if (i % 50 == 49)
                {
                    Thread.sleep(5); // let the poll thread keep up: what overflows the socket is counted, not judged
                }
            }
        }
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        long notBth = 0;
        long shorter = 0;
        long unknownOpcode = 0;
        long kernelDrops = 0;
        while (System.nanoTime() < deadline)
        {
            notBth = sumCounters(server, "rx drops (not a BTH");
            shorter = sumCounters(server, "rx drops (datagram shorter");
            // random bytes after the BTH: the ICRC check refuses them first (malformed_bad_icrc)
            unknownOpcode = sumCounters(server, "parse malformed_");
            kernelDrops = sumCounters(server, "rx dropped by the kernel");
            if (notBth + shorter + unknownOpcode + kernelDrops >= 3L * each)
            {
                break;
            }
            Thread.sleep(50);
        }
        assertEquals(3L * each, notBth + shorter + unknownOpcode + kernelDrops,
            "every hostile datagram refused and counted: " + notBth + " not BTH, " + shorter + " short, " + unknownOpcode +
            " malformed for the parser, " + kernelDrops + " dropped by the kernel");
        assertTrue(notBth > 0 && shorter > 0 && unknownOpcode > 0);
    }

    @Test
    void shouldTransferVerifiedRocev2BothWaysOverUdpSockets() throws Exception
    {
        transfer(NicConnection.Kind.ROCEV2, 0);
    }

    @Test
    void shouldTransferVerifiedSprayBothWaysOverIpv6UdpSocketsWithOnePercentLoss() throws Exception
    {
        ipv6 = true;
        transfer(NicConnection.Kind.SPRAY, 0.01);
    }

    @Test
    void shouldTransferVerifiedRocev2BothWaysOverIpv6UdpSockets() throws Exception
    {
        ipv6 = true;
        transfer(NicConnection.Kind.ROCEV2, 0);
    }

    /** {@link #shouldCountHostileDatagramsByReasonAndStillTransferVerified} on ::1, the attacker a third socket. */
    @Test
    void shouldCountHostileIpv6DatagramsByReasonAndStillTransferVerified() throws Exception
    {
        ipv6 = true;
        transfer(NicConnection.Kind.SPRAY, 0, true);
    }

    /**
     * A plane and its port are of one family: an IPv6 plane address on an IPv4 port, or the other way round, is
     * refused before any socket opens, naming both; an IPv6 NIC asked to connect to an IPv4 peer refuses it too.
     */
    @Test
    void shouldRefuseMixedAddressFamiliesClearly() throws Exception
    {
        try (CountersFile counters = CountersFile.create(dir, "udp-mixed", 8192))
        {
            final EmbeddedNicConfig ipv6Plane = new EmbeddedNicConfig().mode(NicConnection.Kind.SPRAY).planes(PLANES)
                .sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig);
            for (int p = 0; p < PLANES; p++)
            {
                ipv6Plane.local(p, io.spraynic.pmd.InterfaceAddress.parse("fd00:1::" + (p + 1), ""), 0);
            }
            final IllegalArgumentException v6OnV4 = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> EmbeddedNic.startOnDpdk(pmdConfig(0), ipv6Plane, counters,
                    UnaryOperator.identity()));
            assertTrue(v6OnV4.getMessage().contains("IPv6 address fd00:1::1") &&
                v6OnV4.getMessage().contains("binds IPv4 address 127.10.0.1") && v6OnV4.getMessage().contains("one family"),
                v6OnV4.getMessage());

            ipv6 = true;
            final EmbeddedNicConfig ipv4Plane = new EmbeddedNicConfig().mode(NicConnection.Kind.SPRAY).planes(PLANES)
                .sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig);
            for (int p = 0; p < PLANES; p++)
            {
                ipv4Plane.local(p, 0x7F00_0001, 0);
            }
            final IllegalArgumentException v4OnV6 = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalArgumentException.class, () -> EmbeddedNic.startOnDpdk(pmdConfig(0), ipv4Plane, counters,
                    UnaryOperator.identity()));
            assertTrue(v4OnV6.getMessage().contains("IPv4 address 127.0.0.1") &&
                v4OnV6.getMessage().contains("binds IPv6 address ::1"), v4OnV6.getMessage());

            final EmbeddedNic nic = start(0, NicConnection.Kind.SPRAY, counters, UnaryOperator.identity());
            try
            {
                final IllegalArgumentException v4Peer = org.junit.jupiter.api.Assertions.assertThrows(
                    IllegalArgumentException.class, () -> nic.connect(new int[]{0x7F00_0002, 0x7F00_0002},
                        Duration.ofSeconds(2)));
                assertTrue(v4Peer.getMessage().contains("127.0.0.2 is not of the family of plane 0's address ::1"),
                    v4Peer.getMessage());
            }
            finally
            {
                nic.close();
            }
        }
    }

    @Test
    void shouldCarryCeMarksThroughTheKernelToTheReceivingEngine() throws Exception
    {
        final CountersFile[] counters = new CountersFile[2];
        final EmbeddedNic[] nics = new EmbeddedNic[2];
        final List<FaultInjectingPacketPort> marking = new CopyOnWriteArrayList<>();
        try (Arena arena = Arena.ofShared())
        {
            for (int h = 0; h < 2; h++)
            {
                counters[h] = CountersFile.create(dir, "udp-ecn" + h, 8192);
                nics[h] = start(h, NicConnection.Kind.SPRAY, counters[h], h == 0 ? port ->
                {
                    // the sender's frames leave CE-marked (5 %) in their TOS byte: only the sockets carry it on
                    final FaultInjectingPacketPort marker = new FaultInjectingPacketPort(port, 3, 0, 0, 0.05,
                        FaultInjectingPacketPort.Selector.ALL);
                    marking.add(marker);
                    return marker;
                } : UnaryOperator.identity());
            }
            final Duration wait = Duration.ofSeconds(60);
            final int[] peer = new int[PLANES];
            for (int p = 0; p < PLANES; p++)
            {
                peer[p] = nics[1].localIpv4(p);
            }
            final NicConnection client = nics[0].connect(peer, wait);
            final NicConnection server = nics[1].accept(wait);
            assertNotNull(server);
            final long bytes = 4L << 20;
            final MemorySegment source = SeededPattern.allocate(arena, bytes, 5);
            final MemorySegment target = arena.allocate(bytes, 64);
            final MemoryRegion src = nics[0].register(source, AccessFlags.NONE);
            final MemoryRegion dst = nics[1].register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            assertEquals(PostResult.OK, server.postReceive(0, new ReceiveWorkRequest().wrId(5).buffer(null, 0, 0)));
            BulkTransfer.write(client, src, dst.address(), dst.rkey(), 64 * 1024, true, wait);
            assertEquals(5, BulkTransfer.awaitImmediate(server, wait).wrId());
            assertEquals(-1, source.mismatch(target));

            final long marked = marking.stream().mapToLong(FaultInjectingPacketPort::ceMarked).sum();
            assertTrue(marked > 10, "marked " + marked);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            long received = 0;
            while (System.nanoTime() < deadline)
            {
                received = sumPathCounters(counters[1], "ecn_marks_received");
                if (received >= marked / 2)
                {
                    break;
                }
                Thread.sleep(50);
            }
            // data frames carry the marks the receiver counts; a few marks land on ACK-only frames it does not count
            assertTrue(received >= marked / 2 && received <= marked, received + " of " + marked + " marks counted");
        }
        finally
        {
            closeAll(nics, counters);
        }
    }

    private static void closeAll(final EmbeddedNic[] nics, final CountersFile[] counters)
    {
        for (int h = 0; h < nics.length; h++)
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

    private static long sumCounters(final CountersFile file, final String labelPart) throws IOException
    {
        try (CountersFileReader reader = CountersFileReader.open(file.path()))
        {
            return reader.read().stream().filter(c -> c.label().contains(labelPart)).mapToLong(CountersFileReader.Counter::value)
                .sum();
        }
    }

    /** @return the sum over every connection's paths (the connection's own total would count each mark twice). */
    private static long sumPathCounters(final CountersFile file, final String labelPart) throws IOException
    {
        try (CountersFileReader reader = CountersFileReader.open(file.path()))
        {
            long total = 0;
            for (final CountersFileReader.Counter counter : reader.read())
            {
                if (counter.label().contains(" path ") && counter.label().contains(labelPart))
                {
                    total += counter.value();
                }
            }
            return total;
        }
    }
}
