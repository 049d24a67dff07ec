package io.spraynic.dpdk;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Pins the calling thread to one CPU with libc's {@code sched_setaffinity} (control path, once per poll
 * thread before it starts polling), so a poll-mode worker keeps its core and its caches. Linux only.
 */
public final class CpuAffinity
{
    /** Bytes of the CPU mask passed: 1,024 CPUs, glibc's {@code cpu_set_t}. */
    private static final int MASK_BYTES = 128;
    private static final MethodHandle SCHED_SETAFFINITY;
    private static final MethodHandle SCHED_GETCPU;

    static
    {
        final Linker linker = Linker.nativeLinker();
        SCHED_SETAFFINITY = linker.defaultLookup().find("sched_setaffinity")
            .map(address -> linker.downcallHandle(address, FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
                ValueLayout.JAVA_LONG, ValueLayout.ADDRESS), Linker.Option.captureCallState("errno")))
            .orElse(null);
        SCHED_GETCPU = linker.defaultLookup().find("sched_getcpu")
            .map(address -> linker.downcallHandle(address, FunctionDescriptor.of(ValueLayout.JAVA_INT)))
            .orElse(null);
    }

    private CpuAffinity()
    {
    }

    /**
     * @param cpu a CPU number the process may run on.
     * @throws IllegalArgumentException when the CPU does not exist or is not allowed (errno named).
     */
    public static void pinCurrentThread(final int cpu)
    {
        if (cpu < 0 || cpu >= MASK_BYTES * 8)
        {
            throw new IllegalArgumentException("CPU " + cpu + " is out of range 0.." + (MASK_BYTES * 8 - 1));
        }
        if (null == SCHED_SETAFFINITY)
        {
            throw new UnsupportedOperationException("sched_setaffinity is not available: CPU pinning needs Linux");
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment mask = arena.allocate(MASK_BYTES, 8);
            mask.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte)(1 << (cpu % 8)));
            final MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
            final int rc = (int)SCHED_SETAFFINITY.invokeExact(state, 0, (long)MASK_BYTES, mask);
            if (rc != 0)
            {
                final int errno = state.get(ValueLayout.JAVA_INT,
                    Linker.Option.captureStateLayout().byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno")));
                throw new IllegalArgumentException("cannot pin thread to CPU " + cpu + " (errno " + errno +
                    "): pick a CPU from 0.." + (Runtime.getRuntime().availableProcessors() - 1) + " that the process may use");
            }
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("sched_setaffinity failed", ex);
        }
    }

    /** @return the CPU the calling thread runs on now, or -1 where unknown. */
    public static int currentCpu()
    {
        if (null == SCHED_GETCPU)
        {
            return -1;
        }
        try
        {
            return (int)SCHED_GETCPU.invokeExact();
        }
        catch (final Throwable ex)
        {
            return -1;
        }
    }
}
