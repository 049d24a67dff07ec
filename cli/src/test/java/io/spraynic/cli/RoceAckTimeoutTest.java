package io.spraynic.cli;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The lab's RoCEv2 local ACK timeout from measured round trips: the smallest exponent whose timeout is 4 times the
 * slowest reply, never below 12 (what a quiet host keeps) nor above 20, and no guess when the NIC answered nothing.
 */
class RoceAckTimeoutTest
{
    @Test
    void shouldKeepTheFloorWhereTheHostIsQuiet()
    {
        assertEquals(12, RoceAckTimeout.exponentFor(0));
        assertEquals(12, RoceAckTimeout.exponentFor(0.5));
        assertEquals(12, RoceAckTimeout.exponentFor(4.19)); // 4 x 4.19 = 16.76 ms <= 16.78 ms (2^12 x 4.096 us)
    }

    @Test
    void shouldTakeTheSmallestExponentAtLeastFourTimesTheSlowestRoundTrip()
    {
        assertEquals(13, RoceAckTimeout.exponentFor(4.2)); // 16.8 ms wanted: just above 2^12's 16.78 ms
        assertEquals(14, RoceAckTimeout.exponentFor(16.0)); // 64 ms wanted: 2^14 is 67.1 ms
        assertEquals(15, RoceAckTimeout.exponentFor(30.17)); // 120.7 ms wanted: 2^15 is 134.2 ms
        assertEquals(20, RoceAckTimeout.exponentFor(1_000)); // 4 s wanted: 2^20 is 4.29 s
        assertEquals(20, RoceAckTimeout.exponentFor(60_000), "never beyond the ceiling");
        assertThrows(IllegalArgumentException.class, () -> RoceAckTimeout.exponentFor(Double.NaN));
        assertThrows(IllegalArgumentException.class, () -> RoceAckTimeout.exponentFor(-1));
    }

    @Test
    void shouldDeriveFromTheLabsRttLinesAndSayWhatItCameFrom()
    {
        final RoceAckTimeout.Choice choice = RoceAckTimeout.fromRtt(Map.of("sent", "100", "received", "98",
            "median_ms", "1.21", "p99_ms", "20.27", "max_ms", "30.17"));
        assertEquals(15, choice.exponent());
        assertTrue(choice.derived());
        assertEquals(134.2, choice.timeoutMillis(), 0.05);
        assertTrue(choice.describe().startsWith("15 (134.2 ms, 4 x the slowest of 98 echo replies of 100"),
            choice.describe());
        assertTrue(choice.jsonFields().contains("\"ackTimeoutExponent\":15,") &&
            choice.jsonFields().contains("\"echoMaxMillis\":30.170"), choice.jsonFields());
        final RoceAckTimeout.Choice given = RoceAckTimeout.given(14);
        assertFalse(given.derived());
        assertEquals("14 (67.1 ms, given)", given.describe());
        assertTrue(given.jsonFields().contains("\"echoMaxMillis\":null"), given.jsonFields());
        assertThrows(IllegalArgumentException.class, () -> RoceAckTimeout.given(32));
    }

    @Test
    void shouldRefuseToGuessWhenTheNicAnsweredNoEcho()
    {
        final IllegalStateException refused = assertThrows(IllegalStateException.class, () ->
            RoceAckTimeout.fromRtt(Map.of("sent", "100", "received", "0", "max_ms", "")));
        assertTrue(refused.getMessage().contains("answered none of 100 echo requests"), refused.getMessage());
    }
}
