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
 * Issue 13: an idle connection parks its paths' send windows ({@link PathScheduler#parkWindows}): the windows go
 * back to the pool with the tables and each path keeps only its next PSN. The peer's keepalive ACKs are taken
 * against that PSN without borrowing anything, and the next traffic period starts every path exactly there.
 */
@Timeout(120)
class SprayParkedPathsTest
{
    private static final int SIZE = 256 * 1024;

    @Test
    void shouldTakeKeepaliveAcksOnParkedPathsAndCarryOnAtTheParkedPsns()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.streams = 1;
        options.configure = (host, config) -> config.idleTimeoutNanos(10_000_000).storageLingerNanos(0);
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion src = bed.region(bed.pdA, 2 * SIZE, AccessFlags.NONE, 7);
            final MemoryRegion dst =
                bed.region(bed.pdB, 2 * SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            write(bed, src, dst, 0, 1);
            bed.runUntil(() -> !bed.a.holdsStorage() && !bed.b.holdsStorage(), 10_000);

            final int paths = bed.a.paths();
            final int[] parked = new int[paths];
            for (int path = 0; path < paths; path++)
            {
                parked[path] = bed.a.nextPsn(path);
                assertFalse(bed.a.sendWindow(path).isAttached(), "path " + path + " names the shared empty window");
            }
            final long stale = bed.a.counters().get(SprayCounters.ACKS_STALE);
            final long taken = bed.a.counters().get(SprayCounters.ACKS_RECEIVED);
            final long keepalives = bed.b.counters().get(SprayCounters.KEEPALIVES_SENT);

            bed.runToQuiet(20_000); // 20 ms: B sends keepalives (ACKs of path 0) every 3.3 ms
            final long keepalivesSent = bed.b.counters().get(SprayCounters.KEEPALIVES_SENT) - keepalives;
            assertTrue(keepalivesSent >= 4, "keepalives from B: " + keepalivesSent);
            assertEquals(stale, bed.a.counters().get(SprayCounters.ACKS_STALE),
                "a keepalive fits the parked path's next PSN");
            assertTrue(bed.a.counters().get(SprayCounters.ACKS_RECEIVED) - taken >= keepalivesSent,
                "every keepalive's ACK taken: " + bed.a.counters());
            assertFalse(bed.a.holdsStorage(), "an ACK of a parked path borrows nothing");
            final PathLentTimes idleTimes = bed.a.storageBucket().idleTimes;
            for (int path = 0; path < paths; path++)
            {
                // every idle connection of the shape names this set: an ACK taken while parked records no time
                assertEquals(Long.MIN_VALUE, idleTimes.lastAckAt[path], "path " + path + "'s shared last ACK time");
            }
            assertFalse(bed.a.isClosed());
            for (int path = 0; path < paths; path++)
            {
                assertEquals(parked[path], bed.a.nextPsn(path), "nothing sent while idle");
            }

            write(bed, src, dst, SIZE, 2);
            assertEquals(-1L, src.segment().mismatch(dst.segment()), "both WRITEs placed, byte for byte");
            assertEquals(0, bed.b.counters().get(SprayCounters.OUT_OF_WINDOW), bed.b::toString);
            assertEquals(0, bed.a.counters().get(SprayCounters.RETRANSMITTED), bed.a::toString);
            assertEquals(stale, bed.a.counters().get(SprayCounters.ACKS_STALE), bed.a::toString);
            int carriedOn = 0;
            for (int path = 0; path < paths; path++)
            {
                // the second period's packets took the PSNs after the first's (a path may carry none of them)
                carriedOn += bed.a.nextPsn(path) != parked[path] ? 1 : 0;
            }
            assertTrue(carriedOn > 0);
        }
    }

    private static void write(
        final SprayTestBed bed, final MemoryRegion src, final MemoryRegion dst, final long offset, final int sent)
    {
        final SendWorkRequest wr = new SendWorkRequest().wrId(sent).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(src, src.address() + offset, SIZE).remote(dst.address() + offset, dst.rkey());
        assertEquals(PostResult.OK, bed.a.postSend(0, wr));
        assertTrue(bed.a.holdsStorage());
        bed.runUntil(() -> bed.a.counters().get(SprayCounters.MESSAGES_SENT) == sent, 100_000);
    }
}
