package io.spraynic.cli;

import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PmdConfigs;
import io.spraynic.pmd.PortConfig;
import io.spraynic.pmd.PortKind;
import io.spraynic.pmd.UdpPortArgs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lab's port kinds: each one's NIC config, as {@code spraynic nic} and {@code transfer} load it (the parameters
 * filled as they fill them), has one port of that kind per plane on the host's interface or address, and the lab is
 * built for it; an unknown kind is refused.
 */
class LabPortKindTest
{
    private static final List<String> DEVS = List.of("splx1p1a", "splx1p2a");
    private static final List<String> IPS = List.of("10.1.1.10/24", "10.2.1.10/24");

    @Test
    void shouldGiveAnAfPacketPortPerPlaneOnTheHostsInterfacesAsBefore(@TempDir final Path dir) throws Exception
    {
        final NicConfig config = load(LabPortKind.AF_PACKET, dir);
        assertEquals(2, config.ports().size());
        for (int p = 0; p < 2; p++)
        {
            final PortConfig port = config.ports().get(p);
            assertTrue(port.isAfPacket(), port.toString());
            assertEquals(DEVS.get(p), port.driverArgument("iface"));
            assertEquals(2048, Integer.parseInt(port.driverArgument("framesz")));
        }
        assertTrue(config.ealArguments().contains("--no-huge"), config.ealArguments().toString());
        assertEquals(List.of("--host-stack", "none", "--static-neighbours", "--no-ipv6"),
            LabPortKind.AF_PACKET.labUpOptions());
    }

    @Test
    void shouldGiveAnAfXdpPortPerPlaneWithMbufsAUmemChunkCanHold(@TempDir final Path dir) throws Exception
    {
        final NicConfig config = load(LabPortKind.AF_XDP, dir);
        assertEquals(2, config.ports().size());
        for (int p = 0; p < 2; p++)
        {
            final PortConfig port = config.ports().get(p);
            assertTrue(port.isAfXdp(), port.toString());
            assertEquals(DEVS.get(p), port.driverArgument("iface"));
        }
        // the kernel takes no UMEM chunk over a page: the net_af_xdp preset's data room
        assertEquals(PmdConfigs.preset("net_af_xdp", Map.of()).mempool().dataRoom(), config.mempool().dataRoom());
        assertTrue(config.mempool().dataRoom() <= 4096);
        assertEquals(LabPortKind.AF_PACKET.labUpOptions(), LabPortKind.AF_XDP.labUpOptions());
    }

    @Test
    void shouldGiveAUdpPortPerPlaneOnTheHostsAddressesOnTheKernelsStack(@TempDir final Path dir) throws Exception
    {
        final NicConfig config = load(LabPortKind.UDP, dir);
        assertTrue(config.onlyUdpPorts(), "no DPDK");
        for (int p = 0; p < 2; p++)
        {
            final PortConfig port = config.ports().get(p);
            assertEquals(PortKind.UDP, port.kind());
            final UdpPortArgs args = UdpPortArgs.of(port);
            assertEquals(IPS.get(p).replace("/24", ""), args.addressText());
            assertEquals(UdpPortArgs.ROCE_V2_PORT, args.port());
            assertEquals(UdpPortArgs.ROCE_V2_PORT, args.peerPort());
            assertEquals(UdpPortArgs.MAX_SOURCE_PORTS, args.sourcePorts(), "the most sockets a port holds");
        }
        // frames of a 1024 B path MTU fit a 1500 B veth unfragmented; the default 4 KiB room would not
        assertEquals(LabPortKind.DATA_ROOM, config.mempool().dataRoom());
        final List<String> up = LabPortKind.UDP.labUpOptions();
        assertFalse(up.contains("none"), "the hosts' kernels hold the addresses: " + up);
        assertFalse(up.contains("--static-neighbours"), up.toString());
    }

    @Test
    void shouldRefuseAnUnknownKind()
    {
        assertEquals(LabPortKind.AF_XDP, LabPortKind.parse("--port-kind", "af_xdp"));
        final BadOption refused = assertThrows(BadOption.class, () -> LabPortKind.parse("-Dspraynic.lab.port", "xdp"));
        assertTrue(refused.getMessage().startsWith("-Dspraynic.lab.port xdp: must be af_packet, af_xdp or udp"),
            refused.getMessage());
    }

    private static NicConfig load(final LabPortKind kind, final Path dir) throws Exception
    {
        final Path file = Files.writeString(dir.resolve(kind.option() + ".toml"), kind.config("p", DEVS, IPS));
        return PmdConfigs.load(file.toString(), Map.of("file_prefix", "x", "queues", "1"));
    }
}
