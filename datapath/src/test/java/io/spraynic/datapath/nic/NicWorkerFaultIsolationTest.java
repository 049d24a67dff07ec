package io.spraynic.datapath.nic;

import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A command and a poller that throw on a live worker: each is caught, counted as a loop fault and logged once;
 * the throwing poller is removed (it would throw on every loop), the next command runs, and the worker still
 * carries a verified transfer.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class NicWorkerFaultIsolationTest
{
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    @AutoClose
    private InMemoryNicPair pair;

    @Test
    void shouldSurviveACommandAndAPollerThatThrow() throws Exception
    {
        pair = new InMemoryNicPair(dir, "faults", (config, host) -> config.workers(1).connections(4, 4, 1024)
            .sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig).listen(host == 1));
        final EmbeddedNic[] nics = {pair.nic(0), pair.nic(1)};
        final NicWorker worker = nics[0].worker(0);
        final AtomicInteger pollerRuns = new AtomicInteger();
        final AtomicInteger afterwards = new AtomicInteger();
        assertTrue(worker.offer((w, now) ->
        {
            throw new IllegalStateException("a command that throws");
        }));
        assertTrue(worker.offer((w, now) -> w.addPoller(() ->
        {
            pollerRuns.incrementAndGet();
            throw new IllegalArgumentException("a poller that throws");
        })));
        assertTrue(worker.offer((w, now) -> afterwards.incrementAndGet()));
        final long deadline = System.nanoTime() + WAIT.toNanos();
        while (afterwards.get() == 0 || pollerRuns.get() == 0)
        {
            assertTrue(System.nanoTime() < deadline, "the worker went on after the faults");
            Thread.sleep(5);
        }
        Thread.sleep(50);
        assertEquals(1, pollerRuns.get(), "a poller that threw is removed");
        assertEquals(Map.of("command java.lang.IllegalStateException", 1L, "poller java.lang.IllegalArgumentException", 1L),
            nics[0].faultCounts());
        assertEquals(2, HostileWire.sum(HostileWire.counters(nics[0]),
            "loop faults (exception in a command, poller, post or tick)"));

        final HostileWire.Legit legit = connect(nics[0], nics[1]);
        assertEquals(-1, HostileWire.verifiedTransfer(legit, nics[0], nics[1], 1L << 20, 3, WAIT));
    }

    private static HostileWire.Legit connect(final EmbeddedNic a, final EmbeddedNic b)
    {
        final NicConnection client = a.connect(new int[]{b.localIpv4(0)}, WAIT);
        return new HostileWire.Legit(client, b.accept(WAIT));
    }
}
