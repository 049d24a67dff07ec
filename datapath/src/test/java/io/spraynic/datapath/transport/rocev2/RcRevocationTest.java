package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.QueuePairState;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Deregistration revokes what is under way: two RC engines over an in-JVM link, stepped in virtual time, a region
 * deregistered in the middle of an operation that uses it. Nothing is placed into it or read from it afterwards,
 * no exception escapes the engine, the operation fails with the status a NIC gives, and another queue pair of the
 * same engines goes on with a verified transfer.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RcRevocationTest
{
    private static final int SLOT_SIZE = InMemoryLink.HEADROOM + PathMtu.maxFrameLength(PathMtu.MTU_4096) + 64;
    private static final int LENGTH = 4 << 20;
    private static final int MTU = 1024;

    private final InMemoryLink link = new InMemoryLink("revoke", 1024, SLOT_SIZE);
    private final SendWorkRequest send = new SendWorkRequest();
    private final ReceiveWorkRequest receive = new ReceiveWorkRequest();
    private final RcTestbed bed = new RcTestbed(link.first(), link.second(), UnaryOperator.identity());

    @AfterEach
    void close()
    {
        bed.close();
        link.close();
    }

    private void stepUntilPlaced(final long bytes)
    {
        RcScenarios.stepUntilPlaced(bed, bytes);
    }

    private void assertAnotherQueuePairStillWorks()
    {
        RcScenarios.assertAnotherQueuePairStillWorks(bed, MTU);
    }

    @ParameterizedTest(name = "revoke hook called: {0}")
    @ValueSource(booleans = {true, false})
    void shouldRefuseTheRestOfAWriteOnceItsTargetIsDeregistered(final boolean revokeHook)
    {
        bed.connect(MTU);
        RcScenarios.deregisterMidWrite(bed, LENGTH, MTU, revokeHook);
    }

    @Test
    void shouldNeverTouchMemoryFreedAfterDeregistrationReturns()
    {
        // the IPC conductor's case: deregister, then close the arena the region was mapped in. Any later access
        // would throw IllegalStateException("Already closed") out of the engine, here into the test
        bed.connect(MTU);
        final MemoryRegion source = bed.register(bed.pdA, LENGTH, AccessFlags.NONE);
        final Arena clientArena = Arena.ofShared();
        final MemoryRegion target = bed.pdB.register(clientArena.allocate(LENGTH, 64),
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        RcTestbed.fill(source.segment(), 8);
        bed.qpA.postSend(send.reset().wrId(2).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), LENGTH).remote(target.address(), target.rkey()));
        stepUntilPlaced(256 * 1024);
        bed.pdB.deregister(target);
        bed.engineB.revoke(target);
        clientArena.close();
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, bed.await(bed.cqA, 100_000).status());
        bed.steps(1000);
        assertAnotherQueuePairStillWorks();
    }

    @Test
    void shouldStopServingAReadOnceItsSourceIsDeregistered()
    {
        bed.connect(MTU);
        final MemoryRegion source = bed.register(bed.pdB, LENGTH, AccessFlags.REMOTE_READ);
        final MemoryRegion target = bed.register(bed.pdA, LENGTH, AccessFlags.LOCAL_WRITE);
        RcTestbed.fill(source.segment(), 9);
        bed.qpA.postSend(send.reset().wrId(3).opcode(WorkRequestOpcode.RDMA_READ)
            .local(target, target.address(), LENGTH).remote(source.address(), source.rkey()));
        for (int i = 0; i < 100_000 && bed.engineB.counters().get(RcCounters.TX_READ_RESPONSES) < 200; i++)
        {
            bed.step();
        }
        final long responses = bed.engineB.counters().get(RcCounters.TX_READ_RESPONSES);
        assertTrue(responses >= 200 && responses < LENGTH / MTU, "the READ is being served: " + responses);
        bed.pdB.deregister(source);
        assertEquals(1, bed.engineB.revoke(source));
        final long sentAtRevocation = bed.engineB.counters().get(RcCounters.TX_READ_RESPONSES);

        final WorkCompletion wc = bed.await(bed.cqA, 100_000);
        assertEquals(3, wc.wrId());
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, wc.status(), wc::toString);
        bed.steps(1000);
        assertEquals(sentAtRevocation, bed.engineB.counters().get(RcCounters.TX_READ_RESPONSES),
            "no READ response read the region after its deregistration");
        assertEquals(1, bed.engineB.counters().get(RcCounters.REVOKED));
        assertEquals(QueuePairState.ERROR, bed.qpB.state());
        assertAnotherQueuePairStillWorks();
    }

    @Test
    void shouldFailLocalRequestsNamingADeregisteredRegion()
    {
        bed.connect(MTU);
        final MemoryRegion source = bed.register(bed.pdA, LENGTH, AccessFlags.NONE);
        final MemoryRegion target = bed.register(bed.pdB, LENGTH, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        final MemoryRegion receiveBuffer = bed.register(bed.pdA, 4096, AccessFlags.LOCAL_WRITE);
        RcTestbed.fill(source.segment(), 10);
        assertEquals(PostResult.OK, bed.qpA.postReceive(receive.reset().wrId(20)
            .buffer(receiveBuffer, receiveBuffer.address(), 4096)));
        assertEquals(PostResult.OK, bed.qpA.postSend(send.reset().wrId(4).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), LENGTH).remote(target.address(), target.rkey())));
        for (int i = 0; i < 100_000 && bed.engineA.counters().get(RcCounters.TX_REQUESTS) < 300; i++)
        {
            bed.step();
        }
        bed.pdA.deregister(source);
        assertEquals(1, bed.engineA.revoke(source));
        final long sentAtRevocation = bed.engineA.counters().get(RcCounters.TX_REQUESTS) +
            bed.engineA.counters().get(RcCounters.RETRANSMITTED);
        final WorkCompletion sent = bed.await(bed.cqA, 10);
        assertEquals(4, sent.wrId());
        assertEquals(WorkCompletionStatus.LOC_PROT_ERR, sent.status());
        final WorkCompletion flushed = bed.await(bed.cqA, 10);
        assertEquals(20, flushed.wrId());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, flushed.status(), "a receive in another region is flushed");
        assertEquals(QueuePairState.ERROR, bed.qpA.state());
        bed.steps(1000);
        assertEquals(sentAtRevocation, bed.engineA.counters().get(RcCounters.TX_REQUESTS) +
            bed.engineA.counters().get(RcCounters.RETRANSMITTED), "nothing read from the region after it");
        // a later post naming it is refused at once
        assertEquals(PostResult.OK, bed.qpA.postSend(send.reset().wrId(5).opcode(WorkRequestOpcode.RDMA_WRITE)
            .local(source, source.address(), 64).remote(target.address(), target.rkey())));
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, bed.await(bed.cqA, 10).status());
        assertAnotherQueuePairStillWorks();
    }

    @Test
    void shouldFlushWhatADestroyedQueuePairHadOutstanding()
    {
        bed.connect(MTU);
        final MemoryRegion buffer = bed.register(bed.pdB, 4096, AccessFlags.LOCAL_WRITE);
        bed.qpB.postReceive(receive.reset().wrId(31).buffer(buffer, buffer.address(), 4096));
        bed.qpB.postReceive(receive.reset().wrId(32).buffer(buffer, buffer.address(), 4096));
        final int qpn = bed.qpB.qpNumber();
        bed.engineB.destroyQueuePair(bed.qpB);
        assertEquals(31, bed.await(bed.cqB, 1).wrId());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, bed.wc.status());
        assertEquals(32, bed.await(bed.cqB, 1).wrId());
        assertEquals(null, bed.engineB.queuePair(qpn));
        assertEquals(0, bed.engineB.counters().get(RcCounters.QP_ERRORS), "a destroy is not an error");
    }
}
