package io.spraynic.datapath.nic.ipc;

import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The {@link IpcConductor}'s control actions that wait on the NIC (register, connect, accept, close, capture): each runs
 * on a bounded pool of control threads and hands its result back to the conductor through a queue, so one slow
 * handshake never stalls another client's commands; more than {@link IpcConductor#MAX_CONTROL_ACTIONS} at once are
 * refused with {@link IpcMessages#ERR_LIMIT}. Releases of what clients no longer hold never run on the conductor while it
 * serves: one that finds every control thread busy waits its turn on a release thread of its own.
 */
final class ControlActions
{
    private static final long LOG_INTERVAL_MS = 10_000;
    /** The thread that runs the releases that found every control thread busy. */
    static final String RELEASE_THREAD_NAME = "spraynic-ipc-release";

    private final IpcConductor conductor;
    private final IpcCounters counters;
    private final ManyToOneConcurrentArrayQueue<Runnable> results = new ManyToOneConcurrentArrayQueue<>(4096);
    // bounded, so clients cannot make the NIC start threads without end (a refused action is answered with an error)
    private final ExecutorService control = new ThreadPoolExecutor(0, IpcConductor.MAX_CONTROL_ACTIONS, 30,
        TimeUnit.SECONDS, new SynchronousQueue<>(), runnable ->
        {
            final Thread t = new Thread(runnable, "spraynic-ipc-control");
            t.setDaemon(true);
            return t;
        });
    // releases that found every control thread busy, in the order they came: a release may wait on the workers for
    // seconds, and the conductor must go on beating its heartbeat and answering meanwhile. Its queue holds at most what
    // clients can hold (the Limits), each a closure of a few objects.
    private final ThreadPoolExecutor releases = new ThreadPoolExecutor(1, 1, 30, TimeUnit.SECONDS,
        new LinkedBlockingQueue<>(), runnable ->
        {
            final Thread t = new Thread(runnable, RELEASE_THREAD_NAME);
            t.setDaemon(true);
            return t;
        });
    private volatile boolean closed;

    ControlActions(final IpcConductor conductor, final IpcCounters counters)
    {
        this.conductor = conductor;
        this.counters = counters;
        releases.allowCoreThreadTimeOut(true);
    }

    /** Conductor: runs the results control threads handed back; one that throws is counted. @return results run. */
    int runResults(final long now)
    {
        int work = 0;
        Runnable result;
        while (null != (result = results.poll()))
        {
            try
            {
                result.run();
            }
            catch (final RuntimeException ex)
            {
                counters.unexpected(counters.unexpectedResults, "control result", ex, now, LOG_INTERVAL_MS);
            }
            work++;
        }
        return work;
    }

    /**
     * Frees what a client no longer holds: on a control thread, else (every one busy) on the release thread, in turn;
     * here only once the conductor is closing.
     */
    void releaseLater(final Runnable release)
    {
        if (!closed)
        {
            try
            {
                control.execute(() -> runRelease(release));
                return;
            }
            catch (final RejectedExecutionException busy)
            {
                // every control thread is busy: the release thread frees it, late but certain
            }
            try
            {
                releases.execute(() -> runRelease(release));
                return;
            }
            catch (final RejectedExecutionException closing)
            {
                // close() shut the release thread down between the check and here: free it here
            }
        }
        release.run();
    }

    private void runRelease(final Runnable release)
    {
        try
        {
            release.run();
        }
        catch (final RuntimeException ex)
        {
            counters.unexpected(counters.unexpectedResults, "release", ex, System.currentTimeMillis(), LOG_INTERVAL_MS);
        }
    }

    /**
     * Runs {@code action} on a control thread, then (on the conductor) {@code settle} and {@code onDone} with its
     * result, or {@code settle} and an ERROR.
     *
     * @return false when every control thread is busy: nothing runs, {@code settle} ran and the client was answered
     * LIMIT; a caller that releases something takes it from the client only once this returned true, so that a refused
     * release leaves it where the client (or the client's end) can release it again.
     */
    <T> boolean submit(final IpcClient client, final long correlationId, final int type, final Callable<T> action,
        final Consumer<T> onDone, final Runnable settle)
    {
        final Runnable task = () ->
        {
            Runnable next;
            try
            {
                final T value = action.call();
                next = () ->
                {
                    settled(settle);
                    onDone.accept(value);
                };
            }
            catch (final Exception ex)
            {
                final String reason = null == ex.getMessage() ? ex.toString() : ex.getMessage();
                next = () ->
                {
                    settled(settle);
                    conductor.answers.respondError(client, correlationId, type, IpcMessages.ERR_FAILED, reason);
                };
            }
            while (!results.offer(next) && !closed)
            {
                Thread.onSpinWait();
            }
        };
        try
        {
            control.execute(task);
            return true;
        }
        catch (final RejectedExecutionException busy)
        {
            settled(settle);
            conductor.answers.respondError(client, correlationId, type, IpcMessages.ERR_LIMIT, "the NIC has " +
                IpcConductor.MAX_CONTROL_ACTIONS + " control actions in progress: retry once some finished");
            return false;
        }
    }

    private static void settled(final Runnable settle)
    {
        if (null != settle)
        {
            settle.run();
        }
    }

    /**
     * The conductor closes: waits up to 10 s for actions in progress and for the releases waiting their turn, then runs
     * the actions' results here.
     */
    void close()
    {
        closed = true;
        control.shutdown();
        releases.shutdown();
        try
        {
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            control.awaitTermination(10, TimeUnit.SECONDS);
            releases.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        Runnable late;
        while (null != (late = results.poll()))
        {
            try
            {
                late.run(); // made while closing: released here like the rest
            }
            catch (final RuntimeException ex)
            {
                System.err.println("spraynic ipc: a late control result failed: " + ex.getMessage());
            }
        }
    }
}
