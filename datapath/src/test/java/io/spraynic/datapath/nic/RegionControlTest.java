package io.spraynic.datapath.nic;

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
import java.util.concurrent.CompletableFuture;
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

    private TwoWorkerNic twoWorkers;

    @AfterEach
    void closeAll() throws Exception
    {
        if (null != twoWorkers)
        {
            twoWorkers.close();
        }
    }

    private NicWorker[] start()
    {
        twoWorkers = new TwoWorkerNic(dir, "regions");
        return twoWorkers.workers;
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
        twoWorkers.stallSecondWorker();

        final MemoryStillNamedException stillNamed = assertThrows(MemoryStillNamedException.class,
            () -> regions.register(segment, ACCESS, TENANT));
        assertTrue(stillNamed.getMessage().contains("could not register memory"), stillNamed.getMessage());
        final CompletableFuture<Void> freed = stillNamed.unnamed().thenRun(memory::close);
        assertEquals(0, regionsOf(workers[0]), "taken back where it was made");
        Thread.sleep(100);
        assertFalse(stillNamed.unnamed().isDone(), "worker 1 has not run the registration nor its undoing yet");
        assertTrue(memory.scope().isAlive());

        twoWorkers.release(); // worker 1 runs the registration, then its undoing
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
            twoWorkers.stallSecondWorker();

            final MemoryStillNamedException stillNamed = assertThrows(MemoryStillNamedException.class,
                () -> regions.deregister(region));
            assertNotNull(stillNamed.getCause());
            assertEquals(0, regionsOf(workers[0]), "gone where it was confirmed");
            assertTrue(region.isRegistered(), "its keys stay taken while worker 1 may name it");
            assertFalse(stillNamed.unnamed().isDone());

            twoWorkers.release();
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
        twoWorkers.stallSecondWorker();
        final MemoryStillNamedException stillNamed = assertThrows(MemoryStillNamedException.class,
            () -> regions.register(1 << 16, ACCESS));
        twoWorkers.release();
        stillNamed.unnamed().get(10, TimeUnit.SECONDS);
        final int held = WorkerCalls.call(workers[1], (w, now) -> w.protectionDomain().isEmpty() ? 0 : 1,
            EmbeddedNic.CONTROL_TIMEOUT, "look at the default domain");
        assertEquals(0, held, "taken back from the default domain");
    }
}
