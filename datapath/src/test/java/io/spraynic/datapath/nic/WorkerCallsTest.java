package io.spraynic.datapath.nic;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

@Timeout(10)
class WorkerCallsTest
{
    @Test
    void shouldRethrowTheActionsOwnRuntimeException()
    {
        final IllegalArgumentException thrown = new IllegalArgumentException("bad plane");
        assertSame(thrown, assertThrows(IllegalArgumentException.class,
            () -> WorkerCalls.await(CompletableFuture.failedFuture(thrown), Duration.ofSeconds(1), "create a queue pair")));
    }

    @Test
    void shouldSayWhatCouldNotBeDoneWhenTheWorkerDoesNotAnswer()
    {
        final IllegalStateException refused = assertThrows(IllegalStateException.class,
            () -> WorkerCalls.await(new CompletableFuture<>(), Duration.ofMillis(20), "register memory"));
        assertEquals("could not register memory within 20 ms: the worker did not answer (is it running?)",
            refused.getMessage());
    }

    @Test
    void shouldWrapACheckedFailure()
    {
        final IllegalStateException refused = assertThrows(IllegalStateException.class, () -> WorkerCalls.await(
            CompletableFuture.failedFuture(new IOException("gone")), Duration.ofSeconds(1), "close a connection"));
        assertEquals("could not close a connection: java.io.IOException: gone", refused.getMessage());
    }

    @Test
    void shouldAnswerNullRatherThanThrowWhenTrying()
    {
        assertNull(WorkerCalls.tryAwait(CompletableFuture.failedFuture(new IllegalStateException("down"))));
        assertEquals(Boolean.TRUE, WorkerCalls.tryAwait(CompletableFuture.completedFuture(Boolean.TRUE)));
    }
}
