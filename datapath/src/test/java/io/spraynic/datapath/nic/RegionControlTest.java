package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link RegionControl} when a worker does not answer in time (stalled by a command of the test's that waits on a
 * latch): a registration it missed is taken back by a command queued after it, and the memory is reported still
 * named until that worker let go of it; so with a deregistration. Before, a registration a worker missed stayed in
 * force there once it ran, on memory its caller had freed (a peer's WRITE under its rkey would have been placed
 * into unmapped memory), and its keys stayed taken for good. Two workers of a real NIC, a short timeout of the
 * test's own.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RegionControlTest
{
    private static final Duration SHORT = Duration.ofMillis(200);
    private static final int TENANT = 777;
    private static final int ACCESS = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE;

    @TempDir
    Path dir;

    private final CountDownLatch stall = new CountDownLatch(1);
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception
    {
        stall.countDown();
        for (int i = closeables.size() - 1; i >= 0; i--)
        {
            closeables.get(i).close();
        }
    }

    /** @return the two workers of a NIC with a port of its own each. */
    private NicWorker[] start()
    {
        final PacketPort[][] ports = new PacketPort[2][];
        for (int worker = 0; worker < 2; worker++)
        {
            final InMemoryLink link = new InMemoryLink("regions" + worker, 1024, 2048 + InMemoryLink.HEADROOM);
            closeables.add(link);
            ports[worker] = new PacketPort[]{link.first()};
        }
        final CountersFile counters = CountersFile.create(dir, "regions", 4096);
        closeables.add(counters);
        final EmbeddedNic nic = EmbeddedNic.start(new EmbeddedNicConfig().mode(NicConnection.Kind.SPRAY).planes(1)
            .workers(2).bursts(32, 2048).local(0, 0x0A00_0001, 0x02_00_00_00_00_01L), ports, counters);
        closeables.add(nic);
        return new NicWorker[]{nic.worker(0), nic.worker(1)};
    }

    /** Worker 1 runs nothing else until the test counts {@link #stall} down. */
    private void stallSecondWorker(final NicWorker[] workers) throws InterruptedException
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

    private static int regionsOf(final NicWorker worker)
    {
        return WorkerCalls.call(worker, (w, now) -> w.protectionDomain(TENANT).isEmpty() ? 0 : 1,
            EmbeddedNic.CONTROL_TIMEOUT, "look at a domain");
    }

    @Test
    void shouldTakeBackARegistrationAWorkerMissedAndSayTheMemoryIsNamedUntilThatWorkerLetsGo() throws Exception
    {
        final NicWorker[] workers = start();
        final RegionControl regions = new RegionControl(new WorkerCalls(workers, SHORT));
        final Arena memory = Arena.ofShared();
        final MemorySegment segment = memory.allocate(1 << 16, 4096);
        stallSecondWorker(workers);

        final MemoryStillNamedException stillNamed = assertThrows(MemoryStillNamedException.class,
            () -> regions.register(segment, ACCESS, TENANT));
        assertTrue(stillNamed.getMessage().contains("could not register memory"), stillNamed.getMessage());
        final CompletableFuture<Void> freed = stillNamed.unnamed().thenRun(memory::close);
        assertEquals(0, regionsOf(workers[0]), "taken back where it was made");
        Thread.sleep(100);
        assertFalse(stillNamed.unnamed().isDone(), "worker 1 has not run the registration nor its undoing yet");
        assertTrue(memory.scope().isAlive());

        stall.countDown(); // worker 1 runs the registration, then its undoing
        freed.get(10, TimeUnit.SECONDS);
        assertFalse(memory.scope().isAlive(), "freed once no worker named it");
        assertEquals(0, regionsOf(workers[1]), "taken back where it was made late");

        // the keys are free again and the workers answer: a registration goes through on both
        try (Arena next = Arena.ofShared())
        {
            final MemoryRegion region = regions.register(next.allocate(4096, 4096), ACCESS, TENANT);
            assertEquals(1, regionsOf(workers[0]));
            assertEquals(1, regionsOf(workers[1]));
            regions.deregister(region);
            assertEquals(0, regionsOf(workers[0]) + regionsOf(workers[1]));
        }
    }

    @Test
    void shouldKeepARegionRegisteredAndNamedUntilEveryWorkerConfirmedItsDeregistration() throws Exception
    {
        final NicWorker[] workers = start();
        final RegionControl regions = new RegionControl(new WorkerCalls(workers, SHORT));
        try (Arena memory = Arena.ofShared())
        {
            final MemoryRegion region = regions.register(memory.allocate(1 << 16, 4096), ACCESS, TENANT);
            stallSecondWorker(workers);

            final MemoryStillNamedException stillNamed = assertThrows(MemoryStillNamedException.class,
                () -> regions.deregister(region));
            assertNotNull(stillNamed.getCause());
            assertEquals(0, regionsOf(workers[0]), "gone where it was confirmed");
            assertTrue(region.isRegistered(), "its keys stay taken while worker 1 may name it");
            assertFalse(stillNamed.unnamed().isDone());

            stall.countDown();
            stillNamed.unnamed().get(10, TimeUnit.SECONDS);
            assertFalse(region.isRegistered(), "forgotten once every worker let go of it");
            assertEquals(0, regionsOf(workers[1]));
        }
    }

    @Test
    void shouldFreeTheMemoryItAllocatedForARegistrationAWorkerMissedOnlyOnceThatWorkerLetGo() throws Exception
    {
        final NicWorker[] workers = start();
        final RegionControl regions = new RegionControl(new WorkerCalls(workers, SHORT));
        stallSecondWorker(workers);
        final MemoryStillNamedException stillNamed = assertThrows(MemoryStillNamedException.class,
            () -> regions.register(1 << 16, ACCESS));
        stall.countDown();
        stillNamed.unnamed().get(10, TimeUnit.SECONDS);
        final int held = WorkerCalls.call(workers[1], (w, now) -> w.protectionDomain().isEmpty() ? 0 : 1,
            EmbeddedNic.CONTROL_TIMEOUT, "look at the default domain");
        assertEquals(0, held, "taken back from the default domain");
    }
}
