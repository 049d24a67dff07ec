package io.spraynic.dpdk;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.SymbolLookup;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * The fast path into the C shim: burst RX/TX, mbuf bulk alloc/free and lcore registration.
 * <p>
 * These handles are bound with {@code Linker.Option.critical(false)} (no thread-state transition;
 * the shim's functions are short and never call back into Java) and take pointers as raw
 * {@code long} addresses, so no {@code MemorySegment} is acquired or released per call. The
 * jextract bindings of the same functions ({@code generated.Dpdk.spraynic_*}) stay for the
 * control path and for the benchmark that measures the difference.
 */
public final class Shim
{
    private static final MethodHandle RX_BURST;
    private static final MethodHandle TX_BURST;
    private static final MethodHandle TX_RX_BURST;
    private static final MethodHandle MBUF_ALLOC_BULK;
    private static final MethodHandle MBUF_FREE_BULK;
    private static final MethodHandle MBUF_SET_LENGTHS;
    private static final MethodHandle THREAD_REGISTER;
    private static final MethodHandle THREAD_UNREGISTER;
    private static final MethodHandle LCORE_ID;
    private static final MethodHandle ERRNO;
    private static final MethodHandle NOOP;
    private static final MethodHandle PKTMBUF_POOL_CREATE;

    static
    {
        NativeLibrary.load();
        final Linker linker = Linker.nativeLinker();
        final SymbolLookup lookup = SymbolLookup.loaderLookup();
        final Linker.Option critical = Linker.Option.critical(false);

        RX_BURST = linker.downcallHandle(lookup.findOrThrow("spraynic_rx_burst"),
            FunctionDescriptor.of(JAVA_SHORT, JAVA_SHORT, JAVA_SHORT, JAVA_LONG, JAVA_SHORT), critical);
        TX_BURST = linker.downcallHandle(lookup.findOrThrow("spraynic_tx_burst"),
            FunctionDescriptor.of(JAVA_SHORT, JAVA_SHORT, JAVA_SHORT, JAVA_LONG, JAVA_SHORT), critical);
        TX_RX_BURST = linker.downcallHandle(lookup.findOrThrow("spraynic_tx_rx_burst"),
            FunctionDescriptor.of(JAVA_INT, JAVA_SHORT, JAVA_SHORT, JAVA_LONG, JAVA_SHORT, JAVA_SHORT), critical);
        MBUF_ALLOC_BULK = linker.downcallHandle(lookup.findOrThrow("spraynic_mbuf_alloc_bulk"),
            FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT), critical);
        MBUF_FREE_BULK = linker.downcallHandle(lookup.findOrThrow("spraynic_mbuf_free_bulk"),
            FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_INT), critical);
        MBUF_SET_LENGTHS = linker.downcallHandle(lookup.findOrThrow("spraynic_mbuf_set_lengths"),
            FunctionDescriptor.ofVoid(JAVA_LONG, JAVA_INT, JAVA_SHORT), critical);
        // Registration may take locks inside EAL: an ordinary (non-critical) downcall.
        THREAD_REGISTER = linker.downcallHandle(lookup.findOrThrow("spraynic_thread_register"),
            FunctionDescriptor.of(JAVA_INT));
        THREAD_UNREGISTER = linker.downcallHandle(lookup.findOrThrow("spraynic_thread_unregister"),
            FunctionDescriptor.ofVoid());
        LCORE_ID = linker.downcallHandle(lookup.findOrThrow("spraynic_lcore_id"),
            FunctionDescriptor.of(JAVA_INT), critical);
        ERRNO = linker.downcallHandle(lookup.findOrThrow("spraynic_errno"),
            FunctionDescriptor.of(JAVA_INT), critical);
        NOOP = linker.downcallHandle(lookup.findOrThrow("spraynic_noop"),
            FunctionDescriptor.of(JAVA_INT, JAVA_INT), critical);
        // Control path (allocates, takes EAL's locks): an ordinary downcall. Bound here rather than
        // through jextract so that Java and the C benchmarks create their pools with the same call.
        PKTMBUF_POOL_CREATE = linker.downcallHandle(lookup.findOrThrow("spraynic_pktmbuf_pool_create"),
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_SHORT, JAVA_SHORT, JAVA_INT));
    }

    /** {@code rte_lcore_id()} of a thread that is not a DPDK lcore. */
    public static final int LCORE_ID_ANY = -1;

    private Shim()
    {
    }

    /**
     * {@code rte_eth_rx_burst}: receives up to {@code count} mbuf pointers into the array at
     * {@code mbufArrayAddress}.
     *
     * @return the number received.
     */
    public static int rxBurst(final int portId, final int queueId, final long mbufArrayAddress, final int count)
    {
        try
        {
            return Short.toUnsignedInt((short)RX_BURST.invokeExact(
                (short)portId, (short)queueId, mbufArrayAddress, (short)count));
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code rte_eth_tx_burst}: hands up to {@code count} mbufs to the driver, which then owns them.
     *
     * @return the number sent; the caller still owns the rest.
     */
    public static int txBurst(final int portId, final int queueId, final long mbufArrayAddress, final int count)
    {
        try
        {
            return Short.toUnsignedInt((short)TX_BURST.invokeExact(
                (short)portId, (short)queueId, mbufArrayAddress, (short)count));
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code spraynic_tx_rx_burst}: transmits the first {@code count} mbufs of the array, moves those
     * not taken to its front, then receives into the rest, up to {@code capacity} entries in all.
     *
     * @return the number sent in the low 16 bits, the number of entries now held in the high 16.
     */
    public static int txRxBurst(
        final int portId, final int queueId, final long mbufArrayAddress, final int count, final int capacity)
    {
        try
        {
            return (int)TX_RX_BURST.invokeExact(
                (short)portId, (short)queueId, mbufArrayAddress, (short)count, (short)capacity);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code rte_pktmbuf_alloc_bulk}: all {@code count} or none.
     *
     * @return 0 on success, a negative errno when the pool cannot supply them.
     */
    public static int mbufAllocBulk(final long mempoolAddress, final long mbufArrayAddress, final int count)
    {
        try
        {
            return (int)MBUF_ALLOC_BULK.invokeExact(mempoolAddress, mbufArrayAddress, count);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code rte_pktmbuf_free_bulk}.
     */
    public static void mbufFreeBulk(final long mbufArrayAddress, final int count)
    {
        try
        {
            MBUF_FREE_BULK.invokeExact(mbufArrayAddress, count);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * Sets {@code data_len} and {@code pkt_len} of {@code count} single-segment mbufs.
     */
    public static void mbufSetLengths(final long mbufArrayAddress, final int count, final int length)
    {
        try
        {
            MBUF_SET_LENGTHS.invokeExact(mbufArrayAddress, count, (short)length);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * Registers the calling thread as a DPDK lcore (idempotent), so that it gets a mempool cache.
     *
     * @return its lcore id, or a negative errno.
     */
    public static int threadRegister()
    {
        try
        {
            return (int)THREAD_REGISTER.invokeExact();
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * Releases the calling thread's lcore id, if it registered one.
     */
    public static void threadUnregister()
    {
        try
        {
            THREAD_UNREGISTER.invokeExact();
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * @return {@code rte_lcore_id()} of the calling thread, or {@link #LCORE_ID_ANY}.
     */
    public static int lcoreId()
    {
        try
        {
            return (int)LCORE_ID.invokeExact();
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * @return {@code rte_errno} of the calling thread.
     */
    public static int errno()
    {
        try
        {
            return (int)ERRNO.invokeExact();
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * {@code rte_pktmbuf_pool_create}, except that without hugepages the mbufs are packed one after
     * another rather than one per 4 KiB page (see {@code spraynic_shim.h}).
     *
     * @param nameAddress a NUL-terminated name.
     * @return the {@code struct rte_mempool *}, or 0 with {@link #errno()} set.
     */
    public static long pktmbufPoolCreate(
        final long nameAddress, final int count, final int cacheSize, final int privSize, final int dataRoomSize,
        final int socketId)
    {
        try
        {
            return (long)PKTMBUF_POOL_CREATE.invokeExact(
                nameAddress, count, cacheSize, (short)privSize, (short)dataRoomSize, socketId);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    /**
     * The smallest downcall there is, for measuring the call itself.
     */
    public static int noop(final int value)
    {
        try
        {
            return (int)NOOP.invokeExact(value);
        }
        catch (final Throwable ex)
        {
            throw rethrow(ex);
        }
    }

    private static RuntimeException rethrow(final Throwable ex)
    {
        if (ex instanceof RuntimeException runtime)
        {
            return runtime;
        }
        if (ex instanceof Error error)
        {
            throw error;
        }
        return new IllegalStateException(ex);
    }
}
