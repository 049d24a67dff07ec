package io.spraynic.bench.experiment;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CollectivesExperimentTest
{
    @Test
    void shouldCompleteRingAllReduceAndAllToAllOnBothTransports()
    {
        final CollectivesExperiment.Settings settings = new CollectivesExperiment.Settings(256 * 1024, 256 * 1024,
            100_000_000L, 3);
        final List<CollectivesExperiment.Point> points = CollectivesExperiment.run(settings, new int[] {16},
            System.out::println);
        assertEquals(4, points.size());
        for (final CollectivesExperiment.Point point : points)
        {
            assertTrue(point.complete() && point.verified(), "every chunk of every node arrived: " + point);
            // a node sends and receives on two 100 Gb/s planes: no collective beats that
            assertTrue(point.algorithmicGbps() > 0 && point.algorithmicGbps() < 200, point.toString());
            assertTrue(point.completionNanos() > 0, point.toString());
        }
        final CollectivesExperiment.Point ring = points.get(0);
        assertEquals("all-reduce", ring.collective());
        assertEquals(ring.algorithmicGbps() * 2 * 15 / 16, ring.busGbps(), 1e-9, "bus bandwidth = algbw x 2(N-1)/N");
    }
}
