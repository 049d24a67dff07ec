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
        // with draft 0.4's headers and 110 us since S12 grew every header by an 8-byte tag. The transport did not
        // slow down: in both the last completion before the outage is at 150-155 us and goodput is back at 205-215 us
        // (5 us bins: 90 us then, 55 us now). The metric moved: the bar is 95 % of 3/4 of the rate before, 271 Gb/s,
        // 10.3 of the 64 KiB messages per 20 us bin, while three planes carry 291 Gb/s, 11.1 a bin; a bin holding 10
        // (262 Gb/s, one in seven here) breaks the three-bin run. The longer headers shifted completions by a few ns
        // each and put such a bin at 240-260 us (before: 11, 12), so recovery counts from 260 us. The pacer's overhead
        // (128 B, 2 short of a WRITE_IMM's 130 now) only makes it 0.05 % faster, and its cap, 400 Gb/s, is above three
        // planes' 300. The bound keeps the two mechanisms apart
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
