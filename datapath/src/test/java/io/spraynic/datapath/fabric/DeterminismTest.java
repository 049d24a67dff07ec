package io.spraynic.datapath.fabric;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DeterminismTest
{
    /**
     * A busy, lossy, faulty run: 16 hosts on a 2-plane Clos each spraying 500 frames at another over both
     * planes and 8 UDP source ports, 1 % loss on switch links, a blackhole and a plane failure mid-run.
     *
     * @return everything observable: each receiver's arrivals, every link's counters, the event count.
     */
    private static List<String> run(final long seed)
    {
        final FabricConfig config = FabricConfig.DEFAULT.withFrames(8_192, 2_048).withSeed(seed)
            .withFabricLink(LinkConfig.DATA_CENTRE.withQueue(64 * 1024, 16 * 1024).withLoss(0.01));
        try (Fabric fabric = Topology.twoTierClos(config, 4, 2, 4, 2))
        {
            final List<PacedSender> senders = new ArrayList<>();
            for (int h = 0; h < 16; h++)
            {
                senders.add(new PacedSender(fabric.host(h), h, (h + 5) % 16, new int[]{0, 1},
                    new int[]{0xC000, 0xC001, 0xC002, 0xC003, 0xC004, 0xC005, 0xC006, 0xC007}, 500, 50, 512, 2)
                    .start(h * 10L));
            }
            fabric.blackholeAt(5_000, fabric.link("p0/spine1->leaf2"));
            fabric.failPlaneAt(12_000, 1);
            fabric.restorePlaneAt(18_000, 1);
            fabric.runUntilIdle();

            final List<String> observed = new ArrayList<>();
            for (final PacedSender sender : senders)
            {
                observed.add(sender.times + " " + sender.senders + " " + sender.sequences + " " + sender.ecns);
            }
            for (final Link link : fabric.links())
            {
                observed.add(link.toString() + " delivered=" + link.framesDelivered());
            }
            for (final Switch sw : fabric.switches())
            {
                observed.add(sw.toString());
            }
            observed.add(fabric.totals().toString());
            observed.add("events=" + fabric.simulator().eventsProcessed() + " now=" + fabric.now());
            assertTrue(fabric.totals().isConserved());
            assertTrue(fabric.totals().randomLossDrops() > 0);
            assertTrue(fabric.totals().blackholeDrops() > 0);
            assertTrue(fabric.totals().linkDownDrops() > 0);
            return observed;
        }
    }

    @Test
    void shouldRepeatARunExactlyForTheSameSeed()
    {
        final List<String> first = run(11);
        final List<String> second = run(11);

        assertEquals(first.size(), second.size());
        for (int i = 0; i < first.size(); i++)
        {
            assertEquals(first.get(i), second.get(i), "observation " + i);
        }
    }

    @Test
    void shouldDifferForAnotherSeed()
    {
        assertNotEquals(run(11), run(12));
    }
}
