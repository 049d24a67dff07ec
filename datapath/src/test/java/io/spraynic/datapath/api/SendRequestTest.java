package io.spraynic.datapath.api;

import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SendRequestTest
{
    @Test
    void shouldNameLocalMemoryByLkeyAndAddressOnly()
    {
        final TestRegion region = new TestRegion(0x1000_0000L, 4096, 0x1234_5678, 0x0BAD_CAFE);
        final SendRequest request = new SendRequest().wrId(7).opcode(WorkRequestOpcode.RDMA_WRITE_WITH_IMM)
            .local(region, region.address() + 64, 128).remote(0xFEED_0000L, 42).immediate(-1).signaled(false).solicited(true);
        assertEquals(7, request.wrId());
        assertEquals(WorkRequestOpcode.RDMA_WRITE_WITH_IMM, request.opcode());
        assertEquals(0x1234_5678, request.lkey());
        assertEquals(0x1000_0040L, request.localAddress());
        assertEquals(128, request.length());
        assertEquals(0xFEED_0000L, request.remoteAddress());
        assertEquals(42, request.rkey());
        assertEquals(-1, request.immediateData());
        assertFalse(request.signaled());
        assertTrue(request.solicited());
        assertEquals(0x1234_5678, new SendRequest().local(0x1234_5678, 0x1000_0040L, 128).lkey(), "by lkey alone");
        assertEquals(0, new SendRequest().local((Region)null, 0, 0).lkey(), "no region names key 0, which names nothing");
    }

    @Test
    void shouldResetEveryFieldToASignaledSendWithNoBuffer()
    {
        final SendRequest request = new SendRequest().wrId(7).opcode(WorkRequestOpcode.RDMA_READ).local(5, 6, 7)
            .remote(8, 9).immediate(10).signaled(false).solicited(true).reset();
        assertEquals(0, request.wrId());
        assertEquals(WorkRequestOpcode.SEND, request.opcode());
        assertEquals(0, request.lkey());
        assertEquals(0, request.localAddress());
        assertEquals(0, request.length());
        assertEquals(0, request.remoteAddress());
        assertEquals(0, request.rkey());
        assertEquals(0, request.immediateData());
        assertTrue(request.signaled());
        assertFalse(request.solicited());
    }

    @Test
    void shouldRefuseANullOpcodeWhenFilledNotWhenPosted()
    {
        final SendRequest request = new SendRequest().opcode(WorkRequestOpcode.RDMA_READ);
        assertThrows(NullPointerException.class, () -> request.opcode(null));
        assertEquals(WorkRequestOpcode.RDMA_READ, request.opcode(), "unchanged");
    }
}
