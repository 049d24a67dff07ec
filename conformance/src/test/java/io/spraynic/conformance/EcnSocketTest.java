package io.spraynic.conformance;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

final class EcnSocketTest
{
    private static final InetSocketAddress SENDER = address("127.76.1.1", 31801);
    private static final InetSocketAddress RECEIVER = address("127.76.1.2", 31801);

    @Test
    void shouldDateADatagramWhenTheKernelReceivedItNotWhenTheSuiteReadIt() throws Exception
    {
        try (EcnSocket sender = new EcnSocket(SENDER, 1 << 16); EcnSocket receiver = new EcnSocket(RECEIVER, 1 << 16))
        {
            final long before = System.nanoTime();
            sender.send(new byte[] {1, 2, 3, 4}, RECEIVER, 2);
            final long sent = System.nanoTime();
            Thread.sleep(50); // the suite's thread late: the datagram waits in the socket
            final long read = System.nanoTime();
            final EcnSocket.Datagram d = receiver.receive(1_000_000_000L);
            assertNotNull(d);
            assertArrayEquals(new byte[] {1, 2, 3, 4}, d.bytes());
            assertEquals(2, d.tos() & 3, "the ECN field still reported beside the time");
            assertEquals(SENDER, d.from());
            assertTrue(d.arrivalNanos() >= before - 1_000_000 && d.arrivalNanos() <= sent + 1_000_000,
                "arrived " + (d.arrivalNanos() - before) + " ns after the send began, which took " + (sent - before) +
                " ns; read " + (read - before) + " ns after it");
        }
    }

    private static InetSocketAddress address(final String ip, final int port)
    {
        try
        {
            return new InetSocketAddress(InetAddress.getByName(ip), port);
        }
        catch (final java.net.UnknownHostException e)
        {
            throw new IllegalStateException(e);
        }
    }
}
