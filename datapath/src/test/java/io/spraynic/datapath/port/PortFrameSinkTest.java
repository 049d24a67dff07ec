package io.spraynic.datapath.port;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The frame output over ports: each plane's frames leave on that plane's port. A writer that throws between claim
 * and commit leaves a claimed buffer behind: it is reused by the next claim or given back at the flush, never
 * transmitted as an empty frame (issue 12, item 10: three zero-length frames).
 */
@Timeout(10)
class PortFrameSinkTest
{
    private final InMemoryLink link = new InMemoryLink("sink", 8, 2048 + InMemoryLink.HEADROOM);
    private final InMemoryLink plane1 = new InMemoryLink("sink1", 8, 2048 + InMemoryLink.HEADROOM);

    @AfterEach
    void close()
    {
        link.close();
        plane1.close();
    }

    @Test
    void shouldSendEachPlanesFramesOnThatPlanesPort()
    {
        final PortFrameSink sink = new PortFrameSink(new PacketPort[]{link.first(), plane1.first()}, 4, 2048);
        assertEquals(2, sink.planes());
        assertEquals(2048, sink.maxFrameLength());
        assertTrue(sink.claim(1, 300));
        write(sink, 300, (byte)1);
        sink.commit(300);
        assertTrue(sink.claim(0, 100));
        write(sink, 100, (byte)2);
        sink.commit(100);
        assertTrue(sink.claim(1, 200));
        write(sink, 200, (byte)3);
        sink.commit(200);
        assertEquals(3, sink.pending());
        assertEquals(3, sink.flush());
        assertEquals(3, sink.transmitted());
        assertArrayEquals(new int[]{100}, receiveAll(link.second()));
        assertArrayEquals(new int[]{300, 200}, receiveAll(plane1.second()));
    }

    @Test
    void shouldRefuseAClaimWhileAPlanesPortHasNoBufferAndKeepTheOtherPlaneGoing()
    {
        final PortFrameSink sink = new PortFrameSink(new PacketPort[]{link.first(), plane1.first()}, 16, 2048);
        int claimed = 0;
        while (sink.claim(0, 60))
        {
            write(sink, 60, (byte)claimed);
            sink.commit(60);
            claimed++;
            assertTrue(claimed <= 64, "a port of 8 buffers runs out");
        }
        assertTrue(claimed > 0);
        assertTrue(sink.claim(1, 60), "plane 1 has buffers of its own");
        sink.commit(60);
        sink.close();
    }

    @Test
    void shouldNeverTransmitAClaimThatWasNotCommitted()
    {
        final PortFrameSink sink = new PortFrameSink(link.first(), 4);
        assertTrue(sink.claim(0, 100));
        write(sink, 100, (byte)1);
        sink.commit(100);
        assertTrue(sink.claim(0, 100)); // abandoned: its writer "threw"
        assertEquals(1, sink.flush(), "only the committed frame leaves");
        assertEquals(1, sink.transmitted());
        assertEquals(0, sink.pending());

        final int[] lengths = receiveAll(link.second());
        assertEquals(1, lengths.length);
        assertEquals(100, lengths[0]);
        // every buffer came back: all 8 of the port's can be claimed and sent
        for (int i = 0; i < 8; i++)
        {
            assertTrue(sink.claim(0, 60), "buffer " + i);
            write(sink, 60, (byte)i);
            sink.commit(60);
            if (sink.pending() == 4)
            {
                sink.flush();
                receiveAll(link.second());
            }
        }
    }

    @Test
    void shouldReuseTheBufferOfAnAbandonedClaim()
    {
        final PortFrameSink sink = new PortFrameSink(link.first(), 4);
        assertTrue(sink.claim(0, 100));
        assertTrue(sink.claim(0, 200)); // the first claim's writer threw: same buffer
        assertEquals(1, sink.pending());
        write(sink, 200, (byte)7);
        sink.commit(200);
        assertEquals(1, sink.flush());
        assertEquals(200, receiveAll(link.second())[0]);
    }

    private static void write(final PortFrameSink sink, final int length, final byte value)
    {
        for (int i = 0; i < length; i++)
        {
            sink.buffer().set(ValueLayout.JAVA_BYTE, sink.offset() + i, value);
        }
    }

    private static int[] receiveAll(final PacketPort port)
    {
        final PacketBurst burst = port.newBurst(16);
        final int n = port.receive(burst);
        final int[] lengths = new int[n];
        for (int i = 0; i < n; i++)
        {
            lengths[i] = burst.length(i);
        }
        port.release(burst);
        burst.close();
        return lengths;
    }
}
