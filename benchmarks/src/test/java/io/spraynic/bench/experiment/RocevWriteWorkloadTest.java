package io.spraynic.bench.experiment;

import io.spraynic.datapath.fabric.Fabric;
import io.spraynic.datapath.fabric.FabricConfig;
import io.spraynic.datapath.fabric.Topology;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RocevWriteWorkloadTest
{
    @Test
    void shouldMoveAndVerifyEveryByteOverFourPlanesLossless()
    {
        try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withSeed(3), 4, 2))
        {
            final TransferOutcome outcome = RocevWriteWorkload.run(fabric, 8L << 20, 1 << 20, 1_000_000_000L, 3);
            assertTrue(outcome.complete() && outcome.verified(), outcome.toString());
            assertEquals(0, outcome.lost());
            assertTrue(outcome.goodputGbps() > 100, "four 100 Gb/s planes: " + outcome.goodputGbps());
        }
    }

    @Test
    void shouldRecoverOnePercentLossSlower()
    {
        final LossSweep.Settings settings = new LossSweep.Settings(4, 8L << 20, 1 << 20, 1_000_000_000L, 3, 8, 4);
        final TransferOutcome lossless = LossSweep.runRocev2(settings, 0);
        final TransferOutcome lossy = LossSweep.runRocev2(settings, 0.01);
        assertTrue(lossy.complete() && lossy.verified(), lossy.toString());
        assertTrue(lossy.lost() > 0 && lossy.retransmitted() > lossy.lost(), "go-back-N resends more than it lost: " + lossy);
        assertTrue(lossy.goodputGbps() < lossless.goodputGbps(), lossy + " vs " + lossless);
    }

    @Test
    void shouldRetransmitExactlyWhatTheFabricLostWithSpray()
    {
        final LossSweep.Settings settings = new LossSweep.Settings(4, 8L << 20, 1 << 20, 1_000_000_000L, 3, 8, 4);
        final TransferOutcome lossless = LossSweep.runSpray(settings, 0);
        final TransferOutcome lossy = LossSweep.runSpray(settings, 0.01);
        assertTrue(lossless.complete() && lossless.verified(), lossless.toString());
        assertTrue(lossy.complete() && lossy.verified(), lossy.toString());
        assertTrue(lossy.lost() > 0, lossy.toString());
        assertEquals(lossy.lost(), lossy.retransmitted(), "retransmitted / lost = 1 (PROTOCOL.md S6.9)");
        assertTrue(lossless.goodputGbps() > 300, "8 paths over four 100 Gb/s planes: " + lossless.goodputGbps());
    }
}
