package io.spraynic.datapath.fabric;

import io.spraynic.datapath.port.PacketBurst;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class FabricDeliveryPortTest
{
    private final FabricDeliveryPort port = new FabricDeliveryPort("host0/0");

    @Test
    void shouldHandTheDeliveredFrameToTheNextReceiveInPlace()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment fabricMemory = arena.allocate(4096);
            fabricMemory.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 1_000, (byte)0x5A);
            final PacketBurst burst = port.newBurst(32);
            assertEquals(0, port.receive(burst), "nothing delivered");

            assertTrue(port.offer(fabricMemory, 1_000, 90));
            assertEquals(1, port.receive(burst));
            assertEquals(1, burst.size());
            assertEquals(fabricMemory.address(), burst.memory().address(), "not copied: the fabric's memory");
            assertEquals(1_000, burst.offset(0));
            assertEquals(90, burst.length(0));
            assertEquals((byte)0x5A, burst.memory().get(java.lang.foreign.ValueLayout.JAVA_BYTE, burst.offset(0)));
            assertEquals(0, port.receive(burst), "one frame per delivery");

            port.release(burst);
            assertEquals(0, burst.size());
            assertThrows(IndexOutOfBoundsException.class, () -> burst.offset(0));
            assertEquals(1, port.framesOffered());
        }
    }

    @Test
    void shouldRefuseAndCountASecondFrameBeforeTheFirstWasTaken()
    {
        final MemorySegment memory = MemorySegment.ofArray(new byte[256]);
        assertTrue(port.offer(memory, 0, 64));
        assertFalse(port.offer(memory, 64, 64));
        assertEquals(1, port.framesRefused());

        port.clear();
        assertEquals(0, port.receive(port.newBurst(4)), "a frame whose delivery ended is gone");
        assertTrue(port.offer(memory, 64, 64));
    }

    @Test
    void shouldOnlyReceive()
    {
        final PacketBurst burst = port.newBurst(4);
        assertFalse(port.allocate(burst, 1), "no transmit buffers: the engine sends through the fabric's sink");
        assertEquals(0, port.transmit(burst));
        assertThrows(IllegalArgumentException.class, () -> port.newBurst(0));
    }
}
