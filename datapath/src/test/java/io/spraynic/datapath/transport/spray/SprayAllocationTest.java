package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The datapath allocates nothing per packet or per message (brief: no per-packet allocation; S10.1): once
 * warm, posting, spraying, placing, acknowledging, recovering 1 % loss and completing WRITEs, SENDs and READs
 * allocate 0 bytes.
 */
class SprayAllocationTest
{
    private static long allocated()
    {
        return ((com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    @Test
    void shouldAllocateNothingInSteadyState()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options()
            .wrapA((plane, port) -> new FaultInjectingPacketPort(port, 5 + plane, 0.01, 0, 0, SprayTestBed::isData))
            .wrapB((plane, port) -> new FaultInjectingPacketPort(port, 7 + plane, 0.01, 0, 0, SprayTestBed::isData));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertSteadyStateAllocatesNothing(bed);
        }
    }

    /**
     * Issue 13: with no linger, a connection gives its tables (send windows included) back whenever it is idle and
     * borrows them again with its next post: those edges allocate nothing either.
     */
    @Test
    void shouldAllocateNothingWhenTablesComeAndGo()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.configure = (host, config) -> config.storageLingerNanos(0);
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertSteadyStateAllocatesNothing(bed);
            final long lends = bed.engineA.storagePool().lends();
            assertTrue(lends >= 10, "A's tables lent " + lends + " times in 30 rounds");
            System.out.println("tables lent to A: " + lends + " times in 30 rounds");
        }
    }

    /**
     * S6.8, S7.4.1: with 30 % of every frame lost (ACKs and probes too) paths time out every round, and their
     * packets go again on other paths; that allocates nothing either.
     */
    @Test
    void shouldAllocateNothingWhenPathsTimeOutS741()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options()
            .wrapA((plane, port) -> new FaultInjectingPacketPort(port, 5 + plane, 0.3, 0, 0, FaultInjectingPacketPort.Selector.ALL))
            .wrapB((plane, port) -> new FaultInjectingPacketPort(port, 7 + plane, 0.3, 0, 0, FaultInjectingPacketPort.Selector.ALL));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            assertSteadyStateAllocatesNothing(bed);
            assertTrue(bed.a.counters().get(SprayCounters.TIMEOUTS) > 10, bed.a.counters()::toString);
        }
    }

    private static void assertSteadyStateAllocatesNothing(final SprayTestBed bed)
    {
        {
            final int size = 64 * 1024;
            final MemoryRegion src = bed.region(bed.pdA, size, AccessFlags.NONE, 1);
            final MemoryRegion dst = bed.region(bed.pdB, 4L * size, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final MemoryRegion readable = bed.region(bed.pdB, size, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_READ, 2);
            final MemoryRegion sink = bed.region(bed.pdA, size, AccessFlags.LOCAL_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            final ReceiveWorkRequest rr = new ReceiveWorkRequest();
            final WorkCompletion wc = new WorkCompletion();
            final long[] bytesPerRound = new long[30];
            for (int round = 0; round < bytesPerRound.length; round++)
            {
                final long before = allocated();
                for (int i = 0; i < 64; i++)
                {
                    final int s = i % 4;
                    wr.reset().wrId(i);
                    switch (s)
                    {
                        case 1 ->
                        {
                            assertEquals(PostResult.OK, bed.b.postReceive(s, rr.reset().wrId(i)
                                .buffer(dst, dst.address() + size, size)));
                            wr.opcode(WorkRequestOpcode.SEND).local(src, src.address(), size);
                        }
                        case 3 -> wr.opcode(WorkRequestOpcode.RDMA_READ).local(sink, sink.address(), size)
                            .remote(readable.address(), readable.rkey());
                        default -> wr.opcode(WorkRequestOpcode.RDMA_WRITE).local(src, src.address(), size)
                            .remote(dst.address() + (long)s * size, dst.rkey());
                    }
                    assertEquals(PostResult.OK, bed.a.postSend(s, wr));
                }
                int completions = 0;
                for (int step = 0; step < 200_000 && completions < 64; step++)
                {
                    bed.step();
                    while (bed.sendCqA.poll(wc))
                    {
                        completions++;
                    }
                    while (bed.receiveCqB.poll(wc))
                    {
                        completions += 0;
                    }
                }
                assertEquals(64, completions);
                bytesPerRound[round] = allocated() - before;
            }
            final long measuringBefore = allocated();
            final long measuring = allocated() - measuringBefore; // what asking the MXBean itself costs
            // A round is 64 messages and about 8,000 packets. Any allocation per message or per packet would cost
            // at least 1 KiB in every round; a JIT recompilation, a safepoint or GC bookkeeping may cost a few KB in
            // one round now and then (96 B and, in another test, 2.5 KB seen in CI). So: of the last ten rounds at
            // most two reach 1 KiB, and at least one allocates nothing at all.
            long least = Long.MAX_VALUE;
            int over = 0;
            for (int round = bytesPerRound.length - 10; round < bytesPerRound.length; round++)
            {
                final long bytes = bytesPerRound[round] - measuring;
                over += bytes >= 1024 ? 1 : 0;
                least = Math.min(least, bytes);
            }
            assertTrue(over <= 2, over + " of the last ten rounds allocated 1 KiB or more: " + java.util.Arrays.toString(bytesPerRound));
            assertEquals(0, least, "no steady-state round without allocation: " + java.util.Arrays.toString(bytesPerRound));
        }
    }
}
