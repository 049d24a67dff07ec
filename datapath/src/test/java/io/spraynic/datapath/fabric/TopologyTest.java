package io.spraynic.datapath.fabric;

import io.spraynic.datapath.wire.Wire;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class TopologyTest
{
    private static final FabricConfig SMALL = FabricConfig.DEFAULT.withFrames(4_096, 2_048)
        .withLinks(LinkConfig.DATA_CENTRE.withQueue(64 * 1024, 16 * 1024));

    @Test
    void shouldBuildBackToBackPlanesOfParallelLinks()
    {
        try (Fabric fabric = Topology.backToBack(SMALL, 4, 2))
        {
            assertEquals(2, fabric.hostCount());
            assertEquals(4, fabric.planes());
            assertEquals(8, fabric.switches().size());
            assertEquals(4 * (4 + 4), fabric.links().size(), "per plane: 4 host links and 2 x 2 between switches");
            assertEquals(16, fabric.hostLinks().size());
            assertEquals(16, fabric.fabricLinks().size());
            assertEquals("10.3.1.1", Wire.ipv4ToString(fabric.host(1).port(3).localAddress()));
            assertEquals("10.3.0.1", Wire.ipv4ToString(fabric.host(1).port(3).addressOf(0)));
            assertEquals("02:00:00:03:00:01", Wire.macToString(fabric.host(1).port(3).localMac()));
            assertEquals(1, fabric.addresses().hostOf(fabric.host(1).port(2).localAddress()));
            final Switch sw0 = fabric.switchNamed("p2/sw0");
            assertArrayEquals(new int[]{1, 2}, sw0.routeOf(fabric.host(1).port(2).localAddress()));
            assertEquals(fabric.link("p2/sw0->host0"), sw0.output(0));
            assertEquals(fabric.link("p2/host0->sw0"), sw0.input(0));
            assertEquals(fabric.link("p2/sw0->sw1#1"), sw0.output(2));
        }
    }

    @Test
    void shouldReachEveryHostFromEveryHostOnEveryPlaneOfAClos()
    {
        final int leaves = 4;
        final int hostsPerLeaf = 3;
        final int planes = 2;
        try (Fabric fabric = Topology.twoTierClos(SMALL, leaves, 2, hostsPerLeaf, planes))
        {
            final int hosts = leaves * hostsPerLeaf;
            assertEquals(hosts, fabric.hostCount());
            assertEquals(planes * (leaves + 2), fabric.switches().size());
            assertEquals("10.1.2.3", Wire.ipv4ToString(fabric.host(2 * hostsPerLeaf + 2).port(1).localAddress()));

            final RecordingEndpoint[] endpoints = new RecordingEndpoint[hosts];
            for (int h = 0; h < hosts; h++)
            {
                endpoints[h] = new RecordingEndpoint();
                fabric.host(h).attach(endpoints[h]);
            }
            final TestFrames frames = new TestFrames();
            for (int from = 0; from < hosts; from++)
            {
                for (int to = 0; to < hosts; to++)
                {
                    for (int p = 0; p < planes; p++)
                    {
                        if (from != to)
                        {
                            final FabricPort port = fabric.host(from).port(p);
                            final int length = frames.ipv4(port.localAddress(), port.addressOf(to), 0xC000 + to,
                                2, from, to * planes + p, 256);
                            assertTrue(port.send(frames.buffer(), 0, length));
                        }
                    }
                }
            }
            fabric.runUntilIdle();

            for (int to = 0; to < hosts; to++)
            {
                final RecordingEndpoint endpoint = endpoints[to];
                assertEquals((hosts - 1) * planes, endpoint.received(), "host " + to);
                assertEquals(0, endpoint.invalidFrames);
                final boolean[][] seen = new boolean[hosts][planes];
                for (int i = 0; i < endpoint.received(); i++)
                {
                    final int from = endpoint.senders.getInt(i);
                    final int plane = endpoint.sequences.getInt(i) - to * planes;
                    assertEquals(plane, endpoint.ports.getInt(i), "arrives on the plane it was sent on");
                    seen[from][plane] = true;
                }
                for (int from = 0; from < hosts; from++)
                {
                    for (int p = 0; p < planes; p++)
                    {
                        assertEquals(from != to, seen[from][p], from + "->" + to + " on plane " + p);
                    }
                }
            }
            final FabricTotals totals = fabric.totals();
            assertEquals(0, totals.drops());
            assertEquals(0, totals.framesInFabric());
            assertTrue(totals.isConserved());
        }
    }

    @Test
    void shouldCrossAnIdleClosInFourHopsOfSerialisationAndPropagation()
    {
        // host -> leaf -> spine -> leaf -> host: 4 links of 1 µs, each serialising 1022 + 24 B at 100 Gb/s
        try (Fabric fabric = Topology.twoTierClos(SMALL, 2, 4, 1, 1))
        {
            final RecordingEndpoint receiver = new RecordingEndpoint();
            fabric.host(1).attach(receiver);
            final TestFrames frames = new TestFrames();
            final FabricPort port = fabric.host(0).port(0);
            final int length = frames.ipv4(port.localAddress(), port.addressOf(1), 0xC000, 0, 0, 0, 964);
            assertEquals(1022, length);
            for (int i = 0; i < 16; i++)
            {
                fabric.at(i * 10_000L, () -> port.send(frames.buffer(), 0, length));
            }
            fabric.runUntilIdle();

            assertEquals(16, receiver.received());
            final long serialisationNs = Math.ceilDiv(8L * (1022 + 24) * 10, 1000); // 83.68 ns -> 84
            for (int i = 0; i < 16; i++)
            {
                assertEquals(i * 10_000L + 4 * (1_000 + serialisationNs), receiver.times.getLong(i));
            }
        }
    }

    @Test
    void shouldRejectImpossibleShapesWithClearMessages()
    {
        assertEquals("parallel links 0 must be 1..1024",
            assertThrows(IllegalArgumentException.class, () -> Topology.backToBack(SMALL, 1, 0)).getMessage());
        assertEquals("planes 0 must be 1..256",
            assertThrows(IllegalArgumentException.class, () -> Topology.backToBack(SMALL, 0, 1)).getMessage());
        assertEquals("spines per plane 0 must be 1..256 (0 only with a single leaf)",
            assertThrows(IllegalArgumentException.class, () -> Topology.twoTierClos(SMALL, 2, 0, 1, 1)).getMessage());
        assertEquals("hosts per leaf 255 must be 1..254",
            assertThrows(IllegalArgumentException.class, () -> Topology.twoTierClos(SMALL, 1, 1, 255, 1)).getMessage());
        assertEquals("host link queue 1000 B cannot hold one 2048 B frame",
            assertThrows(IllegalArgumentException.class,
                () -> SMALL.withHostLink(LinkConfig.DATA_CENTRE.withQueue(1000, 100))).getMessage());
        assertEquals("loss probability 1.0 must be in [0, 1)",
            assertThrows(IllegalArgumentException.class, () -> LinkConfig.DATA_CENTRE.withLoss(1.0)).getMessage());
        assertEquals("link rate 0 b/s must be 1 kb/s..100 Tb/s",
            assertThrows(IllegalArgumentException.class, () -> LinkConfig.DATA_CENTRE.withRate(0)).getMessage());
    }

    @Test
    void shouldUseDataCentreDefaults()
    {
        final LinkConfig link = FabricConfig.DEFAULT.fabricLink();
        assertEquals(100_000_000_000L, link.rateBitsPerSecond());
        assertEquals(1_000, link.propagationDelayNs());
        assertEquals(512 * 1024, link.queueBytes());
        assertEquals(100 * 1024, link.ecnThresholdBytes());
        assertEquals(0.0, link.lossProbability());
        assertEquals(24, link.wireOverheadBytes());
        assertEquals(81_920, link.serializationPicos(1000));
    }

    @Test
    void shouldCarryIpv6FramesAddressedToIpv4MappedAddresses()
    {
        try (Fabric fabric = Topology.backToBack(SMALL, 2, 2))
        {
            final RecordingEndpoint receiver = new RecordingEndpoint();
            fabric.host(0).attach(receiver);
            final TestFrames frames = new TestFrames();
            final FabricPort port = fabric.host(1).port(1);
            for (int i = 0; i < 10; i++)
            {
                final int length = frames.ipv6(port.localAddress(), port.addressOf(0), 0xC000 + i, 2, 1, i, 200);
                assertTrue(port.send(frames.buffer(), 0, length));
            }
            fabric.runUntilIdle();

            assertEquals(10, receiver.received());
            assertEquals(0, receiver.invalidFrames);
            assertEquals(1, receiver.ports.getInt(0));
        }
    }
}
