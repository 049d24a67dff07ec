package io.spraynic.datapath.nic.ipc;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Shared memory another process may map but not resize: a Linux {@code memfd} sealed against shrinking, growing and
 * further seals, handed to the other process as a descriptor over the NIC's socket ({@link CommandSocket}). A file in a directory could be
 * truncated by a hostile client under the NIC's mapping, and the next write of a worker would fault; sealed memory
 * keeps its size whatever the client does, so the client may corrupt only the contents, which the NIC checks.
 */
final class SealedMemory implements AutoCloseable
{
    private static final int MFD_CLOEXEC = 1;
    private static final int MFD_ALLOW_SEALING = 2;
    private static final int F_ADD_SEALS = 1033;
    private static final int F_SEAL_SEAL = 1;
    private static final int F_SEAL_SHRINK = 2;
    private static final int F_SEAL_GROW = 4;
    private static final MethodHandle MEMFD_CREATE;
    private static final MethodHandle FTRUNCATE;
    private static final MethodHandle FCNTL;
    private static final MethodHandle CLOSE;

    static
    {
        final Linker linker = Linker.nativeLinker();
        MEMFD_CREATE = find(linker, "memfd_create", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS,
            ValueLayout.JAVA_INT));
        FTRUNCATE = find(linker, "ftruncate", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
            ValueLayout.JAVA_LONG));
        FCNTL = linker.defaultLookup().find("fcntl").map(address -> linker.downcallHandle(address,
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
            Linker.Option.firstVariadicArg(2))).orElse(null);
        CLOSE = find(linker, "close", FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    }

    private int fd;
    private final Arena arena;
    private final MemorySegment memory;

    private SealedMemory(final int fd, final Arena arena, final MemorySegment memory)
    {
        this.fd = fd;
        this.arena = arena;
        this.memory = memory;
    }

    private static MethodHandle find(final Linker linker, final String name, final FunctionDescriptor descriptor)
    {
        return linker.defaultLookup().find(name).map(address -> linker.downcallHandle(address, descriptor)).orElse(null);
    }

    /** @return true where sealed memory can be made (Linux with memfd). */
    static boolean isSupported()
    {
        return null != MEMFD_CREATE && null != FTRUNCATE && null != FCNTL && null != CLOSE &&
            java.nio.file.Files.isDirectory(Path.of("/proc/self/fd"));
    }

    /**
     * @return {@code length} zero bytes, sealed at that size and mapped.
     * @throws IllegalStateException when the system cannot make them.
     */
    static SealedMemory create(final String name, final long length)
    {
        if (!isSupported())
        {
            throw new IllegalStateException("sealed shared memory needs Linux memfd_create");
        }
        int fd = -1;
        final Arena arena = Arena.ofShared();
        try (Arena names = Arena.ofConfined())
        {
            fd = (int)MEMFD_CREATE.invokeExact(names.allocateFrom(name), MFD_CLOEXEC | MFD_ALLOW_SEALING);
            if (fd < 0)
            {
                throw new IllegalStateException("memfd_create failed");
            }
            if ((int)FTRUNCATE.invokeExact(fd, length) != 0 ||
                (int)FCNTL.invokeExact(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) != 0)
            {
                throw new IllegalStateException("cannot size and seal " + length + " B of shared memory");
            }
            try (FileChannel channel = FileChannel.open(Path.of("/proc/self/fd/" + fd), StandardOpenOption.READ,
                StandardOpenOption.WRITE))
            {
                return new SealedMemory(fd, arena, channel.map(FileChannel.MapMode.READ_WRITE, 0, length, arena));
            }
        }
        catch (final Throwable ex)
        {
            arena.close();
            if (fd >= 0)
            {
                closeFd(fd);
            }
            if (ex instanceof IllegalStateException state)
            {
                throw state;
            }
            throw new IllegalStateException("cannot make " + length + " B of sealed shared memory: " + ex, ex);
        }
    }

    /**
     * @return the descriptor, open until {@link #closeDescriptor()} or {@link #close()}: what one side passes to the
     * other over the NIC's socket; -1 once closed.
     */
    int fd()
    {
        return fd;
    }

    /** Closes the descriptor only (once it was handed over): the mapping stays until {@link #close()}. */
    void closeDescriptor()
    {
        if (fd >= 0)
        {
            closeFd(fd);
            fd = -1;
        }
    }

    /**
     * Checks memory another process passed: {@code fd} must be a memfd sealed against shrinking and against changes
     * to its seals ({@code F_SEAL_SHRINK | F_SEAL_SEAL}), not sealed against writes, and at least {@code length} bytes,
     * so that nothing its sender does afterwards can make an access of this process's mapping fault.
     *
     * @return null when it may be mapped, else why not, in words for the client.
     */
    static String receivedProblem(final int fd, final long length)
    {
        final int seals = UnixSockets.seals(fd);
        if (seals < 0)
        {
            return "the descriptor is not a memfd made with MFD_ALLOW_SEALING (fcntl F_GET_SEALS: errno " + -seals + ")";
        }
        final int needed = UnixSockets.F_SEAL_SHRINK | UnixSockets.F_SEAL_SEAL;
        if ((seals & needed) != needed)
        {
            return "the memfd has seals 0x" + Integer.toHexString(seals) + ", not F_SEAL_SHRINK and F_SEAL_SEAL: " +
                "its sender could truncate it under the NIC";
        }
        if (0 != (seals & (UnixSockets.F_SEAL_WRITE | UnixSockets.F_SEAL_FUTURE_WRITE)))
        {
            return "the memfd is sealed against writes (seals 0x" + Integer.toHexString(seals) + ")";
        }
        final long size = UnixSockets.size(fd);
        if (size < length)
        {
            return "the memfd is " + size + " B, less than the " + length + " B it must hold";
        }
        return null;
    }

    /** @return {@code length} bytes of the memfd {@code fd} (checked by {@link #receivedProblem}), mapped in {@code arena}. */
    static MemorySegment mapReceived(final int fd, final long length, final Arena arena) throws IOException
    {
        try (FileChannel channel = FileChannel.open(Path.of("/proc/self/fd/" + fd), StandardOpenOption.READ,
            StandardOpenOption.WRITE))
        {
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, length, arena);
        }
    }

    /** @return the memory, mapped. */
    MemorySegment memory()
    {
        return memory;
    }

    /** Unmaps it and closes the descriptor: it is gone once every other process unmapped it too. */
    public void close()
    {
        arena.close();
        closeDescriptor();
    }

    /**
     * Maps memory the other side sent (the NIC's control memory, answer ring, connection rings or capture rings, on
     * the client's side): checked as {@link #receivedProblem}, then mapped in {@code arena}; the descriptor stays the
     * caller's to close.
     *
     * @throws IllegalStateException naming {@code what} and the problem.
     */
    static MemorySegment mapChecked(final int fd, final long length, final Arena arena, final String what)
    {
        final String problem = receivedProblem(fd, length);
        if (null != problem)
        {
            throw new IllegalStateException("the NIC sent " + what + " that this client refuses: " + problem);
        }
        try
        {
            return mapReceived(fd, length, arena);
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException("cannot map " + what + " the NIC sent: " + ex.getMessage(), ex);
        }
    }

    private static void closeFd(final int fd)
    {
        try
        {
            final int ignored = (int)CLOSE.invokeExact(fd);
        }
        catch (final Throwable ex)
        {
            System.err.println("spraynic ipc: closing descriptor " + fd + " failed: " + ex);
        }
    }
}
