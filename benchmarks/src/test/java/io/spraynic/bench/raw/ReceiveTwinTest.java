package io.spraynic.bench.raw;

import io.spraynic.bench.raw.CReceiveTwin.CrcFolding;
import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.port.DpdkPacketPort;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.RoceParser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The C receive twin computes Java's ICRC (by 512-bit and 128-bit carry-less folding and by tables), and on a real DPDK {@code net_ring}
 * port (no hugepages) places good frames' payloads at their RETH address and refuses a bad ICRC, an address outside
 * the region and a frame that is not IP, exactly as the Java twin does with the same frames.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReceiveTwinTest
{
    private static final Path LIBRARY = Path.of("target", "native", "libspraynic_rxtwin.so");
    private static final int PAYLOAD = 64;
    private static final int FRAMES = 32;
    private static final int BAD_ICRC_FRAME = 5;
    private static final int OUTSIDE_FRAME = 9;
    private static final int ARP_FRAME = 13;

    @Test
    void shouldComputeJavasIcrcByFoldingAndByTables()
    {
        final Random random = new Random(13);
        final RoceParser parser = new RoceParser(new ParseCounters());
        final RoceFrame frame = new RoceFrame();
        try (Arena arena = Arena.ofConfined();
            CReceiveTwin wide = CReceiveTwin.create(LIBRARY, 0, 32, MemorySegment.NULL, 0, 0, CrcFolding.VPCLMUL);
            CReceiveTwin folding = CReceiveTwin.create(LIBRARY, 0, 32, MemorySegment.NULL, 0, 0, CrcFolding.PCLMUL);
            CReceiveTwin tables = CReceiveTwin.create(LIBRARY, 0, 32, MemorySegment.NULL, 0, 0, CrcFolding.TABLES))
        {
            // this machine has both: the test would otherwise check the tables three times
            assertEquals(cpuHas(" vpclmulqdq") && cpuHas(" avx512f") ? CrcFolding.VPCLMUL : CrcFolding.PCLMUL,
                wide.crcFolding());
            assertEquals(cpuHas(" pclmulqdq") ? CrcFolding.PCLMUL : CrcFolding.TABLES, folding.crcFolding());
            assertEquals(CrcFolding.TABLES, tables.crcFolding());
            final MemorySegment memory = arena.allocate(16_384, 64);
            for (int i = 0; i < 2_000; i++)
            {
                final boolean ipv6 = random.nextBoolean();
                final RoceFrameWriter writer = new RoceFrameWriter().ethernet(random.nextLong() >>> 16, random.nextLong() >>> 16)
                    .udpSourcePort(random.nextInt(65_536)).destQp(random.nextInt(1 << 24)).psn(random.nextInt(1 << 24))
                    .opcode(random.nextBoolean() ? Opcode.RC_SEND_ONLY : Opcode.RC_RDMA_WRITE_ONLY)
                    .reth(random.nextLong(), random.nextInt(), random.nextInt());
                if (ipv6)
                {
                    writer.ipv6(random.nextLong(), random.nextLong(), random.nextLong(), random.nextLong());
                }
                else
                {
                    writer.ipv4(random.nextInt(), random.nextInt());
                }
                final int payload = i < 600 ? i : random.nextInt(9_001);
                final long offset = random.nextInt(64); // unaligned as often as not
                memory.asSlice(offset + writer.payloadOffset(), payload).fill((byte)random.nextInt());
                for (int b = 0; b < payload; b += 7)
                {
                    memory.set(ValueLayout.JAVA_BYTE, offset + writer.payloadOffset() + b, (byte)random.nextInt());
                }
                final int length = writer.writeFrame(memory, offset, payload);
                parser.parse(memory, offset, length, frame);
                assertTrue(frame.isRoce(), () -> "frame " + frame);
                final long ipOffset = offset + 14;
                final long icrcOffset = offset + length - Icrc.LENGTH;
                final int java = Icrc.read(memory, icrcOffset);
                assertEquals(java, wide.icrc(memory, ipOffset, icrcOffset), "payload " + payload + " ipv6 " + ipv6);
                assertEquals(java, folding.icrc(memory, ipOffset, icrcOffset), "payload " + payload + " ipv6 " + ipv6);
                assertEquals(java, tables.icrc(memory, ipOffset, icrcOffset), "payload " + payload + " ipv6 " + ipv6);
                // and one flipped bit anywhere from the IP header to the pad changes both
                final long flipped = ipOffset + random.nextLong(icrcOffset - ipOffset);
                final byte saved = memory.get(ValueLayout.JAVA_BYTE, flipped);
                memory.set(ValueLayout.JAVA_BYTE, flipped, (byte)(saved ^ (1 << random.nextInt(8))));
                final int javaFlipped = new Icrc().compute(memory, ipOffset, ipv6 ? 6 : 4, ipv6 ? 40 : 20, icrcOffset);
                assertEquals(javaFlipped, wide.icrc(memory, ipOffset, icrcOffset));
                assertEquals(javaFlipped, folding.icrc(memory, ipOffset, icrcOffset));
                assertEquals(javaFlipped, tables.icrc(memory, ipOffset, icrcOffset));
                memory.set(ValueLayout.JAVA_BYTE, flipped, saved);
            }
        }
    }

    @Test
    void shouldPlaceGoodFramesAndRefuseBadOnesOnNetRingAsTheJavaTwinDoes()
    {
        final int frameLength = 14 + 20 + 8 + 12 + 16 + PAYLOAD + 4;
        final ReceiveTwinComparison.FrameFiller good = ReceiveTwinComparison.writeOnlyFrames(PAYLOAD);
        final RoceFrameWriter outside = new RoceFrameWriter().ethernet(0x020000000001L, 0x020000000002L)
            .ipv4(0x0A000001, 0x0A000002).opcode(Opcode.RC_RDMA_WRITE_ONLY)
            .reth(ReceiveTwinComparison.REGION_BASE + (long)FRAMES * PAYLOAD - 1, ReceiveTwinComparison.RKEY, PAYLOAD);
        final ReceiveTwinComparison.FrameFiller frames = (memory, offset, index) ->
        {
            if (index == OUTSIDE_FRAME)
            {
                return outside.writeFrame(memory, offset, PAYLOAD); // one byte past the region's end
            }
            final int length = good.fill(memory, offset, index);
            if (index == BAD_ICRC_FRAME)
            {
                final long last = offset + length - 1;
                memory.set(ValueLayout.JAVA_BYTE, last, (byte)(memory.get(ValueLayout.JAVA_BYTE, last) ^ 0x01));
            }
            if (index == ARP_FRAME)
            {
                memory.set(ValueLayout.JAVA_SHORT_UNALIGNED, offset + 12, Short.reverseBytes((short)0x0806));
            }
            return length;
        };
        final long[] expected = new long[ReceiveTwin.OUTCOMES];
        expected[ReceiveTwin.PLACED] = FRAMES - 3;
        expected[ReceiveTwin.BAD_ICRC] = 1;
        expected[ReceiveTwin.OUT_OF_REGION] = 1;
        expected[ReceiveTwin.NOT_OURS] = 1;
        try (DpdkNic nic = DpdkNic.start(RawLoop.config(RawLoop.Pmd.NET_RING, frameLength));
            Arena arena = Arena.ofShared())
        {
            final MemorySegment region = arena.allocate((long)FRAMES * PAYLOAD, 64);
            final DpdkPacketPort port = nic.packetPort("raw", 0);
            port.onPollerStart();
            final PacketBurst burst = port.newBurst(FRAMES);
            try (CReceiveTwin c = CReceiveTwin.create(LIBRARY, port.ethPort().portId(), FRAMES, region,
                ReceiveTwinComparison.REGION_BASE, ReceiveTwinComparison.RKEY, CrcFolding.VPCLMUL))
            {
                ReceiveTwinComparison.prime(port, burst, FRAMES, frames);
                assertEquals(FRAMES, c.bursts(1));
                assertArrayEquals(expected, c.counters());
                assertPlaced(region);
                c.flush();

                region.fill((byte)0);
                final ReceiveTwin java = new ReceiveTwin(region, ReceiveTwinComparison.REGION_BASE, ReceiveTwinComparison.RKEY);
                assertEquals(FRAMES, java.bursts(port, burst, 1));
                assertArrayEquals(expected, java.counters());
                assertPlaced(region);
                ReceiveTwinComparison.flush(port, burst);
            }
            finally
            {
                port.release(burst);
                while (port.receive(burst) > 0)
                {
                    port.release(burst);
                }
                burst.close();
                port.onPollerClose();
            }
        }
    }

    @Test
    void shouldJudgeTruncatedAndCorruptedFramesAsTheJavaTwinDoes()
    {
        // hostile input to both twins, frame by frame: every truncation of a good frame, then random bytes changed
        // in it; each twin must give the same outcome (the C one reading nothing outside the frame it was given)
        final Random random = new Random(21);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment region = arena.allocate(4L * PAYLOAD, 64);
            final MemorySegment frame = arena.allocate(256, 64);
            final ReceiveTwin java = new ReceiveTwin(region, ReceiveTwinComparison.REGION_BASE, ReceiveTwinComparison.RKEY);
            try (CReceiveTwin c = CReceiveTwin.create(LIBRARY, 0, 32, region, ReceiveTwinComparison.REGION_BASE,
                ReceiveTwinComparison.RKEY, CrcFolding.VPCLMUL))
            {
                final int length = ReceiveTwinComparison.writeOnlyFrames(PAYLOAD).fill(frame, 0, 1);
                assertEquals(ReceiveTwin.PLACED, c.onFrame(frame, 0, length));
                assertEquals(ReceiveTwin.PLACED, java.onFrame(frame, 0, length));
                for (int truncated = 0; truncated < length; truncated++)
                {
                    // a copy exactly as long as the truncated frame: the C side must stay inside it
                    final MemorySegment alone = arena.allocate(Math.max(1, truncated));
                    MemorySegment.copy(frame, 0, alone, 0, truncated);
                    final int outcome = java.onFrame(alone, 0, truncated);
                    assertTrue(outcome == ReceiveTwin.MALFORMED || outcome == ReceiveTwin.NOT_OURS, "length " + truncated);
                    assertEquals(outcome, c.onFrame(alone, 0, truncated), "length " + truncated);
                }
                final MemorySegment corrupted = arena.allocate(length);
                for (int i = 0; i < 5_000; i++)
                {
                    MemorySegment.copy(frame, 0, corrupted, 0, length);
                    for (int changes = 1 + random.nextInt(3); changes > 0; changes--)
                    {
                        corrupted.set(ValueLayout.JAVA_BYTE, random.nextInt(length), (byte)random.nextInt());
                    }
                    assertEquals(java.onFrame(corrupted, 0, length), c.onFrame(corrupted, 0, length), "case " + i);
                }
                assertArrayEquals(java.counters(), c.counters());
            }
        }
    }

    private static void assertPlaced(final MemorySegment region)
    {
        for (int slot = 0; slot < FRAMES; slot++)
        {
            final byte want = slot == BAD_ICRC_FRAME || slot == OUTSIDE_FRAME || slot == ARP_FRAME ? 0 : (byte)slot;
            for (int b = 0; b < PAYLOAD; b++)
            {
                assertEquals(want, region.get(ValueLayout.JAVA_BYTE, (long)slot * PAYLOAD + b), "slot " + slot + " byte " + b);
            }
        }
    }

    private static boolean cpuHas(final String flag)
    {
        try
        {
            return java.nio.file.Files.readString(Path.of("/proc/cpuinfo")).contains(flag);
        }
        catch (final java.io.IOException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
