package io.spraynic.datapath.api;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class ReceiveRequestTest
{
    @Test
    void shouldNameItsBufferByLkeyAndAddressAndResetToNone()
    {
        final TestRegion region = new TestRegion(0x2000_0000L, 8192, 77, 88);
        final ReceiveRequest request = new ReceiveRequest().wrId(3).buffer(region, region.address() + 4096, 4096);
        assertEquals(3, request.wrId());
        assertEquals(77, request.lkey());
        assertEquals(0x2000_1000L, request.address());
        assertEquals(4096, request.length());
        assertEquals(78, new ReceiveRequest().buffer(78, 1, 2).lkey());
        assertEquals(0, new ReceiveRequest().buffer((Region)null, 0, 0).lkey());
        request.reset();
        assertEquals(0, request.wrId());
        assertEquals(0, request.lkey());
        assertEquals(0, request.address());
        assertEquals(0, request.length());
    }
}
