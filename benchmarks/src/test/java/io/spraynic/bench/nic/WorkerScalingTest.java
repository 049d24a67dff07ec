package io.spraynic.bench.nic;

import io.spraynic.datapath.nic.NicConnection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A short worker-scaling run (its own JVM, as the command runs each point) moves real data.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class WorkerScalingTest
{
    @Test
    void shouldMeasureGoodputOfTwoWorkersCarryingTwoConnections() throws Exception
    {
        final WorkerScaling.Result result = WorkerScaling.measureInChild(NicConnection.Kind.SPRAY.name(), 2, 0.5);
        assertEquals(2, result.workers());
        assertTrue(result.bytes() >= 64 * 1024, "writes completed: " + result);
        assertTrue(result.goodputGbps() > 0 && result.seconds() >= 0.5, result.toString());
    }
}
