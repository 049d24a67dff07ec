package io.spraynic.datapath.nic;

import io.spraynic.pmd.PortConfig;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

@Timeout(10)
class DpdkBringUpTest
{
    @Test
    void shouldRefuseAConfigWithoutOnePortPerPlane()
    {
        final EmbeddedNicConfig twoPlanes = new EmbeddedNicConfig().planes(2);
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> DpdkBringUp.requireFit(List.of(PortConfig.ringPair("p0", "q0")), twoPlanes));
        assertEquals("the embedded NIC has 2 plane(s) but the pmd config has 1 port(s): give one port per plane " +
            "(or set planes to 1)", refused.getMessage());
    }

    @Test
    void shouldRefusePortsWithFewerQueuesThanWorkers()
    {
        final EmbeddedNicConfig twoWorkers = new EmbeddedNicConfig().workers(2);
        final PortConfig oneTxQueue = PortConfig.ringPair("p0", "q0").withQueues(2, 1);
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> DpdkBringUp.requireFit(List.of(oneTxQueue), twoWorkers));
        assertEquals("port p0 has 2 RX and 1 TX queue(s) for 2 worker(s): set rx_queues and tx_queues to at least 2",
            refused.getMessage());
        assertDoesNotThrow(() -> DpdkBringUp.requireFit(List.of(oneTxQueue.withQueues(2, 2)), twoWorkers));
    }

    @Test
    void shouldRefusePortsWithRxQueuesThatNoWorkerPolls()
    {
        final EmbeddedNicConfig twoWorkers = new EmbeddedNicConfig().workers(2);
        final PortConfig fourRxQueues = PortConfig.ringPair("p0", "q0").withQueues(4, 4);
        final IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> DpdkBringUp.requireFit(List.of(PortConfig.ringPair("p1", "q1").withQueues(2, 2), fourRxQueues),
                twoWorkers.planes(2)));
        assertEquals("port p0 has 4 RX queues for 2 worker(s): frames the device spreads to queues 2..3 would never be " +
            "read; set rx_queues to 2 (-p queues=2 with a preset), or run 4 workers", refused.getMessage());
        assertDoesNotThrow(() -> DpdkBringUp.requireFit(List.of(fourRxQueues.withQueues(2, 4)), new EmbeddedNicConfig()
            .workers(2)), "more TX queues than workers only go unused");
    }

    @Test
    void shouldReadAMacFirstByteHighest()
    {
        assertEquals(0x02_00_00_00_00_01L, DpdkBringUp.macOf(new byte[]{2, 0, 0, 0, 0, 1}));
        assertEquals(0xFF_FE_FD_FC_FB_FAL, DpdkBringUp.macOf(new byte[]{-1, -2, -3, -4, -5, -6}), "no sign extension");
    }
}
