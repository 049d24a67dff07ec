package io.spraynic.datapath.transport;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A writer that throws between claim and commit leaves a claimed buffer behind: it is reused by the next claim or
 * given back at the flush, never transmitted as an empty frame (issue 12, item 10: three zero-length frames).
 */
class PortFrameSinkTest
{
    private final InMemoryLink link = new InMemoryLink("sink", 8, 2048 + InMemoryLink.HEADROOM);

    @AfterEach
    void close()
    {
        link.close();
    }

    @Test
    void shouldNeverTransmitAClaimThatWasNotCommitted()
    {
        final PortFrameSink sink = new PortFrameSink(link.first(), 4);
        assertTrue(sink.claim(100));
        write(sink, 100, (byte)1);
        sink.commit(100);
        assertTrue(sink.claim(100)); // abandoned: its writer "threw"
        assertEquals(1, sink.flush(), "only the committed frame leaves");
        assertEquals(1, sink.transmitted());
        assertEquals(0, sink.pending());

        final int[] lengths = receiveAll(link.second());
        assertEquals(1, lengths.length);
        assertEquals(100, lengths[0]);
        // every buffer came back: all 8 of the port's can be claimed and sent
        for (int i = 0; i < 8; i++)
        {
            assertTrue(sink.claim(60), "buffer " + i);
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
        assertTrue(sink.claim(100));
        assertTrue(sink.claim(200)); // the first claim's writer threw: same buffer
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
