package io.spraynic.datapath.fabric;

import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.transport.rocev2.RcQueuePair;
import io.spraynic.datapath.transport.spray.SprayConnection;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fabric endpoints are adapters over a {@code NicWorker}, the loop a NIC runs: every frame the fabric delivers
 * to a host goes through the worker's receive (its counter matches the host's ports), the transfer completes intact,
 * and the worker stops asking for timers when its engine is idle (spray) or its endpoint is stopped (RoCEv2), so a
 * simulation run until idle ends.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class FabricEndpointWorkerTest
{
    private static final int LENGTH = 256 * 1024;

    @Test
    void shouldCarrySprayThroughTheWorkerAndLetTheSimulationEnd()
    {
        try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withSeed(3), 2, 1); Arena arena = Arena.ofShared())
        {
            final FabricEndpointPairs.Spray pair = FabricEndpointPairs.spray(fabric, 4);
            final SprayFabricEndpoint endpointA = pair.endpointA();
            final SprayFabricEndpoint endpointB = pair.endpointB();
            final CompletionQueue cqA = pair.cqA();
            final SprayConnection a = pair.a();

            final MemorySegment source = SeededPattern.allocate(arena, LENGTH, 11);
            final MemorySegment target = arena.allocate(LENGTH, 64);
            final MemoryRegion local = pair.pdA().register(source, AccessFlags.NONE);
            final MemoryRegion remote = pair.pdB().register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            assertEquals(PostResult.OK, a.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(local, local.address(), LENGTH).remote(remote.address(), remote.rkey()).signaled(true)));
            endpointA.kick();
            fabric.runUntilIdle(); // returns only once neither worker asks for another tick

            final WorkCompletion completion = new WorkCompletion();
            assertTrue(cqA.poll(completion), "the WRITE completed");
            assertEquals(WorkCompletionStatus.SUCCESS, completion.status());
            assertEquals(-1, source.mismatch(target), "every byte placed");
            assertEquals(Long.MAX_VALUE, endpointA.worker().nextTickNanos(), "idle: no tick asked for");
            assertEquals(Long.MAX_VALUE, endpointB.worker().nextTickNanos());
            for (final SprayFabricEndpoint endpoint : new SprayFabricEndpoint[] {endpointA, endpointB})
            {
                final Host host = endpoint == endpointA ? fabric.host(0) : fabric.host(1);
                final long delivered = host.port(0).framesReceived() + host.port(1).framesReceived();
                assertTrue(delivered >= (endpoint == endpointA ? 1 : LENGTH / 4096), host + " received " + delivered);
                assertEquals(delivered, endpoint.worker().counters().rxFrames().get(),
                    "every frame the fabric delivered went through the worker's receive");
                assertEquals(0, endpoint.worker().faults());
            }
        }
    }

    @Test
    void shouldCarryRocev2ThroughTheWorkerUntilStopped()
    {
        try (Fabric fabric = Topology.backToBack(FabricConfig.DEFAULT.withSeed(5), 1, 1); Arena arena = Arena.ofShared())
        {
            final FabricEndpointPairs.Rc pair = FabricEndpointPairs.rc(fabric, arena);
            final HostPort portA = fabric.host(0).port(0);
            final HostPort portB = fabric.host(1).port(0);
            final RcFabricEndpoint a = pair.a();
            final RcFabricEndpoint b = pair.b();
            final CompletionQueue cqA = pair.cqA();
            final RcQueuePair qpA = pair.qpA();
            final MemorySegment source = SeededPattern.allocate(arena, LENGTH, 12);
            final MemorySegment target = arena.allocate(LENGTH, 64);
            final MemoryRegion local = pair.pdA().register(source, AccessFlags.LOCAL_WRITE);
            final MemoryRegion remote = pair.pdB().register(target, AccessFlags.REMOTE_WRITE | AccessFlags.LOCAL_WRITE);

            a.start();
            b.start();
            assertEquals(PostResult.OK, qpA.postSend(new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
                .local(local, local.address(), LENGTH).remote(remote.address(), remote.rkey()).signaled(true)));
            final WorkCompletion completion = new WorkCompletion();
            final long deadline = fabric.now() + 100_000_000L;
            while (!cqA.poll(completion) && fabric.now() < deadline)
            {
                fabric.runUntil(fabric.now() + 10_000);
            }
            assertEquals(WorkCompletionStatus.SUCCESS, completion.status());
            assertEquals(-1, source.mismatch(target), "every byte placed");
            final long ticksBefore = fabric.host(0).timersFired();
            fabric.runUntil(fabric.now() + 100_000);
            assertTrue(fabric.host(0).timersFired() - ticksBefore >= 90, "started: ticked every microsecond, idle or not");

            a.stop();
            b.stop();
            fabric.runUntilIdle(); // returns only once the stopped endpoints ask for no more timers
            assertEquals(portA.framesReceived(), a.worker().counters().rxFrames().get(),
                "every frame the fabric delivered went through the worker's receive");
            assertEquals(portB.framesReceived(), b.worker().counters().rxFrames().get());
            assertTrue(portB.framesReceived() >= LENGTH / 4096);
            assertEquals(0, a.worker().faults() + b.worker().faults());
        }
    }
}
