package io.spraynic.datapath.nic.ipc;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UnixSocketsTest
{
    @TempDir
    Path dir;

    /**
     * A listener that never accepts, its backlog full: before, the next blocking connect waited for good (a stalled
     * NIC, or any process bound at the path, held a client's connect and the NIC handle with it).
     */
    @Test
    void shouldGiveUpAConnectToAListenerThatNeverAccepts()
    {
        final String path = dir.resolve("stalled").toString();
        final int listen = UnixSockets.listen(path, 0);
        final java.util.List<Integer> queued = new java.util.ArrayList<>();
        try
        {
            int result;
            final long start = System.nanoTime();
            while ((result = UnixSockets.connect(path)) >= 0 && queued.size() < 64)
            {
                queued.add(result); // the backlog fills (0 takes one or two)
            }
            final long waitedMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(result < 0, "a connect past the backlog fails");
            assertEquals(-11, result, "EAGAIN: its wait ran out");
            assertTrue(waitedMs >= UnixSockets.CONNECT_WAIT_MS - 500 && waitedMs < UnixSockets.CONNECT_WAIT_MS + 10_000,
                "bounded by the wait: " + waitedMs + " ms");
        }
        finally
        {
            queued.forEach(UnixSockets::close);
            UnixSockets.close(listen);
        }
    }

    @Test
    void shouldPassAMemfdAndItsSealsAndCutWhatDoesNotFit() throws Throwable
    {
        final String path = dir.resolve("s").toString();
        final int listen = UnixSockets.listen(path, 4);
        final int client = UnixSockets.connect(path);
        final int memory = RawDescriptors.memfd(8192, UnixSockets.F_SEAL_SHRINK | UnixSockets.F_SEAL_SEAL);
        try (UnixSockets.Received received = new UnixSockets.Received(16))
        {
            final int server = UnixSockets.accept(listen, received);
            assertTrue(server >= 0, "accepted: " + server);
            assertEquals(3, UnixSockets.send(client, new byte[]{1, 2, 3}, memory));
            final byte[] buffer = new byte[16];
            UnixSockets.receive(server, buffer, received);
            assertEquals(3, received.length);
            assertEquals(0, received.flags & (UnixSockets.MSG_TRUNC | UnixSockets.MSG_CTRUNC));
            assertEquals(1, received.fdCount);
            assertEquals(3, buffer[2]);
            final int passed = received.fds[0];
            assertTrue(passed != memory);
            assertEquals(UnixSockets.F_SEAL_SHRINK | UnixSockets.F_SEAL_SEAL, UnixSockets.seals(passed));
            assertEquals(8192, UnixSockets.size(passed));
            assertEquals(-UnixSockets.EPERM, UnixSockets.truncate(passed, 0));
            UnixSockets.close(passed);

            assertEquals(40, UnixSockets.send(client, new byte[40]));
            UnixSockets.receive(server, buffer, received);
            assertEquals(UnixSockets.MSG_TRUNC, received.flags & UnixSockets.MSG_TRUNC, "a message longer than the buffer");
            assertEquals(0, received.fdCount);
            UnixSockets.receive(server, buffer, received);
            assertEquals(-UnixSockets.EAGAIN, received.length, "nothing more");
            UnixSockets.close(client);
            UnixSockets.receive(server, buffer, received);
            assertEquals(0, received.length, "the end of the connection");
            UnixSockets.close(server);
        }
        finally
        {
            UnixSockets.close(memory);
            UnixSockets.close(listen);
        }
    }

    @Test
    void shouldNotAllocateWhenPollingAnIdleSocket()
    {
        final int listen = UnixSockets.listen(dir.resolve("s").toString(), 4);
        try (UnixSockets.Received scratch = new UnixSockets.Received(64))
        {
            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            final long id = Thread.currentThread().threadId();
            long best = Long.MAX_VALUE;
            for (int round = 0; round < 10; round++)
            {
                final long before = threads.getThreadAllocatedBytes(id);
                for (int i = 0; i < 20_000; i++)
                {
                    assertEquals(-UnixSockets.EAGAIN, UnixSockets.accept(listen, scratch));
                }
                best = Math.min(best, threads.getThreadAllocatedBytes(id) - before);
            }
            // interpreted, a downcall allocates ~60 B; compiled, nothing: 20,000 polls in under 1 KiB
            assertTrue(best < 1024, "bytes 20,000 idle polls allocated once compiled: " + best);
        }
        finally
        {
            UnixSockets.close(listen);
        }
    }
}
