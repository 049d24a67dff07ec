package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 10, unit = TimeUnit.SECONDS)
class RcSendQueueTest
{
    private final RcParts parts = new RcParts();
    private final MemoryRegion region = parts.register(4096, AccessFlags.NONE);
    private final SendWorkRequest request = new SendWorkRequest();
    private final RcSendQueue queue = new RcSendQueue(3);

    @AfterEach
    void close()
    {
        parts.close();
    }

    private void add(final long wrId, final WorkRequestOpcode opcode, final int psn, final int packets)
    {
        queue.add(request.reset().wrId(wrId).opcode(opcode).local(region, region.address() + 8, 100)
            .remote(0x99, 7).immediate(3).solicited(true), region, 8, RcSendQueue.NO_LOCAL_ERROR, psn, packets);
    }

    @Test
    void shouldRoundItsDepthUpAndKeepEachRequestWhole()
    {
        assertEquals(3, queue.mask);
        add(1, WorkRequestOpcode.RDMA_WRITE_WITH_IMM, 0x00FFFFFE, 3);
        final int i = queue.index(0);
        assertEquals(1, queue.wrId[i]);
        assertSame(WorkRequestOpcode.RDMA_WRITE_WITH_IMM, queue.workRequestOpcode(i));
        assertSame(region, queue.region[i]);
        assertEquals(8, queue.localOffset[i]);
        assertEquals(100, queue.length[i]);
        assertEquals(0x99, queue.remoteAddress[i]);
        assertEquals(7, queue.rkey[i]);
        assertEquals(3, queue.immediateData[i]);
        assertTrue(queue.solicited[i]);
        assertEquals(0, queue.lastPsn(i), "the PSN range wraps");
        assertFalse(queue.isRead(i));
    }

    @Test
    void shouldFillUpAndWrapAround()
    {
        for (int round = 0; round < 3; round++)
        {
            for (int k = 0; k < 4; k++)
            {
                assertFalse(queue.isFull());
                add(k, WorkRequestOpcode.SEND, k, 1);
            }
            assertTrue(queue.isFull());
            assertEquals(4, queue.size());
            for (int k = 0; k < 4; k++)
            {
                assertEquals(k, queue.wrId[queue.index(queue.head)]);
                queue.removeHead();
            }
            assertTrue(queue.isEmpty());
        }
        assertEquals(12, queue.head);
    }

    @Test
    void shouldCountReadsBeforeAPositionAndFindTheRegionsItUses()
    {
        add(1, WorkRequestOpcode.RDMA_READ, 0, 2);
        add(2, WorkRequestOpcode.SEND, 2, 1);
        add(3, WorkRequestOpcode.RDMA_READ, 3, 1);
        assertEquals(0, queue.readsBefore(0));
        assertEquals(1, queue.readsBefore(2));
        assertEquals(2, queue.readsBefore(3));
        assertTrue(queue.uses(region));
        assertFalse(queue.uses(parts.register(64, AccessFlags.NONE)));
        queue.removeHead();
        assertEquals(1, queue.readsBefore(3));
    }

    @Test
    void shouldForgetEverythingOnClear()
    {
        add(1, WorkRequestOpcode.SEND, 0, 1);
        queue.next = 1;
        queue.clear();
        assertTrue(queue.isEmpty());
        assertEquals(0, queue.next);
        assertFalse(queue.uses(region));
        for (final MemoryRegion r : queue.region)
        {
            assertNull(r);
        }
    }
}
