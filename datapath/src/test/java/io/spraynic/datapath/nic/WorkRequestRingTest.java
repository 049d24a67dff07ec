package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.ReceiveRequest;
import io.spraynic.datapath.api.SendRequest;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.ReceiveWorkRequest;
import io.spraynic.datapath.verbs.SendRequestFields;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Both kinds of send request (the verbs one, naming a region, and the application API's, naming an lkey) reach the
 * worker through the ring as the same slot, field for field, and refuse a null opcode when filled; so do both kinds of
 * receive request.
 */
final class WorkRequestRingTest
{
    @Test
    void copiesEitherKindOfSendRequestFieldForField()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemoryRegion region = new ProtectionDomain().register(arena.allocate(4096), AccessFlags.LOCAL_WRITE);
            final WorkRequestRing ring = new WorkRequestRing(4);
            assertTrue(ring.offerSend(3, fill(new SendWorkRequest().local(region, region.address() + 64, 128))));
            assertTrue(ring.offerSend(3, fill(new SendRequest().local(region.lkey(), region.address() + 64, 128))));
            for (int i = 0; i < 2; i++)
            {
                assertEquals(WorkRequestSource.SEND, ring.peek());
                assertEquals(3, ring.stream());
                assertEquals(7, ring.wrId());
                assertEquals(WorkRequestOpcode.RDMA_WRITE_WITH_IMM, ring.opcode());
                assertEquals(region.lkey(), ring.lkey(), "the verbs request's region names the same key");
                assertEquals(region.address() + 64, ring.localAddress());
                assertEquals(128, ring.length());
                assertEquals(0xFEED_0000L, ring.remoteAddress());
                assertEquals(42, ring.rkey());
                assertEquals(-1, ring.immediateData());
                assertFalse(ring.signaled());
                assertTrue(ring.solicited());
                ring.advance();
            }
            assertEquals(0, ring.peek(), "empty");
        }
    }

    @Test
    void aVerbsRequestWithNoRegionNamesKeyZeroAndRefusesANullOpcode()
    {
        final SendWorkRequest request = new SendWorkRequest().opcode(WorkRequestOpcode.RDMA_READ).local(null, 0, 0);
        assertEquals(0, request.lkey());
        assertThrows(NullPointerException.class, () -> request.opcode(null));
        assertEquals(WorkRequestOpcode.RDMA_READ, request.opcode(), "unchanged");
        assertEquals(WorkRequestOpcode.SEND, request.reset().opcode());
        assertTrue(request.signaled());
    }

    @Test
    void copiesEitherKindOfReceiveRequestFieldForField()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemoryRegion region = new ProtectionDomain().register(arena.allocate(4096), AccessFlags.LOCAL_WRITE);
            final WorkRequestRing ring = new WorkRequestRing(4);
            assertTrue(ring.offerReceive(5, new ReceiveWorkRequest().wrId(9).buffer(region, region.address() + 32, 256)));
            assertTrue(ring.offerReceive(5, new ReceiveRequest().wrId(9).buffer(region.lkey(), region.address() + 32, 256)));
            for (int i = 0; i < 2; i++)
            {
                assertEquals(WorkRequestSource.RECEIVE, ring.peek());
                assertEquals(5, ring.stream());
                assertEquals(9, ring.wrId());
                assertEquals(region.lkey(), ring.lkey(), "the verbs request's region names the same key");
                assertEquals(region.address() + 32, ring.localAddress());
                assertEquals(256, ring.length());
                ring.advance();
            }
            assertEquals(0, ring.peek(), "empty");
        }
    }

    @Test
    void aVerbsReceiveRequestWithNoRegionNamesKeyZeroAndResetsToNoBuffer()
    {
        final ReceiveWorkRequest request = new ReceiveWorkRequest().wrId(4).buffer(null, 0, 0);
        assertEquals(0, request.lkey());
        try (Arena arena = Arena.ofConfined())
        {
            final MemoryRegion region = new ProtectionDomain().register(arena.allocate(64), AccessFlags.LOCAL_WRITE);
            request.buffer(region, region.address(), 64);
            assertEquals(region.lkey(), request.lkey());
        }
        request.reset();
        assertEquals(0, request.wrId());
        assertEquals(null, request.region());
        assertEquals(0, request.lkey());
        assertEquals(0, request.address());
        assertEquals(0, request.length());
    }

    private static <T extends SendRequestFields<T>> T fill(final T request)
    {
        return request.wrId(7).opcode(WorkRequestOpcode.RDMA_WRITE_WITH_IMM).remote(0xFEED_0000L, 42).immediate(-1)
            .signaled(false).solicited(true);
    }
}
