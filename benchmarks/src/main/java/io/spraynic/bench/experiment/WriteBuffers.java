package io.spraynic.bench.experiment;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;

/**
 * A source filled with seeded random bytes and a zeroed target of the same size, registered for RDMA
 * WRITEs from one host's memory into the other's: the two-host workloads' memory, checked byte for byte
 * when the transfer ends.
 *
 * @param source the sender's registered memory.
 * @param target the receiver's, writable remotely.
 */
record WriteBuffers(MemoryRegion source, MemoryRegion target)
{
    /**
     * @param sourceAccess access flags of the source registration (the transports differ in what they ask).
     */
    static WriteBuffers allocate(
        final Arena arena, final long bytes, final long seed, final ProtectionDomain sourceDomain, final int sourceAccess,
        final ProtectionDomain targetDomain)
    {
        final MemorySegment source = arena.allocate(bytes, 64);
        final MemorySegment target = arena.allocate(bytes, 64);
        fillRandom(source, bytes, new SplittableRandom(seed));
        return new WriteBuffers(sourceDomain.register(source, sourceAccess),
            targetDomain.register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE));
    }

    /** Fills the first {@code bytes} of {@code segment}, 8 at a time, from {@code random}. */
    static void fillRandom(final MemorySegment segment, final long bytes, final SplittableRandom random)
    {
        for (long i = 0; i + 8 <= bytes; i += 8)
        {
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
        }
    }

    /** @return whether every byte of the source arrived in the target. */
    boolean arrivedIntact()
    {
        return source.segment().mismatch(target.segment()) == -1;
    }
}
