package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A spray NIC of two workers, each with an in-memory port of its own, whose worker 1 a test can stall (a command of
 * the test's waits on a latch, so the worker runs nothing else): the fixture of tests of what the control path does
 * when a worker does not answer in time. Closing it lets the worker go, then closes the NIC, its counters and links.
 */
final class TwoWorkerNic implements AutoCloseable
{
    private final CountDownLatch stall = new CountDownLatch(1);
    private final List<AutoCloseable> closeables = new ArrayList<>();
    final EmbeddedNic nic;
    final NicWorker[] workers;

    TwoWorkerNic(final Path dir, final String name)
    {
        final PacketPort[][] ports = new PacketPort[2][];
        for (int worker = 0; worker < 2; worker++)
        {
            final InMemoryLink link = new InMemoryLink(name + worker, 1024, 2048 + InMemoryLink.HEADROOM);
            closeables.add(link);
            ports[worker] = new PacketPort[]{link.first()};
        }
        final CountersFile counters = CountersFile.create(dir, name, 4096);
        closeables.add(counters);
        nic = EmbeddedNic.start(new EmbeddedNicConfig().mode(NicConnection.Kind.SPRAY).planes(1)
            .workers(2).bursts(32, 2048).local(0, 0x0A00_0001, 0x02_00_00_00_00_01L), ports, counters);
        closeables.add(nic);
        workers = new NicWorker[]{nic.worker(0), nic.worker(1)};
    }

    /** Worker 1 runs nothing else until {@link #release()}; returns once it waits. */
    void stallSecondWorker() throws InterruptedException
    {
        final CountDownLatch stalled = new CountDownLatch(1);
        WorkerCalls.submit(workers[1], (w, now) ->
        {
            stalled.countDown();
            try
            {
                return stall.await(30, TimeUnit.SECONDS);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return false;
            }
        });
        assertTrue(stalled.await(10, TimeUnit.SECONDS), "worker 1 stalled");
    }

    /** Lets worker 1 go on. */
    void release()
    {
        stall.countDown();
    }

    public void close() throws Exception
    {
        release();
        for (int i = closeables.size() - 1; i >= 0; i--)
        {
            closeables.get(i).close();
        }
    }
}
