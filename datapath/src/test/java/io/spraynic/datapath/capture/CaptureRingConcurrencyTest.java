package io.spraynic.datapath.capture;

import io.spraynic.datapath.port.PacketBurst;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The capture ring between two threads, as between a worker and the capture client's process: random bursts written
 * while a reader drains at random moments (each burst's room claimed at once when it fits, frame by frame when not,
 * wrapping with padding records), every frame read whole and in order or counted dropped; and rings whose records,
 * tail and head hold garbage, which the reader refuses without following a length it cannot trust.
 */
class CaptureRingConcurrencyTest
{
    private static final int BURST = 32;
    private static final int STRIDE = 2048;

    /** The frame {@code sequence}'s length: 8..snap length + 100 (some cut to the snap length), from its number. */
    private static int lengthOf(final long sequence, final int snapLength)
    {
        return 8 + new SplittableRandom(sequence).nextInt(snapLength + 93);
    }

    /** Byte {@code i} of frame {@code sequence} (its first 4 bytes are the sequence number, the next 4 its burst's). */
    private static byte byteOf(final long sequence, final int i)
    {
        return (byte)(sequence * 31 + i * 7);
    }

    @Test
    void shouldCarryEveryFrameWholeAndInOrderOrCountItDroppedBetweenTwoThreads() throws Exception
    {
        // a ring that holds 16 frames of the snap length: bursts of up to 32 are claimed whole when the reader is
        // caught up, frame by frame (and partly dropped) when not; a larger one where most bursts are claimed whole
        for (final int slots : new int[]{16, 256})
        {
            exchange(CaptureRingLayout.of(1, slots, 256), 150_000, slots);
        }
    }

    private static void exchange(final CaptureRingLayout layout, final int frames, final long seed) throws Exception
    {
        final int snapLength = layout.snapLength();
        try (Arena arena = Arena.ofShared())
        {
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            layout.writeHeader(memory, 1, 1, new String[]{"p0", "p1"}, "", 0, 0);
            final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
            final CaptureRingReader reader = new CaptureRingReader(memory);
            final AtomicBoolean done = new AtomicBoolean();
            final AtomicReference<String> readerFault = new AtomicReference<>();
            final long[] read = new long[1];
            final Thread client = new Thread(() ->
            {
                final SplittableRandom pauses = new SplittableRandom(seed);
                final long[] last = {-1, 0};
                final CaptureRingReader.FrameHandler check = (plane, queue, direction, timestamp, ringMemory, offset,
                    captured, original) ->
                {
                    final long sequence = ringMemory.get(CaptureRingLayout.INT, offset) & 0xFFFFFFFFL;
                    final int length = lengthOf(sequence, snapLength);
                    String fault = null;
                    final int burstNumber = ringMemory.get(CaptureRingLayout.INT, offset + 4);
                    if (sequence <= last[0] || sequence >= frames || burstNumber < last[1])
                    {
                        fault = "frame " + sequence + " of burst " + burstNumber + " after " + last[0];
                    }
                    else if (original != length || captured != Math.min(length, snapLength) ||
                        plane != (burstNumber & 1) || direction != (burstNumber >> 1 & 1) || timestamp != burstNumber)
                    {
                        fault = "frame " + sequence + ": metadata " + plane + "/" + direction + "/" + timestamp + ", " +
                            captured + " of " + original + " B";
                    }
                    for (int i = 8; null == fault && i < captured; i++)
                    {
                        if (ringMemory.get(ValueLayout.JAVA_BYTE, offset + i) != byteOf(sequence, i))
                        {
                            fault = "frame " + sequence + ": byte " + i + " overwritten";
                        }
                    }
                    if (null != fault && null == readerFault.get())
                    {
                        readerFault.set(fault);
                    }
                    last[0] = sequence;
                    last[1] = burstNumber;
                    read[0]++;
                };
                while (!done.get())
                {
                    reader.pollAll(check, 1 + pauses.nextInt(64));
                    if (pauses.nextInt(4) == 0)
                    {
                        LockSupport.parkNanos(pauses.nextInt(50_000)); // falls behind now and then: the ring fills
                    }
                }
                reader.pollAll(check, Long.MAX_VALUE);
            }, "capture-client");
            client.setDaemon(true);
            client.start();

            final TestBurst burst = new TestBurst(arena.allocate((long)BURST * STRIDE, 64));
            final SplittableRandom random = new SplittableRandom(seed + 1);
            long sequence = 0;
            for (int burstNumber = 0; sequence < frames; burstNumber++)
            {
                final int size = (int)Math.min(frames - sequence, 1 + random.nextInt(BURST));
                for (int i = 0; i < size; i++, sequence++)
                {
                    burst.fill(i, sequence, burstNumber, lengthOf(sequence, snapLength));
                }
                // as a tap writes a burst: one plane, direction and timestamp for all its frames
                writer.write(burstNumber & 1, 0, burstNumber >> 1 & 1, burst, 0, size, burstNumber, CaptureFilter.ALL);
            }
            done.set(true);
            client.join(TimeUnit.SECONDS.toMillis(30));
            assertFalse(client.isAlive(), "the reader ended");
            assertNull(readerFault.get());
            assertEquals(frames, writer.captured() + writer.dropped(), "every frame captured or counted dropped");
            assertEquals(writer.captured(), read[0], "the reader read every frame captured");
            assertEquals(0, reader.malformed());
            assertFalse(writer.headCorrupt());
            assertTrue(writer.captured() > 0);
        }
    }

    @Test
    void shouldRefuseRecordHeadersAndTailsNoWriterWritesWithoutHandingOverBytesBeyondThem()
    {
        final int snapLength = 128;
        final CaptureRingLayout layout = CaptureRingLayout.of(2, 16, snapLength);
        final long capacity = layout.ringCapacity();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            final MemorySegment source = MemorySegment.ofArray(new byte[256]);
            final SplittableRandom random = new SplittableRandom(17);
            long refused = 0;
            for (int trial = 0; trial < 5_000; trial++)
            {
                memory.fill((byte)0);
                layout.writeHeader(memory, 1, 1, new String[]{"p0"}, "", 0, 0);
                final int ring = trial & 1;
                final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, ring);
                final long[] starts = new long[10];
                long tail = 0;
                for (int i = 0; i < starts.length; i++)
                {
                    final int length = 1 + random.nextInt(200);
                    starts[i] = tail;
                    writer.write(0, ring, TappingPacketPort.RX, source, 0, length, i);
                    tail += CaptureRingLayout.recordLength(Math.min(length, snapLength));
                }
                writer.publish();
                final long records = layout.recordsOffset(ring);
                final long tailOffset = layout.ringOffset(ring) + CaptureRingLayout.TAIL_OFFSET;
                switch (random.nextInt(3))
                {
                    case 0 -> // a header a writer could have written, but whose length runs past the tail or the ring
                    {
                        final int captured = random.nextInt(snapLength + 1);
                        final int direction = random.nextInt(4) == 0 ? CaptureRingLayout.PADDING : random.nextInt(2);
                        memory.set(CaptureRingLayout.LONG, records + starts[random.nextInt(starts.length)] +
                            CaptureRingLayout.RECORD_FIELDS_OFFSET, captured | (long)(captured + random.nextInt(100)) << 16 |
                            (long)random.nextInt(2) << 40 | (long)direction << 48);
                    }
                    case 1 -> // random bytes over the records
                    {
                        for (long at = 0; at < capacity; at += 8)
                        {
                            memory.set(CaptureRingLayout.LONG, records + at, random.nextLong());
                        }
                    }
                    default -> // a tail anywhere, mostly within a ring's length of the head
                    {
                        tail = random.nextInt(8) == 0 ? random.nextLong() : random.nextLong(capacity);
                        memory.set(CaptureRingLayout.LONG, tailOffset, tail);
                    }
                }
                final CaptureRingReader reader = new CaptureRingReader(memory);
                final long end = tail; // no record may reach past the tail (the head is 0: no wrap below the capacity)
                final long[] beyond = new long[1];
                reader.poll((plane, queue, direction, timestamp, ringMemory, offset, captured, original) ->
                {
                    if (offset < records + CaptureRingLayout.RECORD_DATA_OFFSET || offset + captured > records + capacity ||
                        (end >= 0 && end <= capacity && offset + captured > records + end) || captured > snapLength ||
                        original < captured || plane != 0 || queue > 1 || direction > 1)
                    {
                        beyond[0]++;
                    }
                }, 1 << 16);
                assertEquals(0, beyond[0], "trial " + trial + ": a frame handed over beyond its record, the tail or the ring");
                refused += reader.malformed();
            }
            assertTrue(refused > 2_000, "what no writer writes is counted: " + refused);
        }
    }

    /** {@link #BURST} frames {@link #STRIDE} apart, as mbufs lie, each filled for its sequence number. */
    private static final class TestBurst implements PacketBurst
    {
        private final MemorySegment buffers;
        private final int[] lengths = new int[BURST];

        TestBurst(final MemorySegment buffers)
        {
            this.buffers = buffers;
        }

        void fill(final int index, final long sequence, final int burstNumber, final int length)
        {
            lengths[index] = length;
            final long at = (long)index * STRIDE;
            buffers.set(CaptureRingLayout.INT, at, (int)sequence);
            buffers.set(CaptureRingLayout.INT, at + 4, burstNumber);
            for (int i = 8; i < Math.min(length, STRIDE); i++)
            {
                buffers.set(ValueLayout.JAVA_BYTE, at + i, byteOf(sequence, i));
            }
        }

        public int size()
        {
            return BURST;
        }

        public int capacity()
        {
            return BURST;
        }

        public MemorySegment memory()
        {
            return buffers;
        }

        public long offset(final int index)
        {
            return (long)index * STRIDE;
        }

        public int length(final int index)
        {
            return lengths[index];
        }

        public void length(final int index, final int length)
        {
            throw new UnsupportedOperationException();
        }

        public int room(final int index)
        {
            return STRIDE;
        }

        public void close()
        {
        }
    }
}
