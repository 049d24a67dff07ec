package io.spraynic.datapath.nic;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.capture.CaptureRingReader;
import io.spraynic.datapath.capture.TappingPacketPort;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The worker's capture tap reads the clock once a worker loop: the TX bursts of a loop carry the time its RX burst
 * read, and no time outlives the loop (a port that only transmits, or a receive after a pause, reads it again).
 */
class CaptureTapTest
{
    private static final long PAUSE_NANOS = 3_000_000L;

    @Test
    void shouldStampTheFramesOfOneLoopWithOneClockReadAndNoLaterLoopWithIt() throws Exception
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 64, 128);
        final CountersManager counters = new CountersManager(
            new UnsafeBuffer(ByteBuffer.allocateDirect(5 * CountersReader.METADATA_LENGTH)),
            new UnsafeBuffer(ByteBuffer.allocateDirect(5 * CountersReader.COUNTER_LENGTH)));
        final CaptureTap tap = new CaptureTap(0, counters.newCounter("captured"), counters.newCounter("dropped"),
            counters.newCounter("filtered"), counters.newCounter("faults"), counters.newCounter("sampled out"));
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            layout.writeHeader(memory, 1, 1, new String[]{"p0"}, "", 0, 0);
            final PacketPort port = tap.tap(new OneFramePort(arena.allocate(64)), 0, 0);
            final PacketBurst rx = port.newBurst(1);
            final PacketBurst tx = port.newBurst(1);
            tap.start(memory, layout, CaptureFilter.ALL, 1);

            receive(port, rx); // loop 1: RX, then two TX bursts
            transmit(port, tx);
            transmit(port, tx);
            Thread.sleep(PAUSE_NANOS / 1_000_000);
            transmit(port, tx); // no receive since: a port that only transmits
            Thread.sleep(PAUSE_NANOS / 1_000_000);
            receive(port, rx); // loop 2
            transmit(port, tx);
            tap.stop();

            final List<long[]> frames = new ArrayList<>(); // direction, timestamp
            new CaptureRingReader(memory).poll((plane, queue, direction, timestamp, ringMemory, offset, captured,
                original) -> frames.add(new long[]{direction, timestamp}), 100);
            assertEquals(6, frames.size());
            assertEquals(TappingPacketPort.RX, frames.get(0)[0]);
            assertEquals(frames.get(0)[1], frames.get(1)[1], "the loop's first TX burst carries its RX burst's time");
            assertTrue(frames.get(3)[1] - frames.get(2)[1] >= PAUSE_NANOS, "a TX burst after a pause is not stamped " +
                "with the time before it: " + (frames.get(3)[1] - frames.get(2)[1]) + " ns");
            assertTrue(frames.get(4)[1] - frames.get(3)[1] >= PAUSE_NANOS, "nor is a receive after a pause");
            assertEquals(frames.get(4)[1], frames.get(5)[1]);
            final long now = System.currentTimeMillis() * 1_000_000L;
            assertTrue(Math.abs(now - frames.get(5)[1]) < 10_000_000_000L, "ns since the epoch");
        }
    }

    @Test
    void shouldSampleOneFrameInNOverBothDirectionsAndCountTheRest()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 64, 128, 4);
        final CountersManager counters = new CountersManager(
            new UnsafeBuffer(ByteBuffer.allocateDirect(5 * CountersReader.METADATA_LENGTH)),
            new UnsafeBuffer(ByteBuffer.allocateDirect(5 * CountersReader.COUNTER_LENGTH)));
        final org.agrona.concurrent.status.AtomicCounter captured = counters.newCounter("captured");
        final org.agrona.concurrent.status.AtomicCounter sampledOut = counters.newCounter("sampled out");
        final CaptureTap tap = new CaptureTap(0, captured, counters.newCounter("dropped"), counters.newCounter("filtered"),
            counters.newCounter("faults"), sampledOut);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            layout.writeHeader(memory, 1, 1, new String[]{"p0"}, "", 0, 0);
            final PacketPort port = tap.tap(new OneFramePort(arena.allocate(64)), 0, 0);
            final PacketBurst rx = port.newBurst(1);
            final PacketBurst tx = port.newBurst(1);
            tap.start(memory, layout, CaptureFilter.ALL, 1);
            for (int loop = 0; loop < 10; loop++)
            {
                receive(port, rx); // frames 0, 2, 4...: RX; 1, 3, 5...: TX
                transmit(port, tx);
            }
            assertEquals(5, captured.get(), "frames 0, 4, 8, 12, 16 of 20");
            assertEquals(15, sampledOut.get(), "counted as each burst passes, not at the end");
            tap.stop();
            final List<Integer> directions = new ArrayList<>();
            final CaptureRingReader reader = new CaptureRingReader(memory);
            reader.poll((plane, queue, direction, timestamp, ringMemory, offset, length, original) ->
                directions.add(direction), 100);
            assertEquals(List.of(0, 0, 0, 0, 0), directions, "every 4th frame, all received ones here");
            assertEquals(15, reader.sampledOut(0), "and in the ring's statistics for the client");
        }
    }

    private static void receive(final PacketPort port, final PacketBurst burst)
    {
        burst.close(); // empty, as a worker's RX burst after dispatch
        port.receive(burst);
    }

    private static void transmit(final PacketPort port, final PacketBurst burst)
    {
        port.allocate(burst, 1);
        port.transmit(burst);
    }

    /** A port that receives one frame on every receive and takes every frame it is given. */
    private static final class OneFramePort implements PacketPort
    {
        private final MemorySegment frame;

        OneFramePort(final MemorySegment frame)
        {
            this.frame = frame;
        }

        public String name()
        {
            return "p0";
        }

        public PacketBurst newBurst(final int capacity)
        {
            return new Burst(frame);
        }

        public int receive(final PacketBurst burst)
        {
            ((Burst)burst).size = 1;
            return 1;
        }

        public boolean allocate(final PacketBurst burst, final int count)
        {
            ((Burst)burst).size = 1;
            return true;
        }

        public int transmit(final PacketBurst burst)
        {
            ((Burst)burst).size = 0;
            return 1;
        }

        public void release(final PacketBurst burst)
        {
            ((Burst)burst).size = 0;
        }

        public void close()
        {
        }
    }

    private static final class Burst implements PacketBurst
    {
        private final MemorySegment frame;
        private int size;

        Burst(final MemorySegment frame)
        {
            this.frame = frame;
        }

        public int size()
        {
            return size;
        }

        public int capacity()
        {
            return 1;
        }

        public MemorySegment memory()
        {
            return frame;
        }

        public long offset(final int index)
        {
            return 0;
        }

        public int length(final int index)
        {
            return (int)frame.byteSize();
        }

        public void length(final int index, final int length)
        {
            throw new UnsupportedOperationException();
        }

        public int room(final int index)
        {
            return (int)frame.byteSize();
        }

        public void close()
        {
            size = 0;
        }
    }
}
