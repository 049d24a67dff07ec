package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.BulkTransfer;
import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Deregistration on a running {@link EmbeddedNic} (RoCEv2, one worker, worker threads running): a peer's WRITE is
 * under way into a region when the application deregisters it, then frees it. The worker survives, nothing is
 * written into the region once {@link EmbeddedNic#deregister} returned, the WRITE fails with REM_ACCESS_ERR at
 * the peer, and another queue pair on the same worker carries a verified transfer.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class EmbeddedNicRevocationTest
{
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final int LENGTH = 64 << 20;

    @TempDir
    Path dir;

    private final Arena arena = Arena.ofShared();
    private InMemoryNicPair nicPair;

    @AfterEach
    void closeAll() throws Exception
    {
        if (null != nicPair)
        {
            nicPair.close();
        }
        arena.close();
    }

    private EmbeddedNic[] start()
    {
        nicPair = new InMemoryNicPair(dir, "revoke", (config, host) -> config.mode(NicConnection.Kind.ROCEV2).workers(1)
            .connections(4, 4, 1024).rocevRetry(20_000_000L, 7));
        return new EmbeddedNic[]{nicPair.nic(0), nicPair.nic(1)};
    }

    private static NicConnection[] queuePairs(final EmbeddedNic[] nics)
    {
        final NicConnection a = nics[0].createQueuePair(0);
        final NicConnection b = nics[1].createQueuePair(0);
        a.connect(b.rocevEndpoint(), WAIT);
        b.connect(a.rocevEndpoint(), WAIT);
        return new NicConnection[] {a, b};
    }

    /** Posts one WRITE of the whole source and waits until its first bytes are in the target. */
    private static void startWrite(final NicConnection from, final MemoryRegion source, final MemoryRegion target)
    {
        assertEquals(PostResult.OK, from.postSend(0, new SendWorkRequest().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), LENGTH).remote(target.address(), target.rkey()).signaled(true)));
        final long first = source.segment().get(ValueLayout.JAVA_LONG, 0);
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (target.segment().get(ValueLayout.JAVA_LONG, 0) != first)
        {
            assertTrue(System.nanoTime() < deadline, "the WRITE began");
            Thread.onSpinWait();
        }
    }

    private static WorkCompletion await(final NicConnection c)
    {
        final WorkCompletion completion = new WorkCompletion();
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (!c.sendCompletionQueue().poll(completion))
        {
            assertTrue(System.nanoTime() < deadline, "a completion came");
            Thread.onSpinWait();
        }
        return completion;
    }

    private void assertAnotherQueuePairWorks(final EmbeddedNic[] nics)
    {
        final NicConnection[] pair = queuePairs(nics);
        final long bytes = 1 << 20;
        final MemorySegment source = SeededPattern.allocate(arena, bytes, 77);
        final MemorySegment target = arena.allocate(bytes, 64);
        final MemoryRegion to = nics[1].register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        assertEquals(PostResult.OK, pair[1].postReceive(0, new ReceiveWorkRequest().wrId(77).buffer(null, 0, 0)));
        BulkTransfer.write(pair[0], nics[0].register(source, AccessFlags.NONE), to.address(), to.rkey(), 64 * 1024, true,
            WAIT);
        assertEquals(77, BulkTransfer.awaitImmediate(pair[1], WAIT).wrId());
        assertEquals(-1, source.mismatch(target), "the second queue pair's bytes");
    }

    private static Map<String, Long> counters(final EmbeddedNic nic)
    {
        final CountersReader reader = nic.counters().counters();
        final Map<String, Long> values = new HashMap<>();
        reader.forEach((value, id, label) -> values.put(label, value));
        return values;
    }

    @Test
    void shouldPlaceNothingAfterDeregistrationReturns() throws Exception
    {
        final EmbeddedNic[] nics = start();
        final NicConnection[] pair = queuePairs(nics);
        final MemoryRegion source = nics[0].register(SeededPattern.allocate(arena, LENGTH, 5), AccessFlags.NONE);
        final MemorySegment targetMemory = arena.allocate(LENGTH, 64);
        final MemoryRegion target = nics[1].register(targetMemory, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        startWrite(pair[0], source, target);

        nics[1].deregister(target);
        final MemorySegment atDeregistration = arena.allocate(LENGTH, 64).copyFrom(targetMemory);
        final WorkCompletion completion = await(pair[0]);
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, completion.status(),
            "the deregistration cut the WRITE short");
        Thread.sleep(50);
        assertEquals(-1, atDeregistration.mismatch(targetMemory), "bytes placed after deregister() returned");
        assertTrue(source.segment().mismatch(targetMemory) > 0, "part of the WRITE had been placed");
        assertAnotherQueuePairWorks(nics);
        Thread.sleep(20); // a few publication intervals
        final Map<String, Long> c = counters(nics[1]);
        assertEquals(1L, c.get("worker 0: plane 0 rocev2 revoked"), c::toString);
        assertEquals(1L, c.get("worker 0: plane 0 rocev2 tx_nak_access"));
    }

    @Test
    void shouldKeepTheWorkerServingWhenTheApplicationFreesTheRegionRightAfterDeregistering() throws Exception
    {
        final EmbeddedNic[] nics = start();
        final NicConnection[] pair = queuePairs(nics);
        final MemoryRegion source = nics[0].register(SeededPattern.allocate(arena, LENGTH, 6), AccessFlags.NONE);
        final Arena clientArena = Arena.ofShared();
        final MemoryRegion target = nics[1].register(clientArena.allocate(LENGTH, 64),
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        startWrite(pair[0], source, target);

        nics[1].deregister(target);
        clientArena.close(); // as the IPC conductor unmaps a client's region: a later access would throw in the worker
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, await(pair[0]).status());
        assertAnotherQueuePairWorks(nics);
    }
}
