package io.spraynic.datapath.port;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class RawFramesTest
{
    @Test
    void shouldRoundTripSequenceAndAddresses()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment frame = arena.allocate(200);
            RawFrames.write(frame, 3, 150, 0x0123_4567_89ABL, 0x0A0B0C0D0E0FL, 0x020000000002L);
            assertEquals(0x0123_4567_89ABL, RawFrames.verify(frame, 3, 150));
            assertEquals(0x0A0B0C0D0E0FL, RawFrames.readMac(frame, 3 + RawFrames.SOURCE_OFFSET));
            assertEquals(0x020000000002L, RawFrames.readMac(frame, 3 + RawFrames.DESTINATION_OFFSET));
            assertEquals((byte)0x88, frame.get(ValueLayout.JAVA_BYTE, 3 + 12));
        }
    }

    @Test
    void shouldWritePatternBytewiseAsSpecifiedForEveryLengthAndSequence()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment frame = arena.allocate(2048);
            final java.util.SplittableRandom random = new java.util.SplittableRandom(42);
            for (int round = 0; round < 500; round++)
            {
                final int length = 60 + random.nextInt(1988);
                final long sequence = random.nextLong();
                RawFrames.write(frame, 0, length, sequence);
                final int seed = (int)(sequence * 31);
                for (int i = RawFrames.PATTERN_OFFSET; i < length; i++)
                {
                    assertEquals((byte)(seed + i), frame.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " of " + length);
                }
                assertEquals(sequence, RawFrames.verify(frame, 0, length));
                final int flipped = RawFrames.PATTERN_OFFSET + random.nextInt(length - RawFrames.PATTERN_OFFSET);
                frame.set(ValueLayout.JAVA_BYTE, flipped, (byte)(frame.get(ValueLayout.JAVA_BYTE, flipped) ^ (1 << random.nextInt(8))));
                assertEquals(RawFrames.INVALID, RawFrames.verify(frame, 0, length), "flip at " + flipped);
            }
        }
    }

    @Test
    void shouldRejectCorruptTruncatedOrForeignFrames()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment frame = arena.allocate(128);
            RawFrames.write(frame, 0, 100, 7);
            assertEquals(RawFrames.INVALID, RawFrames.verify(frame, 0, 99), "truncated");
            frame.set(ValueLayout.JAVA_BYTE, 80, (byte)(frame.get(ValueLayout.JAVA_BYTE, 80) ^ 1));
            assertEquals(RawFrames.INVALID, RawFrames.verify(frame, 0, 100), "bit flip");
            RawFrames.write(frame, 0, 100, 7);
            frame.set(ValueLayout.JAVA_BYTE, 12, (byte)0x08);
            assertEquals(RawFrames.INVALID, RawFrames.verify(frame, 0, 100), "IPv4 ethertype");
            assertThrows(IllegalArgumentException.class, () -> RawFrames.write(frame, 0, 59, 1));
        }
    }
}
