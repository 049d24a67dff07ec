package io.spraynic.datapath.nic;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.BiFunction;

/**
 * How the control path talks to the workers: an action goes to a worker as a {@link NicWorker.Command} through its
 * command queue and its result comes back in a future, which the caller waits for. The workers share no mutable state
 * with the control path; everything the control path changes on them goes this way.
 */
final class WorkerCalls
{
    private final NicWorker[] workers;
    private final Duration timeout;

    /** Waits up to {@link EmbeddedNic#CONTROL_TIMEOUT} for each worker. */
    WorkerCalls(final NicWorker[] workers)
    {
        this(workers, EmbeddedNic.CONTROL_TIMEOUT);
    }

    /** @param timeout how long {@link #onEveryWorker} waits for each worker's answer. */
    WorkerCalls(final NicWorker[] workers, final Duration timeout)
    {
        this.workers = workers;
        this.timeout = timeout;
    }

    /** @return worker {@code index}. */
    NicWorker worker(final int index)
    {
        return workers[index];
    }

    /** @return every worker (not a copy: do not change it). */
    NicWorker[] workers()
    {
        return workers;
    }

    /**
     * Queues {@code action} on {@code worker}, retrying a full command queue for up to {@link EmbeddedNic#CONTROL_TIMEOUT}.
     *
     * @return its result, or the exception it threw; "takes no commands" when the queue stayed full.
     */
    static <T> CompletableFuture<T> submit(final NicWorker worker, final BiFunction<NicWorker, Long, T> action)
    {
        final CompletableFuture<T> result = new CompletableFuture<>();
        final NicWorker.Command command = (w, now) ->
        {
            try
            {
                result.complete(action.apply(w, now));
            }
            catch (final RuntimeException ex)
            {
                result.completeExceptionally(ex);
            }
        };
        final long deadline = System.nanoTime() + EmbeddedNic.CONTROL_TIMEOUT.toNanos();
        while (!worker.offer(command))
        {
            if (System.nanoTime() >= deadline)
            {
                result.completeExceptionally(new IllegalStateException("worker " + worker.index() + " takes no commands"));
                break;
            }
            sleepBriefly();
        }
        return result;
    }

    /** Runs {@code action} on {@code worker} and waits for its result (up to {@code timeout}). */
    static <T> T call(final NicWorker worker, final BiFunction<NicWorker, Long, T> action, final Duration timeout,
        final String what)
    {
        return await(submit(worker, action), timeout, what);
    }

    /** Runs {@code action} on every worker at once and waits for each (up to this one's timeout). */
    void onEveryWorker(final BiFunction<NicWorker, Long, ?> action, final String what)
    {
        awaitEach(submitToEveryWorker(action), what);
    }

    /** Queues {@code action} on every worker at once. @return their answers, to come. */
    List<CompletableFuture<?>> submitToEveryWorker(final BiFunction<NicWorker, Long, ?> action)
    {
        final List<CompletableFuture<?>> answers = new ArrayList<>(workers.length);
        for (final NicWorker worker : workers)
        {
            answers.add(submit(worker, action));
        }
        return answers;
    }

    /**
     * @return completes once every one of {@code answers} completed normally; exceptionally, or never, when one does
     * not (what waits on it then does not run).
     */
    static CompletableFuture<Void> allAnswered(final List<CompletableFuture<?>> answers)
    {
        return CompletableFuture.allOf(answers.toArray(CompletableFuture[]::new));
    }

    /** Waits for each answer (up to this one's timeout); throws as {@link #await}. */
    void awaitEach(final List<CompletableFuture<?>> answers, final String what)
    {
        for (final CompletableFuture<?> answer : answers)
        {
            await(answer, timeout, what);
        }
    }

    /**
     * Waits for a worker's answer.
     *
     * @param what what the caller tried, for the message ("could not {@code what} ...").
     * @return the answer.
     * @throws IllegalStateException when no answer came in time; the action's own RuntimeException when it threw one.
     */
    static <T> T await(final CompletableFuture<T> future, final Duration timeout, final String what)
    {
        try
        {
            return future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (final TimeoutException ex)
        {
            throw new IllegalStateException("could not " + what + " within " + timeout.toMillis() +
                " ms: the worker did not answer (is it running?)", ex);
        }
        catch (final ExecutionException ex)
        {
            final Throwable cause = ex.getCause();
            if (cause instanceof RuntimeException runtime)
            {
                throw runtime;
            }
            throw new IllegalStateException("could not " + what + ": " + cause, cause);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while trying to " + what, ex);
        }
    }

    /** @return the answer within {@link EmbeddedNic#CONTROL_TIMEOUT}, or null for none (or a failure). */
    static <T> T tryAwait(final CompletableFuture<T> future)
    {
        try
        {
            return future.get(EmbeddedNic.CONTROL_TIMEOUT.toNanos(), TimeUnit.NANOSECONDS);
        }
        catch (final Exception ex)
        {
            return null;
        }
    }

    static void sleepBriefly()
    {
        try
        {
            Thread.sleep(1);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
