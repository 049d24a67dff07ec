package io.spraynic.datapath.fabric;

import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrameWriter;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Once warmed up (event heap grown, code compiled), running a busy fabric allocates nothing: frames,
 * events, queues, ECMP, ECN marking, loss and drops are all primitives over preallocated memory. Measured
 * with the JVM's per-thread allocation counter, best of several windows (JMH with -prof gc is the real
 * measurement; this guards against regressions).
 */
class SteadyStateAllocationTest
{
    /** Sends a frame to the next host every {@code gapNs}, for ever, over both planes and 16 UDP ports. */
    private static final class Streamer implements Endpoint
    {
        private final RoceFrameWriter writer = new RoceFrameWriter().opcode(Opcode.RC_SEND_ONLY).ecn(2);
        private final MemorySegment buffer;
        private final Host host;
        private final int peer;
        private final long gapNs;
        private int sent;
        long received;

        Streamer(final Host host, final int peer, final long gapNs, final MemorySegment buffer)
        {
            this.host = host;
            this.peer = peer;
            this.gapNs = gapNs;
            this.buffer = buffer;
        }

        public void onFrame(final long nowNs, final int portIndex, final MemorySegment segment, final long offset,
            final int length)
        {
            received++;
        }

        public void onTimer(final long nowNs)
        {
            final FabricPort port = host.port(sent & 1);
            final int length = writer.ipv4(port.localAddress(), port.addressOf(peer))
                .udpSourcePort(0xC000 + (sent & 15)).psn(sent).writeFrame(buffer, 0, 1024);
            port.send(buffer, 0, length);
            sent++;
            port.scheduleTimer(nowNs + gapNs);
        }
    }

    private static long allocatedBytes()
    {
        return ((com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean()).getCurrentThreadAllocatedBytes();
    }

    /** Reading the counter allocates a little itself (a few hundred bytes on JDK 25): measure it to subtract. */
    private static long measurementCost()
    {
        long cost = Long.MAX_VALUE;
        for (int round = 0; round < 10; round++)
        {
            final long before = allocatedBytes();
            cost = Math.min(cost, allocatedBytes() - before);
        }
        return cost;
    }

    @Test
    void shouldRunABusyLossyCongestedFabricWithoutAllocating()
    {
        final FabricConfig config = FabricConfig.DEFAULT.withFrames(16_384, 2_048)
            .withFabricLink(LinkConfig.DATA_CENTRE.withQueue(32 * 1024, 8 * 1024).withLoss(0.01));
        try (Fabric fabric = Topology.twoTierClos(config, 4, 2, 4, 2);
            Arena arena = Arena.ofConfined())
        {
            final Streamer[] streamers = new Streamer[16];
            for (int h = 0; h < 16; h++)
            {
                // hosts on leaf 0 all send to leaf 1 at line rate: spine links congest, mark and drop
                final int peer = h < 4 ? 4 + h : (h + 1) % 16;
                streamers[h] = new Streamer(fabric.host(h), peer, h < 4 ? 45 : 200, arena.allocate(2048));
                fabric.host(h).attach(streamers[h]);
                fabric.host(h).port(0).scheduleTimer(h);
            }
            long end = 3_000_000;
            fabric.runUntil(end);

            long best = Long.MAX_VALUE;
            for (int round = 0; round < 5; round++)
            {
                final long before = allocatedBytes();
                end += 500_000;
                fabric.runUntil(end);
                best = Math.min(best, allocatedBytes() - before);
            }

            final FabricTotals totals = fabric.totals();
            assertTrue(totals.randomLossDrops() > 0);
            assertTrue(totals.ecnMarked() > 0);
            assertTrue(totals.tailDrops() > 0);
            assertTrue(streamers[5].received > 0);
            assertTrue(totals.isConserved());
            assertEquals(0, best - measurementCost(), "bytes allocated in the best 0.5 ms window");
        }
    }

    @Test
    void shouldCarrySprayThroughTheEndpointsWorkersWithoutAllocating()
    {
        final long bytes = 64L << 20; // about 2.7 ms at 200 Gb/s: busy through every window measured
        try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withSeed(9), 2, 1); Arena arena = Arena.ofShared())
        {
            final FabricEndpointPairs.Spray pair = FabricEndpointPairs.spray(fabric, 8);
            final SprayFabricEndpoint endpointA = pair.endpointA();
            final SprayFabricEndpoint endpointB = pair.endpointB();
            final SprayConnection a = pair.a();
            final MemoryRegion local = pair.pdA().register(arena.allocate(bytes, 64), AccessFlags.NONE);
            final MemoryRegion remote = pair.pdB().register(arena.allocate(bytes, 64), AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            final SendWorkRequest write = new SendWorkRequest().opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(local, local.address(), (int)bytes).remote(remote.address(), remote.rkey()).signaled(true);
            // a whole write first: the per-packet path is compiled before a window is measured (measured 1 ms into
            // the first write of a fresh JVM, one CI run found 64 B in every window: code C2 had not compiled yet)
            assertEquals(PostResult.OK, a.postSend(0, write.wrId(0)));
            endpointA.kick();
            fabric.runUntilIdle();
            final WorkCompletion warmedUp = new WorkCompletion();
            assertTrue(pair.cqA().poll(warmedUp), "the warm-up write completed");
            assertEquals(WorkCompletionStatus.SUCCESS, warmedUp.status());

            assertEquals(PostResult.OK, a.postSend(0, write.wrId(1)));
            endpointA.kick();
            long end = fabric.now() + 1_000_000;
            fabric.runUntil(end);

            long best = Long.MAX_VALUE;
            final long receivedBefore = endpointB.worker().counters().rxFrames().get();
            for (int round = 0; round < 5; round++)
            {
                final long before = allocatedBytes();
                end += 200_000;
                fabric.runUntil(end);
                best = Math.min(best, allocatedBytes() - before);
            }

            assertTrue(endpointB.worker().counters().rxFrames().get() - receivedBefore > 2_000,
                "the receiver's worker took data frames all through the windows");
            assertEquals(0, endpointA.worker().faults() + endpointB.worker().faults());
            assertEquals(0, best - measurementCost(), "bytes allocated in the best 0.2 ms window");
        }
    }
}
