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
            hint.onData(sender, 1_000, false);
        }
        assertEquals(32, hint.activeSenders());
        assertEquals(3_125, hint.hintMbps(), "an incast of 32 gets C/32 in the first ACK");
    }

    @Test
    void shouldNeverSendAShareBelowOneMegabitAsNoHintS83()
    {
        // 10 Mb/s among 16 senders is 0.625 Mb/s each: truncated to 0 it would read as "no hint" and leave every
        // sender unpaced, the opposite of the share
        final FairShareRateHint hint = new FairShareRateHint(10, 20_000, 64);
        for (int sender = 0; sender < 16; sender++)
        {
            hint.onData(sender, 1_000, false);
        }
        assertEquals(16, hint.activeSenders());
        assertEquals(1, hint.hintMbps(), "the least share the wire can say");
        hint.onData(16, 1_000, false);
        hint.refresh(1_000);
        assertEquals(1, hint.hintMbps());
    }

    @Test
    void shouldForgetSendersThatWentQuiet()
    {
        final FairShareRateHint hint = new FairShareRateHint(100_000, 20_000, 8);
        hint.onData(0, 0, false);
        hint.onData(1, 0, false);
        hint.onData(1, 15_000, false);
        hint.refresh(25_000);
        assertEquals(1, hint.activeSenders());
        assertEquals(100_000, hint.hintMbps());
        hint.onData(0, 30_000, false);
        assertEquals(2, hint.activeSenders());
        hint.onData(0, 31_000, false);
        assertEquals(2, hint.activeSenders(), "still active: not counted twice");
    }

    @Test
    void shouldKeepCountingASenderWhoseMessageIsPartlyDeliveredS83()
    {
        final FairShareRateHint hint = new FairShareRateHint(100_000, 20_000, 8);
        hint.onData(0, 0, false);
        hint.onData(1, 0, false);
        hint.busy(1, true); // its packets are queued or lost for longer than the window, its message unfinished
        hint.onData(0, 45_000, false);
        hint.refresh(50_000);
        assertEquals(2, hint.activeSenders());
        assertEquals(50_000, hint.hintMbps(), "the starved sender keeps its share");
        hint.busy(1, false);
        hint.refresh(50_000);
        assertEquals(1, hint.activeSenders());
        assertEquals(100_000, hint.hintMbps());
    }

    @Test
    void shouldHoldBackUpToAnEighthWhileArrivalsAreMarkedS833()
    {
        final FairShareRateHint hint = new FairShareRateHint(100_000, 20_000, 8);
        for (int i = 0; i < 32; i++)
        {
            hint.onData(i % 4, 1_000, true); // four senders, every arrival CE-marked: the queue is above marking
        }
        hint.refresh(1_000);
        assertEquals(1.0 / 2, hint.markedFraction(), 1e-9, "the first sample of 32 marked arrivals, halfway");
        assertEquals((int)(25_000 * (1 - 1.0 / 16)), hint.hintMbps());
        for (int round = 0; round < 20; round++)
        {
            for (int i = 0; i < 16; i++)
            {
                hint.onData(i % 4, 2_000, true);
            }
            hint.refresh(2_000);
        }
        assertEquals(21_875, hint.hintMbps(), 1, "all marked: C / N less an eighth");
        for (int round = 0; round < 20; round++)
        {
            for (int i = 0; i < 16; i++)
            {
                hint.onData(i % 4, 3_000, false);
            }
            hint.refresh(3_000);
        }
        assertEquals(25_000, hint.hintMbps(), 1, "the queue fell below marking: the whole share again");
    }

    @Test
    void shouldNotHoldBackALoneSenderWhateverItsMarksS833()
    {
        final FairShareRateHint hint = new FairShareRateHint(100_000, 20_000, 8);
        for (int i = 0; i < 64; i++)
        {
            hint.onData(3, 1_000, true);
        }
        hint.refresh(1_000);
        assertEquals(1, hint.activeSenders());
        assertEquals(100_000, hint.hintMbps(), "its marks come from elsewhere: its own windows answer them (S8.2)");
    }

    @Test
    void shouldForgetMarksWhenNobodyIsActive()
    {
        final FairShareRateHint hint = new FairShareRateHint(100_000, 20_000, 8);
        for (int i = 0; i < 32; i++)
        {
            hint.onData(i % 2, 0, true);
        }
        hint.refresh(0);
        assertEquals(0.5, hint.markedFraction(), 1e-9);
        hint.refresh(100_000);
        assertEquals(0, hint.activeSenders());
        assertEquals(0, hint.markedFraction(), "a new incast starts from a clean slate");
    }

    @Test
    void shouldTellWhetherOneSenderIsActive()
    {
        final FairShareRateHint hint = new FairShareRateHint(100_000, 20_000, 8);
        assertEquals(false, hint.isActive(2, 0), "never heard of");
        hint.onData(2, 1_000, false);
        assertEquals(true, hint.isActive(2, 21_000));
        assertEquals(false, hint.isActive(2, 21_001), "quiet for longer than the window");
        hint.busy(2, true);
        assertEquals(true, hint.isActive(2, 50_000), "a message partly delivered");
    }
}
