package io.spraynic.datapath.fabric;

import io.spraynic.datapath.wire.Wire;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HostPortTest
{
    private final Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withFrames(2_048, 2_048), 2, 1);
    private final TestFrames frames = new TestFrames();
    private final RecordingEndpoint receiver = new RecordingEndpoint();

    @AfterEach
    void close()
    {
        fabric.close();
    }

    @Test
    void shouldPushBackWhenTheTransmitQueueIsFullInsteadOfDropping()
    {
        fabric.host(1).attach(receiver);
        final FabricPort port = fabric.host(0).port(0);
        final int length = frames.ipv4(port.localAddress(), port.addressOf(1), 0xC000, 0, 0, 0, 1024);
        assertEquals(1082, length);
        int accepted = 0;
        for (int i = 0; i < 1_000; i++)
        {
            if (port.send(frames.buffer(), 0, length))
            {
                accepted++;
            }
        }
        assertEquals(512 * 1024 / 1082, accepted);
        assertEquals(accepted * 1082, port.queuedBytes());
        assertEquals(512 * 1024, port.queueCapacityBytes());
        assertEquals(1_000 - accepted, fabric.host(0).port(0).sendsRefused());

        fabric.runUntilIdle();
        assertEquals(accepted, receiver.received());
        assertEquals(0, fabric.totals().drops());
        assertTrue(port.send(frames.buffer(), 0, length), "room again once drained");
    }

    @Test
    void shouldRefuseFramesLongerThanASlotOrWithNoSlotFree()
    {
        final FabricPort port = fabric.host(0).port(1);
        final MemorySegment big = MemorySegment.ofArray(new byte[4096]);
        assertEquals(2_048, port.maxFrameLength());
        assertFalse(port.send(big, 0, 2_049));
        assertEquals(1, fabric.host(0).port(1).sendsRefused());
        assertEquals(0, fabric.host(0).port(1).framesSent());
    }

    @Test
    void shouldDeliverTimersInOrderAndClampPastOnesToNow()
    {
        fabric.host(0).attach(receiver);
        final FabricPort port = fabric.host(0).port(0);
        fabric.runUntil(1_000);
        port.scheduleTimer(5_000);
        port.scheduleTimer(2_000);
        port.scheduleTimer(10);
        fabric.runUntil(1_500);
        assertEquals(1, receiver.timers, "the past one fires now");
        fabric.runUntilIdle();
        assertEquals(3, receiver.timers);
        assertEquals(5_000, fabric.now());
        assertEquals(3, fabric.host(0).timersFired());
    }

    @Test
    void shouldDescribeItsAddressesAndCountUnclaimedFrames()
    {
        final FabricPort port = fabric.host(0).port(1);
        assertEquals(0, port.hostIndex());
        assertEquals(1, port.portIndex());
        assertEquals(2, port.hostCount());
        assertEquals("10.1.0.1", Wire.ipv4ToString(port.localAddress()));
        assertEquals("10.1.1.1", Wire.ipv4ToString(port.addressOf(1)));
        assertEquals(FabricAddresses.mac(1, 1), port.macOf(1));
        assertTrue(port.isUp());

        final int length = frames.ipv4(port.localAddress(), port.addressOf(1), 0xC000, 0, 0, 0, 64);
        assertTrue(port.send(frames.buffer(), 0, length));
        fabric.runUntilIdle();
        assertEquals(1, fabric.host(1).port(1).framesUnclaimed(), "no endpoint on host 1");
        assertEquals(1, fabric.totals().framesUnclaimed());
        assertTrue(fabric.totals().isConserved());
    }
}
