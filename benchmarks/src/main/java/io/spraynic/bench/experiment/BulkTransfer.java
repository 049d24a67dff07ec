package io.spraynic.bench.experiment;

import java.util.Arrays;

/**
 * Drives every flow of a started {@link Cluster} as a bulk transfer: each flow's bytes in messages of
 * {@code messageBytes}, at most {@code outstanding} posted at a time, until all complete, one fails, or
 * the time limit passes. The fabric runs in steps of {@code stepNanos}; completions are timed at the end
 * of the step they arrive in.
 */
final class BulkTransfer
{
    /** Told of progress while the transfer runs. */
    interface Observer
    {
        /** A message of {@code bytes} completed at {@code nowNanos}. */
        default void onMessage(final int flow, final long bytes, final long nowNanos)
        {
        }

        /** A step ended. */
        default void onStep(final long nowNanos)
        {
        }
    }

    /**
     * @param startNanos   the first post.
     * @param endNanos     the last completion, or when the run stopped.
     * @param bytesDone    per flow, bytes of messages completed successfully.
     * @param finishNanos  per flow, its last completion (Long.MAX_VALUE: unfinished).
     * @param complete     every flow completed every message.
     * @param verified     every completed byte arrived intact at its place.
     * @param failed       some message completed in error (an RC QP gave up: retries exhausted); its flow
     *                     posts nothing more.
     */
    record Result(long startNanos, long endNanos, long[] bytesDone, long[] finishNanos, boolean complete,
        boolean verified, boolean failed, long retransmitted)
    {
        long totalBytes()
        {
            return Arrays.stream(bytesDone).sum();
        }

        double goodputGbps()
        {
            return endNanos == startNanos ? 0 : totalBytes() * 8.0 / (endNanos - startNanos);
        }
    }

    private BulkTransfer()
    {
    }

    static Result run(
        final Cluster cluster,
        final int messageBytes,
        final int outstanding,
        final long stepNanos,
        final long timeLimitNanos,
        final Observer observer)
    {
        return run(cluster, messageBytes, outstanding, stepNanos, timeLimitNanos, true, observer);
    }

    /**
     * @param stopOnFailure false: a failed flow stops, the others carry on.
     */
    static Result run(
        final Cluster cluster,
        final int messageBytes,
        final int outstanding,
        final long stepNanos,
        final long timeLimitNanos,
        final boolean stopOnFailure,
        final Observer observer)
    {
        final int flows = cluster.flows();
        final int[] messages = new int[flows];
        final int[] posted = new int[flows];
        final int[] inFlight = new int[flows];
        final int[] completed = new int[flows];
        final long[] bytesDone = new long[flows];
        final long[] finish = new long[flows];
        Arrays.fill(finish, Long.MAX_VALUE);
        int unfinished = 0;
        for (int f = 0; f < flows; f++)
        {
            messages[f] = (int)((cluster.flowBytes(f) + messageBytes - 1) / messageBytes);
            unfinished++;
        }
        final long start = cluster.fabric().now();
        final long deadline = start + timeLimitNanos;
        final boolean[] failed = new boolean[1];
        final boolean[] flowFailed = new boolean[flows];
        final int[] left = {unfinished};
        long end = start;
        while (left[0] > 0 && cluster.fabric().now() < deadline && !(failed[0] && stopOnFailure))
        {
            for (int f = 0; f < flows; f++)
            {
                while (inFlight[f] < outstanding && posted[f] < messages[f] && !flowFailed[f])
                {
                    final long offset = (long)posted[f] * messageBytes;
                    final int length = (int)Math.min(messageBytes, cluster.flowBytes(f) - offset);
                    if (!cluster.post(f, posted[f], offset, length))
                    {
                        break;
                    }
                    posted[f]++;
                    inFlight[f]++;
                }
            }
            cluster.fabric().runUntil(cluster.fabric().now() + stepNanos);
            final long now = cluster.fabric().now();
            cluster.poll((flow, message, success) ->
            {
                inFlight[flow]--;
                if (!success)
                {
                    failed[0] = true;
                    if (!flowFailed[flow])
                    {
                        flowFailed[flow] = true;
                        left[0]--;
                    }
                    return;
                }
                final long bytes = Math.min(messageBytes, cluster.flowBytes(flow) - (long)message * messageBytes);
                bytesDone[flow] += bytes;
                observer.onMessage(flow, bytes, now);
                if (++completed[flow] == messages[flow])
                {
                    finish[flow] = now;
                    left[0]--;
                }
            });
            observer.onStep(now);
        }
        boolean verified = true;
        for (int f = 0; f < flows; f++)
        {
            if (finish[f] != Long.MAX_VALUE)
            {
                end = Math.max(end, finish[f]);
            }
            // completions of one flow arrive in order (one RC QP; one spray stream), so what completed is a prefix
            verified &= cluster.verify(f, bytesDone[f]);
        }
        final boolean complete = left[0] == 0 && !failed[0];
        if (left[0] > 0)
        {
            end = Math.min(cluster.fabric().now(), deadline);
        }
        return new Result(start, end, bytesDone, finish, complete, verified, failed[0], cluster.retransmitted());
    }
}
