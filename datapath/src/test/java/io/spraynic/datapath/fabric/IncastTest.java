package io.spraynic.datapath.fabric;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IncastTest
{
    private static final int FRAMES_PER_SENDER = 100;
    private static final int PAYLOAD = 1024;
    private static final int FRAME = TestFrames.IPV4_PAYLOAD_OFFSET + PAYLOAD + 4;
    private static final long GAP_NS = 89; // 1082 + 24 B at 100 Gb/s take 88.48 ns: senders at line rate

    record Outcome(int received, int congestionExperienced, long tailDrops, long ecnMarked, int peakQueueBytes,
        long firstArrivalNs, long lastArrivalNs, FabricTotals totals, int invalidFrames)
    {
    }

    private static Outcome incast(final int senders, final int ecn)
    {
        final int hostsPerLeaf = senders == 32 ? 11 : 13;
        final int leaves = (senders + 1) / hostsPerLeaf;
        assertEquals(senders + 1, leaves * hostsPerLeaf);
        try (Fabric fabric = Topology.twoTierClos(FabricConfig.DEFAULT.withFrames(16_384, 2_048), leaves, 4,
            hostsPerLeaf, 1))
        {
            final RecordingEndpoint receiver = new RecordingEndpoint();
            fabric.host(0).attach(receiver);
            for (int s = 1; s <= senders; s++)
            {
                new PacedSender(fabric.host(s), s, 0, new int[]{0}, new int[]{0xC000 + s}, FRAMES_PER_SENDER, GAP_NS,
                    PAYLOAD, ecn).start(0);
            }
            fabric.runUntilIdle();

            final Link bottleneck = fabric.link("p0/leaf0->host0");
            return new Outcome(receiver.received(), receiver.congestionExperienced(), bottleneck.tailDrops(),
                bottleneck.ecnMarked(), bottleneck.peakQueueBytes(), receiver.times.getLong(0),
                receiver.times.getLong(receiver.received() - 1), fabric.totals(), (int)receiver.invalidFrames);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {32, 64})
    void shouldFillTheReceiversQueueThenMarkAndTailDrop(final int senders)
    {
        final Outcome outcome = incast(senders, 2);
        final int capacity = LinkConfig.DATA_CENTRE.queueBytes();

        assertTrue(outcome.peakQueueBytes() <= capacity);
        assertTrue(outcome.peakQueueBytes() > capacity - FRAME, "the queue filled: peak " + outcome.peakQueueBytes());
        assertTrue(outcome.tailDrops() > 0);
        assertTrue(outcome.ecnMarked() > 0);
        assertTrue(outcome.congestionExperienced() > 0);
        assertTrue(outcome.congestionExperienced() <= outcome.totals().ecnMarked());
        assertEquals(0, outcome.invalidFrames(), "marked frames keep valid checksums and ICRCs");

        final FabricTotals totals = outcome.totals();
        assertEquals((long)senders * FRAMES_PER_SENDER, totals.framesSent());
        assertEquals(outcome.received(), totals.framesReceived());
        assertEquals(totals.framesSent(), totals.framesReceived() + totals.tailDrops(), "only tail drops");
        assertTrue(totals.isConserved());

        // the bottleneck never idles once busy: arrivals are back to back at 88.48 ns
        final double busyNs = (outcome.received() - 1) * 88.48;
        assertEquals(busyNs, outcome.lastArrivalNs() - outcome.firstArrivalNs(), 1.0);
    }

    @ParameterizedTest
    @ValueSource(ints = {32, 64})
    void shouldNotMarkNotEctFramesAndDropTheSame(final int senders)
    {
        final Outcome ect = incast(senders, 2);
        final Outcome notEct = incast(senders, 0);

        assertEquals(0, notEct.totals().ecnMarked());
        assertEquals(0, notEct.congestionExperienced());
        assertEquals(ect.tailDrops(), notEct.tailDrops(), "marking does not change timing");
        assertEquals(ect.received(), notEct.received());
        assertEquals(ect.peakQueueBytes(), notEct.peakQueueBytes());
    }
}
