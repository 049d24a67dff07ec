package io.spraynic.bench.raw;

import io.spraynic.dpdk.Mempool;
import io.spraynic.dpdk.NativeLibrary;
import io.spraynic.dpdk.Shim;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;
import java.nio.file.Files;
import java.nio.file.Path;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The C raw loop ({@code libspraynic_rawloop.so}, built from {@code raw_loop_core.c}) loaded into this
 * process, on a port and pool this process set up: the C side of {@link RawLoop#runSameProcess}.
 * One downcall runs {@value RawLoop#BURSTS_PER_CLOCK_READ} bursts, as many as the Java loop runs between
 * two clock reads, so the crossing into it costs nothing measurable.
 * <p>
 * Control path and benchmark only; not thread-safe.
 */
final class CRawLoop implements AutoCloseable
{
    private final MemorySegment loop;
    private final MethodHandle bursts;
    private final MethodHandle flush;
    private final MethodHandle free;
    private final boolean sharesShim;
    private boolean closed;

    private CRawLoop(
        final MemorySegment loop, final MethodHandle bursts, final MethodHandle flush, final MethodHandle free,
        final boolean sharesShim)
    {
        this.loop = loop;
        this.bursts = bursts;
        this.flush = flush;
        this.free = free;
        this.sharesShim = sharesShim;
    }

    /**
     * Loads the library (once per process) and creates a loop on queue 0 of a started port, priming
     * nothing: the Java side primes the frames that both loops then circulate.
     */
    static CRawLoop create(
        final Path library,
        final Mempool pool,
        final int portId,
        final RawLoop.Pmd pmd,
        final RawLoop.Mode mode,
        final RawLoop.Touch touch,
        final int burst,
        final int frameLength)
    {
        if (!Files.isReadable(library))
        {
            throw new IllegalStateException("the C raw loop library " + library + " is not built; run ./mvnw package");
        }
        NativeLibrary.load(); // the shim (and DPDK) first, so that the library resolves against them
        final Linker linker = Linker.nativeLinker();
        final SymbolLookup lookup = SymbolLookup.libraryLookup(library, Arena.global());
        final MethodHandle create = linker.downcallHandle(lookup.findOrThrow("spraynic_rawloop_create"),
            FunctionDescriptor.of(ADDRESS, JAVA_LONG, JAVA_SHORT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_SHORT));
        final MethodHandle shimEntry = linker.downcallHandle(lookup.findOrThrow("spraynic_rawloop_shim_entry"),
            FunctionDescriptor.of(ADDRESS));
        final MethodHandle modeName = linker.downcallHandle(lookup.findOrThrow("spraynic_rawloop_mode_name"),
            FunctionDescriptor.of(ADDRESS, JAVA_INT));
        try
        {
            final MemorySegment name = (MemorySegment)modeName.invokeExact(mode.ordinal());
            final String expected = mode.text();
            if (MemorySegment.NULL.equals(name) || !expected.equals(name.reinterpret(8).getString(0)))
            {
                throw new IllegalStateException(library + " numbers its modes differently from RawLoop.Mode: " + expected +
                    " is " + mode.ordinal() + " here; rebuild both from one tree");
            }
            final MemorySegment loop = (MemorySegment)create.invokeExact(
                pool.address(), (short)portId, pmd == RawLoop.Pmd.NET_RING ? 1 : 0, mode.ordinal(),
                touch == RawLoop.Touch.LENGTH ? 1 : 0, burst, (short)frameLength);
            if (MemorySegment.NULL.equals(loop))
            {
                throw new IllegalStateException("spraynic_rawloop_create failed: rte_errno " + Shim.errno());
            }
            final MemorySegment cEntry = (MemorySegment)shimEntry.invokeExact();
            final boolean sharesShim = SymbolLookup.loaderLookup().find("spraynic_tx_rx_burst")
                .map(entry -> entry.address() == cEntry.address()).orElse(false);
            return new CRawLoop(
                loop,
                linker.downcallHandle(lookup.findOrThrow("spraynic_rawloop_bursts"), FunctionDescriptor.of(JAVA_LONG, ADDRESS, JAVA_LONG)),
                linker.downcallHandle(lookup.findOrThrow("spraynic_rawloop_flush"), FunctionDescriptor.ofVoid(ADDRESS)),
                linker.downcallHandle(lookup.findOrThrow("spraynic_rawloop_free"), FunctionDescriptor.ofVoid(ADDRESS)),
                sharesShim);
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * Runs the loop until {@code nanos} have passed, reading the clock every
     * {@value RawLoop#BURSTS_PER_CLOCK_READ} bursts as the Java loop does.
     *
     * @return the packets counted.
     */
    long loop(final long nanos)
    {
        final long deadline = System.nanoTime() + nanos;
        long counted = 0;
        try
        {
            do
            {
                counted += (long)bursts.invokeExact(loop, (long)RawLoop.BURSTS_PER_CLOCK_READ);
            }
            while (System.nanoTime() < deadline);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException(ex);
        }
        return counted;
    }

    /**
     * Transmits what the loop holds (txrx keeps a burst between calls) back into the port.
     */
    void flush()
    {
        try
        {
            flush.invokeExact(loop);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException(ex);
        }
    }

    /**
     * @return whether the library calls the same {@code spraynic_tx_rx_burst} as this process's Java code, that
     * is, both were linked against one loaded copy of the shim.
     */
    boolean sharesShim()
    {
        return sharesShim;
    }

    public void close()
    {
        if (!closed)
        {
            closed = true;
            try
            {
                free.invokeExact(loop);
            }
            catch (final Throwable ex)
            {
                throw new IllegalStateException(ex);
            }
        }
    }
}
