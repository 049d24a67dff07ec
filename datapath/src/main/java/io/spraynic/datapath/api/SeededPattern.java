package io.spraynic.datapath.api;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * The pseudo-random bytes the tools and tests write through a NIC and check on the far side: a seed names the
 * whole pattern, so a peer that knows the seed can verify every byte without being sent the original. Application
 * code (it allocates); never on the per-packet path.
 */
public final class SeededPattern
{
    private SeededPattern()
    {
    }

    /**
     * @return a new 64-byte aligned segment of {@code bytes} (zero allowed) holding the pattern of {@code seed}, the
     *     same bytes {@link #fill} writes into a segment of that length.
     */
    public static MemorySegment allocate(final Arena arena, final long bytes, final long seed)
    {
        final MemorySegment pattern = arena.allocate(Math.max(1, bytes), 64).asSlice(0, bytes);
        fill(pattern, seed);
        return pattern;
    }

    /** Overwrites every byte of {@code segment} with the pattern of {@code seed}: 8 bytes a draw, then the tail. */
    public static void fill(final MemorySegment segment, final long seed)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        final long bytes = segment.byteSize();
        long offset = 0;
        for (; offset + Long.BYTES <= bytes; offset += Long.BYTES)
        {
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, offset, random.nextLong());
        }
        for (; offset < bytes; offset++)
        {
            segment.set(ValueLayout.JAVA_BYTE, offset, (byte)random.nextInt());
        }
    }
}
