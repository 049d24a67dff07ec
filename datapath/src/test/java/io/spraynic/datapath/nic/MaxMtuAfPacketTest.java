package io.spraynic.datapath.nic;

import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import io.spraynic.datapath.port.TestNetwork;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The 4 KiB MTU over DPDK's {@code net_af_packet} on two veth pairs bridged in a network namespace this test
 * creates (and removes, also on failure): with the veths at MTU 4200 two NICs move verified bytes in full
 * 4096 B-payload frames; with the veths back at 1500 the same NICs' default MTU drops to 1024 B, so no frame
 * exceeds what the kernel passes. Needs root (CI is root).
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class MaxMtuAfPacketTest
{
    private static final String NETNS = TestNetwork.name("spmtu");
    private static final String BRIDGE = TestNetwork.name("spmbr");
    private static final String[] LOCAL = {TestNetwork.name("spmta"), TestNetwork.name("spmtb")};
    private static final String[] INSIDE = {TestNetwork.name("spmia"), TestNetwork.name("spmib")};

    private static TestNetwork network;
    private static DpdkNic dpdk;

    @TempDir
    Path dir;

    @BeforeAll
    static void start()
    {
        network = TestNetwork.create("a network namespace, a bridge and veth pairs", NETNS).disableIpv6(NETNS);
        for (int i = 0; i < 2; i++)
        {
            network.veth(null, LOCAL[i], NETNS, INSIDE[i]);
        }
        network.bridge(NETNS, BRIDGE, List.of(INSIDE)); // a plain wire
        setMtu(PortConfig.RDMA_4096_MTU);
        final List<PortConfig> ports = List.of(port(0), port(1));
        dpdk = DpdkNic.start(NicConfig.of(EalConfig.DEFAULT.withFilePrefix("spraynic-mtu-afp-" + TestNetwork.ID)
            .withLogLevels(List.of("lib.eal:warning")), MempoolConfig.DEFAULT, ports));
    }

    private static PortConfig port(final int i)
    {
        return PortConfig.vdev("afp" + i, "net_af_packet" + i, "iface=" + LOCAL[i] + ",qpairs=1,framesz=4352,blocksz=69632")
            .withMtu(PortConfig.RDMA_4096_MTU).withPromiscuous(true);
    }

    @AfterAll
    static void stop()
    {
        try
        {
            if (null != dpdk)
            {
                dpdk.close();
            }
        }
        finally
        {
            if (null != network)
            {
                network.close();
            }
        }
    }

    @Test
    void shouldCarryFullFourKilobyteFramesAtMtu4200AndFallToTheLargestThatFitsAt1500() throws Exception
    {
        assertEquals(1500, dpdk.port("afp0").mtu(), "what DPDK 22.11's af_packet reports, whatever the interface has");
        assertEquals(PortConfig.RDMA_4096_MTU, dpdk.mtu("afp0"), "the kernel interface's");
        assertEquals(PortConfig.RDMA_4096_MTU + 18, dpdk.maxFrameLength("afp0"),
            "the interface's MTU with Ethernet and VLAN headers, within the socket ring's frame (4352 - 32)");
        for (final NicConnection.Kind mode : NicConnection.Kind.values())
        {
            final MaxFrameTransfer.Outcome full = MaxFrameTransfer.run(dpdk, "afp0", "afp1", new EmbeddedNicConfig().mode(mode),
                new EmbeddedNicConfig().mode(mode), dir, 2L << 20);
            assertTrue(full.verified(), mode + ": " + full.detail());
            assertEquals(4096, full.mtuA());
            for (final int longest : new int[]{full.longestFrameA(), full.longestFrameB()})
            {
                assertTrue(longest > 4096 + 58 && longest <= PortConfig.RDMA_4096_MTU + 14, mode + ": " + longest);
            }
        }

        setMtu(1500);
        assertEquals(1500 + 18, dpdk.maxFrameLength("afp0"));
        final MaxFrameTransfer.Outcome standard = MaxFrameTransfer.run(dpdk, "afp0", "afp1",
            new EmbeddedNicConfig().mode(NicConnection.Kind.SPRAY), new EmbeddedNicConfig().mode(NicConnection.Kind.SPRAY),
            dir, 2L << 20);
        assertTrue(standard.verified(), standard.detail());
        assertEquals(1024, standard.mtuA(), "the default lowered to what a 1500 B interface carries");
        assertTrue(standard.longestFrameA() > 1024 && standard.longestFrameA() <= 1500 + 14, "" + standard.longestFrameA());
    }

    private static void setMtu(final int mtu)
    {
        for (int i = 0; i < 2; i++)
        {
            network.in(null, "ip", "link", "set", LOCAL[i], "mtu", Integer.toString(mtu));
            network.in(NETNS, "ip", "link", "set", INSIDE[i], "mtu", Integer.toString(mtu));
        }
        network.in(NETNS, "ip", "link", "set", BRIDGE, "mtu", Integer.toString(mtu));
    }
}
