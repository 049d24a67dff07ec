package io.spraynic.bench.experiment;

import io.spraynic.datapath.fabric.Switch;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReorderWithinExperimentTest
{
    @Test
    void shouldShowReorderingWithinARouteTakenForLossWithoutAWindowAndNotWithOne(@org.junit.jupiter.api.io.TempDir
        final Path dir) throws Exception
    {
        final LossSweep.Settings settings = LossSweep.Settings.DEFAULT.withPlanesAndBytes(
            LossSweep.Settings.DEFAULT.planes(), 8L << 20);
        final List<ReorderWithinExperiment.Point> points = ReorderWithinExperiment.run(settings,
            Switch.Balancing.ROUND_ROBIN, ReorderWithinExperiment.DEFAULT_SKEW_NS,
            ReorderWithinExperiment.DEFAULT_FIXED_WINDOW_NS, new double[]{0}, System.out::println);
        assertEquals(4, points.size());
        for (final ReorderWithinExperiment.Point point : points)
        {
            assertTrue(point.spray().verified() && point.spray().complete(), point.toString());
            assertEquals(0, point.spray().lost(), "nothing dropped at 0 %: " + point);
        }
        assertEquals(0, points.get(0).spuriousRetransmissions(), "ECMP keeps a path in order: " + points.get(0));
        final long strict = points.get(1).spuriousRetransmissions();
        assertTrue(strict > 100, "balanced per packet, S6.5 takes reordering for loss: " + points.get(1));
        assertEquals(0, points.get(2).spuriousRetransmissions(), "a window that covers it: " + points.get(2));
        assertTrue(points.get(3).spuriousRetransmissions() * 10 < strict, "a learnt window: " + points.get(3));

        final List<Path> files = ExperimentOutput.writeReorderWithin(dir, settings,
            ReorderWithinExperiment.DEFAULT_SKEW_NS, points);
        assertEquals(3, files.size());
        final String json = Files.readString(dir.resolve("reorder-within.json"));
        assertTrue(json.startsWith("{\"experiment\":\"reorder-within\"") && json.contains("\"window\":\"fixed 15 us\""),
            json);
        assertEquals(5, Files.readAllLines(dir.resolve("reorder-within.csv")).size(), "a header and a row per point");
        assertTrue(Files.size(dir.resolve("reorder-within.png")) > 0);
    }
}
