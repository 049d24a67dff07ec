package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.port.FaultInjectingPacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S6.7-2 through the whole connection, in virtual time: the tail probe a connection's timer sends
 * re-arms its path's RTO. B drops every ACK it sends, so A's one packet of a WRITE is never acknowledged: A probes the
 * path ({@code max(2 * srtt, probeMin)} after the packet) and its first timeout comes an RTO after that probe, not an
 * RTO after the packet (it came 50 us after the packet before S6.7-2, here 70 us: a 20 us probe time, a 50 us RTO).
 */
final class SprayTailProbeRearmTest
{
    private static boolean isAck(final java.lang.foreign.MemorySegment memory, final long offset, final int length)
    {
        return length > SprayTestBed.DATA_OFFSET_BTH &&
            BaseTransportHeader.opcode(memory, offset + SprayTestBed.DATA_OFFSET_BTH) == SprayOpcodes.ACK;
    }

    @Test
    void shouldTimeAPathsFirstTimeoutFromItsTailProbeS672()
    {
        final SprayTestBed.Options options = new SprayTestBed.Options();
        options.wrapB((plane, port) -> new FaultInjectingPacketPort(port, plane, 1.0, 0, 0,
            SprayTailProbeRearmTest::isAck));
        try (SprayTestBed bed = new SprayTestBed(options))
        {
            final MemoryRegion source = bed.region(bed.pdA, 1024, AccessFlags.LOCAL_WRITE, 5);
            final MemoryRegion target = bed.region(bed.pdB, 1024, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE, 0);
            final SendWorkRequest wr = new SendWorkRequest();
            wr.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE).local(source, source.address(), 1024)
                .remote(target.address(), target.rkey());
            assertEquals(PostResult.OK, bed.a.postSend(0, wr));
            final PathScheduler scheduler = bed.a.scheduler;
            final int[] path = {-1};
            bed.runUntil(() ->
            {
                for (int p = 0; p < bed.a.paths() && path[0] < 0; p++)
                {
                    path[0] = scheduler.sendWindows[p].outstanding() > 0 ? p : -1;
                }
                return path[0] >= 0;
            }, 100);
            final long sentAt = scheduler.sendWindows[path[0]].oldestSentAtNanos();
            final long probeTime = Math.max(2 * scheduler.srttNanos(path[0]), new SprayConfig().probeMinNanos);
            final long rto = scheduler.rtoNanos(path[0]);
            bed.runUntil(() -> bed.a.counters().get(SprayCounters.TIMEOUTS) > 0, 1_000);
            final long firstTimeout = bed.now - sentAt;
            System.out.printf("first timeout %d ns after the packet: probe time %d ns, RTO %d ns, probes %d%n",
                firstTimeout, probeTime, rto, bed.a.counters().get(SprayCounters.PROBES_SENT));
            assertTrue(bed.a.counters().get(SprayCounters.PROBES_SENT) >= 1, "the tail probe went out");
            assertTrue(firstTimeout >= probeTime + rto, "timed from the probe: " + firstTimeout + " ns, RTO " + rto);
            assertTrue(firstTimeout <= probeTime + rto + 2 * 2 * SprayTestBed.HALF_STEP_NANOS,
                "within a step or two of the probe's time plus the RTO: " + firstTimeout + " ns");
        }
    }
}
