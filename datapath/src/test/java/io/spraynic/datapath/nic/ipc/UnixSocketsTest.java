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

    @Test
    void shouldNotAllocateWhenPollingAnIdleSocket()
    {
        final int listen = UnixSockets.listen(dir.resolve("s").toString(), 4);
        try (UnixSockets.Received scratch = new UnixSockets.Received(64))
        {
            final com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
            final long id = Thread.currentThread().threadId();
            for (int round = 0; round < 5; round++)
            {
                final long before = threads.getThreadAllocatedBytes(id);
                for (int i = 0; i < 20_000; i++)
                {
                    assertEquals(-UnixSockets.EAGAIN, UnixSockets.accept(listen, scratch));
                }
                System.out.println("round " + round + ": " + (threads.getThreadAllocatedBytes(id) - before) + " B");
            }
        }
        finally
        {
            UnixSockets.close(listen);
        }
    }
}
