package io.spraynic.datapath.wire;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The per-packet paths (parse with ICRC check, ICRC, write) allocate nothing once compiled: measured with
 * the JVM's per-thread allocation counter over many iterations after a warm-up. (JMH with -prof gc is the
 * real measurement; this guards against regressions in the ordinary test run.)
 */
class AllocationFreeTest
{
    private static final int WARMUP = 300_000;
    private static final int MEASURED = 100_000;

    private static long allocatedBytes()
    {
        return ((com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    private interface Work
    {
        long run(int iteration);
    }

    private static long allocatedPerRun(final Work work)
    {
        long sink = 0;
        for (int i = 0; i < WARMUP; i++)
        {
            sink += work.run(i);
        }
        // several rounds: the first may still see a compilation land
        long best = Long.MAX_VALUE;
        for (int round = 0; round < 5; round++)
        {
            final long before = allocatedBytes();
            for (int i = 0; i < MEASURED; i++)
            {
                sink += work.run(i);
            }
            best = Math.min(best, allocatedBytes() - before);
        }
        if (sink == 42)
        {
            System.out.println("unlikely");
        }
        return best;
    }

    @Test
    void shouldParseWriteAndComputeIcrcWithoutAllocating()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment buffer = arena.allocate(1 << 16);
            final RoceFrameWriter writer = new RoceFrameWriter()
                .ethernet(RoceFrameWriterTest.MAC_A, RoceFrameWriterTest.MAC_B)
                .ipv4(RoceFrameWriterTest.V4_A, RoceFrameWriterTest.V4_B)
                .opcode(Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE).reth(0x1000, 7, 1024).immediate(9);
            final int length = writer.writeFrame(buffer, 0, 1024);
            final ParseCounters counters = new ParseCounters();
            final RoceParser parser = new RoceParser(counters);
            final RoceFrame frame = new RoceFrame();
            final Icrc icrc = new Icrc();

            final long parse = allocatedPerRun(i -> parser.parse(buffer, 0, length, frame).ordinal() + frame.psn());
            final long write = allocatedPerRun(i -> writer.psn(i).writeFrame(buffer, 2048, 1024));
            final long crc = allocatedPerRun(i -> icrc.compute(buffer, 14, 4, 20, length - 4));

            final RoceFrameWriter writer6 = new RoceFrameWriter().ipv6(1, 2, 3, 4).opcode(Opcode.RC_SEND_ONLY);
            final int length6 = writer6.writeFrame(buffer, 8192, 512);
            final long parse6 = allocatedPerRun(i -> parser.parse(buffer, 8192, length6, frame).ordinal());
            final long write6 = allocatedPerRun(i -> writer6.psn(i).writeFrame(buffer, 16384, 512));

            System.out.printf("allocated bytes per %d packets: parse=%d write=%d icrc=%d parse6=%d write6=%d%n",
                MEASURED, parse, write, crc, parse6, write6);
            // the counter itself costs a few hundred bytes per reading; one object per packet would be
            // at least 16 bytes x 100,000
            final long baseline = allocatedPerRun(i -> i);
            assertTrue(parse <= baseline, "parse allocated " + parse + " vs baseline " + baseline);
            assertTrue(write <= baseline, "write allocated " + write + " vs baseline " + baseline);
            assertTrue(crc <= baseline, "icrc allocated " + crc + " vs baseline " + baseline);
            assertTrue(parse6 <= baseline, "parse6 allocated " + parse6 + " vs baseline " + baseline);
            assertTrue(write6 <= baseline, "write6 allocated " + write6 + " vs baseline " + baseline);
            assertTrue(baseline < 4096, "baseline " + baseline);
        }
    }
}
