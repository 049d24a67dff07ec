package io.spraynic.datapath.wire;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ICRC keeps a ByteBuffer view per segment for the intrinsic CRC32; frames alternating between
 * several segments (one buffer memory per plane) must not make a new view per frame.
 */
class IcrcViewCacheTest
{
    @Test
    void shouldNotAllocatePerFrameWhenSegmentsAlternate()
    {
        final com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        try (Arena arena = Arena.ofConfined())
        {
            final int planes = 4;
            final MemorySegment[] memories = new MemorySegment[planes];
            final int[] lengths = new int[planes];
            final RoceFrameWriter writer = new RoceFrameWriter()
                .ethernet(0x020000000001L, 0x020000000002L).ipv4(0x0A000001, 0x0A000002)
                .opcode(Opcode.RC_SEND_ONLY).destQp(5);
            for (int p = 0; p < planes; p++)
            {
                memories[p] = arena.allocate(2048);
                lengths[p] = writer.psn(p).writeFrame(memories[p], 0, 1024);
            }
            final Icrc icrc = new Icrc();
            final int expected = icrc.compute(memories[0], EthernetHeader.LENGTH, 4, Ipv4Header.LENGTH, lengths[0] - Icrc.LENGTH);
            int crc = 0;
            for (int i = 0; i < 20_000; i++) // warm up
            {
                final int p = i % planes;
                crc ^= icrc.compute(memories[p], EthernetHeader.LENGTH, 4, Ipv4Header.LENGTH, lengths[p] - Icrc.LENGTH);
            }
            // Best of five rounds: a round can also count what the JIT or a safepoint allocates on this
            // thread (a few KB at most), while a view per frame would be ~1 MB in every round.
            final long thread = Thread.currentThread().threadId();
            long allocated = Long.MAX_VALUE;
            for (int round = 0; round < 5; round++)
            {
                final long before = threads.getThreadAllocatedBytes(thread);
                for (int i = 0; i < 10_000; i++)
                {
                    final int p = i % planes;
                    crc ^= icrc.compute(memories[p], EthernetHeader.LENGTH, 4, Ipv4Header.LENGTH, lengths[p] - Icrc.LENGTH);
                }
                allocated = Math.min(allocated, threads.getThreadAllocatedBytes(thread) - before);
            }
            assertTrue(allocated < 1024, "10,000 frames over 4 segments allocated at best " + allocated + " B (a view per frame: ~1 MB)");
            assertEquals(expected, icrc.compute(memories[0], EthernetHeader.LENGTH, 4, Ipv4Header.LENGTH,
                lengths[0] - Icrc.LENGTH), "same value from the cached view");
            assertEquals(0, crc & 0, "keeps the loop alive: " + crc);
        }
    }

    @Test
    void shouldComputeEachSegmentsOwnIcrcWhenSegmentsAlternate()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final int planes = 10; // more than the cache holds: a view is also made again
            final MemorySegment[] memories = new MemorySegment[planes];
            final int[] lengths = new int[planes];
            final int[] expected = new int[planes];
            final RoceFrameWriter writer = new RoceFrameWriter()
                .ethernet(0x020000000001L, 0x020000000002L).ipv4(0x0A000001, 0x0A000002)
                .opcode(Opcode.RC_SEND_ONLY).destQp(5);
            for (int p = 0; p < planes; p++)
            {
                memories[p] = arena.allocate(2048);
                lengths[p] = writer.psn(p).writeFrame(memories[p], 0, 64 + 4 * p);
                expected[p] = new Icrc(0).compute(memories[p], EthernetHeader.LENGTH, 4, Ipv4Header.LENGTH,
                    lengths[p] - Icrc.LENGTH);
            }
            final Icrc icrc = new Icrc(0);
            final java.util.Random random = new java.util.Random(13);
            for (int i = 0; i < 5_000; i++)
            {
                // runs of one segment (the last segment's view) and jumps between them (the cache, or a new view)
                final int p = random.nextInt(4) == 0 ? random.nextInt(planes) : i / 7 % planes;
                assertEquals(expected[p], icrc.compute(memories[p], EthernetHeader.LENGTH, 4, Ipv4Header.LENGTH,
                    lengths[p] - Icrc.LENGTH), "frame " + i + " in segment " + p);
            }
        }
    }
}
