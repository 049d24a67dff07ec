package io.spraynic.bench.experiment;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PlaneFailureExperimentTest
{
    @Test
    void shouldRecoverThreeQuartersWithoutTheApplicationWhileRocev2LosesThePlanesShare()
    {
        // 20 us bins, as the experiment's default: a 10 us bin holds 5 or 6 of the 64 KiB messages, and 5 (262 Gb/s)
        // is just under 95 % of 3/4 of the rate before (267 Gb/s), so three 6-message bins in a row were luck
        final PlaneFailureExperiment.Settings settings = new PlaneFailureExperiment.Settings(4, 1, 24L << 20, 64 * 1024,
            150_000, 20_000, 20_000_000L, 5);
        final List<PlaneFailureExperiment.Side> sides = PlaneFailureExperiment.run(settings, System.out::println);
        final PlaneFailureExperiment.Side spray = sides.get(0);
        assertEquals("spray", spray.transport());
        assertTrue(spray.complete() && spray.verified(), "every byte arrived, with no application action: " + spray);
        assertTrue(spray.recoveryNanos() >= 0, "recovered (N-1)/N: " + spray);
        // docs/PROTOCOL.md S7.4.1: the dead plane's packets go again on live paths at their paths' first timeout
        // (50 us here), not at their failure after three (350 us: 340 us with no goodput at all before). Measured 50 us
        // with draft 0.4's headers and 110 us since S12 grew every header by an 8-byte tag (one recovery path, the
        // bins of 20 us falling differently; not yet explained): the bound keeps the two mechanisms apart
        assertTrue(spray.recoveryNanos() <= 150_000, "recovered well before the three-RTO failure: " +
            spray.recoveryNanos() + " ns");
        assertTrue(spray.beforeGbps() > 300, "four 100 Gb/s planes before the failure: " + spray.beforeGbps());

        final PlaneFailureExperiment.Side rocev2 = sides.get(1);
        assertFalse(rocev2.complete(), "the QP on the blackholed plane never delivers its share: " + rocev2);
        assertTrue(rocev2.verified(), "what completed is intact");
        assertTrue(rocev2.bytesDone() < settings.bytes() && rocev2.bytesDone() >= settings.bytes() / 2, rocev2.toString());
        assertEquals(-1, rocev2.recoveryNanos(), "holding 3/4 while a quarter never arrives is no recovery");
    }
}
