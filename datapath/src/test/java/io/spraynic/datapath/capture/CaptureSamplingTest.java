package io.spraynic.datapath.capture;

import io.spraynic.datapath.port.PacketBurst;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Sampling one frame in N ({@link CaptureRingLayout#sample}): which frames a writer takes (the 1st, the (N+1)th...,
 * counted over its bursts, ports and directions, whatever their sizes), what it counts, and that the layout refuses
 * rates out of range from either side; and the client's read pacing, which follows how full it finds the rings.
 */
class CaptureSamplingTest
{
    private static final int SLOT = 128;

    /** Frames {@code SLOT} bytes apart, frame i holding its sequence number in its first 4 bytes (and a UDP header). */
    private static final class Burst implements PacketBurst
    {
        private final MemorySegment buffers;
        private final int[] lengths;
        private int size;

        Burst(final Arena arena, final int capacity)
        {
            this.buffers = arena.allocate((long)capacity * SLOT, 64);
            this.lengths = new int[capacity];
        }

        /** Frames {@code first}, {@code first + 1}... as the burst; those with {@code dns} set are UDP to port 53. */
        Burst fill(final int first, final int count, final boolean[] dns)
        {
            size = count;
            for (int i = 0; i < count; i++)
            {
                final long at = (long)i * SLOT;
                buffers.asSlice(at, SLOT).fill((byte)0);
                lengths[i] = 60;
                buffers.set(CaptureRingLayout.INT, at, first + i);
                buffers.set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN),
                    at + 12, (short)0x0800);
                buffers.set(java.lang.foreign.ValueLayout.JAVA_BYTE, at + 14, (byte)0x45);
                buffers.set(java.lang.foreign.ValueLayout.JAVA_BYTE, at + 23, (byte)17);
                buffers.set(java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(java.nio.ByteOrder.BIG_ENDIAN),
                    at + 36, (short)(null != dns && dns[first + i] ? 53 : 4791));
            }
            return this;
        }

        public int size()
        {
            return size;
        }

        public int capacity()
        {
            return lengths.length;
        }

        public MemorySegment memory()
        {
            return buffers;
        }

        public long offset(final int index)
        {
            return (long)index * SLOT;
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
            return SLOT;
        }

        public void close()
        {
        }
    }

    private static List<Integer> drain(final CaptureRingReader reader)
    {
        final List<Integer> sequences = new ArrayList<>();
        reader.pollAll((plane, queue, direction, timestamp, memory, offset, captured, original) ->
            sequences.add(memory.get(CaptureRingLayout.INT, offset)), Long.MAX_VALUE);
        return sequences;
    }

    @Test
    void shouldWriteTheFirstAndEveryNthFrameOverBurstsOfAnySizeAndCountTheRestSampledOut()
    {
        for (final int sample : new int[]{1, 2, 3, 4, 16, 64, 1000})
        {
            final CaptureRingLayout layout = CaptureRingLayout.of(1, 1 << 14, 64, sample);
            try (Arena arena = Arena.ofConfined())
            {
                final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
                layout.writeHeader(memory, 1, 1, new String[]{"p0", "p1"}, "", 0, 0);
                final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
                final CaptureRingReader reader = new CaptureRingReader(memory);
                assertEquals(sample, reader.layout().sample(), "the rate travels in the header");
                final Burst burst = new Burst(arena, 64);
                final Random random = new Random(sample);
                final List<Integer> offered = new ArrayList<>();
                final List<Integer> read = new ArrayList<>();
                int sent = 0;
                while (sent < 5_000)
                {
                    final int count = 1 + random.nextInt(64); // bursts of every size, some shorter than N, some longer
                    final int from = random.nextInt(Math.min(count, 4)); // a tap may hand over part of a burst
                    burst.fill(sent, count, null);
                    for (int i = from; i < count; i++)
                    {
                        offered.add(sent + i);
                    }
                    if (random.nextBoolean() || !writer.samplesNone(count - from)) // a tap asks first, or does not
                    {
                        writer.write(random.nextInt(2), 0, random.nextInt(2), burst, from, count, sent, CaptureFilter.ALL);
                    }
                    sent += count;
                    if (random.nextInt(8) == 0)
                    {
                        writer.publish();
                        read.addAll(drain(reader));
                    }
                }
                writer.publishFinal(0);
                read.addAll(drain(reader));
                final List<Integer> expected = new ArrayList<>();
                for (int i = 0; i < offered.size(); i += sample)
                {
                    expected.add(offered.get(i));
                }
                assertEquals(expected, read, "1 in " + sample + ": the 1st, then every " + sample + "th offered");
                assertEquals(expected.size(), writer.captured());
                assertEquals(offered.size() - expected.size(), writer.sampledOut());
                assertEquals(writer.sampledOut(), reader.sampledOut(0), "published with the other statistics");
                assertEquals(0, writer.dropped());
            }
        }
    }

    @Test
    void shouldSampleAmongTheFramesAFilterTakesOnly()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 1 << 12, 64, 3);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            layout.writeHeader(memory, 1, 1, new String[]{"p0"}, "udp dst port 53", 0, 0);
            final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
            final CaptureRingReader reader = new CaptureRingReader(memory);
            final boolean[] dns = new boolean[320];
            final List<Integer> taken = new ArrayList<>();
            for (int i = 0; i < dns.length; i++)
            {
                dns[i] = i % 5 == 1 || i % 7 == 0;
                if (dns[i])
                {
                    taken.add(i);
                }
            }
            final Burst burst = new Burst(arena, 32);
            final CaptureFilter filter = CaptureFilter.parse("udp dst port 53");
            for (int first = 0; first < dns.length; first += 32)
            {
                writer.write(0, 0, TappingPacketPort.RX, burst.fill(first, 32, dns), 0, 32, first, filter);
            }
            final List<Integer> expected = new ArrayList<>();
            for (int i = 0; i < taken.size(); i += 3)
            {
                expected.add(taken.get(i));
            }
            assertEquals(expected, drain(reader), "the 1st, 4th, 7th... of the frames the filter took");
            assertEquals(dns.length - taken.size(), writer.filtered());
            assertEquals(taken.size() - expected.size(), writer.sampledOut());
        }
    }

    @Test
    void shouldKeepTheOneInNExactWhenTheRingIsFull()
    {
        for (final String expression : new String[]{"", "udp dst port 4791"})
        {
            // 16 slots of 64 B: a burst of 32 sampled 1 in 2 fills it; a client that never reads
            final CaptureRingLayout layout = CaptureRingLayout.of(1, 16, 64, 2);
            try (Arena arena = Arena.ofConfined())
            {
                final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
                layout.writeHeader(memory, 1, 1, new String[]{"p0"}, expression, 0, 0);
                final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
                final Burst burst = new Burst(arena, 32);
                final CaptureFilter filter = CaptureFilter.parse(expression);
                for (int first = 0; first < 32 * 5; first += 32)
                {
                    writer.write(0, 0, TappingPacketPort.RX, burst.fill(first, 32, null), 0, 32, first, filter);
                }
                assertEquals(80, writer.captured() + writer.dropped(), expression + ": half of 160, written or dropped");
                assertEquals(80, writer.sampledOut());
                assertTrue(writer.dropped() > 0, "the ring filled");
            }
        }
    }

    @Test
    void shouldRefuseSamplingRatesOutOfRangeFromTheCommandAndFromAHeaderTheNicWrote()
    {
        assertEquals("the sampling rate must be one frame in 1..16777216, not one in 0",
            CaptureRingLayout.problem(1, 16, 64, 0));
        assertNotNull(CaptureRingLayout.problem(1, 16, 64, -1));
        assertNotNull(CaptureRingLayout.problem(1, 16, 64, Integer.MIN_VALUE));
        assertNotNull(CaptureRingLayout.problem(1, 16, 64, CaptureRingLayout.MAX_SAMPLE + 1));
        assertEquals(null, CaptureRingLayout.problem(1, 16, 64, CaptureRingLayout.MAX_SAMPLE));
        assertThrows(IllegalArgumentException.class, () -> CaptureRingLayout.of(1, 16, 64, 0));
        try (Arena arena = Arena.ofConfined())
        {
            final CaptureRingLayout layout = CaptureRingLayout.of(1, 16, 64, 8);
            final MemorySegment memory = CaptureRingTest.onePortRing(arena, layout);
            assertEquals(8, new CaptureRingReader(memory).layout().sample());
            memory.set(CaptureRingLayout.INT, CaptureRingLayout.SAMPLE_OFFSET, 0); // a NIC that lies
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, () -> new CaptureRingReader(memory));
            assertTrue(ex.getMessage().contains("not one in 0"), ex.getMessage());
        }
    }

    @Test
    void shouldWaitTheLongestIntervalForAnEmptyRingAndLessTheFasterItFills()
    {
        final long max = CaptureRingReader.READ_INTERVAL_NANOS;
        assertEquals(max, CaptureRingReader.waitNanos(max, 0, max), "nothing came: read again after the longest wait");
        assertEquals(max, CaptureRingReader.waitNanos(max, 0.1, max), "a tenth of the ring a millisecond: the longest wait");
        // found a third full after 400 us: it fills a quarter in 300 us
        assertEquals(300_000, CaptureRingReader.waitNanos(400_000, 1 / 3.0, max));
        // a ring found full after 1 ms (the 320 KiB ring of RESULTS 51's --snaplen 64): a quarter of that at most...
        assertEquals(max / 4, CaptureRingReader.waitNanos(max, 1.0, max));
        // ...and half the last wait, whatever the interval: a client the scheduler kept away 10 ms learns nothing
        // from a full ring but that it came too late
        assertEquals(max / 8, CaptureRingReader.waitNanos(10 * max, 1.0, max / 4));
        assertEquals(CaptureRingReader.MIN_PARK_NANOS, CaptureRingReader.waitNanos(10 * max, 0.9, 90_000),
            "never below a park's slack: a client that spins loses its turn on a shared host");
        assertEquals(CaptureRingReader.MIN_PARK_NANOS, CaptureRingReader.waitNanos(100_000, 1.0, max));
        assertEquals(max, CaptureRingReader.waitNanos(max, Double.NaN, 0));
    }

    @Test
    void shouldShortenTheWaitWhenAReadFindsARingFull()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 16, 64);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = CaptureRingTest.onePortRing(arena, layout);
            final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
            final CaptureRingReader reader = new CaptureRingReader(memory);
            final Burst burst = new Burst(arena, 16);
            final long start = System.nanoTime();
            reader.pollAll((plane, queue, direction, timestamp, m, offset, captured, original) -> { }, Long.MAX_VALUE);
            assertEquals(CaptureRingReader.READ_INTERVAL_NANOS, reader.waitNanos(), "an empty ring");
            writer.write(0, 0, TappingPacketPort.RX, burst.fill(0, 16, null), 0, 16, 0, CaptureFilter.ALL);
            assertEquals(16, reader.pollAll((plane, queue, direction, timestamp, m, offset, captured, original) -> { },
                Long.MAX_VALUE), "the ring was full: 16 slots");
            final long interval = System.nanoTime() - start; // at least the reader's interval between its two reads
            final long wait = reader.waitNanos();
            assertTrue(wait <= Math.max(CaptureRingReader.MIN_PARK_NANOS, interval / 4 + 1), "found full: read again " +
                "after a quarter of the interval at most: " + wait + " ns after " + interval);
            assertTrue(wait < CaptureRingReader.READ_INTERVAL_NANOS || interval >= 4_000_000, "sooner than 1 ms: " + wait);
            assertFalse(wait < 0);
        }
    }

    @Test
    void shouldHandRoomBackToTheWorkerEachQuarterOfARingWithinOnePass()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 16, 64); // 16 records of 80 B: one pass takes it all
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = CaptureRingTest.onePortRing(arena, layout);
            final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
            final CaptureRingReader reader = new CaptureRingReader(memory);
            writer.write(0, 0, TappingPacketPort.RX, new Burst(arena, 16).fill(0, 16, null), 0, 16, 0, CaptureFilter.ALL);
            final long headOffset = layout.ringOffset(0) + CaptureRingLayout.HEAD_OFFSET;
            final List<Long> headsSeen = new ArrayList<>();
            reader.poll((plane, queue, direction, timestamp, m, offset, captured, original) ->
                headsSeen.add(memory.get(CaptureRingLayout.LONG, headOffset)), 100);
            assertEquals(16, headsSeen.size());
            // records 0-3 read: a quarter (320 B) handed back before record 4 is; and so on
            assertEquals(0, headsSeen.get(3));
            assertEquals(320, headsSeen.get(4));
            assertEquals(960, headsSeen.get(15));
            assertEquals(1280, memory.get(CaptureRingLayout.LONG, headOffset), "all of it once the pass ends");
        }
    }

    /**
     * The small-snaplen drops of RESULTS.md 51, replayed on a clock of the test's own (so that no scheduler decides):
     * one worker writing 64 B frames at 10 Mpps, in bursts of 32, into a ring of 4,096 slots of 64 B (320 KiB: 4,096
     * frames, 0.41 ms of them), emptied by a client that reads every millisecond, as every client did, or as
     * {@link CaptureRingReader#waitNanos} says. The first drops most frames; the second none once it learnt the rate.
     */
    @Test
    void shouldReadASmallRingAsOftenAsItFillsWhereEveryMillisecondDroppedMostFrames()
    {
        final long[] fixed = replay(false);
        final long[] paced = replay(true);
        System.out.println("read every 1 ms: captured " + fixed[0] + ", dropped " + fixed[1] + "; paced: captured " +
            paced[0] + ", dropped " + paced[1]);
        assertTrue(fixed[1] > fixed[0], "read every 1 ms, most frames find the ring full: " + fixed[0] + " captured, " +
            fixed[1] + " dropped");
        assertEquals(0, paced[1], "read as often as the ring fills: nothing dropped once the rate is learnt (" +
            paced[0] + " captured)");
    }

    /** @return {captured, dropped} from the 2nd to the 20th ms of a 10 Mpps worker and a client reading as told. */
    private static long[] replay(final boolean paced)
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 4096, 64);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = CaptureRingTest.onePortRing(arena, layout);
            final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
            final CaptureRingReader reader = new CaptureRingReader(memory);
            final Burst burst = new Burst(arena, 32).fill(0, 32, null);
            final long burstNanos = 3_200; // 32 frames at 10 Mpps
            long nextRead = 0;
            long capturedAt2ms = 0;
            long droppedAt2ms = 0;
            for (long now = 0; now < 20_000_000; now += burstNanos)
            {
                if (now >= nextRead)
                {
                    reader.pollAll((plane, queue, direction, timestamp, m, offset, captured, original) -> { },
                        Long.MAX_VALUE, now);
                    nextRead = now + (paced ? reader.waitNanos() : CaptureRingReader.READ_INTERVAL_NANOS);
                }
                writer.write(0, 0, TappingPacketPort.RX, burst, 0, 32, now, CaptureFilter.ALL);
                if (now < 2_000_000)
                {
                    capturedAt2ms = writer.captured();
                    droppedAt2ms = writer.dropped();
                }
            }
            return new long[]{writer.captured() - capturedAt2ms, writer.dropped() - droppedAt2ms};
        }
    }
}
