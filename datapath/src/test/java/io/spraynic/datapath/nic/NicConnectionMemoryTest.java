package io.spraynic.datapath.nic;

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
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a connection of an embedded NIC costs at both ends, handle included (issue 13): the NIC's handle holds its
 * work-request ring and completion queues only as they fill, so an idle connection at {@code spraynic nic}'s shape
 * (8 paths, 4 streams, ring 1,024, queues 4,096, depths 1,024) holds kilobytes, where the ring and queues made whole
 * held about 236 KB of its 308 KB per end (benchmarks/RESULTS.md sections 32 and 37). Heap is measured as in
 * {@code SprayConnectionMemoryTest}: used heap after full collections, here the growth from opening
 * {@link #MEASURED} more connections once the engines' tables and the classes are made, so fixed costs drop out.
 * Two NICs of one worker on the in-memory link of {@link InMemoryNicPair}, one JVM.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class NicConnectionMemoryTest
{
    /**
     * Heap one idle connection may hold, both ends together (its spray connections, handles, counters' mirrors,
     * the registry's and worker's slots): about 20.8 KB measured (2026-12-03), of which the handles' objects are about
     * 600 B and their slots none, a little allowed for the collector's noise; 617 KB when the handle's ring and queues
     * were made whole at their capacities.
     */
    static final long IDLE_BOTH_ENDS_BOUND = 24 * 1024;
    private static final int WARM = 20;
    /** Connections measured; {@code -Dspraynic.test.idleConnections=1024} for section 37's larger run. */
    private static final int MEASURED = Integer.getInteger("spraynic.test.idleConnections", 200);
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int MESSAGE_BYTES = 4096;

    @TempDir
    Path dir;

    @Test
    void anIdleConnectionHoldsKilobytesAtBothEndsAndItsHandleOnlyWhatItHadOutstanding() throws Exception
    {
        try (InMemoryNicPair pair = new InMemoryNicPair(dir, "handles", (config, host) -> config
            .connections(8, 4, 1024).queues(1024, 4096, 1024, 1024)
            .maxAcceptedConnections(2 * (WARM + MEASURED)).maxOpenedConnections(2 * (WARM + MEASURED))
            .sprayConfig(() -> EmbeddedNicConfig.sharedCoreSprayConfig().maxConnectionsPerSource(2 * (WARM + MEASURED)))))
        {
            final EmbeddedNic client = pair.nic(0);
            final EmbeddedNic server = pair.nic(1);
            final MemoryRegion target = pair.expose(1, MESSAGE_BYTES);
            final MemoryRegion source = client.register(pair.arena().allocate(MESSAGE_BYTES, 4096), AccessFlags.NONE);
            final List<NicConnection> opened = new ArrayList<>();
            for (int i = 0; i < WARM; i++) // the engines' tables, neighbour entries, classes: made once, not measured
            {
                opened.add(client.connect(new int[]{server.localIpv4(0)}, WAIT));
                write(opened.getLast(), source, target, i);
            }
            final long before = heapUsed();
            for (int i = 0; i < MEASURED; i++)
            {
                opened.add(client.connect(new int[]{server.localIpv4(0)}, WAIT));
            }
            await(() -> server.connections().size() == WARM + MEASURED);
            final long after = heapUsed();
            final long perConnection = (after - before) / MEASURED;
            System.out.printf("NicConnectionMemoryTest: %d idle connections: heap %,d -> %,d B, %,d B per connection " +
                "(both ends)%n", MEASURED, before, after, perConnection);
            assertTrue(perConnection > 0 && perConnection <= IDLE_BOTH_ENDS_BOUND, "an idle connection holds " +
                perConnection + " B at both ends, over the bound of " + IDLE_BOTH_ENDS_BOUND);

            for (final NicConnection c : opened.subList(WARM, opened.size()))
            {
                assertHolds(c, 0, 0, 0, "an idle connection's handle holds no slots");
            }
            for (final NicConnection c : server.connections())
            {
                assertHolds(c, 0, 0, 0, "neither does an accepted one's");
            }
            final NicConnection used = opened.getLast();
            write(used, source, target, 0);
            assertHolds(used, WorkRequestRing.FIRST_SLOTS, CompletionQueue.FIRST_SLOTS, 0,
                "one WRITE makes the ring's and the send queue's first slots, not their capacities");
            assertEquals(0L, InMemoryNicPair.faults(client) + InMemoryNicPair.faults(server));
        }
    }

    /**
     * After a burst a connection's handle gives its ring's and queues' slots back once they have been idle for
     * {@link EmbeddedNicConfig#DEFAULT_QUEUES_IDLE_NANOS}: the heap its slots held at the burst's high-water mark (what a handle
     * kept until it closed before) is measured against the heap once they have gone idle; the same connections then
     * carry a verified burst again (their slots made again by doubling).
     */
    @Test
    void aConnectionGivesItsSlotsBackWhenIdleAfterABurst() throws Exception
    {
        final int connections = 20;
        final int burst = 600;
        try (InMemoryNicPair pair = new InMemoryNicPair(dir, "bursts", (config, host) -> config
            .connections(8, 4, 1024).queues(1024, 4096, 1024, 1024)
            .maxAcceptedConnections(2 * connections).maxOpenedConnections(2 * connections)
            .sprayConfig(() -> EmbeddedNicConfig.sharedCoreSprayConfig().maxConnectionsPerSource(2 * connections))))
        {
            final EmbeddedNic client = pair.nic(0);
            final EmbeddedNic server = pair.nic(1);
            final MemoryRegion target = pair.expose(1, MESSAGE_BYTES);
            final MemoryRegion source = client.register(pair.arena().allocate(MESSAGE_BYTES, 4096), AccessFlags.NONE);
            final List<NicConnection> opened = new ArrayList<>();
            for (int i = 0; i < connections; i++)
            {
                opened.add(client.connect(new int[]{server.localIpv4(0)}, WAIT));
                write(opened.getLast(), source, target, i); // the engines' tables and classes made
            }
            for (int round = 0; round < 2; round++)
            {
                for (final NicConnection c : opened)
                {
                    postBurst(c, source, target, burst);
                }
                for (final NicConnection c : opened)
                {
                    await(() -> c.sendCompletionQueue().size() == burst, "the burst completes on " + c);
                }
                final long highWater = heapUsed(); // every completion waiting: the send queues at their high-water mark
                int ringSlots = 0;
                int queueSlots = 0;
                for (final NicConnection c : opened)
                {
                    ringSlots += c.ring().slotsHeld();
                    queueSlots += c.sendCompletionQueue().slotsHeld();
                    assertEquals(1024, c.sendCompletionQueue().slotsHeld(), "600 waiting: grown to 1,024 on " + c);
                    pollBurst(c, burst);
                }
                for (final NicConnection c : opened)
                {
                    await(() -> c.ring().slotsHeld() == 0 && c.sendCompletionQueue().slotsHeld() == 0 &&
                        c.receiveCompletionQueue().slotsHeld() == 0, "the slots of " + c + " given back once idle");
                }
                final long idle = heapUsed();
                System.out.printf("NicConnectionMemoryTest: round %d, %d connections after a burst of %d WRITEs: " +
                    "ring slots %d, send queue slots %d at the high-water mark; heap %,d -> %,d B idle: %,d B per " +
                    "connection given back%n", round, connections, burst, ringSlots / connections,
                    queueSlots / connections, highWater, idle, (highWater - idle) / connections);
                assertTrue((highWater - idle) / connections > 1024 * 20, "1,024 send queue slots of 23 B given back");
            }
            assertEquals(0L, InMemoryNicPair.faults(client) + InMemoryNicPair.faults(server));
        }
    }

    /**
     * A NIC told a longer idle period ({@link EmbeddedNicConfig#queuesIdle}) keeps a handle's slots past the default
     * 100 ms, so an application whose bursts come further apart does not make them again each time; its peer, told
     * 1 ms, gives them back at once.
     */
    @Test
    void aHandleKeepsItsSlotsForTheIdlePeriodItsNicWasGiven() throws Exception
    {
        try (InMemoryNicPair pair = new InMemoryNicPair(dir, "keep", (config, host) -> config
            .connections(8, 4, 1024).queues(1024, 4096, 1024, 1024)
            .sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig)
            .queuesIdle(0 == host ? Long.MAX_VALUE : 1_000_000L)))
        {
            final EmbeddedNic client = pair.nic(0);
            final EmbeddedNic server = pair.nic(1);
            final MemoryRegion target = pair.expose(1, MESSAGE_BYTES);
            final MemoryRegion source = client.register(pair.arena().allocate(MESSAGE_BYTES, 4096), AccessFlags.NONE);
            final MemoryRegion back = server.register(pair.arena().allocate(MESSAGE_BYTES, 4096), AccessFlags.NONE);
            final MemoryRegion clientTarget = pair.expose(0, MESSAGE_BYTES);
            final NicConnection kept = client.connect(new int[]{server.localIpv4(0)}, WAIT);
            write(kept, source, target, 1);
            await(() -> server.connections().size() == 1);
            final NicConnection accepted = server.connections().getFirst();
            write(accepted, back, clientTarget, 2); // the server's handle makes its first slots too
            await(() -> accepted.ring().slotsHeld() == 0 && accepted.sendCompletionQueue().slotsHeld() == 0,
                "the server's handle, told 1 ms, gives its slots back");
            Thread.sleep(3 * EmbeddedNicConfig.DEFAULT_QUEUES_IDLE_NANOS / 1_000_000L);
            assertHolds(kept, WorkRequestRing.FIRST_SLOTS, CompletionQueue.FIRST_SLOTS, 0,
                "told never, the client's handle keeps its slots three default idle periods on");
            assertEquals(0L, InMemoryNicPair.faults(client) + InMemoryNicPair.faults(server));
        }
    }

    private static void postBurst(final NicConnection c, final MemoryRegion local, final MemoryRegion target,
        final int count)
    {
        final SendWorkRequest request = new SendWorkRequest().opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(local, local.address(), MESSAGE_BYTES).remote(target.address(), target.rkey()).signaled(true);
        for (int i = 0; i < count; i++)
        {
            request.wrId(i);
            final long deadline = System.nanoTime() + WAIT.toNanos();
            int result;
            while ((result = c.postSend(0, request)) == PostResult.QUEUE_FULL)
            {
                assertTrue(System.nanoTime() < deadline, "the ring of " + c + " drains");
                Thread.onSpinWait();
            }
            assertEquals(PostResult.OK, result);
        }
    }

    private static void pollBurst(final NicConnection c, final int count)
    {
        final WorkCompletion completion = new WorkCompletion();
        for (int i = 0; i < count; i++)
        {
            assertTrue(c.sendCompletionQueue().poll(completion), "completion " + i + " of " + c);
            assertEquals(WorkCompletionStatus.SUCCESS, completion.status(), completion.toString());
            assertEquals(i, completion.wrId());
        }
    }

    private static void assertHolds(final NicConnection c, final int ring, final int sendCq, final int receiveCq,
        final String what)
    {
        assertEquals(1024, c.ring().capacity(), "the limit stays the configured capacity");
        assertEquals(4096, c.sendCompletionQueue().capacity());
        assertEquals(ring, c.ring().slotsHeld(), what + ": ring of " + c);
        assertEquals(sendCq, c.sendCompletionQueue().slotsHeld(), what + ": send queue of " + c);
        assertEquals(receiveCq, c.receiveCompletionQueue().slotsHeld(), what + ": receive queue of " + c);
    }

    static long heapUsed()
    {
        for (int i = 0; i < 4; i++)
        {
            System.gc();
        }
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static void write(final NicConnection c, final MemoryRegion local, final MemoryRegion target, final long wrId)
    {
        final SendWorkRequest request = new SendWorkRequest().wrId(wrId).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(local, local.address(), MESSAGE_BYTES).remote(target.address(), target.rkey()).signaled(true);
        assertEquals(PostResult.OK, c.postSend(0, request));
        final WorkCompletion completion = new WorkCompletion();
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!c.sendCompletionQueue().poll(completion))
        {
            assertTrue(System.nanoTime() < deadline, "the WRITE completes on " + c);
            Thread.onSpinWait();
        }
        assertEquals(WorkCompletionStatus.SUCCESS, completion.status(), completion.toString());
        assertEquals(wrId, completion.wrId());
    }

    private static void await(final BooleanSupplier condition)
    {
        await(condition, "every connection accepted");
    }

    private static void await(final BooleanSupplier condition, final String what)
    {
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean())
        {
            assertTrue(System.nanoTime() < deadline, what);
            WorkerCalls.sleepBriefly();
        }
    }
}
