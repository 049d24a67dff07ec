package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link SprayConfig#idleTickNanos} (issue 13): a connection that holds no tables and is idle is ticked once per that
 * interval, not on every tick, and still keeps its slow timers (keepalives, idle timeout); once it has traffic it is
 * ticked on every tick again and its transfer completes.
 */
@Timeout(120)
class SprayIdleTickTest
{
    private static final int SIZE = 64 * 1024;

    @Test
    void shouldTickAnIdleConnectionOncePerIntervalAndKeepItAliveThenCarryAWrite()
    {
        final long[] skippedWhileIdle = run(1_000_000);
        // 20 ms of 1 µs steps: about 20 ticks of each idle connection instead of 20,000
        assertTrue(skippedWhileIdle[0] > 18_000, "ticks left out at A: " + skippedWhileIdle[0]);
        assertTrue(skippedWhileIdle[1] > 18_000, "ticks left out at B: " + skippedWhileIdle[1]);
    }

    @Test
    void shouldTickEveryConnectionOnEveryTickByDefault()
    {
        final long[] skipped = run(0);
        assertEquals(0, skipped[0]);
        assertEquals(0, skipped[1]);
    }

    /** @return ticks left out at A and B while the connection was idle. */
    private static long[] run(final long idleTickNanos)
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.streams = 1;
        options.configure = (host, config) -> config.idleTimeoutNanos(10_000_000).idleTickNanos(idleTickNanos);
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            bed.runToQuiet(20_000); // 20 ms, two idle timeouts: kept alive by keepalives every 3.3 ms
            assertFalse(bed.a.isClosed());
            assertFalse(bed.b.isClosed());
            assertTrue(bed.a.counters().get(SprayCounters.KEEPALIVES_SENT) >= 4, bed.a.toString());
            assertTrue(bed.b.counters().get(SprayCounters.KEEPALIVES_SENT) >= 4, bed.b.toString());
            final long[] skipped = {bed.engineA.idleTicksSkipped(), bed.engineB.idleTicksSkipped()};

            bed.runToQuiet(300);
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 7);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(src, src.address(), SIZE).remote(dst.address(), dst.rkey());
            assertEquals(PostResult.OK, bed.a.postSend(0, wr));
            final long before = bed.engineA.idleTicksSkipped();
            if (idleTickNanos > 0)
            {
                // (the post lands 0.3 ms after a sweep of the parked connections: B's next visit is 0.7 ms away)
                assertFalse(bed.engineB.isHot(bed.b), "B, idle without tables, is parked");
                assertTrue(bed.engineA.isHot(bed.a), "a post makes A hot");
                bed.runUntil(() -> bed.b.counters().get(SprayCounters.RX_PACKETS) > 0, 10_000);
                assertTrue(bed.engineB.isHot(bed.b), "A's first packet makes B hot: ticked on every tick from then on");
            }
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.MESSAGES_SENT) == 1, 100_000);
            assertEquals(-1L, src.segment().mismatch(dst.segment()), "every byte arrived");
            assertTrue(bed.engineA.idleTicksSkipped() - before < 5, "a connection with traffic is ticked on every tick");
            return skipped;
        }
    }
}
