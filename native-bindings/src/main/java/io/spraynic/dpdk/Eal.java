package io.spraynic.dpdk;

import io.spraynic.dpdk.generated.Dpdk;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

/**
 * The DPDK Environment Abstraction Layer of this process. DPDK allows one {@code rte_eal_init}
 * per process, ever: a second {@link #init(List)}, or one after {@link #close()}, is refused with
 * an {@link IllegalStateException} instead of reaching DPDK.
 * <p>
 * {@code rte_eal_init} pins the thread that calls it to the main lcore's CPUs, and threads it
 * creates afterwards inherit that mask. It therefore runs on a short-lived thread of its own, so
 * no JVM thread is pinned by accident. Poll threads then join DPDK through
 * {@link #registerCurrentThread()}, which gives them an lcore id and so a mempool cache.
 */
public final class Eal implements AutoCloseable
{
    private enum State
    {
        NEW, STARTING, RUNNING, FAILED, CLOSED
    }

    private static final AtomicReference<State> STATE = new AtomicReference<>(State.NEW);
    private static volatile Eal instance;

    private final List<String> arguments;

    private Eal(final List<String> arguments)
    {
        this.arguments = List.copyOf(arguments);
    }

    /**
     * Initialises DPDK with an argv whose first element is the program name, as
     * {@code rte_eal_init} expects.
     *
     * @throws IllegalStateException when EAL was already initialised (or tried) in this process.
     * @throws DpdkException when DPDK refuses the arguments, with its message.
     */
    public static Eal init(final List<String> arguments)
    {
        if (arguments.isEmpty())
        {
            throw new IllegalArgumentException("EAL arguments start with a program name; got none");
        }
        if (!STATE.compareAndSet(State.NEW, State.STARTING))
        {
            throw new IllegalStateException(
                "DPDK's EAL was already initialised in this process (state " + STATE.get() + ", arguments " +
                (null == instance ? "unknown" : instance.arguments) + "); rte_eal_init runs once per process: " +
                "reuse Eal.current() or start another process");
        }

        NativeLibrary.load();
        final int[] result = new int[2];
        final Thread initThread = new Thread(() ->
        {
            final Arena arena = Arena.global(); // DPDK may keep pointers into argv for the process lifetime.
            final MemorySegment argv = arena.allocate(ValueLayout.ADDRESS, arguments.size() + 1L);
            for (int i = 0; i < arguments.size(); i++)
            {
                argv.setAtIndex(ValueLayout.ADDRESS, i, arena.allocateFrom(arguments.get(i)));
            }
            argv.setAtIndex(ValueLayout.ADDRESS, arguments.size(), MemorySegment.NULL);
            result[0] = Dpdk.rte_eal_init(arguments.size(), argv);
            result[1] = Shim.errno();
        }, "spraynic-eal-init");
        initThread.start();
        try
        {
            initThread.join();
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while DPDK's EAL was initialising", ex);
        }

        if (result[0] < 0)
        {
            STATE.set(State.FAILED);
            throw new DpdkException("rte_eal_init", result[1],
                strerror(result[1]) + " for arguments " + arguments + " (DPDK's log above says more)");
        }
        final Eal eal = new Eal(arguments);
        instance = eal;
        STATE.set(State.RUNNING);
        return eal;
    }

    /**
     * @return the running EAL.
     * @throws IllegalStateException when it is not running.
     */
    public static Eal current()
    {
        final Eal eal = instance;
        if (null == eal || STATE.get() != State.RUNNING)
        {
            throw new IllegalStateException("DPDK's EAL is not running (state " + STATE.get() + "); call Eal.init first");
        }
        return eal;
    }

    /**
     * @return whether EAL is initialised and not yet closed.
     */
    public static boolean isRunning()
    {
        return STATE.get() == State.RUNNING;
    }

    /**
     * @return the argv EAL was initialised with.
     */
    public List<String> arguments()
    {
        return arguments;
    }

    /**
     * Makes the calling thread a DPDK lcore (idempotent). Call it from each poll thread before its
     * first burst; {@link #unregisterCurrentThread()} when it stops.
     *
     * @return the lcore id.
     */
    public int registerCurrentThread()
    {
        final int lcore = Shim.threadRegister();
        if (lcore < 0)
        {
            throw new DpdkException("rte_thread_register", -lcore, strerror(-lcore) +
                " (every lcore id up to RTE_MAX_LCORE is taken, or EAL is not running)");
        }
        return lcore;
    }

    /**
     * Gives back the calling thread's lcore id, if it registered one.
     */
    public void unregisterCurrentThread()
    {
        Shim.threadUnregister();
    }

    /**
     * Creates a virtual device at run time, as {@code --vdev=name,args} would at start-up.
     *
     * @param name the device name, e.g. {@code net_null0}.
     * @param args its devargs, e.g. {@code size=64}; may be empty.
     */
    public void createVdev(final String name, final String args)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final int rc = Dpdk.rte_vdev_init(arena.allocateFrom(name), arena.allocateFrom(args));
            if (rc != 0)
            {
                throw new DpdkException("rte_vdev_init(" + name + "," + args + ")", Math.abs(rc), strerror(Math.abs(rc)));
            }
        }
    }

    /**
     * Removes a virtual device created by {@link #createVdev(String, String)} or {@code --vdev}.
     * Its port must be stopped and closed first.
     */
    public void removeVdev(final String name)
    {
        try (Arena arena = Arena.ofConfined())
        {
            final int rc = Dpdk.rte_vdev_uninit(arena.allocateFrom(name));
            if (rc != 0)
            {
                throw new DpdkException("rte_vdev_uninit(" + name + ")", Math.abs(rc), strerror(Math.abs(rc)));
            }
        }
    }

    /**
     * Releases DPDK's resources ({@code rte_eal_cleanup}) and, in a primary process, removes the
     * runtime directory EAL created ({@code /var/run/dpdk/<file-prefix>}: a few MiB of memory maps
     * that DPDK leaves behind for secondary processes). EAL cannot be initialised again in this
     * process afterwards.
     */
    public void close()
    {
        if (STATE.compareAndSet(State.RUNNING, State.CLOSED))
        {
            final boolean primary = Dpdk.rte_eal_process_type() == Dpdk.RTE_PROC_PRIMARY();
            final Path runtimeDirectory = Path.of(Dpdk.rte_eal_get_runtime_dir().getString(0));
            Dpdk.rte_eal_cleanup();
            if (primary)
            {
                removeRuntimeDirectory(runtimeDirectory);
            }
        }
    }

    /**
     * Removes EAL's runtime directory and the files in it, when it is a real directory of this process's user: for a
     * user without a runtime directory of its own DPDK uses {@code /tmp/dpdk/<prefix>}, where another user may have
     * planted a link at the name first (to a directory of the victim's, whose files this would have deleted).
     */
    static void removeRuntimeDirectory(final Path directory)
    {
        try
        {
            final boolean real = Files.isDirectory(directory, java.nio.file.LinkOption.NOFOLLOW_LINKS);
            final Object owner = real ? Files.getAttribute(directory, "unix:uid",
                java.nio.file.LinkOption.NOFOLLOW_LINKS) : null;
            if (!real || !owner.equals(Files.getAttribute(Path.of("/proc/self"), "unix:uid")))
            {
                System.err.println("spraynic: left DPDK runtime directory " + directory + " as it is: " +
                    (real ? "it belongs to uid " + owner + ", not to this process's user" : "not a real directory"));
                return;
            }
        }
        catch (final IOException | UnsupportedOperationException ex)
        {
            System.err.println("spraynic: could not check DPDK runtime directory " + directory + ": " + ex.getMessage());
            return;
        }
        try (Stream<Path> files = Files.list(directory))
        {
            for (final Path file : (Iterable<Path>)files::iterator)
            {
                Files.deleteIfExists(file);
            }
            Files.deleteIfExists(directory);
        }
        catch (final IOException ex)
        {
            System.err.println("spraynic: could not remove DPDK runtime directory " + directory + ": " + ex.getMessage());
        }
    }

    /**
     * @return DPDK's text for an error number ({@code rte_strerror}).
     */
    public static String strerror(final int errno)
    {
        NativeLibrary.load();
        return Dpdk.rte_strerror(errno).getString(0);
    }
}
