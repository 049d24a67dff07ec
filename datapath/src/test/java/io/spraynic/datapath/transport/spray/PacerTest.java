package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S8.4 (the token bucket) and S8.3.1 (the start budget).
 */
@Timeout(10)
class PacerTest
{
    private static final int MTU = 1024;

    @Test
    void shouldStartWithAFullBurstAndChargeEveryPacketItsWireOverhead()
    {
        final Pacer pacer = new Pacer(new SprayConfig().burstBytes(4096), MTU);
        assertEquals(4096, pacer.tokens());
        pacer.take(1000);
        assertEquals(4096 - 1000 - Pacer.OVERHEAD, pacer.tokens());
        pacer.take(MTU);
        pacer.take(MTU);
        assertTrue(pacer.hasTokens());
        pacer.take(MTU);
        assertFalse(pacer.hasTokens(), "may go below zero: the next packets wait for the debt");
    }

    @Test
    void shouldRefillAtTheRateUpToTheBurstAtThatRate()
    {
        final Pacer pacer = new Pacer(new SprayConfig().burstBytes(64 * 1024).burstNanos(4_000), MTU);
        assertEquals(0, pacer.advance(1_000), "the first call only starts the clock");
        assertEquals(0, pacer.advance(1_000), "no time passed");
        assertEquals(0, pacer.advance(500), "nor backwards");
        pacer.take(64 * 1024 - Pacer.OVERHEAD); // empty
        assertEquals(0, pacer.tokens());
        final long elapsed = pacer.advance(1_500);
        assertEquals(1_000, elapsed);
        pacer.refill(elapsed, 1.25); // 10 Gb/s
        assertEquals(1_250, pacer.tokens(), 1e-9);
        pacer.refill(1_000_000, 1.25);
        assertEquals(5_000, pacer.tokens(), 1e-9, "a burst is 4 us at the rate");
        pacer.take(5_000 - Pacer.OVERHEAD);
        pacer.refill(2_000_000, 0.001);
        assertEquals(MTU + Pacer.OVERHEAD, pacer.tokens(), 1e-9, "but never less than one packet");
    }

    @Test
    void shouldAllowOnlyTheStartBudgetUntilTheShareArrivesS831()
    {
        final Pacer pacer = new Pacer(new SprayConfig().startBudgetBytes(2 * MTU).activityWindowNanos(100_000), MTU);
        assertTrue(pacer.isStart(0), "nothing sent yet");
        pacer.startAnnounced();
        assertFalse(pacer.startBudgetSpent());
        pacer.newDataSent(10, MTU);
        assertFalse(pacer.isStart(20), "sending");
        assertFalse(pacer.startBudgetSpent());
        pacer.newDataSent(20, MTU);
        assertTrue(pacer.startBudgetSpent());
        pacer.onShare(30);
        assertFalse(pacer.startBudgetSpent(), "the share lifts the limit");
        assertEquals(0, pacer.tokens(), 1e-9, "and the bucket restarts empty");
        assertEquals(0, pacer.advance(30), "from the ACK's time");
        pacer.onShare(40);
        pacer.newDataSent(50, MTU);
        assertFalse(pacer.startBudgetSpent(), "no limit outside a start");
        assertFalse(pacer.isStart(50 + 100_000));
        assertTrue(pacer.isStart(50 + 100_001), "a pause longer than the activity window");
    }

    @Test
    void shouldKeepTheTokensOfANormalAck()
    {
        final Pacer pacer = new Pacer(new SprayConfig().burstBytes(8192), MTU);
        pacer.onShare(5);
        assertEquals(8192, pacer.tokens(), 1e-9, "not after a start: nothing changes");
        assertFalse(new Pacer(new SprayConfig().startBudgetBytes(-1), MTU).isStart(0), "no start budget configured");
    }
}
