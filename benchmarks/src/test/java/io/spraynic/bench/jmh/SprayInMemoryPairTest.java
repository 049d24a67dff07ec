package io.spraynic.bench.jmh;

import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What SprayReceiveBenchmark times is real work: every burst is 32 fresh, valid data packets that B accepts
 * (none a duplicate), places byte for byte, and acknowledges, whether through the whole agent or through the
 * engine with pre-parsed frames.
 */
class SprayInMemoryPairTest
{
    private static final int BURST = SprayReceiveBenchmark.BURST;

    @ParameterizedTest
    @ValueSource(ints = {64, 1024, 4096})
    void shouldAcceptAndPlaceEveryPacketOfEveryBurstThroughTheAgent(final int payload)
    {
        try (SprayInMemoryPair pair = new SprayInMemoryPair(payload))
        {
            for (int burst = 1; burst <= 200; burst++)
            {
                pair.fillReceiveRing(BURST);
                final long before = pair.receivedPackets();
                pair.agentB.doWork();
                assertEquals(before + BURST, pair.receivedPackets(), "burst " + burst);
            }
            assertEquals(0, pair.receiveAnomalies());
            assertPlaced(pair, 200L * BURST);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {64, 4096})
    void shouldAcceptEveryPreParsedPacketThroughTheEngine(final int payload)
    {
        try (SprayInMemoryPair pair = new SprayInMemoryPair(payload))
        {
            final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), true);
            final RoceFrame[] frames = new RoceFrame[BURST];
            final PacketBurst held = pair.portB.newBurst(BURST);
            for (int burst = 1; burst <= 200; burst++)
            {
                pair.portB.release(held);
                pair.engineB.onTick(pair.now());
                pair.outputB.flush();
                pair.fillReceiveRing(BURST);
                assertEquals(BURST, pair.portB.receive(held));
                for (int i = 0; i < BURST; i++)
                {
                    frames[i] = null == frames[i] ? new RoceFrame() : frames[i];
                    assertEquals(FrameClass.ROCE, parser.parse(held.memory(), held.offset(i), held.length(i), frames[i]));
                    assertTrue(SprayOpcodes.isData(frames[i].opcode()));
                }
                final long before = pair.receivedPackets();
                for (int i = 0; i < BURST; i++)
                {
                    pair.engineB.onFrame(frames[i], pair.now());
                }
                assertTrue(pair.outputB.flush() > 0, "ACKs sent");
                assertEquals(before + BURST, pair.receivedPackets(), "burst " + burst);
            }
            pair.portB.release(held);
            held.close();
            assertEquals(0, pair.receiveAnomalies());
            assertPlaced(pair, 200L * BURST);
        }
    }

    @ParameterizedTest
    @ValueSource(ints = {64, 4096})
    void shouldAcceptAndPlaceEveryRoceV2PacketOfEveryBurst(final int payload)
    {
        try (RcInMemoryPair pair = new RcInMemoryPair(payload))
        {
            for (int burst = 1; burst <= 200; burst++)
            {
                pair.fillReceiveRing(BURST);
                final long before = pair.receivedPackets();
                pair.agentB.doWork();
                assertEquals(before + BURST, pair.receivedPackets(), "burst " + burst);
            }
            assertEquals(0, pair.receiveAnomalies());
            final long bytes = Math.min(200L * BURST * payload, RcInMemoryPair.REGION_BYTES - payload);
            assertEquals(-1, pair.source.segment().asSlice(0, bytes).mismatch(pair.target.segment().asSlice(0, bytes)));
        }
    }

    // the first messages (fewer than wrap the region) were written at the same offsets in source and target
    private static void assertPlaced(final SprayInMemoryPair pair, final long messages)
    {
        final long bytes = Math.min(messages * pair.payload, SprayInMemoryPair.REGION_BYTES - pair.payload);
        assertEquals(-1, pair.source.segment().asSlice(0, bytes).mismatch(pair.target.segment().asSlice(0, bytes)),
            "payload placed byte for byte");
    }
}
