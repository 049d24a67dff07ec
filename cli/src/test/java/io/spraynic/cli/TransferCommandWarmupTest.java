package io.spraynic.cli;

import io.spraynic.apps.exchange.PeerExchange;
import io.spraynic.datapath.telemetry.CountersFile;
import org.agrona.concurrent.status.AtomicCounter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code spraynic transfer --warmup [--warmup-hold]}'s part between the warm-up and the timed part
 * ({@link TransferPhases}): the counts it reports are the timed part's alone, summed over connections from the NIC's
 * own counters file, and it holds for whoever reads a fabric's counters in between.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TransferCommandWarmupTest
{
    @TempDir
    Path dir;

    @Test
    void shouldCountOnlyTheTimedPartSummedOverConnectionsAndLeaveOutPathsAndGauges() throws Exception
    {
        try (CountersFile file = CountersFile.create(dir, "transfer", 64))
        {
            final AtomicCounter lostA = file.newCounter("conn 0x1a: lost");
            final AtomicCounter lostB = file.newCounter("conn 0x2b: lost");
            final AtomicCounter timeouts = file.newCounter("conn 0x1a: timeouts");
            final AtomicCounter pathLost = file.newCounter("conn 0x1a: path 3 lost");
            final AtomicCounter hint = file.newCounter("conn 0x1a: peer_rate_hint_mbps");
            final AtomicCounter engine = file.newCounter("spray lost");
            lostA.setOrdered(40);
            lostB.setOrdered(2);
            timeouts.setOrdered(9);
            pathLost.setOrdered(7);
            hint.setOrdered(100);
            engine.setOrdered(1000);
            final TransferPhases phases = new TransferPhases(file.path(), dir, false, Duration.ofSeconds(5));
            phases.warmedUp(123_000_000L);
            // the timed part: 3 + 1 more lost over the connections, 2 more timeouts; a path's and the engine's own
            // counters and a gauge move too, and must not be taken for the connection's
            lostA.setOrdered(43);
            lostB.setOrdered(3);
            timeouts.setOrdered(11);
            pathLost.setOrdered(70);
            hint.setOrdered(5);
            engine.setOrdered(5000);
            phases.timed();
            assertEquals(4L, phases.timedCounts().get("lost"));
            assertEquals(2L, phases.timedCounts().get("timeouts"));
            assertEquals(0L, phases.timedCounts().get("retransmitted"));
            assertEquals(TransferPhases.COUNTED.size(), phases.timedCounts().size());
            assertEquals(123_000_000L, phases.warmupNanos());
            final String json = phases.timedJson();
            assertTrue(json.startsWith("{\"tx_packets\":0,") && json.contains(",\"lost\":4,") &&
                json.contains(",\"timeouts\":2,") && json.endsWith("}"), json);
            assertEquals(4.0, LabPeers.json(json, "lost"));
            assertEquals(0.0, LabPeers.json(json, "spurious_timeouts"), "not confused with timeouts: " + json);
            assertTrue(phases.describe().startsWith("warm-up 0.123 s; over the timed part: tx_packets 0, "),
                phases.describe());
        }
    }

    @Test
    void shouldHoldAfterTheWarmupUntilToldToGoOn() throws Exception
    {
        try (CountersFile file = CountersFile.create(dir, "transfer", 8))
        {
            final TransferPhases phases = new TransferPhases(file.path(), dir, true, Duration.ofSeconds(20));
            final CompletableFuture<Void> warm = CompletableFuture.runAsync(() ->
            {
                try
                {
                    phases.warmedUp(1);
                }
                catch (final java.io.IOException e)
                {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!Files.exists(dir.resolve(TransferPhases.WARM)) && System.nanoTime() < deadline)
            {
                Thread.sleep(5);
            }
            assertTrue(Files.exists(dir.resolve(TransferPhases.WARM)), "said it is warm");
            Thread.sleep(200);
            assertFalse(warm.isDone(), "holds until go");
            PeerExchange.publish(dir, TransferPhases.GO, "go");
            warm.get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void shouldFailAHoldNobodyEndsWithinTheTimeout() throws Exception
    {
        try (CountersFile file = CountersFile.create(dir, "transfer", 8))
        {
            final TransferPhases phases = new TransferPhases(file.path(), dir, true, Duration.ofMillis(300));
            final IllegalStateException failure = org.junit.jupiter.api.Assertions.assertThrows(
                IllegalStateException.class, () -> phases.warmedUp(1));
            assertTrue(failure.getMessage().contains(TransferPhases.GO), failure.getMessage());
        }
    }
}
