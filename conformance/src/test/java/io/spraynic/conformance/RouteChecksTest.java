package io.spraynic.conformance;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** S7.7-1's judgement of arrivals and the suite's ACKs ({@link RouteChecks.Rotations}), without a target. */
class RouteChecksTest
{
    @Test
    void shouldPassAMoveAfterTheOldPortWasAcknowledged()
    {
        final RouteChecks.Rotations rotations = new RouteChecks.Rotations(2);
        rotations.data(0, 50_000, 10);
        rotations.data(1, 50_001, 20);
        rotations.data(0, 50_000, 11);
        assertTrue(rotations.owed(0) && rotations.owed(1));
        rotations.acknowledged(0);
        rotations.data(0, 60_000, 12);
        assertNull(rotations.judge());
        assertEquals(1, rotations.changes);
        assertEquals(4, rotations.dataPackets);
    }

    @Test
    void shouldFailAMoveWhileADataPacketOfTheOldPortWaitsForItsAck()
    {
        final RouteChecks.Rotations rotations = new RouteChecks.Rotations(2);
        rotations.data(1, 50_000, 10);
        rotations.acknowledged(1);
        rotations.data(1, 50_000, 11);
        rotations.data(1, 50_000, 12);
        rotations.acknowledged(0); // another path's ACK does not drain path 1
        rotations.data(1, 60_000, 13);
        final String failed = rotations.judge();
        assertTrue(null != failed && failed.startsWith("path 1 moved from port 50000 to 60000 with 2 data packet(s) " +
            "of the old port not yet acknowledged (PSNs [11, 12])"), failed);
    }

    @Test
    void shouldTakeAResyncProbeAsAMoveForCause()
    {
        final RouteChecks.Rotations rotations = new RouteChecks.Rotations(1);
        rotations.data(0, 50_000, 10);
        rotations.resync(0, 60_000); // S7.5: a failed path probed back on a new port
        rotations.data(0, 60_000, 11);
        assertNull(rotations.judge());
        assertEquals(0, rotations.changes);
        rotations.probe(0);
        assertTrue(rotations.owed(0), "a probe is answered at the next pause (S8.3.1)");
    }
}
