package io.spraynic.datapath.fabric;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RealTimeFabricAgentTest
{
    private static final int PAYLOAD = 964;
    private static final int FRAME = 1022;
    /** Three hops (host -> sw0 -> sw1 -> host) of 1 µs plus 1046 B serialised at 100 Gb/s (83.68 -> 84 ns). */
    private static final long LATENCY_NS = 3 * (1_000 + 84);

    private final InMemoryLink wireA = new InMemoryLink("hostA", 64, 4096);
    private final InMemoryLink wireB = new InMemoryLink("hostB", 64, 4096);
    private final Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withFrames(1_024, 2_048), 1, 1);
    private final TestFrames frames = new TestFrames();
    private final long[] clockNs = {5_000_000_000L};
    private final RealTimeFabricAgent agent = new RealTimeFabricAgent("fabric", fabric,
        new PacketPort[][]{{wireA.second()}, {wireB.second()}}, 16, () -> clockNs[0]);

    @AfterEach
    void close()
    {
        agent.onClose();
        fabric.close();
        wireA.close();
        wireB.close();
    }

    /** Host A (behind wire A) transmits a frame to host B's fabric address. */
    private void transmitFromA(final int sequence)
    {
        final PacketPort hostA = wireA.first();
        final PacketBurst burst = hostA.newBurst(1);
        assertTrue(hostA.allocate(burst, 1));
        final FabricPort fabricPortA = fabric.host(0).port(0);
        final int length = frames.ipv4(fabricPortA.localAddress(), fabricPortA.addressOf(1), 0xC000, 2, 0, sequence,
            PAYLOAD);
        assertEquals(FRAME, length);
        MemorySegment.copy(frames.buffer(), 0, burst.memory(), burst.offset(0), length);
        burst.length(0, length);
        assertEquals(1, hostA.transmit(burst));
        burst.close();
    }

    private int receiveAtB(final RecordingEndpoint into)
    {
        final PacketPort hostB = wireB.first();
        final PacketBurst burst = hostB.newBurst(16);
        final int received = hostB.receive(burst);
        for (int i = 0; i < received; i++)
        {
            into.onFrame(clockNs[0], 0, burst.memory(), burst.offset(i), burst.length(i));
        }
        hostB.release(burst);
        burst.close();
        return received;
    }

    @Test
    void shouldDeliverBetweenRealPortsWhenTheModelSaysSo()
    {
        agent.onStart();
        transmitFromA(7);
        agent.doWork();
        assertEquals(1, agent.framesFromPorts());

        final RecordingEndpoint hostB = new RecordingEndpoint();
        clockNs[0] += LATENCY_NS - 1;
        agent.doWork();
        assertEquals(0, receiveAtB(hostB), "one nanosecond early");

        clockNs[0] += 1;
        agent.doWork();
        assertEquals(1, receiveAtB(hostB));
        assertEquals(7, hostB.sequences.getInt(0));
        assertEquals(FRAME, hostB.lengths.getInt(0));
        assertEquals(0, hostB.invalidFrames, "bytes intact");
        assertEquals(1, agent.framesToPorts());
        assertEquals(0, agent.framesDroppedAtPorts());
        assertEquals(fabric.pool().capacity(), fabric.pool().available());
    }

    @Test
    void shouldTransmitMoreFramesThanABurstHoldsInOneStep()
    {
        agent.onStart();
        for (int i = 0; i < 40; i++)
        {
            transmitFromA(i);
        }
        // one receive burst (16) per port per step
        agent.doWork();
        assertEquals(16, agent.framesFromPorts());
        agent.doWork();
        agent.doWork();
        assertEquals(40, agent.framesFromPorts());
        clockNs[0] += 1_000_000;
        agent.doWork();

        final RecordingEndpoint hostB = new RecordingEndpoint();
        while (receiveAtB(hostB) > 0)
        {
            // drain
        }
        assertEquals(40, hostB.received());
        for (int i = 0; i < 40; i++)
        {
            assertEquals(i, hostB.sequences.getInt(i));
        }
        assertEquals(40, agent.framesToPorts());
    }

    @Test
    void shouldApplySubmittedFaultsOnItsOwnThread()
    {
        agent.onStart();
        assertTrue(agent.submit(() -> fabric.link("p0/sw0->sw1#0").blackhole(true)));
        transmitFromA(1);
        agent.doWork();
        clockNs[0] += 10 * LATENCY_NS;
        agent.doWork();

        assertEquals(0, receiveAtB(new RecordingEndpoint()));
        assertEquals(1, fabric.link("p0/sw0->sw1#0").blackholeDrops());
    }

    @Test
    void shouldRunInFabricEndpointsBesideBridgedHosts()
    {
        // host B's port is bridged; a third party inside the fabric is not needed: host A here is in-fabric
        final InMemoryLink onlyB = new InMemoryLink("onlyB", 64, 4096);
        try (Fabric other = Topology.backToBack(FabricConfig.DEFAULT.withFrames(1_024, 2_048), 1, 1))
        {
            final RealTimeFabricAgent halfBridged = new RealTimeFabricAgent("half", other,
                new PacketPort[][]{null, {onlyB.second()}}, 16, () -> clockNs[0]);
            halfBridged.onStart();
            final PacedSender inFabric = new PacedSender(other.host(0), 0, 1, new int[]{0}, new int[]{0xC000}, 3, 100,
                PAYLOAD, 0).start(other.now() + 100);
            clockNs[0] += 100_000;
            halfBridged.doWork();
            assertEquals(3, inFabric.sent());

            final PacketBurst burst = onlyB.first().newBurst(8);
            assertEquals(3, onlyB.first().receive(burst));
            onlyB.first().release(burst);
            burst.close();
            halfBridged.onClose();
        }
        finally
        {
            onlyB.close();
        }
    }

    @Test
    void shouldDeliverInRealTimeWithTheSystemClock()
    {
        final InMemoryLink realA = new InMemoryLink("realA", 64, 4096);
        final InMemoryLink realB = new InMemoryLink("realB", 64, 4096);
        try (Fabric real = Topology.backToBack(FabricConfig.DEFAULT.withFrames(1_024, 2_048), 1, 1))
        {
            final RealTimeFabricAgent realAgent = new RealTimeFabricAgent("real", real,
                new PacketPort[][]{{realA.second()}, {realB.second()}}, 16, FabricClock.SYSTEM);
            realAgent.onStart();
            final PacketBurst tx = realA.first().newBurst(1);
            assertTrue(realA.first().allocate(tx, 1));
            final int length = frames.ipv4(real.host(0).port(0).localAddress(), real.host(0).port(0).addressOf(1),
                0xC000, 0, 0, 42, PAYLOAD);
            MemorySegment.copy(frames.buffer(), 0, tx.memory(), tx.offset(0), length);
            tx.length(0, length);
            final long start = System.nanoTime();
            assertEquals(1, realA.first().transmit(tx));

            final PacketBurst rx = realB.first().newBurst(4);
            final long deadline = start + TimeUnit.SECONDS.toNanos(5);
            int received = 0;
            while (received == 0 && System.nanoTime() < deadline)
            {
                realAgent.doWork();
                received = realB.first().receive(rx);
            }
            final long elapsed = System.nanoTime() - start;
            assertEquals(1, received);
            assertEquals(42, TestFrames.sequence(rx.memory(), rx.offset(0)));
            assertTrue(elapsed >= LATENCY_NS, "not before the model's latency: " + elapsed + " ns");
            realB.first().release(rx);
            rx.close();
            tx.close();
            realAgent.onClose();
        }
        finally
        {
            realA.close();
            realB.close();
        }
    }
}
