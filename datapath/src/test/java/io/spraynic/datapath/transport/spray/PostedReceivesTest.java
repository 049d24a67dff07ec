package io.spraynic.datapath.transport.spray;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionOpcode;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * docs/PROTOCOL.md S4.5: the j-th receive posted on a stream is the one its j-th receive-consuming message
 * consumes; receives complete once, free their entry, and are flushed in posting order per stream.
 */
@Timeout(10)
class PostedReceivesTest
{
    private static final int LOCAL_CID = 77;

    private final Arena arena = Arena.ofConfined();
    private final ProtectionDomain pd = new ProtectionDomain();
    private final MemoryRegion region = pd.register(arena.allocate(4096), AccessFlags.LOCAL_WRITE);
    private final CompletionQueue cq = new CompletionQueue(8);
    private final ReceiveWorkRequest request = new ReceiveWorkRequest();
    private final WorkCompletion completion = new WorkCompletion();

    @AfterEach
    void close()
    {
        arena.close();
    }

    private PostedReceives table(final int capacity, final int streams)
    {
        final PostedReceives receives = new PostedReceives(capacity, streams, cq, LOCAL_CID, pd);
        receives.attach(new PostedReceives.Storage(capacity));
        return receives;
    }

    private int post(final PostedReceives receives, final int streamId, final long wrId, final long offset,
        final int length)
    {
        return receives.post(streamId, request.reset().wrId(wrId).buffer(region, region.address() + offset, length));
    }

    @Test
    void shouldMatchReceivesByRsnPerStream()
    {
        final PostedReceives receives = table(4, 2);
        assertEquals(PostResult.OK, post(receives, 0, 10, 0, 100));
        assertEquals(PostResult.OK, post(receives, 1, 20, 100, 200));
        assertEquals(PostResult.OK, post(receives, 0, 11, 300, 300));

        final int first = receives.find(0, 0);
        final int second = receives.find(0, 1);
        final int other = receives.find(1, 0);
        assertNotEquals(PostedReceives.MISSING, first);
        assertNotEquals(first, second);
        assertNotEquals(first, other);
        assertEquals(100, receives.length(first));
        assertEquals(300, receives.length(second));
        assertEquals(200, receives.length(other));
        assertEquals(PostedReceives.MISSING, receives.find(0, 2), "not posted yet");
        assertEquals(PostedReceives.MISSING, receives.find(1, 1), "not posted yet");

        assertSame(region.segment(), receives.target(second));
        assertEquals(300 + 5, receives.targetOffset(second, 5), "the receive's place in its region, plus the offset");
    }

    @Test
    void shouldRefuseAReceiveOfAnotherDomainOrBeyondCapacity()
    {
        final PostedReceives receives = table(2, 1);
        final ProtectionDomain otherDomain = new ProtectionDomain();
        final MemoryRegion foreign = otherDomain.register(arena.allocate(64), AccessFlags.LOCAL_WRITE);
        assertEquals(PostResult.INVALID_ARGUMENT,
            receives.post(0, request.reset().wrId(1).buffer(foreign, foreign.address(), 64)));
        assertEquals(PostResult.INVALID_ARGUMENT, post(receives, 0, 1, 4000, 200), "beyond the region");
        assertEquals(PostedReceives.MISSING, receives.find(0, 0), "a refused post takes no RSN");

        assertEquals(PostResult.OK, receives.post(0, request.reset().wrId(2))); // no bytes: no region needed
        assertNull(receives.target(receives.find(0, 0)));
        assertEquals(PostResult.OK, post(receives, 0, 3, 0, 8));
        assertEquals(PostResult.QUEUE_FULL, post(receives, 0, 4, 0, 8));
    }

    @Test
    void shouldCompleteAReceiveOnceAndFreeIt()
    {
        final PostedReceives receives = table(1, 1);
        assertEquals(PostResult.OK, post(receives, 0, 42, 0, 64));
        final int receive = receives.find(0, 0);
        assertTrue(receives.complete(0, 0, receive, WorkCompletionStatus.SUCCESS,
            WorkCompletionOpcode.RECV_RDMA_WITH_IMM, 60, true, 0xabcd));

        assertTrue(cq.poll(completion));
        assertEquals(42, completion.wrId());
        assertEquals(WorkCompletionStatus.SUCCESS, completion.status());
        assertEquals(WorkCompletionOpcode.RECV_RDMA_WITH_IMM, completion.opcode());
        assertEquals(60, completion.byteLength());
        assertTrue(completion.hasImmediate());
        assertEquals(0xabcd, completion.immediateData());
        assertEquals(LOCAL_CID, completion.qpNumber());
        assertEquals(PostedReceives.MISSING, receives.find(0, 0));
        assertTrue(receives.isDetachable());

        assertEquals(PostResult.OK, post(receives, 0, 43, 0, 64), "its entry is free again");
        assertNotEquals(PostedReceives.MISSING, receives.find(0, 1), "the next post takes the next RSN");
    }

    @Test
    void shouldSayWhenTheCompletionQueueWasFull()
    {
        final PostedReceives receives = table(16, 1);
        for (int i = 0; i < 9; i++)
        {
            assertEquals(PostResult.OK, post(receives, 0, i, 0, 8));
        }
        for (int i = 0; i < 8; i++)
        {
            assertTrue(receives.complete(0, i, receives.find(0, i), WorkCompletionStatus.SUCCESS,
                WorkCompletionOpcode.RECV, 8, false, 0));
        }
        assertFalse(receives.complete(0, 8, receives.find(0, 8), WorkCompletionStatus.SUCCESS,
            WorkCompletionOpcode.RECV, 8, false, 0), "the CQ of 8 is full");
        assertTrue(receives.isDetachable(), "freed all the same");
    }

    @Test
    void shouldFlushInPostingOrderPerStreamAndCountOverruns()
    {
        final PostedReceives receives = table(12, 2);
        for (int i = 0; i < 5; i++)
        {
            assertEquals(PostResult.OK, post(receives, 0, 100 + i, 0, 8));
            assertEquals(PostResult.OK, post(receives, 1, 200 + i, 0, 8));
        }
        receives.complete(0, 0, receives.find(0, 0), WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.RECV, 8,
            false, 0);
        assertTrue(cq.poll(completion));

        assertEquals(1, receives.flush(), "9 flushed into a CQ of 8");
        final long[] expected = {101, 102, 103, 104, 200, 201, 202, 203};
        for (final long wrId : expected)
        {
            assertTrue(cq.poll(completion));
            assertEquals(wrId, completion.wrId());
            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, completion.status());
        }
        assertFalse(cq.poll(completion));
        assertTrue(receives.isDetachable());
        assertEquals(0, receives.flush(), "nothing left");
    }

    @Test
    void shouldSeeAReceiveWhoseMemoryWasDeregistered()
    {
        final PostedReceives receives = table(2, 1);
        assertEquals(PostResult.OK, post(receives, 0, 1, 0, 8));
        final int receive = receives.find(0, 0);
        assertFalse(receives.isDeregistered(receive));
        pd.deregister(region);
        assertTrue(receives.isDeregistered(receive));
    }

    @Test
    void shouldLendAndReturnItsStorageOnlyWhenEmpty()
    {
        final PostedReceives receives = new PostedReceives(4, 1, cq, LOCAL_CID, pd);
        assertFalse(receives.isDetachable(), "nothing attached");
        assertEquals(0, receives.flush(), "detached: nothing posted");
        assertThrows(IllegalStateException.class, () -> receives.attach(new PostedReceives.Storage(3)));

        final PostedReceives.Storage storage = new PostedReceives.Storage(4);
        assertEquals(PostedReceives.stateBytes(4), storage.bytes());
        receives.attach(storage);
        assertThrows(IllegalStateException.class, () -> receives.attach(new PostedReceives.Storage(4)));
        assertEquals(PostResult.OK, post(receives, 0, 1, 0, 8));
        assertFalse(receives.isDetachable(), "a receive is posted");
        receives.flush();
        assertTrue(receives.isDetachable());
        assertSame(storage, receives.detach());
        assertFalse(receives.isDetachable());
    }
}
