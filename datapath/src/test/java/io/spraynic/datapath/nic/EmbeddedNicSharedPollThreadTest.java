package io.spraynic.datapath.nic;

import io.spraynic.datapath.api.BulkTransfer;
import io.spraynic.datapath.api.SeededPattern;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.DynamicCompositeAgent;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two embedded NICs whose workers share one poll thread ({@link EmbeddedNicConfig#pollThread}), as the demo runs them
 * on a host with few cores: no worker thread of their own, a verified write between them, and a close that takes
 * them off the poll thread, which runs on.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class EmbeddedNicSharedPollThreadTest
{
    private static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    Path dir;

    @Test
    void shouldRunBothNicsWorkersOnOnePollThreadAndLeaveItOnClose() throws Exception
    {
        final DynamicCompositeAgent pollThread = new DynamicCompositeAgent("shared-poll");
        try (AgentRunner runner = new AgentRunner(new BackoffIdleStrategy(), Throwable::printStackTrace, null, pollThread))
        {
            AgentRunner.startOnThread(runner);
            final long workerThreadsBefore = workerThreads();
            try (InMemoryNicPair pair = new InMemoryNicPair(dir, "shared", (config, host) -> config
                .sprayConfig(EmbeddedNicConfig::sharedCoreSprayConfig).pollThread(pollThread)))
            {
                assertEquals(workerThreadsBefore, workerThreads(), "no thread of their own for the NICs' workers");
                final NicConnection client = pair.nic(0).connect(new int[] {pair.nic(1).localIpv4(0)}, WAIT);
                final NicConnection server = pair.nic(1).accept(WAIT);
                assertNotNull(server, "the peer accepted the connection");
                final long bytes = 1L << 20;
                final MemorySegment source = SeededPattern.allocate(pair.arena(), bytes, 5);
                final MemorySegment target = pair.arena().allocate(bytes, 4096);
                final MemoryRegion local = pair.nic(0).register(source, AccessFlags.NONE);
                final MemoryRegion remote = pair.nic(1).register(target, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
                BulkTransfer.write(client, local, remote.address(), remote.rkey(), 64 * 1024, false, WAIT);
                assertEquals(-1, source.mismatch(target), "every byte placed");
            }
            assertEquals(DynamicCompositeAgent.Status.ACTIVE, pollThread.status(), "the poll thread runs on");
            // their workers left it: another pair joins and leaves the same poll thread
            try (InMemoryNicPair again = new InMemoryNicPair(dir, "again", (config, host) -> config.pollThread(pollThread)))
            {
                assertNotNull(again.nic(0).connect(new int[] {again.nic(1).localIpv4(0)}, WAIT));
            }
            assertTrue(runner.thread().isAlive());
        }
    }

    private static long workerThreads()
    {
        return Thread.getAllStackTraces().keySet().stream().filter(t -> t.getName().startsWith("spraynic-worker")).count();
    }
}
