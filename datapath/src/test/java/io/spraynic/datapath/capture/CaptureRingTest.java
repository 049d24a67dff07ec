package io.spraynic.datapath.capture;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CaptureRingTest
{
    private record Frame(int plane, int queue, int direction, long timestamp, byte[] data, int original)
    {
    }

    private static MemorySegment frame(final int length, final int seed)
    {
        final MemorySegment f = MemorySegment.ofArray(new byte[length]);
        for (int i = 0; i < length; i++)
        {
            f.set(ValueLayout.JAVA_BYTE, i, (byte)(seed + i));
        }
        return f;
    }

    /** @return capture memory of {@code layout} with its header written: one port, p0, no filter. */
    static MemorySegment onePortRing(final Arena arena, final CaptureRingLayout layout)
    {
        final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
        layout.writeHeader(memory, 1, 1, new String[]{"p0"}, "", 0, 0);
        return memory;
    }

    private static List<Frame> drain(final CaptureRingReader reader)
    {
        final List<Frame> frames = new ArrayList<>();
        reader.poll((plane, queue, direction, timestamp, memory, offset, captured, original) -> frames.add(new Frame(plane,
            queue, direction, timestamp, memory.asSlice(offset, captured).toArray(ValueLayout.JAVA_BYTE), original)), 1 << 20);
        return frames;
    }

    @Test
    void shouldCarryFramesAndMetadataFromEachWorkerToTheReaderCutToTheSnapLength()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(2, 16, 64);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            layout.writeHeader(memory, 42, 7, new String[]{"ring0/q0", "ring1/q0"}, "rx", 1, 2);
            final CaptureRingWriter w0 = new CaptureRingWriter(memory, layout, 0);
            final CaptureRingWriter w1 = new CaptureRingWriter(memory, layout, 1);
            final CaptureRingReader reader = new CaptureRingReader(memory);
            assertEquals("ring1/q0", reader.planeName(1));
            assertEquals("rx", CaptureRingLayout.filter(memory));
            w0.write(1, 0, TappingPacketPort.TX, frame(100, 1), 0, 100, 1_000);
            w1.write(0, 1, TappingPacketPort.RX, frame(20, 2), 0, 20, 2_000);
            assertTrue(drain(reader).isEmpty(), "nothing is visible before publish");
            w0.publish();
            w1.publish();
            final List<Frame> frames = drain(reader);
            assertEquals(2, frames.size());
            final Frame cut = frames.get(0);
            assertEquals(1, cut.plane());
            assertEquals(0, cut.queue());
            assertEquals(TappingPacketPort.TX, cut.direction());
            assertEquals(1_000, cut.timestamp());
            assertEquals(100, cut.original());
            assertEquals(64, cut.data().length, "cut to the snap length");
            assertEquals((byte)1, cut.data()[0]);
            assertEquals(1, frames.get(1).queue());
            assertEquals(20, frames.get(1).data().length);
            assertEquals(1, reader.captured(0));
            assertFalse(reader.ended());
            CaptureRingLayout.end(memory);
            assertTrue(reader.ended());
        }
    }

    @Test
    void shouldDropWhatDoesNotFitAndCountItPerPortAndDirectionNeverWaiting()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 16, 64);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            layout.writeHeader(memory, 1, 1, new String[]{"p0", "p1"}, "", 0, 0);
            final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
            final CaptureRingReader reader = new CaptureRingReader(memory);
            for (int i = 0; i < 40; i++)
            {
                writer.write(1, 0, TappingPacketPort.RX, frame(60, i), 0, 60, i);
            }
            writer.publishFinal(0);
            assertEquals(16, writer.captured());
            assertEquals(24, writer.dropped());
            assertEquals(24, reader.dropped(0));
            assertEquals(24, reader.dropped(0, 1, TappingPacketPort.RX));
            assertEquals(0, reader.dropped(0, 1, TappingPacketPort.TX));
            final List<Frame> frames = drain(reader);
            assertEquals(16, frames.size());
            assertEquals(15, frames.get(15).timestamp(), "the oldest are kept: nothing is overwritten");
            writer.write(0, 0, TappingPacketPort.TX, frame(60, 99), 0, 60, 99);
            writer.publish();
            assertEquals(99, drain(reader).get(0).timestamp(), "slots the reader freed are used again");
        }
    }

    @Test
    void shouldTakeEverythingTheRingsHoldInOnePollAllUpToItsLimit()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(2, 16_384, 64);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = onePortRing(arena, layout);
            final CaptureRingWriter w0 = new CaptureRingWriter(memory, layout, 0);
            final CaptureRingWriter w1 = new CaptureRingWriter(memory, layout, 1);
            final CaptureRingReader reader = new CaptureRingReader(memory);
            final int frames = 9_000; // more than one pass (4,096 a ring) takes: pollAll passes again
            for (int i = 0; i < frames; i++)
            {
                assertTrue(w0.write(0, 0, TappingPacketPort.RX, frame(60, i), 0, 60, i));
                assertTrue(w1.write(0, 1, TappingPacketPort.TX, frame(60, i), 0, 60, i));
            }
            w0.publish();
            w1.publish();
            final long[] seen = new long[2];
            final long[] lastTimestamp = {-1, -1};
            final CaptureRingReader.FrameHandler count = (plane, queue, direction, timestamp, m, offset, captured, original) ->
            {
                assertEquals(lastTimestamp[queue] + 1, timestamp, "in order, none skipped");
                lastTimestamp[queue] = timestamp;
                seen[queue]++;
            };
            final long first = reader.pollAll(count, 10_000);
            assertTrue(first >= 10_000 && first < 2L * frames, "stops near its limit, before the rest: " + first);
            assertEquals(2L * frames - first, reader.pollAll(count, Long.MAX_VALUE), "then the rest");
            assertEquals(frames, seen[0]);
            assertEquals(frames, seen[1]);
            assertEquals(0, reader.pollAll(count, Long.MAX_VALUE));
        }
    }

    @Test
    void shouldStopWritingWhenTheClientWritesAHeadNoReaderWrites()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 16, 64);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = onePortRing(arena, layout);
            final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
            for (int i = 0; i < 16; i++)
            {
                writer.write(0, 0, TappingPacketPort.RX, frame(60, i), 0, 60, i);
            }
            // a hostile client claims to have read more than was ever written, to make the writer overwrite at will
            memory.set(CaptureRingLayout.LONG, layout.ringOffset(0) + CaptureRingLayout.HEAD_OFFSET, 1L << 40);
            writer.write(0, 0, TappingPacketPort.RX, frame(60, 16), 0, 60, 16);
            assertTrue(writer.headCorrupt());
            memory.set(CaptureRingLayout.LONG, layout.ringOffset(0) + CaptureRingLayout.HEAD_OFFSET, 16);
            writer.write(0, 0, TappingPacketPort.RX, frame(60, 17), 0, 60, 17);
            assertEquals(16, writer.captured());
            assertEquals(2, writer.dropped(), "a writer that saw a corrupt head drops from then on");
        }
    }

    @Test
    void shouldRefuseLayoutsOutOfRangeAndMemoryThatDoesNotHoldOne()
    {
        assertNotNull(CaptureRingLayout.problem(0, 16, 64));
        assertNotNull(CaptureRingLayout.problem(65, 16, 64));
        assertNotNull(CaptureRingLayout.problem(1, 24, 64));
        assertNotNull(CaptureRingLayout.problem(1, 16, 63));
        assertNotNull(CaptureRingLayout.problem(1, 16, 9217));
        assertTrue(CaptureRingLayout.problem(64, 1 << 16, 9216).contains("more than the"));
        try (Arena arena = Arena.ofConfined())
        {
            final CaptureRingLayout layout = CaptureRingLayout.of(1, 16, 64);
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            assertThrows(IllegalStateException.class, () -> new CaptureRingReader(memory), "no magic yet");
            layout.writeHeader(memory, 1, 1, new String[]{"p0"}, "", 0, 0);
            assertThrows(IllegalStateException.class, () -> new CaptureRingReader(memory.asSlice(0, 8192)), "short");
            memory.set(CaptureRingLayout.INT, CaptureRingLayout.SLOTS_OFFSET, 1 << 20);
            assertThrows(IllegalStateException.class, () -> new CaptureRingReader(memory), "slots its bytes do not hold");
            memory.set(CaptureRingLayout.INT, CaptureRingLayout.SLOTS_OFFSET, layout.slots());
            for (final long bytes : new long[]{0, -1280, Long.MAX_VALUE, 1L << 62, 1280 + 8})
            {
                memory.set(CaptureRingLayout.LONG, CaptureRingLayout.RING_BYTES_OFFSET, bytes);
                assertThrows(IllegalArgumentException.class, () -> new CaptureRingReader(memory), "a ring of " + bytes);
            }
            memory.set(CaptureRingLayout.LONG, CaptureRingLayout.RING_BYTES_OFFSET, 1280 + 4096);
            assertThrows(IllegalStateException.class, () -> new CaptureRingReader(memory), "rings longer than the memory");
        }
    }

    /**
     * A ring is sized in bytes: at the default size a snap length of 64 B keeps the 8,421,376 B of the default snap
     * length's ring and so holds 105,267 records of 64 B frames, 25 times the 4,096 that a ring of 4,096 slots of
     * 64 B (sized in frames of the snap length, 327,680 B) held before; both hold exactly what their bytes hold.
     */
    @Test
    void shouldGiveAShortSnapLengthTheSameBytesOfRingAsMoreRecords()
    {
        final CaptureRingLayout whole = CaptureRingLayout.of(1, CaptureRingLayout.DEFAULT_SLOTS,
            CaptureRingLayout.DEFAULT_SNAP_LENGTH);
        assertEquals(8_421_376L, CaptureRingLayout.DEFAULT_RING_BYTES);
        assertEquals(CaptureRingLayout.DEFAULT_RING_BYTES, whole.ringCapacity());
        assertEquals(CaptureRingLayout.DEFAULT_RING_BYTES, CaptureRingLayout.defaultRingBytes(64));
        assertEquals(CaptureRingLayout.DEFAULT_RING_BYTES, CaptureRingLayout.defaultRingBytes(4096));
        assertEquals(2048L * 9232, CaptureRingLayout.defaultRingBytes(9216), "a longer snap length: 2,048 of its frames");
        final CaptureRingLayout small = CaptureRingLayout.ofRingBytes(1, CaptureRingLayout.defaultRingBytes(64), 64, 1);
        assertEquals(whole.fileLength(), small.fileLength(), "the same memory");
        assertEquals(105_267, small.slots());
        assertEquals(105_267, fillNeverDrained(small), "8,421,376 B / 80 B records");
        assertEquals(whole.ringCapacity() / 80, fillNeverDrained(whole), "the same bytes hold as many 64 B frames");
        assertEquals(4096, fillNeverDrained(CaptureRingLayout.of(1, 4096, 64)), "sized in slots of 64 B: 4,096");
    }

    /** @return 64 B frames a ring of {@code layout} takes, never drained, before it drops. */
    private static long fillNeverDrained(final CaptureRingLayout layout)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = onePortRing(arena, layout);
            final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
            final MemorySegment frame = frame(64, 1);
            while (writer.dropped() == 0)
            {
                writer.write(0, 0, TappingPacketPort.RX, frame, 0, 64, 1);
                writer.publish();
            }
            final CaptureRingReader reader = new CaptureRingReader(memory);
            assertEquals(writer.captured(), drain(reader).size(), "the reader reads back every record the ring took");
            return writer.captured();
        }
    }

    /**
     * A ring's bytes come from another process (START_CAPTURE, the capture memory's header): every bound is checked
     * before any arithmetic, where a value near 2^63 rounded up to the records' alignment, or 2^62 times 4 workers,
     * would wrap to a small or negative size that a check after the arithmetic would pass.
     */
    @Test
    void shouldRefuseRingSizesOutOfRangeBeforeAnyArithmeticWraps()
    {
        final long min = CaptureRingLayout.minRingBytes(64);
        assertEquals(16 * 80, min, "16 records of the snap length");
        assertNull(CaptureRingLayout.ringBytesProblem(1, min, 64, 1));
        assertNull(CaptureRingLayout.ringBytesProblem(1, CaptureRingLayout.DEFAULT_RING_BYTES, 64, 1));
        assertEquals(0L, (1L << 62) * 4, "what a product of an unchecked ring size and the workers could be");
        for (final long bad : new long[]{0, -16, Long.MIN_VALUE, min - 16, Long.MAX_VALUE, Long.MAX_VALUE - 15, 1L << 62,
            CaptureRingLayout.MAX_RING_BYTES + 16})
        {
            final String why = CaptureRingLayout.ringBytesProblem(4, bad, 64, 1);
            assertNotNull(why, Long.toString(bad));
            assertTrue(why.startsWith("a ring of " + bad + " B is not in 1280..1073741824 B"), why);
            assertThrows(IllegalArgumentException.class, () -> CaptureRingLayout.ofRingBytes(4, bad, 64, 1));
        }
        assertTrue(CaptureRingLayout.ringBytesProblem(1, min + 8, 64, 1).contains("not a multiple of 16 B"));
        assertTrue(CaptureRingLayout.ringBytesProblem(1, 4096, 4096, 1).contains("at least 16 records of the 4096 B"),
            "16 records of the snap length at least, so that a whole frame fits beside a padding record");
        // the whole memory is bounded too: 1 GiB of records and the header, or 64 rings of 16 MiB
        assertTrue(CaptureRingLayout.ringBytesProblem(1, CaptureRingLayout.MAX_RING_BYTES, 64, 1).contains("more than the"));
        assertTrue(CaptureRingLayout.ringBytesProblem(64, 16L << 20, 64, 1).contains("more than the"));
        assertNull(CaptureRingLayout.ringBytesProblem(64, (16L << 20) - 8192, 64, 1));
        assertNotNull(CaptureRingLayout.ringBytesProblem(65, min, 64, 1));
        assertNotNull(CaptureRingLayout.ringBytesProblem(1, min, 63, 1));
        assertNotNull(CaptureRingLayout.ringBytesProblem(1, min, 64, 0));
    }

    @Test
    void shouldSkipRecordsThatHoldWhatNoWriterWritesAndSkipToTheTailPastALengthItCannotTrust()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 16, 64);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = onePortRing(arena, layout);
            final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
            final CaptureRingReader reader = new CaptureRingReader(memory);
            final long fields = layout.recordsOffset(0) + CaptureRingLayout.RECORD_FIELDS_OFFSET;
            writer.write(0, 0, TappingPacketPort.RX, frame(60, 1), 0, 60, 1);
            writer.write(0, 0, TappingPacketPort.RX, frame(60, 2), 0, 60, 2);
            writer.publish();
            // a plane the capture does not have: that record is skipped, its length still leads to the next
            memory.set(ValueLayout.JAVA_BYTE, fields + 4, (byte)7);
            List<Frame> frames = drain(reader);
            assertEquals(1, frames.size());
            assertEquals(2, frames.get(0).timestamp());
            assertEquals(1, reader.malformed());

            final long second = layout.recordsOffset(0) + 2L * CaptureRingLayout.recordLength(60);
            writer.write(0, 0, TappingPacketPort.RX, frame(60, 3), 0, 60, 3);
            writer.write(0, 0, TappingPacketPort.RX, frame(60, 4), 0, 60, 4);
            writer.publish();
            // a length that runs past the tail: nothing after it can be found, so the reader skips to the tail
            memory.set(CaptureRingLayout.SHORT, second + CaptureRingLayout.RECORD_FIELDS_OFFSET, (short)1000);
            assertTrue(drain(reader).isEmpty());
            assertEquals(2, reader.malformed());
            writer.write(0, 0, TappingPacketPort.RX, frame(60, 5), 0, 60, 5);
            writer.publish();
            frames = drain(reader);
            assertEquals(1, frames.size(), "the records after the skip are read");
            assertEquals(5, frames.get(0).timestamp());
        }
    }

    @Test
    void shouldReadNothingOfARingWhoseHeadOrTailTheNicWroteBelowZero()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 4096, 64);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = onePortRing(arena, layout);
            final long tail = layout.ringOffset(0) + CaptureRingLayout.TAIL_OFFSET;
            final long head = layout.ringOffset(0) + CaptureRingLayout.HEAD_OFFSET;
            final long below = -layout.ringCapacity() - layout.ringCapacity() / 2;
            // before: the reader took the negative tail as its head, and the next tail a record above it gave a
            // negative index, read before the ring (here before the memory: IndexOutOfBoundsException out of poll)
            final CaptureRingReader reader = new CaptureRingReader(memory);
            memory.set(CaptureRingLayout.LONG, tail, below);
            assertTrue(drain(reader).isEmpty());
            assertTrue(drain(reader).isEmpty());
            assertEquals(1, reader.malformed(), "one bad tail, counted once however often it is read");
            memory.set(CaptureRingLayout.LONG, tail, below + CaptureRingLayout.recordLength(60));
            assertTrue(drain(reader).isEmpty());
            assertEquals(2, reader.malformed());
            // a head below zero in the memory the reader opens: counted, and the reader starts at the tail
            memory.set(CaptureRingLayout.LONG, head, below);
            memory.set(CaptureRingLayout.LONG, tail, 0);
            final CaptureRingReader late = new CaptureRingReader(memory);
            assertEquals(1, late.malformed());
            assertEquals(0, memory.get(CaptureRingLayout.LONG, head), "and frees the ring up to it");
            assertTrue(drain(late).isEmpty());
            final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
            writer.write(0, 0, TappingPacketPort.RX, frame(60, 1), 0, 60, 7);
            writer.publish();
            final List<Frame> frames = drain(late);
            assertEquals(1, frames.size(), "what the writer publishes after is read");
            assertEquals(7, frames.get(0).timestamp());
        }
    }

    @Test
    void shouldPackRecordsBackToBackAndWrapWithAPaddingRecord()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 16, 64); // 16 records of 80 B: 1,280 B
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = onePortRing(arena, layout);
            final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
            final CaptureRingReader reader = new CaptureRingReader(memory);
            assertEquals(1_280, layout.ringCapacity());
            for (int i = 0; i < 39; i++)
            {
                assertTrue(writer.write(0, 0, TappingPacketPort.RX, frame(14, i), 0, 14, i), "32 B records: 40 fit");
            }
            writer.publish();
            assertEquals(39, drain(reader).size());
            // 32 B left before the end: an 80 B record goes to the front, behind a padding record over those 32 B
            assertTrue(writer.write(0, 0, TappingPacketPort.TX, frame(64, 7), 0, 64, 200));
            assertTrue(writer.write(0, 0, TappingPacketPort.TX, frame(64, 8), 0, 64, 201));
            writer.publish();
            assertEquals(39 * 32 + 32 + 2 * 80, memory.get(CaptureRingLayout.LONG, layout.ringOffset(0)), "the tail counts the padding");
            final List<Frame> frames = drain(reader);
            assertEquals(2, frames.size());
            assertEquals(200, frames.get(0).timestamp());
            assertEquals(201, frames.get(1).timestamp());
            assertEquals((byte)8, frames.get(1).data()[0]);
            assertEquals(64, frames.get(1).data().length);
            // drained, the ring holds 16 records of 80 B (the 14 to its end and 2 at the front), not 17
            for (int i = 0; i < 17; i++)
            {
                writer.write(0, 0, TappingPacketPort.RX, frame(64, i), 0, 64, 300 + i);
            }
            assertEquals(1, writer.dropped());
            writer.publish();
            assertEquals(16, drain(reader).size());
            assertEquals(0, reader.malformed());
        }
    }

    @Test
    void shouldRefuseAPaddingRecordThatDoesNotEndTheRing()
    {
        final CaptureRingLayout layout = CaptureRingLayout.of(1, 16, 64);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = onePortRing(arena, layout);
            final CaptureRingWriter writer = new CaptureRingWriter(memory, layout, 0);
            final CaptureRingReader reader = new CaptureRingReader(memory);
            for (int i = 0; i < 3; i++)
            {
                writer.write(0, 0, TappingPacketPort.RX, frame(64, i), 0, 64, i);
            }
            writer.publish();
            // the first record made a padding record that stops short of the ring's end (and of the tail)
            memory.set(CaptureRingLayout.LONG, layout.recordsOffset(0) + CaptureRingLayout.RECORD_FIELDS_OFFSET,
                64L | (long)CaptureRingLayout.PADDING << 48);
            assertTrue(drain(reader).isEmpty(), "nothing after a length it cannot trust");
            assertEquals(1, reader.malformed());
        }
    }
}
