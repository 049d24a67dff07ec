package io.spraynic.datapath.wire;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32;

/**
 * A verbatim copy of main's {@code Icrc} at 2f2b30a (four reads and seven complemented look-ups for the masked bytes),
 * kept as the yardstick of {@code IcrcCpuTime} (benchmarks/RESULTS.md section 63); not used by the NIC. Below, main's
 * text:
 * <p>
 * The RoCEv2 Invariant CRC (IBA vol. 1 Annex A17.8): CRC-32 (the Ethernet polynomial, as
 * {@link java.util.zip.CRC32}) over
 * <ol>
 *     <li>8 bytes of 0xFF standing in for the masked InfiniBand LRH;</li>
 *     <li>the whole IP header with its variant fields set to all ones: IPv4 DS field (DSCP and ECN), TTL and
 *     header checksum; IPv6 traffic class, flow label and hop limit;</li>
 *     <li>the UDP header with its checksum set to all ones;</li>
 *     <li>the BTH with resv8a (byte 4: FECN/BECN) set to all ones;</li>
 *     <li>the extension headers, payload and pad bytes, unmasked.</li>
 * </ol>
 * The four ICRC bytes after the pad are the CRC value in little-endian byte order (as Linux rxe stores
 * {@code ~crc} on a little-endian CPU, and scapy's {@code BTH.pack_icrc} does); Wireshark shows them as a
 * big-endian number, i.e. the wire bytes in order.
 * <p>
 * An instance holds reusable scratch state: use one per thread. For IPv4 without options and IPv6, the JDK's
 * intrinsic {@link CRC32} runs over the packet as it lies, unmasked, through a cached ByteBuffer view of the frame's
 * segment (for a segment over 2 GiB, of a 1 GiB window of it), and the result is corrected into the ICRC by
 * linearity: a constant for the LRH stand-in, one table lookup per masked byte, and {@code CrcShift}'s per-length
 * tables to carry that difference to the packet's end (benchmarks/RESULTS.md, section 28a). Otherwise (IPv4
 * options, a length whose tables are not cached yet) the masked headers, and up to 512
 * bytes after them, are copied to a heap scratch array and masked there. {@link #compute} allocates nothing while
 * the segment object (and window) is the same as on the previous call: give the parser one long-lived segment over
 * the whole mbuf pool, not a new slice per packet (each new segment object costs one ByteBuffer view). A
 * table-driven slicing-by-8 CRC ({@link #update}) covers the corner case of a range no window can hold.
 *
 * @see <a href="https://www.infinibandta.org/ibta-specification/">InfiniBand Architecture Specification
 * Volume 1, Annex A17 (RoCEv2), A17.8 (ICRC)</a>
 */
public final class IcrcMainCopy
{
    /** Length of the ICRC at the end of the UDP payload. */
    public static final int LENGTH = 4;

    private static final ValueLayout.OfInt INT_LE = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfLong LONG_LE = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final int MASKED_LRH_LENGTH = 8;
    private static final int HEADERS_SCRATCH_LENGTH = MASKED_LRH_LENGTH + Ipv4Header.MAX_LENGTH + UdpHeader.LENGTH +
        BaseTransportHeader.LENGTH;
    /**
     * Up to this many bytes after the BTH are copied beside the masked headers, so that a small packet takes one
     * CRC32 call over one heap array: the ByteBuffer path costs a second intrinsic call (each with a fixed
     * setup cost), a scope acquire and release, and position/limit checks, which dominate a 64 B packet.
     */
    static final int INLINE_REST_LENGTH = 512;
    private static final int SCRATCH_LENGTH = HEADERS_SCRATCH_LENGTH + INLINE_REST_LENGTH;
    private static final int[][] TABLES = slicingTables();
    /** Segments over 2 GiB are viewed through 1 GiB windows starting at multiples of 512 MiB. */
    private static final long WINDOW_ALIGNMENT = 1L << 29;
    private static final long WINDOW_LENGTH = 1L << 30;

    /*
     * The in-place path's constants. Offsets of the masked bytes from the IP header's start (IPv4 without options,
     * IPv6): IPv4 TOS 1, TTL 8, checksum 10-11, UDP checksum 26-27, BTH resv8a 32; IPv6 byte 0's low nibble, bytes
     * 1-3, hop limit 7, UDP checksum 46-47, resv8a 52. Each table maps a byte's difference to its register
     * difference at the headers' end; each constant is the LRH stand-in's.
     */
    private static final int IPV4_HEADERS = Ipv4Header.LENGTH + UdpHeader.LENGTH + BaseTransportHeader.LENGTH;
    private static final int IPV6_HEADERS = Ipv6Header.LENGTH + UdpHeader.LENGTH + BaseTransportHeader.LENGTH;
    private static final int IPV4_UDP_CHECKSUM_WORD = Ipv4Header.LENGTH + UdpHeader.CHECKSUM_OFFSET - 2;
    private static final int IPV4_RESV8A_WORD = Ipv4Header.LENGTH + UdpHeader.LENGTH + BaseTransportHeader.RESV8A_OFFSET;
    private static final int IPV6_UDP_CHECKSUM_WORD = Ipv6Header.LENGTH + UdpHeader.CHECKSUM_OFFSET - 6;
    private static final int IPV6_RESV8A_WORD = Ipv6Header.LENGTH + UdpHeader.LENGTH + BaseTransportHeader.RESV8A_OFFSET - 4;
    /*
     * One flat array per IP version, the masked byte k's table at entries 256 k on: the JIT folds a static final
     * array's length, so a constant offset plus a byte needs no range check and no load of an inner array (an
     * int[][] cost both, per masked byte).
     */
    private static final int[] IPV4_MASKS = maskTables(IPV4_HEADERS, 1, Ipv4Header.TTL_OFFSET,
        Ipv4Header.CHECKSUM_OFFSET, Ipv4Header.CHECKSUM_OFFSET + 1, IPV4_UDP_CHECKSUM_WORD + 2,
        IPV4_UDP_CHECKSUM_WORD + 3, IPV4_RESV8A_WORD);
    private static final int[] IPV6_MASKS = maskTables(IPV6_HEADERS, 0, 1, 2, 3, Ipv6Header.HOP_LIMIT_OFFSET,
        IPV6_UDP_CHECKSUM_WORD + 6, IPV6_UDP_CHECKSUM_WORD + 7, IPV6_RESV8A_WORD + 4);
    private static final int IPV4_CONSTANT = lrhDifference(IPV4_HEADERS);
    private static final int IPV6_CONSTANT = lrhDifference(IPV6_HEADERS);

    private final CrcShift shifts;
    private final CRC32 crc32 = new CRC32();
    private final byte[] scratch = new byte[SCRATCH_LENGTH];
    private final MemorySegment scratchSegment = MemorySegment.ofArray(scratch);
    // Views of the last few segments seen: a parser fed by several ports (one buffer memory per plane,
    // say) would otherwise make a new ByteBuffer view per frame as the segments alternate.
    private static final int VIEW_CACHE_SIZE = 8;
    private final MemorySegment[] cachedSegments = new MemorySegment[VIEW_CACHE_SIZE];
    private final long[] cachedBases = new long[VIEW_CACHE_SIZE];
    private final ByteBuffer[] cachedBuffers = new ByteBuffer[VIEW_CACHE_SIZE];
    private int nextCacheSlot;
    private long cachedBase;
    // the last segment of at most 2 GiB viewed, and its view (base 0): one compare per packet while a single pool
    // memory feeds the parser, before the cache's walk
    private MemorySegment lastWholeSegment;
    private ByteBuffer lastWholeView;

    /**
     * Creates an ICRC calculator with its own scratch state.
     */
    public IcrcMainCopy()
    {
        this(CrcShift.CALLS_PER_BUILD);
    }

    /**
     * @param callsPerBuild the fewest calls between two builds of a length's shift tables (tests: 0, every length
     *                      takes the in-place path at once).
     */
    IcrcMainCopy(final int callsPerBuild)
    {
        shifts = new CrcShift(callsPerBuild);
        for (int i = 0; i < MASKED_LRH_LENGTH; i++)
        {
            scratch[i] = (byte)0xFF;
        }
    }

    /**
     * Computes the ICRC of a RoCEv2 packet in place.
     *
     * @param s              frame memory.
     * @param ipOffset       offset of the IP header; UDP follows at {@code ipOffset + ipHeaderLength}, the BTH
     *                       8 bytes later.
     * @param ipVersion      4 or 6.
     * @param ipHeaderLength IP header length in bytes (20-60 for IPv4 with options, 40 for IPv6).
     * @param icrcOffset     offset of the ICRC: the end of the pad bytes.
     * @return the CRC value; its little-endian bytes are what goes on the wire.
     */
    public int compute(final MemorySegment s, final long ipOffset, final int ipVersion, final int ipHeaderLength,
        final long icrcOffset)
    {
        if (ipHeaderLength == (ipVersion == 4 ? Ipv4Header.LENGTH : Ipv6Header.LENGTH))
        {
            final int[] shift = shifts.table((int)Math.min(Integer.MAX_VALUE,
                icrcOffset - ipOffset - ipHeaderLength - UdpHeader.LENGTH - BaseTransportHeader.LENGTH));
            final ByteBuffer view = shift == null ? null : view(s, ipOffset, icrcOffset);
            if (view != null)
            {
                return inPlace(s, ipOffset, ipVersion, icrcOffset, shift, view);
            }
        }
        return copied(s, ipOffset, ipVersion, ipHeaderLength, icrcOffset);
    }

    /**
     * The CRC of the packet as it lies, unmasked, from memory nobody just wrote (no copy for the intrinsic to wait
     * on), corrected by linearity: {@code ICRC = CRC32(packet) ^ Z_n(K)}, where {@code K} is the register
     * difference the 8-byte LRH stand-in and the masked bytes make at the end of the headers (a constant and one
     * table lookup per masked byte: its value's difference from all ones, at its fixed offset) and {@code Z_n}
     * carries it over the {@code n} bytes behind the headers.
     */
    private int inPlace(final MemorySegment s, final long ipOffset, final int ipVersion, final long icrcOffset,
        final int[] shift, final ByteBuffer view)
    {
        crc32.reset();
        final long base = cachedBase;
        view.limit((int)(icrcOffset - base)).position((int)(ipOffset - base));
        crc32.update(view);
        final int difference = ipVersion == 4 ? ipv4Difference(s, ipOffset) : ipv6Difference(s, ipOffset);
        return (int)crc32.getValue() ^ CrcShift.apply(shift, difference);
    }

    private static int ipv4Difference(final MemorySegment s, final long ip)
    {
        final int[] t = IPV4_MASKS;
        final long first = s.get(LONG_LE, ip);
        final long second = s.get(LONG_LE, ip + Ipv4Header.TTL_OFFSET);
        final long udp = s.get(LONG_LE, ip + IPV4_UDP_CHECKSUM_WORD);
        final long bth = s.get(LONG_LE, ip + IPV4_RESV8A_WORD);
        // a masked byte b differs from its all-ones stand-in by ~b
        return IPV4_CONSTANT ^ t[~(int)(first >>> 8) & 0xFF] ^ t[256 + (~(int)second & 0xFF)] ^
            t[512 + (~(int)(second >>> 16) & 0xFF)] ^ t[768 + (~(int)(second >>> 24) & 0xFF)] ^
            t[1024 + (~(int)(udp >>> 16) & 0xFF)] ^ t[1280 + (~(int)(udp >>> 24) & 0xFF)] ^
            t[1536 + (~(int)bth & 0xFF)];
    }

    private static int ipv6Difference(final MemorySegment s, final long ip)
    {
        final int[] t = IPV6_MASKS;
        final long first = s.get(LONG_LE, ip);
        final long udp = s.get(LONG_LE, ip + IPV6_UDP_CHECKSUM_WORD);
        final long bth = s.get(LONG_LE, ip + IPV6_RESV8A_WORD);
        // the version nibble stays; the low nibble of byte 0 is masked to ones
        return IPV6_CONSTANT ^ t[~(int)first & 0x0F] ^ t[256 + (~(int)(first >>> 8) & 0xFF)] ^
            t[512 + (~(int)(first >>> 16) & 0xFF)] ^ t[768 + (~(int)(first >>> 24) & 0xFF)] ^
            t[1024 + (~(int)(first >>> 56) & 0xFF)] ^ t[1280 + (~(int)(udp >>> 48) & 0xFF)] ^
            t[1536 + (~(int)(udp >>> 56) & 0xFF)] ^ t[1792 + (~(int)(bth >>> 32) & 0xFF)];
    }

    private int copied(final MemorySegment s, final long ipOffset, final int ipVersion, final int ipHeaderLength,
        final long icrcOffset)
    {
        final int headersLength = ipHeaderLength + UdpHeader.LENGTH + BaseTransportHeader.LENGTH;
        final int scratchLength = MASKED_LRH_LENGTH + headersLength;
        final long restOffset = ipOffset + headersLength;
        final long restLength = icrcOffset - restOffset;
        final boolean inline = restLength >= 0 && restLength <= INLINE_REST_LENGTH;
        // a small packet's rest lies behind its headers in one copy
        MemorySegment.copy(s, ipOffset, scratchSegment, MASKED_LRH_LENGTH,
            inline ? headersLength + (int)restLength : headersLength);
        final byte[] b = scratch;
        final int ip = MASKED_LRH_LENGTH;
        if (ipVersion == 4)
        {
            b[ip + Ipv4Header.TOS_OFFSET] = (byte)0xFF;
            b[ip + Ipv4Header.TTL_OFFSET] = (byte)0xFF;
            b[ip + Ipv4Header.CHECKSUM_OFFSET] = (byte)0xFF;
            b[ip + Ipv4Header.CHECKSUM_OFFSET + 1] = (byte)0xFF;
        }
        else
        {
            // version nibble kept; traffic class and flow label all ones
            b[ip] = (byte)(b[ip] | 0x0F);
            b[ip + 1] = (byte)0xFF;
            b[ip + 2] = (byte)0xFF;
            b[ip + 3] = (byte)0xFF;
            b[ip + Ipv6Header.HOP_LIMIT_OFFSET] = (byte)0xFF;
        }
        final int udp = ip + ipHeaderLength;
        b[udp + UdpHeader.CHECKSUM_OFFSET] = (byte)0xFF;
        b[udp + UdpHeader.CHECKSUM_OFFSET + 1] = (byte)0xFF;
        b[udp + UdpHeader.LENGTH + BaseTransportHeader.RESV8A_OFFSET] = (byte)0xFF;

        crc32.reset();
        if (inline)
        {
            crc32.update(b, 0, scratchLength + (int)restLength);
            return (int)crc32.getValue();
        }
        final ByteBuffer view = view(s, restOffset, icrcOffset);
        if (view == null)
        {
            int state = update(0xFFFF_FFFF, scratchSegment, 0, scratchLength);
            state = update(state, s, restOffset, restLength);
            return ~state;
        }
        crc32.update(b, 0, scratchLength);
        final long base = cachedBase;
        view.limit((int)(icrcOffset - base)).position((int)(restOffset - base));
        crc32.update(view);
        return (int)crc32.getValue();
    }

    /**
     * Reads the ICRC as sent: the value compared with {@link #compute}.
     *
     * @param s          frame memory.
     * @param icrcOffset offset of the four ICRC bytes.
     * @return the CRC value those bytes hold (little-endian).
     */
    public static int read(final MemorySegment s, final long icrcOffset)
    {
        return s.get(INT_LE, icrcOffset);
    }

    /**
     * Stores an ICRC.
     *
     * @param s          frame memory.
     * @param icrcOffset offset of the four ICRC bytes.
     * @param icrc       a value from {@link #compute}.
     */
    public static void write(final MemorySegment s, final long icrcOffset, final int icrc)
    {
        s.set(INT_LE, icrcOffset, icrc);
    }

    /**
     * @param icrc a CRC value.
     * @return its four wire bytes, first byte in bits 31..24: what Wireshark shows as "Invariant CRC".
     */
    public static int wireOrder(final int icrc)
    {
        return Integer.reverseBytes(icrc);
    }

    /**
     * A ByteBuffer view of {@code s} covering {@code [from, to)}, cached while the segment (and, for segments
     * over 2 GiB, the 1 GiB window starting at a multiple of 512 MiB) stays the same; sets {@link #cachedBase}
     * to the segment offset of the buffer's position 0. Null if no window can cover the range.
     */
    private ByteBuffer view(final MemorySegment s, final long from, final long to)
    {
        if (s == lastWholeSegment)
        {
            cachedBase = 0;
            return lastWholeView;
        }
        final long size = s.byteSize();
        final long base = size <= Integer.MAX_VALUE ? 0 : (from / WINDOW_ALIGNMENT) * WINDOW_ALIGNMENT;
        for (int i = 0; i < VIEW_CACHE_SIZE; i++)
        {
            if (cachedSegments[i] == s && cachedBases[i] == base)
            {
                return viewed(s, size, base, cachedBuffers[i]);
            }
        }
        if (to - base > WINDOW_LENGTH && size > Integer.MAX_VALUE)
        {
            return null;
        }
        final int slot = nextCacheSlot;
        nextCacheSlot = (slot + 1) % VIEW_CACHE_SIZE;
        cachedSegments[slot] = s;
        cachedBases[slot] = base;
        cachedBuffers[slot] = size <= Integer.MAX_VALUE ? s.asByteBuffer() :
            s.asSlice(base, Math.min(WINDOW_LENGTH, size - base)).asByteBuffer();
        return viewed(s, size, base, cachedBuffers[slot]);
    }

    private ByteBuffer viewed(final MemorySegment s, final long size, final long base, final ByteBuffer view)
    {
        cachedBase = base;
        if (size <= Integer.MAX_VALUE)
        {
            lastWholeSegment = s;
            lastWholeView = view;
        }
        return view;
    }

    /**
     * Continues a reflected CRC-32 (polynomial 0xEDB88320) over memory, slicing by 8, without the final
     * complement: the software path for segments a ByteBuffer cannot view.
     *
     * @param state  the running CRC register (0xFFFFFFFF to start).
     * @param s      memory.
     * @param offset first byte.
     * @param length number of bytes.
     * @return the new register value.
     */
    static int update(final int state, final MemorySegment s, final long offset, final long length)
    {
        final int[] t0 = TABLES[0];
        final int[] t1 = TABLES[1];
        final int[] t2 = TABLES[2];
        final int[] t3 = TABLES[3];
        final int[] t4 = TABLES[4];
        final int[] t5 = TABLES[5];
        final int[] t6 = TABLES[6];
        final int[] t7 = TABLES[7];
        int crc = state;
        long i = offset;
        final long end = offset + length;
        for (; i + 8 <= end; i += 8)
        {
            final long v = s.get(LONG_LE, i);
            final int lo = (int)v ^ crc;
            final int hi = (int)(v >>> 32);
            crc = t7[lo & 0xFF] ^ t6[(lo >>> 8) & 0xFF] ^ t5[(lo >>> 16) & 0xFF] ^ t4[lo >>> 24] ^
                t3[hi & 0xFF] ^ t2[(hi >>> 8) & 0xFF] ^ t1[(hi >>> 16) & 0xFF] ^ t0[hi >>> 24];
        }
        for (; i < end; i++)
        {
            crc = (crc >>> 8) ^ t0[(crc ^ s.get(ValueLayout.JAVA_BYTE, i)) & 0xFF];
        }
        return crc;
    }

    /**
     * For the j-th masked offset given and value v, at entry 256 j + v: the register difference v at that offset
     * makes at the end of the headers.
     */
    private static int[] maskTables(final int headersLength, final int... offsets)
    {
        final int[] tables = new int[offsets.length * 256];
        for (int m = 0; m < offsets.length; m++)
        {
            for (int v = 0; v < 256; v++)
            {
                tables[256 * m + v] = CrcShift.advance(TABLES[0][v], headersLength - 1 - offsets[m]);
            }
        }
        return tables;
    }

    /**
     * The register difference at the end of the headers between starting from the register after the 8-byte LRH
     * stand-in (as the ICRC does) and from CRC32's initial all ones (as the CRC of the packet in place does).
     */
    private static int lrhDifference(final int headersLength)
    {
        int afterLrh = 0xFFFF_FFFF;
        for (int i = 0; i < MASKED_LRH_LENGTH; i++)
        {
            afterLrh = (afterLrh >>> 8) ^ TABLES[0][(afterLrh ^ 0xFF) & 0xFF];
        }
        return CrcShift.advance(afterLrh ^ 0xFFFF_FFFF, headersLength);
    }

    private static int[][] slicingTables()
    {
        final int[][] tables = new int[8][256];
        for (int i = 0; i < 256; i++)
        {
            int c = i;
            for (int k = 0; k < 8; k++)
            {
                c = (c & 1) != 0 ? (c >>> 1) ^ 0xEDB8_8320 : c >>> 1;
            }
            tables[0][i] = c;
        }
        for (int t = 1; t < 8; t++)
        {
            for (int i = 0; i < 256; i++)
            {
                final int previous = tables[t - 1][i];
                tables[t][i] = (previous >>> 8) ^ tables[0][previous & 0xFF];
            }
        }
        return tables;
    }
}
