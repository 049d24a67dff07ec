package io.spraynic.datapath.nic.ipc;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * Descriptors an attacker offers the NIC: a memfd with the seals it chooses (or none), a plain file; and the count of
 * this process's open descriptors, to prove that the NIC closes every one it was sent.
 */
final class RawDescriptors
{
    static final int MFD_ALLOW_SEALING = 2;
    private static final int F_ADD_SEALS = 1033;
    private static final int O_RDWR = 2;
    private static final MethodHandle MEMFD_CREATE;
    private static final MethodHandle FTRUNCATE;
    private static final MethodHandle FCNTL;
    private static final MethodHandle OPEN;

    static
    {
        final Linker linker = Linker.nativeLinker();
        MEMFD_CREATE = linker.downcallHandle(linker.defaultLookup().find("memfd_create").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
        FTRUNCATE = linker.downcallHandle(linker.defaultLookup().find("ftruncate").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        FCNTL = linker.downcallHandle(linker.defaultLookup().find("fcntl").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
            Linker.Option.firstVariadicArg(2));
        OPEN = linker.downcallHandle(linker.defaultLookup().find("open").orElseThrow(),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_INT),
            Linker.Option.firstVariadicArg(2));
    }

    private RawDescriptors()
    {
    }

    /** @return a memfd of {@code length} bytes with exactly {@code seals} added (0: none). */
    static int memfd(final long length, final int seals) throws Throwable
    {
        final int fd;
        try (Arena arena = Arena.ofConfined())
        {
            fd = (int)MEMFD_CREATE.invokeExact(arena.allocateFrom("attacker"), MFD_ALLOW_SEALING);
        }
        if (fd < 0 || (int)FTRUNCATE.invokeExact(fd, length) != 0 ||
            (0 != seals && (int)FCNTL.invokeExact(fd, F_ADD_SEALS, seals) != 0))
        {
            throw new IllegalStateException("cannot make a memfd");
        }
        return fd;
    }

    /** @return {@code file} (made of {@code length} zero bytes) opened read-write. */
    static int plainFile(final Path file, final long length) throws Throwable
    {
        Files.write(file, new byte[(int)length]);
        try (Arena arena = Arena.ofConfined())
        {
            final int fd = (int)OPEN.invokeExact(arena.allocateFrom(file.toString()), O_RDWR);
            if (fd < 0)
            {
                throw new IllegalStateException("cannot open " + file);
            }
            return fd;
        }
    }

    /**
     * @return how many descriptors this process holds open to a file whose name (as /proc/self/fd shows it) starts
     * with {@code prefix}: e.g. {@code "/memfd:attacker"} for the memfds {@link #memfd} makes. Unlike
     * {@link #openDescriptors}, nothing else the process opens meanwhile (a jar, a socket) moves it.
     */
    static long openTo(final String prefix)
    {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd")))
        {
            return fds.filter(fd ->
            {
                try
                {
                    return Files.readSymbolicLink(fd).toString().startsWith(prefix);
                }
                catch (final IOException closedMeanwhile)
                {
                    return false;
                }
            }).count();
        }
        catch (final IOException ex)
        {
            throw new java.io.UncheckedIOException(ex);
        }
    }

    /** @return how many descriptors this process holds open. */
    static long openDescriptors() throws IOException
    {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd")))
        {
            return fds.count();
        }
    }
}
