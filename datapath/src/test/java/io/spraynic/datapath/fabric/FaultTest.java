package io.spraynic.datapath.fabric;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FaultTest
{
    private static final int PLANES = 4;
    private static final int FRAMES = 4_000;
    private static final long GAP_NS = 100;

    private final Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withFrames(4_096, 2_048), PLANES, 2);
    private final RecordingEndpoint receiver = new RecordingEndpoint();

    @AfterEach
    void close()
    {
        fabric.close();
    }

    /** Host 0 sprays frames round-robin over the planes, one every 100 ns from t = 0 to 400 µs. */
    private PacedSender spray(final int[] udpSourcePorts)
    {
        fabric.host(1).attach(receiver);
        return new PacedSender(fabric.host(0), 0, 1, new int[]{0, 1, 2, 3}, udpSourcePorts, FRAMES, GAP_NS, 512, 2)
            .start(0);
    }

    @Test
    void shouldLoseOnlyTheFailedPlaneWhileItIsDown()
    {
        spray(new int[]{0xC000});
        fabric.failPlaneAt(100_000, 2);
        fabric.restorePlaneAt(300_000, 2);
        fabric.runUntil(200_000);
        assertFalse(fabric.host(0).port(2).isUp());
        assertTrue(fabric.host(0).port(1).isUp());
        fabric.runUntilIdle();

        // frames sent on plane 2 from just before 100 µs (still in the plane) to 300 µs are lost
        int lost = 0;
        final boolean[] arrived = new boolean[FRAMES];
        for (int i = 0; i < receiver.received(); i++)
        {
            arrived[receiver.sequences.getInt(i)] = true;
        }
        for (int i = 0; i < FRAMES; i++)
        {
            final long sentAt = i * GAP_NS;
            if (!arrived[i])
            {
                lost++;
                assertEquals(2, i % PLANES, "frame " + i + " was on plane " + i % PLANES);
                assertTrue(sentAt >= 100_000 - 2_100 && sentAt < 300_000, "frame " + i + " sent at " + sentAt);
            }
            else if (i % PLANES == 2)
            {
                assertTrue(sentAt < 100_000 || sentAt >= 300_000, "frame " + i + " sent at " + sentAt);
            }
        }
        // 200 µs of one plane in four, a frame each 100 ns: 500; plus the 5 sent in the last 2 µs before
        // the failure, still on their way (about 1 µs per hop) when it came: a switch finds every port of
        // their route down
        assertEquals(505, lost);
        final FabricTotals totals = fabric.totals();
        assertEquals(500, totals.linkDownDrops(), totals.toString());
        assertEquals(5, totals.switchDrops());
        assertEquals(5, fabric.switchNamed("p2/sw0").noLivePortDrops() + fabric.switchNamed("p2/sw1").noLivePortDrops());
        assertTrue(totals.isConserved());
        assertEquals(0, receiver.invalidFrames);
    }

    @Test
    void shouldBlackholeOnePathMidTransferAndRestoreIt()
    {
        // two UDP source ports per plane: pick the pair whose sw0 choices differ on plane 0
        final Switch sw0 = fabric.switchNamed("p0/sw0");
        final TestFrames frames = new TestFrames();
        final FabricPort port = fabric.host(0).port(0);
        int second = 0xC001;
        final int firstPath = sw0.portFor(frames.buffer(), 0,
            frames.ipv4(port.localAddress(), port.addressOf(1), 0xC000, 0, 0, 0, 64));
        while (sw0.portFor(frames.buffer(), 0,
            frames.ipv4(port.localAddress(), port.addressOf(1), second, 0, 0, 0, 64)) == firstPath)
        {
            second++;
        }
        final Link path = sw0.output(firstPath);
        spray(new int[]{0xC000, 0xC000, 0xC000, 0xC000, second, second, second, second});
        fabric.blackholeAt(100_000, path);
        fabric.endBlackholeAt(200_000, path);
        fabric.runUntilIdle();

        // frames 0,8,16... (plane 0, port 0xC000) took the blackholed path: lost in [100 µs, 200 µs)
        final boolean[] arrived = new boolean[FRAMES];
        for (int i = 0; i < receiver.received(); i++)
        {
            arrived[receiver.sequences.getInt(i)] = true;
        }
        int lost = 0;
        for (int i = 0; i < FRAMES; i++)
        {
            if (!arrived[i])
            {
                lost++;
                assertEquals(0, i % 8, "only plane 0's first flow crosses the blackhole");
                assertTrue(i * GAP_NS >= 100_000 - 3_000 && i * GAP_NS < 200_000, "frame " + i);
            }
        }
        assertEquals(125, lost, "100 µs of one flow sending every 800 ns");
        assertEquals(125, path.blackholeDrops());
        assertTrue(path.isUp());
    }

    @Test
    void shouldChangeLossMidRunAndFailASwitchPort()
    {
        final Link lossy = fabric.link("p1/sw0->sw1#0");
        final Link other = fabric.link("p1/sw0->sw1#1");
        spray(new int[]{0xC000, 0xC000, 0xC000, 0xC000, 0xC001, 0xC001, 0xC001, 0xC001, 0xC002, 0xC002, 0xC002,
            0xC002, 0xC003, 0xC003, 0xC003, 0xC003});
        fabric.lossAt(0, lossy, 0.5);
        fabric.lossAt(200_000, lossy, 0.0);
        final Switch sw0 = fabric.switchNamed("p3/sw0");
        fabric.failSwitchPortAt(300_000, sw0, 0);
        fabric.runUntilIdle();

        assertTrue(lossy.randomLossDrops() > 0);
        final boolean[] arrived = new boolean[FRAMES];
        for (int i = 0; i < receiver.received(); i++)
        {
            arrived[receiver.sequences.getInt(i)] = true;
        }
        for (int i = 0; i < FRAMES; i++)
        {
            if (!arrived[i])
            {
                final long sentAt = i * GAP_NS;
                final boolean lossWindow = i % PLANES == 1 && sentAt < 200_000;
                final boolean portDown = i % PLANES == 3 && sentAt >= 300_000;
                assertTrue(lossWindow || portDown, "frame " + i + " sent at " + sentAt + " on plane " + i % PLANES);
            }
        }
        assertEquals(lossy.randomLossDrops() + other.randomLossDrops(), fabric.totals().randomLossDrops());
        assertFalse(fabric.host(0).port(3).isUp(), "the switch port facing host 0 is down both ways");
        assertFalse(fabric.link("p3/host0->sw0").isUp());
        assertFalse(fabric.link("p3/sw0->host0").isUp());
        assertEquals(250, fabric.totals().linkDownDrops(), "plane 3 frames sent in the last 100 µs");
        assertTrue(fabric.totals().isConserved());
    }
}
