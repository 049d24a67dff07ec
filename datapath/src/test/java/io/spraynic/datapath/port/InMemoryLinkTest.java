package io.spraynic.datapath.port;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class InMemoryLinkTest
{
    private final InMemoryLink link = new InMemoryLink("mem", 64, 2048);

    @AfterEach
    void close()
    {
        link.close();
    }

    @ParameterizedTest
    @ValueSource(ints = {60, 64, 1500, 1920})
    void shouldDeliverBurstIntactAndInOrder(final int length)
    {
        final PacketPort a = link.first();
        final PacketPort b = link.second();
        final PacketBurst tx = a.newBurst(32);
        final PacketBurst rx = b.newBurst(32);

        assertTrue(a.allocate(tx, 32));
        for (int i = 0; i < 32; i++)
        {
            RawFrames.write(tx.memory(), tx.offset(i), length, 1000 + i);
            tx.length(i, length);
        }
        assertEquals(32, a.transmit(tx));
        assertEquals(0, tx.size());

        assertEquals(32, b.receive(rx));
        for (int i = 0; i < 32; i++)
        {
            assertEquals(length, rx.length(i));
            assertEquals(1000 + i, RawFrames.verify(rx.memory(), rx.offset(i), rx.length(i)));
        }
        b.release(rx);
        assertEquals(0, rx.size());
        assertEquals(64, link.first().freeBuffers());
    }

    @Test
    void shouldTransmitThenReceiveIntoTheSameBurst()
    {
        final PacketPort a = link.first();
        final PacketPort b = link.second();
        final PacketBurst fromB = b.newBurst(4);
        assertTrue(b.allocate(fromB, 3));
        for (int i = 0; i < 3; i++)
        {
            RawFrames.write(fromB.memory(), fromB.offset(i), 60, 500 + i);
            fromB.length(i, 60);
        }
        assertEquals(3, b.transmit(fromB));

        final PacketBurst burst = a.newBurst(8);
        assertTrue(a.allocate(burst, 2));
        for (int i = 0; i < 2; i++)
        {
            RawFrames.write(burst.memory(), burst.offset(i), 64, 700 + i);
            burst.length(i, 64);
        }
        assertEquals(2, a.transmitAndReceive(burst), "the port's default: transmit, then receive");
        assertEquals(3, burst.size());
        for (int i = 0; i < 3; i++)
        {
            assertEquals(500 + i, RawFrames.verify(burst.memory(), burst.offset(i), burst.length(i)));
        }
        a.release(burst);
        assertEquals(2, b.receive(fromB));
        assertEquals(700, RawFrames.verify(fromB.memory(), fromB.offset(0), fromB.length(0)));
        b.release(fromB);
    }

    @Test
    void shouldKeepUnsentPacketsWhenWireIsFull()
    {
        final PacketPort a = link.first();
        final PacketBurst tx = a.newBurst(64);
        assertTrue(a.allocate(tx, 64));
        for (int i = 0; i < 64; i++)
        {
            tx.length(i, 60);
        }
        assertEquals(64, a.transmit(tx));
        assertFalse(a.allocate(tx, 1), "every buffer of the pool is on the wire");

        final PacketBurst rx = link.second().newBurst(16);
        assertEquals(16, link.second().receive(rx));
        assertEquals(48, link.second().pendingReceive());
        link.second().release(rx);
        assertTrue(a.allocate(tx, 16), "buffers released by the peer come back");
        assertFalse(a.allocate(tx, 1));
        a.release(tx);
        assertEquals(16, link.first().freeBuffers());
    }

    @Test
    void shouldRefuseLengthBeyondRoomAndIndexBeyondSize()
    {
        final PacketBurst tx = link.first().newBurst(4);
        assertTrue(link.first().allocate(tx, 1));
        assertThrows(IllegalArgumentException.class, () -> tx.length(0, 2048));
        assertThrows(IndexOutOfBoundsException.class, () -> tx.offset(1));
        assertEquals(2048 - InMemoryLink.HEADROOM, tx.room(0));
        link.first().release(tx);
    }

    @Test
    void shouldExchangeMillionFramesBetweenTwoThreads() throws Exception
    {
        final long frames = 1_000_000;
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final AtomicLong received = new AtomicLong();

        final Thread receiver = new Thread(() ->
        {
            final PacketPort b = link.second();
            final PacketBurst rx = b.newBurst(32);
            long expected = 0;
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (expected < frames && System.nanoTime() < deadline)
            {
                b.receive(rx);
                for (int i = 0; i < rx.size(); i++)
                {
                    final long sequence = RawFrames.verify(rx.memory(), rx.offset(i), rx.length(i));
                    if (sequence != expected)
                    {
                        failure.compareAndSet(null, new AssertionError("expected " + expected + " got " + sequence));
                        return;
                    }
                    expected++;
                }
                b.release(rx);
            }
            received.set(expected);
        });
        receiver.start();

        final PacketPort a = link.first();
        final PacketBurst tx = a.newBurst(32);
        long next = 0;
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (next < frames && System.nanoTime() < deadline && receiver.isAlive())
        {
            final int want = (int)Math.min(32 - tx.size(), frames - next);
            if (want > 0 && a.allocate(tx, want))
            {
                for (int i = tx.size() - want; i < tx.size(); i++)
                {
                    RawFrames.write(tx.memory(), tx.offset(i), 64, next++);
                    tx.length(i, 64);
                }
            }
            a.transmit(tx);
        }
        while (tx.size() > 0 && receiver.isAlive())
        {
            a.transmit(tx);
        }
        receiver.join(TimeUnit.SECONDS.toMillis(70));

        assertNull(failure.get());
        assertEquals(frames, received.get());
    }
}
