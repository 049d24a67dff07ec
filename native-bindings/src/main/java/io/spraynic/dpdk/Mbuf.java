package io.spraynic.dpdk;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * Flyweight over a DPDK {@code struct rte_mbuf} that lives inside {@link PacketMemory}: reads and
 * writes the header fields SprayNIC needs and locates the packet data, without allocating.
 * <p>
 * Packet data is exposed Aeron style, as a (segment, offset, length) triple: {@link #memory()}
 * is the one segment that spans every mbuf pool, {@link #dataOffset()} is where this packet's
 * first byte sits in it and {@link #dataLength()} how many bytes it has. Accesses through that
 * segment are bounds-checked against the pools' memory, and creating the view allocates nothing.
 * <p>
 * The offsets below are those of DPDK 22.11 on x86_64; {@link ShimLayoutCheck} verifies every
 * one against the shim (compiled against the installed headers) before any of them is used.
 * Only single-segment mbufs are supported: SprayNIC never chains, and refuses MTUs that would.
 *
 * @see <a href="https://doc.dpdk.org/api-22.11/structrte__mbuf.html">struct rte_mbuf</a>
 */
public final class Mbuf
{
    /** {@code sizeof(struct rte_mbuf)}: two cache lines. */
    public static final int LENGTH = 128;
    public static final int BUF_ADDR_OFFSET = 0;
    public static final int DATA_OFF_OFFSET = 16;
    /** {@code refcnt}: 1 while one owner holds the mbuf; a free returns it to its pool only when it reaches 0. */
    public static final int REFCNT_OFFSET = 18;
    public static final int NB_SEGS_OFFSET = 20;
    public static final int PORT_OFFSET = 22;
    public static final int OL_FLAGS_OFFSET = 24;
    public static final int PKT_LEN_OFFSET = 36;
    public static final int DATA_LEN_OFFSET = 40;
    public static final int BUF_LEN_OFFSET = 54;

    // Unaligned layouts on purpose: every field above sits at its natural alignment inside a
    // cache-line-aligned struct (ShimLayoutCheck verifies the offsets), so the aligned layouts'
    // per-access alignment test can never fail and only costs instructions on the per-packet path
    // (measured in benchmarks/RESULTS.md section 1). The bounds check against packet memory stays.
    private static final ValueLayout.OfLong ADDRESS = ValueLayout.JAVA_LONG_UNALIGNED;
    private static final ValueLayout.OfShort U16 = ValueLayout.JAVA_SHORT_UNALIGNED;
    private static final ValueLayout.OfInt U32 = ValueLayout.JAVA_INT_UNALIGNED;

    private final MemorySegment memory;
    private final long memoryBase;
    private long mbufOffset;

    /**
     * @param memory the packet memory every mbuf this flyweight wraps lives in.
     */
    public Mbuf(final PacketMemory memory)
    {
        this.memory = memory.segment();
        this.memoryBase = this.memory.address();
    }

    /**
     * Points the flyweight at the mbuf at a native address.
     *
     * @return this.
     */
    public Mbuf wrap(final long mbufAddress)
    {
        mbufOffset = mbufAddress - memoryBase;
        return this;
    }

    /**
     * @return the segment that packet data offsets are relative to.
     */
    public MemorySegment memory()
    {
        return memory;
    }

    /**
     * @return the native address of the wrapped mbuf.
     */
    public long address()
    {
        return memoryBase + mbufOffset;
    }

    /**
     * @return the offset in {@link #memory()} of this packet's first byte.
     */
    public long dataOffset()
    {
        return dataOffset(memory, memoryBase, mbufOffset);
    }

    public int dataLength()
    {
        return dataLength(memory, mbufOffset);
    }

    /**
     * Sets the length of a single-segment packet ({@code data_len} and {@code pkt_len}).
     */
    public void dataLength(final int length)
    {
        dataLength(memory, mbufOffset, length);
    }

    /**
     * @return how many bytes can be written from {@link #dataOffset()} on.
     */
    public int dataRoom()
    {
        return dataRoom(memory, mbufOffset);
    }

    public int packetLength()
    {
        return memory.get(U32, mbufOffset + PKT_LEN_OFFSET);
    }

    public int segmentCount()
    {
        return Short.toUnsignedInt(memory.get(U16, mbufOffset + NB_SEGS_OFFSET));
    }

    public int port()
    {
        return Short.toUnsignedInt(memory.get(U16, mbufOffset + PORT_OFFSET));
    }

    public long offloadFlags()
    {
        return memory.get(ADDRESS, mbufOffset + OL_FLAGS_OFFSET);
    }

    /**
     * The offset in {@code memory} of the first data byte of the mbuf at {@code mbufOffset}.
     */
    public static long dataOffset(final MemorySegment memory, final long memoryBase, final long mbufOffset)
    {
        final long bufAddress = memory.get(ADDRESS, mbufOffset + BUF_ADDR_OFFSET);
        return bufAddress - memoryBase + Short.toUnsignedInt(memory.get(U16, mbufOffset + DATA_OFF_OFFSET));
    }

    public static int dataLength(final MemorySegment memory, final long mbufOffset)
    {
        return Short.toUnsignedInt(memory.get(U16, mbufOffset + DATA_LEN_OFFSET));
    }

    public static void dataLength(final MemorySegment memory, final long mbufOffset, final int length)
    {
        memory.set(U16, mbufOffset + DATA_LEN_OFFSET, (short)length);
        memory.set(U32, mbufOffset + PKT_LEN_OFFSET, length);
    }

    /** @return the reference count of the mbuf at {@code mbufOffset} (a plain read). */
    public static int refcnt(final MemorySegment memory, final long mbufOffset)
    {
        return Short.toUnsignedInt(memory.get(U16, mbufOffset + REFCNT_OFFSET));
    }

    /**
     * Takes a second reference on an mbuf whose only owner is the calling thread (its count is 1), with the plain store
     * that {@code rte_mbuf_refcnt_update} itself uses when the count is 1: nobody else can be updating it then. The
     * mbuf then survives its owner's free (which decrements it atomically) until the second reference is freed too.
     *
     * @return false, and nothing changed, when the count is not 1 (the mbuf is shared already).
     */
    public static boolean referenceSoleOwned(final MemorySegment memory, final long mbufOffset)
    {
        if (memory.get(U16, mbufOffset + REFCNT_OFFSET) != 1)
        {
            return false;
        }
        memory.set(U16, mbufOffset + REFCNT_OFFSET, (short)2);
        return true;
    }

    public static int dataRoom(final MemorySegment memory, final long mbufOffset)
    {
        return Short.toUnsignedInt(memory.get(U16, mbufOffset + BUF_LEN_OFFSET)) -
            Short.toUnsignedInt(memory.get(U16, mbufOffset + DATA_OFF_OFFSET));
    }

    public String toString()
    {
        return "Mbuf{address=0x" + Long.toHexString(address()) + ", dataOffset=" + dataOffset() +
            ", dataLength=" + dataLength() + ", dataRoom=" + dataRoom() + ", segments=" + segmentCount() + '}';
    }
}
