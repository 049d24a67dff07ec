package io.spraynic.datapath.nic;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link CaptureControl} when a worker does not confirm a stop in time (stalled by {@link TwoWorkerNic}, a 200 ms
 * control timeout of the test's own): the capture is over, so another starts, and its memory is reported still
 * written until that worker stopped. Before, the failed stop left the capture "running" for good: every later start
 * was refused ("a capture is running") until the NIC restarted.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class CaptureControlTest
{
    @TempDir
    Path dir;

    @Test
    void shouldEndACaptureWhoseStopAWorkerDidNotConfirmAndFreeItsMemoryOnlyOnceThatWorkerStopped() throws Exception
    {
        try (TwoWorkerNic twoWorkers = new TwoWorkerNic(dir, "capture"))
        {
            final CaptureControl capture = new CaptureControl(twoWorkers.nic,
                new WorkerCalls(twoWorkers.workers, Duration.ofMillis(200)), twoWorkers.nic.captureTaps(), 1);
            final CaptureRingLayout layout = CaptureRingLayout.of(2, 64, 128);
            final Arena first = Arena.ofShared();
            final MemorySegment memory = first.allocate(layout.fileLength(), 4096);
            layout.writeHeader(memory, 1, 1, new String[]{"capture0"}, "", 0, 0);
            capture.start(memory, layout, CaptureFilter.ALL);

            twoWorkers.stallSecondWorker();
            final MemoryStillNamedException stillNamed = assertThrows(MemoryStillNamedException.class, capture::stop);
            assertTrue(stillNamed.getMessage().contains("could not stop the capture"), stillNamed.getMessage());
            final CompletableFuture<Void> freed = stillNamed.unnamed().thenRun(first::close);
            Thread.sleep(100);
            assertFalse(freed.isDone(), "worker 1 has not stopped writing yet");
            assertTrue(first.scope().isAlive());

            twoWorkers.release();
            freed.get(10, TimeUnit.SECONDS);
            assertFalse(first.scope().isAlive(), "freed once worker 1 stopped writing into it");

            // the capture is over for the NIC: another starts (before: "a capture is running" until the NIC restarted)
            try (Arena second = Arena.ofShared())
            {
                final MemorySegment next = second.allocate(layout.fileLength(), 4096);
                layout.writeHeader(next, 1, 2, new String[]{"capture0"}, "", 0, 0);
                capture.start(next, layout, CaptureFilter.ALL);
                capture.stop();
            }
        }
    }
}
