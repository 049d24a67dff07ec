package io.spraynic.datapath.wire;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link Ipv6Header#pseudoHeaderSum} (eight bytes a step) against a byte-by-byte reference sum of RFC 8200 section
 * 8.1's pseudo-header and the upper-layer bytes, over random contents, lengths (odd ones and every remainder mod 8)
 * and offsets (so reads are unaligned), seeded and reproducible; also with a checksum field taken back out of the
 * unfolded sum before the fold, as its callers do.
 */
class Ipv6HeaderTest
{
    private static final int CASES_PER_SEED = 4_000;
    private static final int MAX_LENGTH = 9_100; // past a 9000-byte jumbo frame's UDP length

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3})
    void pseudoHeaderSumFoldsToTheByteByByteSum(final long seed)
    {
        final Random random = new Random(seed);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment heap = MemorySegment.ofArray(new byte[Ipv6Header.LENGTH + 64 + MAX_LENGTH + 64]);
            final MemorySegment nativeMemory = arena.allocate(heap.byteSize(), 8);
            for (int i = 0; i < CASES_PER_SEED; i++)
            {
                final int length = i < 64 ? i : random.nextInt(MAX_LENGTH + 1);
                final long ip = random.nextInt(16);
                final long l4 = ip + Ipv6Header.LENGTH + random.nextInt(48);
                final int nextHeader = random.nextInt(256);
                final MemorySegment segment = (i & 1) == 0 ? heap : nativeMemory;
                final byte[] contents = new byte[(int)(l4 + length)];
                random.nextBytes(contents);
                MemorySegment.copy(contents, 0, segment, ValueLayout.JAVA_BYTE, 0, contents.length);

                final long sum = Ipv6Header.pseudoHeaderSum(segment, ip, l4, length, nextHeader);
                final String where = "seed " + seed + " case " + i + " ip " + ip + " l4 " + l4 + " length " + length;
                assertEquals(Ipv4Header.fold(byteByByteSum(contents, (int)ip, (int)l4, length, nextHeader)),
                    Ipv4Header.fold(sum), where);
                if (length >= UdpHeader.LENGTH)
                {
                    // what the checksum's callers do: take the checksum field back out of the sum, then fold
                    final int field = UdpHeader.checksum(segment, l4);
                    contents[(int)l4 + 6] = 0;
                    contents[(int)l4 + 7] = 0;
                    assertEquals(Ipv4Header.fold(byteByByteSum(contents, (int)ip, (int)l4, length, nextHeader)),
                        Ipv4Header.fold(sum - field), where);
                }
            }
        }
    }

    @Test
    void aSegmentEndingAtTheLastByteIsNotReadPast()
    {
        for (int length = 0; length <= 17; length++)
        {
            final byte[] contents = new byte[Ipv6Header.LENGTH + UdpHeader.LENGTH + length];
            new Random(length).nextBytes(contents);
            final MemorySegment exact = MemorySegment.ofArray(contents); // a read past its end throws
            final int l4Length = UdpHeader.LENGTH + length;
            assertEquals(Ipv4Header.fold(byteByByteSum(contents, 0, Ipv6Header.LENGTH, l4Length, 17)),
                Ipv4Header.fold(Ipv6Header.pseudoHeaderSum(exact, 0, Ipv6Header.LENGTH, l4Length, 17)),
                "length " + length);
        }
    }

    @Test
    void aWholeUdpChecksumChecksOut()
    {
        final byte[] contents = new byte[Ipv6Header.LENGTH + UdpHeader.LENGTH + 1029];
        new Random(7).nextBytes(contents);
        final MemorySegment frame = MemorySegment.ofArray(contents);
        final int udpLength = UdpHeader.LENGTH + 1029;
        UdpHeader.checksum(frame, Ipv6Header.LENGTH, UdpHeader.computeIpv6Checksum(frame, 0, Ipv6Header.LENGTH,
            udpLength));
        assertEquals(0, Ipv4Header.fold(Ipv6Header.pseudoHeaderSum(frame, 0, Ipv6Header.LENGTH, udpLength, 17)));
    }

    // RFC 1071 as written: 16-bit big-endian words, one at a time, the pseudo-header's 32-bit length as two words
    private static long byteByByteSum(final byte[] bytes, final int ip, final int l4, final int length,
        final int nextHeader)
    {
        long sum = 0;
        for (int i = ip + Ipv6Header.SOURCE_ADDRESS_OFFSET; i < ip + Ipv6Header.LENGTH; i += 2)
        {
            sum += ((bytes[i] & 0xFF) << 8) | (bytes[i + 1] & 0xFF);
        }
        sum += (length >>> 16) + (length & 0xFFFF) + nextHeader;
        for (int i = 0; i < length; i++)
        {
            final int value = bytes[l4 + i] & 0xFF;
            sum += (i & 1) == 0 ? value << 8 : value;
        }
        return sum;
    }
}
