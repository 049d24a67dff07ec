package io.spraynic.bench.raw;

import io.spraynic.dpdk.NativeLibrary;
import io.spraynic.dpdk.Shim;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The C receive twin ({@code libspraynic_rxtwin.so}, built from {@code rx_twin.c}) loaded into this process, on a
 * port this process set up and a region it allocated: the C side of {@link ReceiveTwinComparison}. One downcall runs
 * {@value RawLoop#BURSTS_PER_CLOCK_READ} bursts, as the Java twin runs between two clock reads.
 * <p>
 * Control path and benchmark only; not thread-safe.
 */
final class CReceiveTwin implements AutoCloseable
{
    private static final Linker LINKER = Linker.nativeLinker();

    /** How the C twin runs the CRC after the masked headers: {@code enum spraynic_rxtwin_crc}, in its order. */
    enum CrcFolding
    {
        /** Slicing-by-8 tables. */
        TABLES,
        /** 128-bit PCLMULQDQ folding, 64 bytes a step. */
        PCLMUL,
        /** AVX-512 VPCLMULQDQ folding, 256 bytes a step (from 256 bytes up), as the JDK's CRC32 intrinsic on such a CPU. */
        VPCLMUL
    }

    private final MemorySegment twin;
    private final MethodHandle bursts;
    private final MethodHandle frame;
    private final MethodHandle icrc;
    private final MethodHandle flush;
    private final MethodHandle free;
    private final MemorySegment counters;
    private final CrcFolding crcFolding;
    private boolean closed;

    private CReceiveTwin(final SymbolLookup lookup, final MemorySegment twin)
    {
        this.twin = twin;
        bursts = handle(lookup, "spraynic_rxtwin_bursts", FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG));
        frame = handle(lookup, "spraynic_rxtwin_frame", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_INT));
        icrc = handle(lookup, "spraynic_rxtwin_icrc", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS));
        flush = handle(lookup, "spraynic_rxtwin_flush", FunctionDescriptor.ofVoid(ADDRESS));
        free = handle(lookup, "spraynic_rxtwin_free", FunctionDescriptor.ofVoid(ADDRESS));
        try
        {
            counters = ((MemorySegment)handle(lookup, "spraynic_rxtwin_counters", FunctionDescriptor.of(ADDRESS, ADDRESS))
                .invokeExact(twin)).reinterpret((long)ReceiveTwin.OUTCOMES * Long.BYTES);
            crcFolding = CrcFolding.values()[(int)handle(lookup, "spraynic_rxtwin_crc_folding",
                FunctionDescriptor.of(JAVA_INT, ADDRESS)).invokeExact(twin)];
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * Loads the library (once per process) and creates a twin on queue 0 of port {@code portId} (any number where
     * only {@link #onFrame} and {@link #icrc} will be called), placing into {@code region}.
     *
     * @param crcFolding the fastest CRC method to use where the CPU has it.
     */
    static CReceiveTwin create(
        final Path library, final int portId, final int burst, final MemorySegment region, final long regionBase,
        final int rkey, final CrcFolding crcFolding)
    {
        if (!Files.isReadable(library))
        {
            throw new IllegalStateException("the C receive twin " + library + " is not built; run ./mvnw package");
        }
        NativeLibrary.load(); // the shim (and DPDK) first, so that the library resolves against them
        final SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
        final MethodHandle create = handle(lookup, "spraynic_rxtwin_create",
            FunctionDescriptor.of(ADDRESS, JAVA_SHORT, JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT));
        final MemorySegment twin;
        try
        {
            twin = (MemorySegment)create.invokeExact(
                (short)portId, burst, region, regionBase, region.byteSize(), rkey, crcFolding.ordinal());
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException(ex);
        }
        if (MemorySegment.NULL.equals(twin))
        {
            throw new IllegalStateException("spraynic_rxtwin_create failed: rte_errno " + Shim.errno());
        }
        return new CReceiveTwin(lookup, twin);
    }

    /**
     * Runs the twin until {@code nanos} have passed, reading the clock every {@value RawLoop#BURSTS_PER_CLOCK_READ}
     * bursts as the Java twin does.
     *
     * @return the frames received.
     */
    long loop(final long nanos)
    {
        final long deadline = System.nanoTime() + nanos;
        long received = 0;
        do
        {
            received += bursts(RawLoop.BURSTS_PER_CLOCK_READ);
        }
        while (System.nanoTime() < deadline);
        return received;
    }

    /**
     * @return the frames received in {@code count} bursts.
     */
    long bursts(final long count)
    {
        try
        {
            return (long)bursts.invokeExact(twin, count);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * Classifies (and places) one frame of native memory.
     *
     * @return its outcome, {@link ReceiveTwin#PLACED} ... {@link ReceiveTwin#OUT_OF_REGION}.
     */
    int onFrame(final MemorySegment memory, final long offset, final int length)
    {
        try
        {
            return (int)frame.invokeExact(twin, memory.asSlice(offset, length), length);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * The C ICRC of a packet in native memory, for comparison with {@code Icrc.compute}.
     */
    int icrc(final MemorySegment memory, final long ipOffset, final long icrcOffset)
    {
        try
        {
            return (int)icrc.invokeExact(twin, memory.asSlice(ipOffset), memory.asSlice(icrcOffset));
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * @return frames of each outcome so far, in {@link ReceiveTwin}'s order.
     */
    long[] counters()
    {
        return counters.toArray(ValueLayout.JAVA_LONG);
    }

    /**
     * @return how this twin runs the CRC: the one asked for, or less where the CPU lacks it.
     */
    CrcFolding crcFolding()
    {
        return crcFolding;
    }

    /**
     * Transmits what the twin holds back into the port.
     */
    void flush()
    {
        try
        {
            flush.invokeExact(twin);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    public void close()
    {
        if (!closed)
        {
            closed = true;
            try
            {
                free.invokeExact(twin);
            }
            catch (final Throwable ex)
            {
                throw new IllegalStateException(ex);
            }
        }
    }

    private static MethodHandle handle(final SymbolLookup lookup, final String name, final FunctionDescriptor descriptor)
    {
        return LINKER.downcallHandle(lookup.findOrThrow(name), descriptor);
    }
}
