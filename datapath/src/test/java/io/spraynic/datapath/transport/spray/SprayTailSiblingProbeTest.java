package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.ProbeHeader;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * S6.8-7 between two engines in virtual time: a connection that learnt a late margin (S6.8.1) sends one message
 * whose packets all leave at once, and one path's route is dead (its data and probes dropped). Nothing sent after
 * that path's packet can show it silent alone (S6.8-3), so without the sibling probe its timeout waits the RTO plus
 * the margin; with it, a sibling's round trip after the packet was due.
 */
final class SprayTailSiblingProbeTest
{
    private static final int DEAD_PATH = 3;
    private static final long LATE_RTT_NANOS = 100_000_000L;
    private static final int MESSAGE = 8 * 4096;

    @Test
    void shouldResendADeadPathsTailPacketASiblingsRoundTripAfterItWasDueNotAfterTheLateMargin()
    {
        final boolean[] dead = {false};
        final FaultInjectingPacketPort.Selector onDeadPath = (memory, offset, length) ->
            dead[0] && pathOf(memory, offset, length) == DEAD_PATH;
        final SprayTestBed.Options options = new SprayTestBed.Options()
            .wrapA((plane, port) -> new FaultInjectingPacketPort(port, 5 + plane, 1.0, 0, 0, onDeadPath));
        options.configure = (host, config) -> config.lateMarginMaxNanos(2_000_000_000L);
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion source = bed.region(bed.pdA, 1 << 20, AccessFlags.NONE, 41);
            final MemoryRegion target = bed.region(bed.pdB, 1 << 20, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            write(bed, source, target, 1 << 20); // every path sampled
            assertEquals(0, bed.a.counters().get(SprayCounters.TIMEOUTS));

            // as a descheduled receiver's 100 ms late ACK would have taught it (S6.8.1)
            bed.a.rtt().onSpuriousTimeout(0, LATE_RTT_NANOS);
            final long margin = bed.a.rtt().lateMarginNanos();
            assertTrue(margin >= LATE_RTT_NANOS, "margin " + margin);

            dead[0] = true;
            final long siblingProbesBefore = probesSentOnLivePaths(bed.a);
            final long tookNanos = write(bed, source, target, MESSAGE);
            final long dropped = bed.totalDropped(bed.portsA);
            System.out.printf("S6.8-7: a dead path's tail packet under a %.1f ms margin: message done in %.3f ms, " +
                "%d frames of the dead path dropped, %d probes on live paths%n", margin / 1e6, tookNanos / 1e6, dropped,
                probesSentOnLivePaths(bed.a) - siblingProbesBefore);
            assertTrue(dropped >= 1, "the dead path carried part of the message");
            assertTrue(bed.a.pathCounters(DEAD_PATH).get(SprayCounters.TIMEOUTS) >= 1, "found by its timeout");
            assertTrue(probesSentOnLivePaths(bed.a) > siblingProbesBefore, "a probe on a live sibling");
            // round trips here are microseconds: the RTO floor (rtoMin) and a sibling's answer, not the margin
            assertTrue(tookNanos < margin / 10, "took " + tookNanos + " ns under a margin of " + margin + " ns");
            assertEquals(bed.a.counters().get(SprayCounters.LOST), bed.a.counters().get(SprayCounters.RETRANSMITTED));
        }
    }

    private static long probesSentOnLivePaths(final SprayConnection connection)
    {
        long probes = 0;
        for (int path = 0; path < 8; path++)
        {
            probes += path == DEAD_PATH ? 0 : connection.pathCounters(path).get(SprayCounters.PROBES_SENT);
        }
        return probes;
    }

    /** @return the path a data packet or probe names, -1 for any other frame. */
    private static int pathOf(final java.lang.foreign.MemorySegment memory, final long offset, final int length)
    {
        final long header = offset + SprayTestBed.DATA_OFFSET_BTH + BaseTransportHeader.LENGTH;
        if (length < SprayTestBed.DATA_OFFSET_BTH + BaseTransportHeader.LENGTH + ProbeHeader.LENGTH)
        {
            return -1;
        }
        final int opcode = BaseTransportHeader.opcode(memory, offset + SprayTestBed.DATA_OFFSET_BTH);
        if (SprayOpcodes.isData(opcode))
        {
            return SprayExtendedTransportHeader.path(memory, header);
        }
        return opcode == SprayOpcodes.PROBE ? ProbeHeader.path(memory, header) : -1;
    }

    /** @return the virtual nanoseconds from posting a WRITE of {@code bytes} to its completion, verified. */
    private static long write(final SprayTestBed bed, final MemoryRegion source, final MemoryRegion target, final int bytes)
    {
        final SendWorkRequest wr = new SendWorkRequest();
        wr.reset().wrId(bytes).opcode(WorkRequestOpcode.RDMA_WRITE).local(source, source.address(), bytes)
            .remote(target.address(), target.rkey());
        final long start = bed.now;
        assertEquals(PostResult.OK, bed.a.postSend(0, wr));
        final List<WorkCompletion> done = new ArrayList<>();
        bed.runUntil(() ->
        {
            done.addAll(SprayTestBed.drain(bed.sendCqA));
            return !done.isEmpty();
        }, 3_000_000);
        assertEquals(1, done.size(), "the WRITE completed");
        assertEquals(WorkCompletionStatus.SUCCESS, done.get(0).status());
        assertEquals(-1L, source.segment().asSlice(0, bytes).mismatch(target.segment().asSlice(0, bytes)), "verified");
        return bed.now - start;
    }
}
