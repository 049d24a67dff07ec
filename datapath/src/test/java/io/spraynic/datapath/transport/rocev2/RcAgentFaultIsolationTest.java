package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A NIC worker ({@link io.spraynic.datapath.nic.NicWorker}) whose RoCEv2 engine throws, on a frame and on a tick:
 * the memory behind a registered region is freed under it (its arena closed, so every access throws
 * {@link IllegalStateException}), a realistic bug of an application that deregisters too late. Each throw is
 * caught and counted by reason, the worker goes on, every receive buffer goes back to its pool, and a second QP
 * pair on the same workers carries a transfer checked byte for byte while the first one keeps failing.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RcAgentFaultIsolationTest
{
    private static final int SLOTS = 1024;
    private static final int SLOT_SIZE = InMemoryLink.HEADROOM + PathMtu.maxFrameLength(PathMtu.MTU_4096) + 64;
    private static final int LENGTH = 256 * 1024;
    private static final long MAX_STEPS = 2_000_000;

    private final InMemoryLink link = new InMemoryLink("rcfault", SLOTS, SLOT_SIZE);
    private final RcTestbed bed = new RcTestbed(link.first(), link.second(), UnaryOperator.identity());
    private final SendWorkRequest send = new SendWorkRequest();

    @AfterEach
    void close()
    {
        bed.close();
        link.close();
    }

    @Test
    void shouldCountAFrameThatThrowsAndCarryOn()
    {
        bed.connect(PathMtu.MTU_4096);
        final RcQueuePair brokenA = bed.qpA;
        final MemoryRegion source = bed.register(bed.pdA, LENGTH, AccessFlags.LOCAL_WRITE);
        RcTestbed.fill(source.segment(), 1);
        final Arena doomed = Arena.ofShared();
        final MemoryRegion freed = bed.pdB.register(doomed.allocate(LENGTH, 64),
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        doomed.close();
        assertEquals(PostResult.OK, brokenA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), LENGTH).remote(freed.address(), freed.rkey())));

        final WorkCompletion failed = bed.await(bed.cqA, MAX_STEPS);
        assertEquals(1, failed.wrId());
        assertEquals(WorkCompletionStatus.RETRY_EXC_ERR, failed.status(), failed::toString);
        final long faults = bed.workerB.faults();
        assertTrue(faults > 0, "B's frames threw");
        assertEquals(Map.of("frame java.lang.IllegalStateException", faults), bed.workerB.faultCounts());
        assertEquals(0, bed.workerA.faults());

        assertVerifiedWrite(2);
        bed.steps(100);
        assertEquals(SLOTS, link.first().freeBuffers(), "every frame A sent was released by B");
        assertEquals(SLOTS, link.second().freeBuffers(), "every frame B sent was released by A");
    }

    @Test
    void shouldCountATickThatThrowsAndServeTheOtherQueuePairs()
    {
        bed.connect(PathMtu.MTU_4096);
        final Arena doomed = Arena.ofShared();
        final MemoryRegion freed = bed.pdA.register(doomed.allocate(LENGTH, 64), AccessFlags.LOCAL_WRITE);
        final MemoryRegion target = bed.register(bed.pdB, LENGTH, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        assertEquals(PostResult.OK, bed.qpA.postSend(send.reset().wrId(1).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(freed, freed.address(), LENGTH).remote(target.address(), target.rkey())));
        doomed.close();
        bed.steps(10);
        assertTrue(bed.workerA.faults() > 0, "A's ticks threw");

        assertVerifiedWrite(2); // the broken QP throws on every tick it is served: the new pair still gets its turns
        final long faults = bed.workerA.faults();
        assertEquals(Map.of("tick java.lang.IllegalStateException", faults), bed.workerA.faultCounts());
        assertEquals(0, bed.workerB.faults());
    }

    /** Connects a fresh QP pair on the same engines and writes through it, checked byte for byte. */
    private void assertVerifiedWrite(final long wrId)
    {
        bed.connect(PathMtu.MTU_4096, 7000, 9000, a -> a);
        final MemoryRegion source = bed.register(bed.pdA, LENGTH, AccessFlags.LOCAL_WRITE);
        final MemoryRegion target = bed.register(bed.pdB, LENGTH, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        RcTestbed.fill(source.segment(), wrId);
        assertEquals(PostResult.OK, bed.qpA.postSend(send.reset().wrId(wrId).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), LENGTH).remote(target.address(), target.rkey())));
        final WorkCompletion done = bed.await(bed.cqA, MAX_STEPS);
        assertEquals(wrId, done.wrId());
        assertEquals(WorkCompletionStatus.SUCCESS, done.status(), done::toString);
        assertEquals(-1, source.segment().mismatch(target.segment()));
    }
}
