package io.spraynic.datapath.wire;

import io.spraynic.datapath.capture.CapturedFrame;
import io.spraynic.datapath.capture.PcapReader;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Random;
import java.util.zip.CRC32;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

class IcrcTest
{
    /** A RoCEv2 SEND Only built by scapy 2.5 (BTH.compute_icrc); Wireshark 4.0 shows "Invariant CRC: 0x9ab26762". */
    private static final String SCAPY_FRAME = "020000000002020000000001080045030030000140004011" +
        "26b70a0000010a000002c00012b7001c00000410ffff0000012380fffffe616263009ab26762";

    private final Icrc icrc = new Icrc();

    static Path resource(final String name) throws URISyntaxException
    {
        return Path.of(Objects.requireNonNull(IcrcTest.class.getResource("/wire/" + name)).toURI());
    }

    @Test
    void shouldMatchScapyIcrcInWireOrder()
    {
        final MemorySegment frame = MemorySegment.ofArray(HexFormat.of().parseHex(SCAPY_FRAME));
        final long icrcOffset = frame.byteSize() - 4;
        final int value = icrc.compute(frame, 14, 4, 20, icrcOffset);
        assertEquals(0x6267B29A, value);
        assertEquals(0x9AB26762, Icrc.wireOrder(value));
        assertEquals(value, Icrc.read(frame, icrcOffset));
    }

    @Test
    void shouldMatchEveryValidScapyVectorIpv4AndIpv6() throws Exception
    {
        final List<CapturedFrame> frames = PcapReader.readAll(resource("roce_vectors.pcap"));
        final RoceParser parser = new RoceParser(new ParseCounters());
        final RoceFrame frame = new RoceFrame();
        int checked = 0;
        for (int i = 0; i <= 16; i++)
        {
            final MemorySegment s = MemorySegment.ofArray(frames.get(i).data());
            assertEquals(FrameClass.ROCE, parser.parse(s, 0, (int)s.byteSize(), frame), "vector " + i);
            assertEquals(Icrc.read(s, frame.icrcOffset()),
                icrc.compute(s, frame.ipOffset(), frame.ipVersion(), frame.ipHeaderLength(), frame.icrcOffset()),
                "vector " + i);
            checked++;
        }
        assertEquals(17, checked);
    }

    @Test
    void shouldIgnoreMaskedFieldsAndCoverEverythingElse() throws Exception
    {
        for (final int vector : new int[] {0, 10, 12})
        {
            final byte[] bytes = PcapReader.readAll(resource("roce_vectors.pcap")).get(vector).data();
            final MemorySegment s = MemorySegment.ofArray(bytes);
            final boolean v6 = vector == 12;
            final int ipHeaderLength = v6 ? 40 : Ipv4Header.headerLength(s, 14);
            final long icrcOffset = bytes.length - 4;
            final int reference = icrc.compute(s, 14, v6 ? 6 : 4, ipHeaderLength, icrcOffset);
            final long udp = 14 + ipHeaderLength;
            final long bth = udp + 8;
            final int[] masked = v6 ?
                new int[] {14, 15, 16, 17, 14 + 7, (int)udp + 6, (int)udp + 7, (int)bth + 4} :
                new int[] {15, 14 + 8, 14 + 10, 14 + 11, (int)udp + 6, (int)udp + 7, (int)bth + 4};
            for (int i = 0; i < icrcOffset; i++)
            {
                final byte original = bytes[i];
                bytes[i] ^= (byte)(v6 && i == 14 ? 0x0F : 0xFF); // keep the IPv6 version nibble
                final int value = icrc.compute(s, 14, v6 ? 6 : 4, ipHeaderLength, icrcOffset);
                bytes[i] = original;
                boolean isMasked = i < 14; // Ethernet is not covered
                for (final int m : masked)
                {
                    isMasked |= m == i;
                }
                if (isMasked)
                {
                    assertEquals(reference, value, "vector " + vector + " byte " + i + " should be masked");
                }
                else
                {
                    assertNotEquals(reference, value, "vector " + vector + " byte " + i + " should be covered");
                }
            }
        }
    }

    @Test
    void shouldComputeSameCrcInSoftwareAsJdk()
    {
        final Random random = new Random(42);
        for (int length = 0; length < 300; length++)
        {
            final byte[] data = new byte[length + 5];
            random.nextBytes(data);
            final CRC32 jdk = new CRC32();
            jdk.update(data, 3, length);
            final int software = ~Icrc.update(0xFFFF_FFFF, MemorySegment.ofArray(data), 3, length);
            assertEquals((int)jdk.getValue(), software, "length " + length);
        }
    }

    @Test
    void shouldViewFramesDeepInsideSegmentsLargerThan2GiB()
    {
        final byte[] bytes = HexFormat.of().parseHex(SCAPY_FRAME);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment native4k = arena.allocate(4096);
            MemorySegment.copy(MemorySegment.ofArray(bytes), 0, native4k, 100, bytes.length);
            final long deep = 5L << 29; // 2.5 GiB into a 3 GiB view whose only real bytes are ours
            org.junit.jupiter.api.Assumptions.assumeTrue(native4k.address() > deep, "allocation too low in memory");
            final MemorySegment huge = MemorySegment.ofAddress(native4k.address() - deep).reinterpret(3L << 30);
            final long frame = deep + 100;
            assertEquals(0x6267B29A, icrc.compute(huge, frame + 14, 4, 20, frame + bytes.length - 4));
            assertEquals(0x6267B29A, icrc.compute(huge, frame + 14, 4, 20, frame + bytes.length - 4));
            assertEquals(0x6267B29A, icrc.compute(native4k, 114, 4, 20, 100 + bytes.length - 4));
        }
    }

    @Test
    void shouldHandleFramesAtTheStartOfSegmentsLargerThan2GiB()
    {
        final byte[] bytes = HexFormat.of().parseHex(SCAPY_FRAME);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment native4k = arena.allocate(4096);
            MemorySegment.copy(MemorySegment.ofArray(bytes), 0, native4k, 100, bytes.length);
            // a view larger than 2 GiB (only the first bytes are ever read)
            final MemorySegment huge = native4k.reinterpret(3L << 30);
            final long icrcOffset = 100 + bytes.length - 4;
            assertEquals(0x6267B29A, icrc.compute(huge, 114, 4, 20, icrcOffset));
            assertEquals(0x6267B29A, icrc.compute(native4k, 114, 4, 20, icrcOffset));
            assertEquals(0x6267B29A, icrc.compute(huge, 114, 4, 20, icrcOffset));
        }
    }

    @Test
    void shouldAgreeWithAMaskedReferenceOnBothSidesOfTheInlineCopyLimit()
    {
        // small packets are copied beside the masked headers and go to CRC32 in one call, larger ones through a
        // ByteBuffer view: both must give what CRC32 gives over the masked bytes, whatever the payload
        final Random random = new Random(7);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = arena.allocate(4096);
            for (final boolean ipv6 : new boolean[]{false, true})
            {
                final RoceFrameWriter writer = new RoceFrameWriter().ethernet(0x020000000001L, 0x020000000002L)
                    .opcode(Opcode.RC_SEND_ONLY).destQp(9).dscp(26).ecn(1).ttl(17).resv8a(0x5A);
                if (ipv6)
                {
                    writer.ipv6(1L, 2L, 3L, 4L).flowLabel(0xABCDE);
                }
                else
                {
                    writer.ipv4(0x0A000001, 0x0A000002);
                }
                final int ipHeaderLength = ipv6 ? Ipv6Header.LENGTH : Ipv4Header.LENGTH;
                final int headersLength = ipHeaderLength + UdpHeader.LENGTH + BaseTransportHeader.LENGTH;
                for (int payload = 0; payload <= Icrc.INLINE_REST_LENGTH + 64; payload++)
                {
                    final byte[] noise = new byte[4096];
                    random.nextBytes(noise);
                    MemorySegment.copy(MemorySegment.ofArray(noise), 0, memory, 0, noise.length);
                    final int length = writer.psn(payload).writeFrame(memory, 0, payload);
                    final long icrcOffset = length - Icrc.LENGTH;
                    assertEquals(masked(memory, ipv6, ipHeaderLength, headersLength, icrcOffset),
                        icrc.compute(memory, EthernetHeader.LENGTH, ipv6 ? 6 : 4, ipHeaderLength, icrcOffset),
                        (ipv6 ? "IPv6" : "IPv4") + " payload " + payload);
                }
            }
        }
    }

    @Test
    void shouldAgreeWithAMaskedReferenceForEveryValueOfEveryMaskedByte()
    {
        // every value of every masked byte (the masking is value-independent) must give what CRC32 over the
        // masked copy gives, whichever way compute applies the masks
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment memory = arena.allocate(2048);
            for (final boolean ipv6 : new boolean[]{false, true})
            {
                final RoceFrameWriter writer = new RoceFrameWriter().ethernet(0x020000000001L, 0x020000000002L)
                    .opcode(Opcode.RC_RDMA_WRITE_ONLY).destQp(0x42).reth(0x1000L, 0x1234, 64);
                if (ipv6)
                {
                    writer.ipv6(1L, 2L, 3L, 4L);
                }
                else
                {
                    writer.ipv4(0x0A000001, 0x0A000002);
                }
                final int ipHeaderLength = ipv6 ? Ipv6Header.LENGTH : Ipv4Header.LENGTH;
                final int headersLength = ipHeaderLength + UdpHeader.LENGTH + BaseTransportHeader.LENGTH;
                final int length = writer.writeFrame(memory, 0, 64);
                final long icrcOffset = length - Icrc.LENGTH;
                final int udp = EthernetHeader.LENGTH + ipHeaderLength;
                final int[] maskedBytes = ipv6 ?
                    new int[] {14, 15, 16, 17, 14 + 7, udp + 6, udp + 7, udp + 8 + 4} :
                    new int[] {15, 14 + 8, 14 + 10, 14 + 11, udp + 6, udp + 7, udp + 8 + 4};
                for (final int at : maskedBytes)
                {
                    final byte original = memory.get(java.lang.foreign.ValueLayout.JAVA_BYTE, at);
                    for (int value = 0; value < 256; value++)
                    {
                        memory.set(java.lang.foreign.ValueLayout.JAVA_BYTE, at, (byte)value);
                        assertEquals(masked(memory, ipv6, ipHeaderLength, headersLength, icrcOffset),
                            icrc.compute(memory, EthernetHeader.LENGTH, ipv6 ? 6 : 4, ipHeaderLength, icrcOffset),
                            (ipv6 ? "IPv6" : "IPv4") + " byte " + at + " = " + value);
                    }
                    memory.set(java.lang.foreign.ValueLayout.JAVA_BYTE, at, original);
                }
            }
        }
    }

    private static int masked(final MemorySegment memory, final boolean ipv6, final int ipHeaderLength,
        final int headersLength, final long icrcOffset)
    {
        final int ip = EthernetHeader.LENGTH;
        final byte[] packet = memory.asSlice(ip, icrcOffset - ip).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
        if (ipv6)
        {
            packet[0] |= 0x0F;
            packet[1] = (byte)0xFF;
            packet[2] = (byte)0xFF;
            packet[3] = (byte)0xFF;
            packet[7] = (byte)0xFF;
        }
        else
        {
            packet[1] = (byte)0xFF;
            packet[8] = (byte)0xFF;
            packet[10] = (byte)0xFF;
            packet[11] = (byte)0xFF;
        }
        packet[ipHeaderLength + 6] = (byte)0xFF;
        packet[ipHeaderLength + 7] = (byte)0xFF;
        packet[ipHeaderLength + UdpHeader.LENGTH + 4] = (byte)0xFF;
        assertEquals(headersLength, ipHeaderLength + 20);
        final CRC32 reference = new CRC32();
        reference.update(new byte[]{-1, -1, -1, -1, -1, -1, -1, -1});
        reference.update(packet);
        return (int)reference.getValue();
    }

    @Test
    void shouldViewLargeFramesDeepInsideSegmentsLargerThan2GiB()
    {
        // a payload past the inline copy limit takes the ByteBuffer view, windowed in a segment over 2 GiB
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment native4k = arena.allocate(4096);
            final int length = new RoceFrameWriter().ethernet(1L, 2L).ipv4(0x0A000001, 0x0A000002)
                .opcode(Opcode.RC_SEND_ONLY).destQp(3).writeFrame(native4k, 100, Icrc.INLINE_REST_LENGTH + 200);
            final long icrcOffset = 100 + length - Icrc.LENGTH;
            final int expected = icrc.compute(native4k, 114, 4, 20, icrcOffset);
            assertEquals(Icrc.read(native4k, icrcOffset), expected, "the writer's ICRC");
            final long deep = 5L << 29;
            org.junit.jupiter.api.Assumptions.assumeTrue(native4k.address() > deep, "allocation too low in memory");
            final MemorySegment huge = MemorySegment.ofAddress(native4k.address() - deep).reinterpret(3L << 30);
            assertEquals(expected, icrc.compute(huge, deep + 114, 4, 20, deep + icrcOffset));
            assertEquals(expected, icrc.compute(native4k.reinterpret(3L << 30), 114, 4, 20, icrcOffset));
        }
    }

    @Test
    void shouldComputeInPlaceWhatTheCopyingPathComputesOverRandomFrames()
    {
        // the in-place path (CRC of the unmasked packet, corrected by linearity) against the copying one, on random
        // frames of every kind the parser meets: IPv4 and IPv6, payloads 0-9,000 B, unaligned, heap and native
        final Random random = new Random(1313);
        final Icrc inPlace = new Icrc(0);                  // builds every length's shift tables at once
        final Icrc copying = new Icrc(Integer.MAX_VALUE);  // never builds one: always copies
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment nativeMemory = arena.allocate(9_300);
            final MemorySegment heapMemory = MemorySegment.ofArray(new byte[9_300]);
            for (int i = 0; i < 3_000; i++)
            {
                final MemorySegment memory = random.nextBoolean() ? nativeMemory : heapMemory;
                final boolean ipv6 = random.nextBoolean();
                final RoceFrameWriter writer = new RoceFrameWriter().ethernet(random.nextLong() >>> 16, 2L)
                    .opcode(random.nextBoolean() ? Opcode.RC_SEND_ONLY : Opcode.RC_RDMA_WRITE_ONLY)
                    .reth(random.nextLong(), random.nextInt(), random.nextInt()).destQp(random.nextInt(1 << 24))
                    .psn(random.nextInt(1 << 24)).dscp(random.nextInt(64)).ecn(random.nextInt(4))
                    .ttl(random.nextInt(256)).resv8a(random.nextInt(256)).udpSourcePort(random.nextInt(65_536));
                if (ipv6)
                {
                    writer.ipv6(random.nextLong(), random.nextLong(), random.nextLong(), random.nextLong())
                        .flowLabel(random.nextInt(1 << 20)).ipv6UdpChecksum(random.nextBoolean());
                }
                else
                {
                    writer.ipv4(random.nextInt(), random.nextInt()).ipv4Identification(random.nextInt(65_536));
                }
                final int payload = i < 1_200 ? i : random.nextInt(9_001);
                final long offset = random.nextInt(64);
                final byte[] noise = new byte[payload];
                random.nextBytes(noise);
                MemorySegment.copy(MemorySegment.ofArray(noise), 0, memory, offset + writer.payloadOffset(), payload);
                final int length = writer.writeFrame(memory, offset, payload);
                final long ip = offset + EthernetHeader.LENGTH;
                final long icrcOffset = offset + length - Icrc.LENGTH;
                final int ipHeaderLength = ipv6 ? Ipv6Header.LENGTH : Ipv4Header.LENGTH;
                final int expected = copying.compute(memory, ip, ipv6 ? 6 : 4, ipHeaderLength, icrcOffset);
                assertEquals(Icrc.read(memory, icrcOffset), expected, "the writer's ICRC");
                assertEquals(expected, inPlace.compute(memory, ip, ipv6 ? 6 : 4, ipHeaderLength, icrcOffset),
                    (ipv6 ? "IPv6" : "IPv4") + " payload " + payload + " at " + offset);
                // a masked byte scrambled changes neither; any other byte changes both alike
                final long at = ip + random.nextInt((int)(icrcOffset - ip));
                memory.set(java.lang.foreign.ValueLayout.JAVA_BYTE, at, (byte)random.nextInt());
                assertEquals(copying.compute(memory, ip, ipv6 ? 6 : 4, ipHeaderLength, icrcOffset),
                    inPlace.compute(memory, ip, ipv6 ? 6 : 4, ipHeaderLength, icrcOffset), "scrambled byte " + (at - ip));
            }
        }
    }
}
