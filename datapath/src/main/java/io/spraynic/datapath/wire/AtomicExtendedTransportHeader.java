package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;

/**
 * Flyweight over the Atomic Extended Transport Header (AtomicETH), 28 bytes, in CmpSwap and FetchAdd
 * requests: virtual address, remote key, swap (or add) data, compare data.
 *
 * @see <a href="https://www.infinibandta.org/ibta-specification/">InfiniBand Architecture Specification
 * Volume 1, section 9.3.4 (AtomicETH)</a>
 */
public final class AtomicExtendedTransportHeader
{
    /** Offset of the 64-bit virtual address. */
    public static final int VIRTUAL_ADDRESS_OFFSET = 0;
    /** Offset of the remote key. */
    public static final int RKEY_OFFSET = 8;
    /** Offset of the 64-bit swap (CmpSwap) or add (FetchAdd) data. */
    public static final int SWAP_ADD_DATA_OFFSET = 12;
    /** Offset of the 64-bit compare data. */
    public static final int COMPARE_DATA_OFFSET = 20;
    /** Length of the header. */
    public static final int LENGTH = 28;

    private AtomicExtendedTransportHeader()
    {
    }

    /** @param s frame memory. @param o offset of the AtomicETH. @return the virtual address. */
    public static long virtualAddress(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + VIRTUAL_ADDRESS_OFFSET);
    }

    /** @param s frame memory. @param o offset of the AtomicETH. @param va the virtual address. */
    public static void virtualAddress(final MemorySegment s, final long o, final long va)
    {
        s.set(Wire.LONG_BE, o + VIRTUAL_ADDRESS_OFFSET, va);
    }

    /** @param s frame memory. @param o offset of the AtomicETH. @return the remote key. */
    public static int rkey(final MemorySegment s, final long o)
    {
        return Wire.i32(s, o + RKEY_OFFSET);
    }

    /** @param s frame memory. @param o offset of the AtomicETH. @param rkey the remote key. */
    public static void rkey(final MemorySegment s, final long o, final int rkey)
    {
        Wire.put32(s, o + RKEY_OFFSET, rkey);
    }

    /** @param s frame memory. @param o offset of the AtomicETH. @return the swap or add data. */
    public static long swapAddData(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + SWAP_ADD_DATA_OFFSET);
    }

    /** @param s frame memory. @param o offset of the AtomicETH. @param value the swap or add data. */
    public static void swapAddData(final MemorySegment s, final long o, final long value)
    {
        s.set(Wire.LONG_BE, o + SWAP_ADD_DATA_OFFSET, value);
    }

    /** @param s frame memory. @param o offset of the AtomicETH. @return the compare data. */
    public static long compareData(final MemorySegment s, final long o)
    {
        return s.get(Wire.LONG_BE, o + COMPARE_DATA_OFFSET);
    }

    /** @param s frame memory. @param o offset of the AtomicETH. @param value the compare data. */
    public static void compareData(final MemorySegment s, final long o, final long value)
    {
        s.set(Wire.LONG_BE, o + COMPARE_DATA_OFFSET, value);
    }

    /**
     * Describes a header for debugging.
     *
     * @param s frame memory.
     * @param o offset of the AtomicETH.
     * @return the header's fields as text.
     */
    public static String toString(final MemorySegment s, final long o)
    {
        return "AtomicETH{va=0x" + Long.toHexString(virtualAddress(s, o)) + ", rkey=0x" +
            Integer.toHexString(rkey(s, o)) + ", swapAdd=0x" + Long.toHexString(swapAddData(s, o)) + ", compare=0x" +
            Long.toHexString(compareData(s, o)) + "}";
    }
}
