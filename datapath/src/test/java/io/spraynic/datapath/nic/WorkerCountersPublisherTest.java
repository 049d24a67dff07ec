package io.spraynic.datapath.nic;

import io.spraynic.datapath.telemetry.CounterMirror;
import io.spraynic.datapath.telemetry.CountersFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The worker's counters go to the file every interval, its connections' a slice of {@code CONNECTIONS_PER_PUBLISH} at a
 * time, in turn, so that with thousands of connections publishing does not take the thread.
 */
@Timeout(10)
class WorkerCountersPublisherTest
{
    private static final int CONNECTIONS = 100;

    @TempDir
    Path dir;

    @Test
    void shouldPublishTheWorkersCountersEachIntervalAndItsConnectionsASliceAtATimeInTurn()
    {
        try (CountersFile file = CountersFile.create(dir, "publisher", 4 * CONNECTIONS))
        {
            final int[] engineReads = new int[1];
            final CounterMirror engine = new CounterMirror(file, "engine ", slot -> ++engineReads[0], slot -> "reads",
                new int[]{0});
            final NicWorker.WorkerCounters unpublished = NicWorker.WorkerCounters.unpublished();
            final NicWorker.WorkerCounters counters = new NicWorker.WorkerCounters(unpublished.rxFrames(),
                unpublished.steeredOut(), unpublished.steeredIn(), unpublished.steerDrops(), unpublished.badLkeys(),
                unpublished.commands(), unpublished.frameFaults(), unpublished.loopFaults(), null,
                new CounterMirror[]{engine});
            final WorkerCountersPublisher publisher = new WorkerCountersPublisher(counters,
                new WorkerFaults(counters.frameFaults(), counters.loopFaults(), "publisher-test"));
            final int[] reads = new int[CONNECTIONS];
            final NicConnection[] connections = new NicConnection[CONNECTIONS];
            for (int i = 0; i < CONNECTIONS; i++)
            {
                final int index = i;
                connections[i] = new SprayNicConnection(null, 0, 4, 4);
                connections[i].mirrors = new CounterMirror[]{new CounterMirror(file, "conn " + i + ": ",
                    slot -> ++reads[index], slot -> "reads", new int[]{0})};
            }

            long now = 1_000_000_000L;
            publisher.publishIfDue(null, connections, now);
            assertEquals(1, engineReads[0]);
            assertEquals(WorkerCountersPublisher.CONNECTIONS_PER_PUBLISH, Arrays.stream(reads).sum(), "one slice");
            publisher.publishIfDue(null, connections, now + WorkerCountersPublisher.INTERVAL_NANOS - 1);
            assertEquals(1, engineReads[0], "not before the interval");

            for (int k = 1; k < 4; k++)
            {
                now += WorkerCountersPublisher.INTERVAL_NANOS;
                publisher.publishIfDue(null, connections, now);
            }
            assertEquals(4, engineReads[0], "the worker's own every time");
            // 4 slices of 32 over 100 connections: every one once, the first 28 twice (the cursor wrapped)
            final int[] expected = new int[CONNECTIONS];
            for (int i = 0; i < CONNECTIONS; i++)
            {
                expected[i] = i < 4 * WorkerCountersPublisher.CONNECTIONS_PER_PUBLISH - CONNECTIONS ? 2 : 1;
            }
            assertArrayEquals(expected, reads);

            publisher.publishAll(null, connections);
            for (int i = 0; i < CONNECTIONS; i++)
            {
                expected[i]++;
            }
            assertArrayEquals(expected, reads, "the last publish covers every connection");
            assertEquals(0, counters.loopFaults().get());
        }
    }
}
