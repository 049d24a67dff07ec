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
