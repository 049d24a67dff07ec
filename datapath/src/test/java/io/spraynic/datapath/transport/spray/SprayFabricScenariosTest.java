package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.Link;
import io.spraynic.datapath.fabric.Topology;
import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 4's transfer scenarios, deterministic (seeded), byte for byte: 64 MiB over many streams on the
 * emulated fabric in virtual time (S4.2, S4.8, S6.5, S6.9); a fabric link blackholed mid-transfer (S7.4,
 * S7.5); random loss on one path retransmitted on that path only (S6.5).
 */
class SprayFabricScenariosTest
{
    @ParameterizedTest(name = "S4.2/S4.8/S6.9: 64 MiB over 64 streams, 4 planes, {0} random loss on the fabric links")
    @ValueSource(doubles = {0, 0.01, 0.10})
    void shouldMove64MibOverManyStreamsByteForByte(final double loss)
    {
        try (SprayFabricTransfer t = new SprayFabricTransfer(Topology.backToBack(FabricConfig.DEFAULT.withSeed(7), 4, 2),
            16, 64))
        {
            t.fabric.fabricLinkLoss(loss);
            assertTrue(t.write(64L << 20, 256 << 10, 128, 99, 2_000_000_000L), () -> "verified: " + t.a.counters());
            assertEquals(256, t.completedMessages);
            assertEquals(t.sum(SprayCounters.LOST), t.sum(SprayCounters.RETRANSMITTED), "S6.9: retransmitted / lost = 1");
            if (loss > 0)
            {
                assertTrue(t.sum(SprayCounters.LOST) > 0);
            }
            else
            {
                assertEquals(0, t.sum(SprayCounters.RETRANSMITTED));
            }
            for (int p = 0; p < 16; p++)
            {
                assertTrue(t.a.pathCounters(p).get(SprayCounters.TX_PACKETS) > 0, "S7.2: path " + p + " carried data");
            }
        }
    }

    @Test
    void shouldResendTheBlackholedPathsPacketsElsewhereAtTheirTimeoutThenFailThePathsS741S74()
    {
        final Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withSeed(3), 2, 2);
        try (SprayFabricTransfer t = new SprayFabricTransfer(fabric, 8, 4))
        {
            // one of the four fabric links from host 0 to host 1 silently drops everything from 200 us on
            final Link link = fabric.link("p1/sw0->sw1#0");
            fabric.blackholeAt(fabric.now() + 200_000, link);
            assertTrue(t.write(32L << 20, 1 << 20, 16, 5, 2_000_000_000L), () -> "verified: " + t.a.counters());
            assertTrue(link.blackholeDrops() > 0, "the link did swallow packets: " + link);
            assertTrue(t.sum(SprayCounters.PATH_FAILURES) >= 1, () -> "S7.4: a path failed " + t.a.counters());
            // S7.4.1: the packets on the blackholed paths went again on live paths as they timed out, so nothing
            // waited for the paths' failure (which still came, S7.4) and no message stalled for long: the
            // longest time without a completion was 185 us when the packets waited for the failure, 85 us now
            assertEquals(0, t.sum(SprayCounters.MOVED), () -> "S7.4.1: nothing left to move " + t.a.counters());
            assertTrue(t.longestCompletionGapNanos < 120_000, "S7.4.1: longest stall " + t.longestCompletionGapNanos + " ns");
            int failedPaths = 0;
            for (int p = 0; p < 8; p++)
            {
                final long lost = t.a.pathCounters(p).get(SprayCounters.LOST);
                assertEquals(lost, t.a.pathCounters(p).get(SprayCounters.RETRANSMITTED), "S6.9, S7.4.1: path " + p);
                if (t.a.pathCounters(p).get(SprayCounters.PATH_FAILURES) > 0)
                {
                    failedPaths++;
                    assertEquals(1, p % 2, "only plane-1 paths cross the blackholed link (path " + p + ")");
                    assertTrue(lost > 0, "S7.4.1: path " + p + "'s packets went again elsewhere at its first timeout");
                }
            }
            assertTrue(failedPaths >= 1 && failedPaths < 4, "some, not all, of plane 1's paths failed: " + failedPaths);
        }
    }

    @Test
    void shouldRetransmitOnlyOnThePathThatLosesPacketsS65()
    {
        final int lossy = 5;
        final FaultInjectingPacketPort.Selector dataOfPath = (memory, offset, length) ->
            SprayTestBed.isData(memory, offset, length) &&
            SprayExtendedTransportHeader.path(memory, offset + SprayTestBed.DATA_OFFSET_BTH + BaseTransportHeader.LENGTH) == lossy;
        final SprayTestBed.Options options = new SprayTestBed.Options()
            .wrapA((plane, port) -> new FaultInjectingPacketPort(port, 17 + plane, 0.05, 0, 0, dataOfPath));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final SprayLossRecoveryTest.Workload w = new SprayLossRecoveryTest.Workload(bed, 4 << 20);
            w.post();
            w.runAndVerify(400_000);
            final long dropped = bed.totalDropped(bed.portsA);
            assertTrue(dropped >= 10, "lost on path " + lossy + ": " + dropped);
            for (int p = 0; p < 8; p++)
            {
                final long retransmitted = bed.a.pathCounters(p).get(SprayCounters.RETRANSMITTED);
                assertEquals(p == lossy ? dropped : 0, retransmitted, "path " + p);
                assertEquals(p == lossy ? dropped : 0, bed.a.pathCounters(p).get(SprayCounters.LOST), "path " + p);
            }
        }
    }
}
