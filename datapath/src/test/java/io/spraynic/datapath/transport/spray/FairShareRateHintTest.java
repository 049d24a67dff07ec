package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * docs/PROTOCOL.md S8.3: the receiver divides its ingress among active senders.
 */
class FairShareRateHintTest
{
    @Test
    void shouldShareCapacityAmongActiveSendersAtOnce()
    {
        final FairShareRateHint hint = new FairShareRateHint(100_000, 20_000, 64);
        assertEquals(100_000, hint.hintMbps());
        for (int sender = 0; sender < 32; sender++)
        {
            hint.onData(sender, 1_000);
        }
        assertEquals(32, hint.activeSenders());
        assertEquals(3_125, hint.hintMbps(), "an incast of 32 gets C/32 in the first ACK");
    }

    @Test
    void shouldForgetSendersThatWentQuiet()
    {
        final FairShareRateHint hint = new FairShareRateHint(100_000, 20_000, 8);
        hint.onData(0, 0);
        hint.onData(1, 0);
        hint.onData(1, 15_000);
        hint.refresh(25_000);
        assertEquals(1, hint.activeSenders());
        assertEquals(100_000, hint.hintMbps());
        hint.onData(0, 30_000);
        assertEquals(2, hint.activeSenders());
        hint.onData(0, 31_000);
        assertEquals(2, hint.activeSenders(), "still active: not counted twice");
    }

    @Test
    void shouldKeepCountingASenderWhoseMessageIsPartlyDeliveredS83()
    {
        final FairShareRateHint hint = new FairShareRateHint(100_000, 20_000, 8);
        hint.onData(0, 0);
        hint.onData(1, 0);
        hint.busy(1, true); // its packets are queued or lost for longer than the window, its message unfinished
        hint.onData(0, 45_000);
        hint.refresh(50_000);
        assertEquals(2, hint.activeSenders());
        assertEquals(50_000, hint.hintMbps(), "the starved sender keeps its share");
        hint.busy(1, false);
        hint.refresh(50_000);
        assertEquals(1, hint.activeSenders());
        assertEquals(100_000, hint.hintMbps());
    }
}
