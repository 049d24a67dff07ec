package io.spraynic.bench.experiment;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertTrue;

class IncastExperimentTest
{
    @Test
    void shouldDeliverEveryByteAndMeasureFairnessInRange()
    {
        final IncastExperiment.Settings settings = new IncastExperiment.Settings(128 * 1024, 32 * 1024, 0.2,
            100_000_000L, 7);
        final List<IncastExperiment.Point> points = IncastExperiment.run(settings, new int[] {8}, System.out::println);
        final IncastExperiment.Point point = points.get(0);
        for (final IncastExperiment.Side side : new IncastExperiment.Side[] {point.spray(), point.rocev2()})
        {
            assertTrue(side.complete() && side.verified(), "every byte of every sender arrived: " + side);
            assertTrue(side.jainFairness() > 0 && side.jainFairness() <= 1, "Jain's index in (0, 1]: " + side);
            assertTrue(side.peakQueueBytes() > 0 && side.peakQueueBytes() <= 512 * 1024, side.toString());
            assertTrue(side.goodputGbps() > 1 && side.goodputGbps() <= 100, "through one 100 Gb/s port: " + side);
        }
        // the receiver's fair-share hint sets every sender's rate within a few round trips
        assertTrue(point.spray().rateFirstInBandRtts() <= 10, point.spray().toString());
        assertTrue(!(point.spray().rateConvergedRtts() < point.spray().rateFirstInBandRtts()), "stays in band only after first in band");
    }
}
