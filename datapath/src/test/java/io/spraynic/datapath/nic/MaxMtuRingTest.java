package io.spraynic.datapath.nic;

import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The 4 KiB MTU over a crossed {@code net_ring} pair with the default mbufs: two NICs with the default path MTU
 * (4096) exchange verified bytes in frames of the full size, never longer than the ports carry; a NIC whose peer
 * offers a bigger MTU than its own sends and receives at its own; and an MTU the buffers cannot hold is refused.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class MaxMtuRingTest
{
    private static DpdkNic dpdk;

    @TempDir
    Path dir;

    @BeforeAll
    static void start()
    {
        dpdk = DpdkNic.start(NicConfig.of(EalConfig.DEFAULT.withFilePrefix("spraynic-maxmtu-" + ProcessHandle.current().pid())
            .withLogLevels(List.of("lib.eal:warning")), MempoolConfig.DEFAULT,
            List.of(PortConfig.ringPair("a", "b"), PortConfig.ringPair("b", "a"))));
    }

    @AfterAll
    static void stop()
    {
        if (null != dpdk)
        {
            dpdk.close();
        }
    }

    @ParameterizedTest
    @EnumSource(NicConnection.Kind.class)
    void shouldCarryVerifiedBytesInFramesOfTheFullFourKilobyteMtu(final NicConnection.Kind mode) throws Exception
    {
        assertEquals(PortConfig.RDMA_4096_MTU, dpdk.port("a").mtu(), "the ring port took the MTU at configure");
        assertEquals(PortConfig.RDMA_4096_MTU + 18, dpdk.maxFrameLength("a"), "the MTU with Ethernet and VLAN headers, " +
            "within one mbuf (" + MempoolConfig.DEFAULT_MAX_FRAME_LENGTH + ")");
        final MaxFrameTransfer.Outcome outcome = MaxFrameTransfer.run(dpdk, "a", "b", new EmbeddedNicConfig().mode(mode),
            new EmbeddedNicConfig().mode(mode), dir, 4L << 20);
        assertTrue(outcome.verified(), outcome.detail());
        assertEquals(4096, outcome.mtuA(), "the default path MTU");
        for (final int longest : new int[]{outcome.longestFrameA(), outcome.longestFrameB()})
        {
            // 4096 B of payload with Ethernet, IPv4, UDP, BTH, (S)ETH/RETH and ICRC around it
            assertTrue(longest > 4096 + 14 + 20 + 8 + 12 + 4 && longest <= 4096 + MtuFit.MAX_HEADER_BYTES,
                "full-size frames, within the ports' " + dpdk.maxFrameLength("a") + " B: " + longest);
            assertTrue(longest <= dpdk.mtu("a") + 18, "within the port MTU: " + longest);
        }
    }

    @ParameterizedTest
    @EnumSource(NicConnection.Kind.class)
    void shouldClampToTheSmallerMtuWhenThePeerOffersABiggerOne(final NicConnection.Kind mode) throws Exception
    {
        final MaxFrameTransfer.Outcome outcome = MaxFrameTransfer.run(dpdk, "a", "b",
            new EmbeddedNicConfig().mode(mode).connections(4, 4, 4096), new EmbeddedNicConfig().mode(mode).connections(4, 4, 1024),
            dir, 2L << 20);
        assertTrue(outcome.verified(), outcome.detail());
        for (final int longest : new int[]{outcome.longestFrameA(), outcome.longestFrameB()})
        {
            assertTrue(longest > 1024 && longest <= 1024 + MtuFit.MAX_HEADER_BYTES,
                "the 4096 side sends at most the 1024 B its peer takes: " + longest);
        }
    }
}
