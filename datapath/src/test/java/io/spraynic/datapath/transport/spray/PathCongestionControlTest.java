package io.spraynic.datapath.transport.spray;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S8.2: ECN-driven AIMD per path.
 */
class PathCongestionControlTest
{
    private static final long RTT = 10_000;

    @Test
    void shouldGrowByOnePacketPerUnmarkedRound()
    {
        final PathCongestionControl cc = new PathCongestionControl(16, 256, 1.0 / 16);
        long now = 0;
        for (int round = 0; round < 10; round++)
        {
            now += RTT;
            cc.onAck(0, cc.window(0), 0, now, RTT);
        }
        assertEquals(26, cc.window(0));
        assertEquals(0, cc.alpha(0), 1e-12);
    }

    @Test
    void shouldCutByHalfAlphaWhenRoundIsFullyMarked()
    {
        final PathCongestionControl cc = new PathCongestionControl(100, 256, 1.0 / 16);
        cc.onAck(0, 100, 100, RTT, RTT);
        assertEquals(1.0 / 16, cc.alpha(0), 1e-12);
        assertEquals((int)(100 * (1 - 1.0 / 32)), cc.window(0));
    }

    @Test
    void shouldConvergeAlphaToMarkedFraction()
    {
        final PathCongestionControl cc = new PathCongestionControl(200, 256, 1.0 / 16);
        long now = 0;
        for (int round = 0; round < 300; round++)
        {
            now += RTT;
            cc.onAck(0, 100, 25, now, RTT);
        }
        assertEquals(0.25, cc.alpha(0), 1e-3);
        assertEquals(1, cc.window(0), "a persistent 25 % marking drives the window to its floor");
    }

    @Test
    void shouldKeepWindowOnRandomLossByDefault()
    {
        final PathCongestionControl cc = new PathCongestionControl(64, 256, 1.0 / 16);
        cc.onLoss(0, 1);
        cc.onLoss(0, 2);
        assertEquals(64, cc.window(0));
        cc.onAck(0, 64, 0, RTT + 1, RTT);
        assertEquals(65, cc.window(0), "a round with losses but no CE marks still grows");
    }

    @Test
    void shouldHalveOnLossOncePerRoundWhenConfigured()
    {
        final PathCongestionControl cc = new PathCongestionControl(64, 256, 1.0 / 16, 0.5);
        cc.onLoss(0, 1);
        cc.onLoss(0, 2);
        assertEquals(32, cc.window(0));
        cc.onAck(0, 32, 0, RTT + 1, RTT); // the round ends without growth: it saw a loss
        assertEquals(32, cc.window(0));
        cc.onLoss(0, RTT + 2);
        assertEquals(16, cc.window(0));
    }

    @Test
    void shouldStayWithinOneAndMaximum()
    {
        final PathCongestionControl cc = new PathCongestionControl(250, 256, 1.0 / 16, 0.5);
        long now = 0;
        for (int round = 0; round < 20; round++)
        {
            now += RTT;
            cc.onAck(0, cc.window(0), 0, now, RTT);
        }
        assertEquals(256, cc.window(0));
        for (int i = 0; i < 20; i++)
        {
            now += RTT;
            cc.onLoss(0, now);
            cc.onAck(0, 1, 0, now, 0);
        }
        assertEquals(1, cc.window(0));
        assertThrows(IllegalArgumentException.class, () -> new PathCongestionControl(16, 300, 0.5));
        assertThrows(IllegalArgumentException.class, () -> new PathCongestionControl(16, 64, 0.5, 0));
    }
    @Test
    void shouldKeepEachPathsWindowApart()
    {
        final PathCongestionControl cc =
            new PathCongestionControl(3, new PathCongestionControl.Parameters(64, 256, 1.0 / 16, 0.5));
        cc.onLoss(1, 1);
        assertEquals(64, cc.window(0));
        assertEquals(32, cc.window(1));
        assertEquals(64, cc.window(2));
        cc.onAck(2, 64, 64, RTT, RTT); // a fully marked round on path 2 only
        assertEquals(1.0 / 16, cc.alpha(2), 1e-12);
        assertEquals(0, cc.alpha(0), 1e-12);
        cc.onAck(0, 64, 0, RTT, RTT);
        assertEquals(65, cc.window(0), "path 0's round grows it: path 1's loss was path 1's");
        cc.onLoss(1, 2);
        assertEquals(32, cc.window(1), "once per round, per path");
        cc.onLoss(0, RTT + 1);
        assertEquals(32, cc.window(0), "path 0's own round's first loss");
        cc.reset(1, 3 * RTT);
        assertEquals(64, cc.window(1));
        assertEquals(32, cc.window(0));
        assertThrows(IllegalArgumentException.class,
            () -> new PathCongestionControl(65, new PathCongestionControl.Parameters(16, 64, 0.5, 1)));
    }
}
