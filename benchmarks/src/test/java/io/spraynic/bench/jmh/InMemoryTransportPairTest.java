package io.spraynic.bench.jmh;

import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What SprayReceiveBenchmark times is real work: every burst is 32 fresh, valid data packets that B accepts
 * (none a duplicate), places byte for byte, and acknowledges, whether through the whole agent (spray and the
 * RoCEv2 baseline) or through the spray engine with pre-parsed frames.
 */
class InMemoryTransportPairTest
{
    private static final int BURST = SprayReceiveBenchmark.BURST;

    @ParameterizedTest
    @CsvSource({"spray, 64", "spray, 1024", "spray, 4096", "rocev2, 64", "rocev2, 4096"})
    void shouldAcceptAndPlaceEveryPacketOfEveryBurstThroughTheAgent(final String transport, final int payload)
    {
        try (InMemoryTransportPair pair = "spray".equals(transport) ? new SprayInMemoryPair(payload) : new RcInMemoryPair(payload))
        {
            for (int burst = 1; burst <= 200; burst++)
            {
                pair.fillReceiveRing(BURST);
                final long before = pair.receivedPackets();
                pair.receiveBurst();
                assertEquals(before + BURST, pair.receivedPackets(), "burst " + burst);
            }
            assertEquals(0, pair.receiveAnomalies());
            assertTrue(pair.placed(200L * BURST), "payload placed byte for byte");
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
            assertTrue(pair.placed(200L * BURST), "payload placed byte for byte");
        }
    }

    // what SprayReceiveCpuTime times: it throws unless B accepted every packet of both loops, none an anomaly, and
    // placed the WRITEs byte for byte
    @ParameterizedTest
    @ValueSource(strings = {"64", "4096"})
    void shouldAcceptAndPlaceEveryPacketSprayReceiveCpuTimeTimes(final String payload)
    {
        SprayReceiveCpuTime.main(new String[] {payload, "1", "50"});
    }

    // what SpraySendCpuTime times: A's steps complete WRITEs that B placed, with B stepped apart
    @ParameterizedTest
    @ValueSource(ints = {64, 4096})
    void shouldCompleteWritesThatArrivedWhenTheSenderIsSteppedAlone(final int payload)
    {
        try (SprayInMemoryPair pair = new SprayInMemoryPair(payload))
        {
            long completed = 0;
            for (int step = 0; step < 2_000 && completed < 20_000; step++)
            {
                completed += pair.senderStep();
                while (pair.portB.pendingReceive() > 0)
                {
                    pair.receiveBurst();
                }
                pair.receiveBurst();
            }
            assertTrue(completed >= 20_000, "completed " + completed);
            assertTrue(pair.receivedPackets() >= completed, "every completed WRITE arrived first");
            assertEquals(0, pair.receiveAnomalies());
            assertTrue(pair.placed(Math.min(completed, InMemoryTransportPair.REGION_BYTES / payload)));
        }
    }
}
