package io.spraynic.datapath.port;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * Runs a piece of a test inside a network namespace of a {@link TestNetwork}, in this JVM: on a fresh thread that
 * joins the namespace ({@code setns(CLONE_NEWNET)} moves the calling thread only) and ends afterwards. A socket
 * keeps the namespace it was created in, so a NIC whose kernel UDP sockets are opened there sends and receives
 * in that namespace, whichever threads poll them. Needs root, as {@link TestNetwork} does.
 */
public final class NetworkNamespaceThread
{
    private static final int CLONE_NEWNET = 0x4000_0000;
    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 0x80000;
    private static final MethodHandle OPEN;
    private static final MethodHandle SETNS;
    private static final MethodHandle CLOSE;

    static
    {
        final Linker linker = Linker.nativeLinker();
        final SymbolLookup libc = linker.defaultLookup();
        OPEN = linker.downcallHandle(libc.findOrThrow("open"), FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
        SETNS = linker.downcallHandle(libc.findOrThrow("setns"), FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));
        CLOSE = linker.downcallHandle(libc.findOrThrow("close"), FunctionDescriptor.of(JAVA_INT, JAVA_INT));
    }

    private NetworkNamespaceThread()
    {
    }

    /**
     * @param namespace a namespace {@code ip netns add} made (its handle in {@code /var/run/netns}).
     * @return what {@code work} returned, run on a thread in {@code namespace}.
     * @throws Exception what {@code work} threw, or IllegalStateException when the thread could not join.
     */
    public static <T> T call(final String namespace, final Callable<T> work) throws Exception
    {
        final CompletableFuture<T> result = new CompletableFuture<>();
        final Thread thread = new Thread(() ->
        {
            try
            {
                join(namespace);
                result.complete(work.call());
            }
            catch (final Throwable ex)
            {
                result.completeExceptionally(ex);
            }
        }, "in-netns-" + namespace);
        thread.start();
        try
        {
            return result.get();
        }
        catch (final ExecutionException ex)
        {
            if (ex.getCause() instanceof Exception cause)
            {
                throw cause;
            }
            throw new IllegalStateException(ex.getCause());
        }
    }

    private static void join(final String namespace) throws Throwable
    {
        try (Arena arena = Arena.ofConfined())
        {
            final int fd = (int)OPEN.invokeExact(arena.allocateFrom("/var/run/netns/" + namespace), O_RDONLY | O_CLOEXEC);
            if (fd < 0)
            {
                throw new IllegalStateException("cannot open network namespace " + namespace);
            }
            final int joined = (int)SETNS.invokeExact(fd, CLONE_NEWNET);
            final int ignored = (int)CLOSE.invokeExact(fd);
            if (joined != 0)
            {
                throw new IllegalStateException("setns(" + namespace + ", CLONE_NEWNET) failed");
            }
        }
    }
}
