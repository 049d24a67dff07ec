package io.spraynic.bench.experiment;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PlanesExperimentTest
{
    @Test
    void shouldScaleSprayWithPlanesAtFixedStatePerConnection()
    {
        final PlanesExperiment.Settings settings = new PlanesExperiment.Settings(8L << 20, 64 * 1024, 100_000_000L, 3);
        final List<PlanesExperiment.Point> points = PlanesExperiment.run(settings, new int[] {1, 4}, new int[] {10, 200},
            System.out::println);
        assertEquals(8, points.size());
        for (final PlanesExperiment.Point point : points)
        {
            assertTrue(point.complete() && point.verified(), "every connection's bytes arrived: " + point);
            assertTrue(point.goodputGbps() > 0 && point.utilisation() <= 1.0, point.toString());
        }
        final PlanesExperiment.Point oneSpray = find(points, 1, 10, "spray");
        final PlanesExperiment.Point fourSpray = find(points, 4, 10, "spray");
        assertTrue(fourSpray.goodputGbps() > 3 * oneSpray.goodputGbps(),
            "four planes carry more than three times one: " + oneSpray + " " + fourSpray);
        assertEquals(oneSpray.stateBytesPerConnection(), fourSpray.stateBytesPerConnection(),
            "a connection's state does not grow with planes");
        assertEquals(oneSpray.stateBytesPerConnection(), find(points, 4, 200, "spray").stateBytesPerConnection(),
            "nor with the number of connections");
        assertTrue(oneSpray.stateBytesPerConnection() > 0);
    }

    private static PlanesExperiment.Point find(final List<PlanesExperiment.Point> points, final int planes,
        final int connections, final String transport)
    {
        return points.stream().filter(p -> p.planes() == planes && p.connections() == connections &&
            p.transport().equals(transport)).findFirst().orElseThrow();
    }
}
