package io.spraynic.datapath.fabric;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class EcmpTest
{
    private static final int PATHS = 8;

    private final Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT
        .withHostLink(LinkConfig.DATA_CENTRE.withQueue(64 << 20, 64 << 20)), 1, PATHS);
    private final TestFrames frames = new TestFrames();
    private final RecordingEndpoint receiver = new RecordingEndpoint();

    @AfterEach
    void close()
    {
        fabric.close();
    }

    private boolean send(final int udpSourcePort, final int sequence)
    {
        final FabricPort port = fabric.host(0).port(0);
        final int length = frames.ipv4(port.localAddress(), port.addressOf(1), udpSourcePort, 0, 0, sequence, 64);
        return port.send(frames.buffer(), 0, length);
    }

    private long[] sentPerPath()
    {
        final long[] sent = new long[PATHS];
        for (int k = 0; k < PATHS; k++)
        {
            sent[k] = fabric.link("p0/sw0->sw1#" + k).framesSent();
        }
        return sent;
    }

    @Test
    void shouldKeepOneFlowOnOnePath()
    {
        fabric.host(1).attach(receiver);
        for (int i = 0; i < 100; i++)
        {
            send(0xC0DE, i);
        }
        fabric.runUntilIdle();

        final long[] sent = sentPerPath();
        int used = 0;
        for (final long count : sent)
        {
            assertTrue(count == 0 || count == 100);
            used += count == 100 ? 1 : 0;
        }
        assertEquals(1, used);
        assertEquals(100, receiver.received());
        for (int i = 0; i < 100; i++)
        {
            assertEquals(i, receiver.sequences.getInt(i), "one path keeps order");
        }
    }

    @Test
    void shouldSpreadUdpSourcePortsEvenlyOverParallelLinks()
    {
        fabric.host(1).attach(receiver);
        final int flows = 8_000;
        for (int i = 0; i < flows; i++)
        {
            send(0xC000 + i, i);
        }
        fabric.runUntilIdle();

        final long[] sent = sentPerPath();
        final double expected = (double)flows / PATHS;
        double chiSquare = 0;
        for (final long count : sent)
        {
            assertTrue(count > 0);
            chiSquare += (count - expected) * (count - expected) / expected;
        }
        // 7 degrees of freedom: P(chi-square > 24.32) = 0.001 for a uniform hash
        assertTrue(chiSquare < 24.32, "chi-square " + chiSquare + " over " + java.util.Arrays.toString(sent));
        assertEquals(flows, receiver.received());
        assertEquals(0, receiver.invalidFrames);
    }

    @Test
    void shouldAgreeWithPortForAndMoveOnlyTheFlowsOfADownLink()
    {
        final Switch sw0 = fabric.switchNamed("p0/sw0");
        final MemorySegment buffer = frames.buffer();
        final int flows = 2_000;
        final int[] before = new int[flows];
        for (int i = 0; i < flows; i++)
        {
            final int length = frames.ipv4(fabric.host(0).port(0).localAddress(),
                fabric.host(1).port(0).localAddress(), 0xC000 + i, 0, 0, i, 64);
            before[i] = sw0.portFor(buffer, 0, length);
            assertTrue(before[i] >= 1 && before[i] <= PATHS, "ports 1..8 face sw1");
        }
        final Link failed = fabric.link("p0/sw0->sw1#3");
        final int failedPort = 4;
        assertEquals(failed, sw0.output(failedPort));
        failed.down(true);

        int moved = 0;
        for (int i = 0; i < flows; i++)
        {
            final int length = frames.ipv4(fabric.host(0).port(0).localAddress(),
                fabric.host(1).port(0).localAddress(), 0xC000 + i, 0, 0, i, 64);
            final int after = sw0.portFor(buffer, 0, length);
            if (before[i] == failedPort)
            {
                assertTrue(after != failedPort && after >= 1 && after <= PATHS);
                moved++;
            }
            else
            {
                assertEquals(before[i], after, "flow " + i + " was not on the failed link");
            }
        }
        assertTrue(moved > 0);

        fabric.host(1).attach(receiver);
        for (int i = 0; i < flows; i++)
        {
            send(0xC000 + i, i);
        }
        fabric.runUntilIdle();
        assertEquals(flows, receiver.received(), "a down link is routed around");
        assertEquals(0, failed.framesSent());
    }

    /**
     * Balancing per packet: round robin puts one flow's frames on every link of the group in turn, skipping a down one,
     * and with links of different lengths the flow arrives out of order (the fabric S6.5-3 is for).
     */
    @Test
    void shouldSpreadOneFlowOverEveryLiveLinkInTurnAndReorderIt()
    {
        fabric.host(1).attach(receiver);
        final Switch sw0 = fabric.switchNamed("p0/sw0");
        sw0.balancing(Switch.Balancing.ROUND_ROBIN);
        assertEquals(Switch.Balancing.ROUND_ROBIN, sw0.balancing());
        fabric.link("p0/sw0->sw1#2").down(true);
        fabric.link("p0/sw0->sw1#5").propagationDelayNs(fabric.link("p0/sw0->sw1#5").propagationDelayNs() + 10_000);
        final int frames = 700;
        for (int i = 0; i < frames; i++)
        {
            send(0xC0DE, i);
            fabric.runUntil(fabric.now() + 200); // one at a time, so that no queue decides
        }
        fabric.runUntilIdle();
        final long[] sent = sentPerPath();
        for (int k = 0; k < PATHS; k++)
        {
            assertEquals(k == 2 ? 0 : frames / (PATHS - 1), sent[k], "link " + k + ": " + java.util.Arrays.toString(sent));
        }
        assertEquals(frames, receiver.received());
        int outOfOrder = 0;
        for (int i = 1; i < frames; i++)
        {
            outOfOrder += receiver.sequences.getInt(i) < receiver.sequences.getInt(i - 1) ? 1 : 0;
        }
        assertTrue(outOfOrder >= 90, "the long link's frames arrive after later ones: " + outOfOrder);
    }

    /** Adaptive routing: one flow sent in a burst leaves by whichever link has the least queued, so by several. */
    @Test
    void shouldSendABurstOfOneFlowByTheLeastQueuedLinks()
    {
        fabric.host(1).attach(receiver);
        fabric.switchNamed("p0/sw0").balancing(Switch.Balancing.LEAST_QUEUED);
        for (int i = 0; i < 400; i++)
        {
            send(0xC0DE, i);
        }
        fabric.runUntilIdle();
        int used = 0;
        for (final long count : sentPerPath())
        {
            used += count > 0 ? 1 : 0;
        }
        assertTrue(used >= 2, "a queue on the hashed link moves frames to others: " +
            java.util.Arrays.toString(sentPerPath()));
        assertEquals(400, receiver.received());
    }

    @Test
    void shouldKeepSendingIntoABlackholeBecauseNobodySeesIt()
    {
        fabric.host(1).attach(receiver);
        final Link blackholed = fabric.link("p0/sw0->sw1#5");
        blackholed.blackhole(true);
        final int flows = 2_000;
        for (int i = 0; i < flows; i++)
        {
            send(0xC000 + i, i);
        }
        fabric.runUntilIdle();

        assertTrue(blackholed.blackholeDrops() > 0);
        assertEquals(flows, receiver.received() + blackholed.blackholeDrops());
        assertTrue(fabric.totals().isConserved());
    }

    @Test
    void shouldCountAndDropMalformedUnroutableAndNonIpFrames()
    {
        fabric.host(1).attach(receiver);
        final FabricPort port = fabric.host(0).port(0);
        final MemorySegment buffer = frames.buffer();

        // too short for an IPv4 header
        int length = frames.ipv4(port.localAddress(), port.addressOf(1), 0xC000, 0, 0, 0, 64);
        assertTrue(port.send(buffer, 0, 30));
        // no route: a destination on no host
        length = frames.ipv4(port.localAddress(), 0x0B00_0001, 0xC000, 0, 0, 1, 64);
        assertTrue(port.send(buffer, 0, length));
        // not IP, and the edge switch has no default route
        length = frames.ipv4(port.localAddress(), port.addressOf(1), 0xC000, 0, 0, 2, 64);
        io.spraynic.datapath.wire.EthernetHeader.etherType(buffer, 0, 0x88CC);
        assertTrue(port.send(buffer, 0, length));
        // and one good frame
        length = frames.ipv4(port.localAddress(), port.addressOf(1), 0xC000, 0, 0, 3, 64);
        assertTrue(port.send(buffer, 0, length));
        fabric.runUntilIdle();

        final Switch sw0 = fabric.switchNamed("p0/sw0");
        assertEquals(1, sw0.malformedDrops());
        assertEquals(2, sw0.noRouteDrops());
        assertEquals(1, receiver.received());
        assertEquals(3, receiver.sequences.getInt(0));
        assertEquals(fabric.pool().capacity(), fabric.pool().available());
        assertTrue(fabric.totals().isConserved());
    }

    @Test
    void shouldReorderAcrossPathsOfDifferentLengthButNeverWithinOne()
    {
        fabric.host(1).attach(receiver);
        final Switch sw0 = fabric.switchNamed("p0/sw0");
        final FabricPort port = fabric.host(0).port(0);
        final int slowPort = sw0.portFor(frames.buffer(), 0,
            frames.ipv4(port.localAddress(), port.addressOf(1), 0xC000, 0, 0, 0, 64));
        int fastSourcePort = 0xC001;
        while (sw0.portFor(frames.buffer(), 0,
            frames.ipv4(port.localAddress(), port.addressOf(1), fastSourcePort, 0, 0, 0, 64)) == slowPort)
        {
            fastSourcePort++;
        }
        sw0.output(slowPort).propagationDelayNs(3_050);
        new PacedSender(fabric.host(0), 0, 1, new int[]{0}, new int[]{0xC000, fastSourcePort}, 200, 100, 256, 0)
            .start(0);
        fabric.runUntilIdle();

        assertEquals(200, receiver.received());
        int overtaken = 0;
        int lastSlow = -1;
        int lastFast = -1;
        for (int i = 0; i < 200; i++)
        {
            final int sequence = receiver.sequences.getInt(i);
            if (i > 0 && sequence < receiver.sequences.getInt(i - 1))
            {
                overtaken++;
            }
            if (receiver.udpSourcePorts.getInt(i) == 0xC000)
            {
                assertTrue(sequence > lastSlow, "in order on one path");
                lastSlow = sequence;
            }
            else
            {
                assertTrue(sequence > lastFast, "in order on one path");
                lastFast = sequence;
            }
        }
        assertTrue(overtaken > 0, "the short path overtakes the long one");
        // 2.05 µs more on the slow path, a frame every 100 ns alternating: frame 0 arrives after the fast
        // frames sent in its first 2.05 µs, 1, 3 ... 19
        assertEquals(1, receiver.sequences.getInt(0));
        assertEquals(0, receiver.sequences.getInt(10));
        assertEquals(21, receiver.sequences.getInt(11));
    }

    @Test
    void shouldSpreadSinglePathFlowsOverPlanesByEntropy()
    {
        try (Fabric planes = Topology.backToBack(FabricConfig.DEFAULT.withFrames(64, 2_048), 4, 1))
        {
            final Host host = planes.host(0);
            final int[] perPlane = new int[4];
            for (int entropy = 0; entropy < 4_000; entropy++)
            {
                final int plane = host.planeFor(1, 0xC000 + entropy);
                assertEquals(plane, host.planeFor(1, 0xC000 + entropy));
                perPlane[plane]++;
            }
            for (final int count : perPlane)
            {
                assertTrue(count > 850 && count < 1150, java.util.Arrays.toString(perPlane));
            }
        }
    }
}
