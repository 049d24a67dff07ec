package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.transport.TransportCounters;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A connection's per-path counters are lent with its tables (issue 13): they cover the current traffic period, an
 * idle connection reports zeros, the set it gave back (lent to another connection then) is never what it reports,
 * and the periods' per-path counts add up to the connection's totals.
 */
class SprayPathCountersTest
{
    private static final int SIZE = 64 * 1024;
    private static final int[] SENDER_SLOTS = {SprayCounters.TX_PACKETS, SprayCounters.TX_BYTES, SprayCounters.PROBES_SENT};
    private static final int[] RECEIVER_SLOTS = {SprayCounters.RX_PACKETS, SprayCounters.RX_BYTES};

    /** What a test saw of one connection's per-path counters, period by period (sampled at each step). */
    private static final class Periods
    {
        final SprayConnection connection;
        final int[] slots;
        final long[] lastSeen; // [path * slots + i] in the period under way
        final long[] folded;   // [i] over every finished period and path
        int periods;
        boolean held;

        Periods(final SprayConnection connection, final int[] slots)
        {
            this.connection = connection;
            this.slots = slots;
            this.lastSeen = new long[connection.paths() * slots.length];
            this.folded = new long[slots.length];
        }

        void sample()
        {
            if (connection.holdsStorage())
            {
                held = true;
                for (int path = 0; path < connection.paths(); path++)
                {
                    for (int i = 0; i < slots.length; i++)
                    {
                        final long value = connection.pathCounters(path).get(slots[i]);
                        assertTrue(value >= lastSeen[path * slots.length + i], "a period's counts only grow");
                        lastSeen[path * slots.length + i] = value;
                    }
                }
            }
            else if (held)
            {
                held = false;
                periods++;
                for (int path = 0; path < connection.paths(); path++)
                {
                    for (int i = 0; i < slots.length; i++)
                    {
                        folded[i] += lastSeen[path * slots.length + i];
                        lastSeen[path * slots.length + i] = 0;
                    }
                }
            }
        }

        void assertIdleReadsZero()
        {
            assertFalse(connection.holdsStorage());
            for (int path = 0; path < connection.paths(); path++)
            {
                for (int slot = 0; slot < SprayCounters.SLOT_COUNT; slot++)
                {
                    assertEquals(0, connection.pathCounters(path).get(slot), "idle: path " + path + " " +
                        SprayCounters.label(slot));
                }
            }
        }

        void assertPeriodsAddUpToTotals()
        {
            for (int i = 0; i < slots.length; i++)
            {
                assertTrue(folded[i] > 0 || slots[i] == SprayCounters.PROBES_SENT, SprayCounters.label(slots[i]));
                assertEquals(connection.counters().get(slots[i]), folded[i],
                    "per-path counts of " + periods + " periods add up to the total of " + SprayCounters.label(slots[i]));
            }
        }
    }

    private static void runWhile(final SprayTestBed bed, final Periods[] periods, final BooleanSupplier more)
    {
        for (int step = 0; step < 200_000 && more.getAsBoolean(); step++)
        {
            bed.step();
            for (final Periods p : periods)
            {
                p.sample();
            }
        }
        assertFalse(more.getAsBoolean(), "done within 200,000 steps");
    }

    @Test
    @Timeout(120)
    void shouldCountPerPathForATrafficPeriodAndLoseNothingAcrossIdlePeriods()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.streams = 1;
        options.configure = (host, config) -> config.maxConnections(4);
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion src = bed.region(bed.pdA, SIZE, AccessFlags.NONE, 7);
            final MemoryRegion dst = bed.region(bed.pdB, SIZE, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            final Periods sender = new Periods(bed.a, SENDER_SLOTS);
            final Periods receiver = new Periods(bed.b, RECEIVER_SLOTS);
            final Periods[] both = {sender, receiver};
            final long[] foldedTxBytes = new long[bed.a.paths()];
            bed.a.foldPathCountersInto((path, period) -> foldedTxBytes[path] += period.get(SprayCounters.TX_BYTES));
            TransportCounters lent = null;
            for (int period = 0; period < 3; period++)
            {
                wr.reset().wrId(period).opcode(WorkRequestOpcode.RDMA_WRITE).local(src, src.address(), SIZE)
                    .remote(dst.address(), dst.rkey());
                assertEquals(PostResult.OK, bed.a.postSend(0, wr));
                assertTrue(bed.a.holdsStorage());
                lent = bed.a.pathCounters(0);
                runWhile(bed, both, () -> bed.a.holdsStorage() || bed.b.holdsStorage());
                assertEquals(-1L, src.segment().mismatch(dst.segment()));
                sender.assertIdleReadsZero();
                receiver.assertIdleReadsZero();
                assertNotSame(lent, bed.a.pathCounters(0), "an idle connection does not report the set it gave back");
            }
            assertEquals(3, sender.periods);
            assertEquals(3, receiver.periods);
            sender.assertPeriodsAddUpToTotals();
            assertEquals(3L * SIZE, Arrays.stream(foldedTxBytes).sum(), "each period told to the fold before it went back");
            assertEquals(bed.a.counters().get(SprayCounters.TX_BYTES), Arrays.stream(foldedTxBytes).sum());
            receiver.assertPeriodsAddUpToTotals();

            // the set A gave back is lent to the next connection with traffic: A still reads zeros, never its counts
            final SprayConnection other = bed.engineA.open(bed.initiatorConfig().cids(0x10_0001, 0x20_0001)
                .initialPsns(7, 13).keysFromCids());
            bed.engineB.open(bed.responderConfig().cids(0x20_0001, 0x10_0001).initialPsns(13, 7).keysFromCids());
            wr.reset().wrId(9).opcode(WorkRequestOpcode.RDMA_WRITE).local(src, src.address(), SIZE)
                .remote(dst.address(), dst.rkey());
            assertEquals(PostResult.OK, other.postSend(0, wr));
            assertSame(lent, other.pathCounters(0), "the pool lends the set given back last");
            bed.runUntil(() -> other.counters().get(SprayCounters.MESSAGES_SENT) == 1, 100_000);
            long otherSent = 0;
            for (int path = 0; path < other.paths(); path++)
            {
                otherSent += other.pathCounters(path).get(SprayCounters.TX_PACKETS);
            }
            assertTrue(otherSent > 0);
            sender.assertIdleReadsZero();
        }
    }
}
