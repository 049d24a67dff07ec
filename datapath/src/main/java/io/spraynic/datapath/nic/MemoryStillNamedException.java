package io.spraynic.datapath.nic;

import java.util.concurrent.CompletableFuture;

/**
 * A registration or deregistration that a worker did not confirm in time: its command is still queued on that worker,
 * which may yet name the memory (place a peer's WRITE into it, read a READ response from it), so the caller must not
 * free it now. {@link #unnamed()} completes once every worker confirmed that it names the memory no more; it never
 * completes, or completes exceptionally, when a worker never answers or takes no commands (a worker that stopped or
 * whose queue stayed full): what waits on it does not run, and the memory stays mapped until the process ends, a
 * leak, never a write into freed memory.
 */
public final class MemoryStillNamedException extends IllegalStateException
{
    private final transient CompletableFuture<Void> unnamed;

    MemoryStillNamedException(final String message, final Throwable cause, final CompletableFuture<Void> unnamed)
    {
        super(message, cause);
        this.unnamed = unnamed;
    }

    /** @return completes once no worker names the memory: free it then. */
    public CompletableFuture<Void> unnamed()
    {
        return unnamed;
    }
}
