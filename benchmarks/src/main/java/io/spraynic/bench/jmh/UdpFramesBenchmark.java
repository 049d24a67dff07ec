package io.spraynic.bench.jmh;

import io.spraynic.datapath.port.UdpFrames;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.Ipv6Header;
import io.spraynic.datapath.wire.UdpHeader;
import io.spraynic.datapath.wire.Wire;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.concurrent.TimeUnit;

/**
 * What the kernel-socket port ({@code UdpSocketPacketPort}) does per received datagram to make it a frame, per packet of
 * a 32-packet burst, by UDP payload size: IPv4 headers ({@link UdpFrames#synthesize}, the baseline), IPv6 headers
 * without the UDP checksum ({@link UdpFrames#synthesizeIpv6}: every frame now), and IPv6 headers with it
 * ({@link UdpFrames#completeIpv6Checksum} after them: every frame before, now only a frame a capture takes). Each must
 * show 0 B/op under {@code -prof gc}.
 * <p>
 * The IPv6 UDP checksum alone over the burst's ready frames: {@link UdpHeader#computeIpv6Checksum} (its pseudo-header
 * sum reads eight bytes a step) against the same sum in four-byte steps as it was before
 * ({@code ipv6UdpChecksumFourByteSteps}, kept here as the baseline), in one run.
 * <pre>
 *   ./spraynic jmh UdpFramesBenchmark -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
@State(Scope.Thread)
public class UdpFramesBenchmark
{
    static final int BURST = 32;
    static final int SLOT = 8192;
    private static final long MAC = 0x0200_0000_0002L;
    private static final long V6_HIGH = 0xFD00_0001_0000_0000L;
    private static final long IPV6 = EthernetHeader.LENGTH;
    private static final long UDP6 = IPV6 + Ipv6Header.LENGTH;

    /** UDP payload bytes (BTH onwards): a 64-byte write, and full 1 KiB and 4 KiB MTU frames. */
    @Param({"80", "1040", "4112"})
    int payload;

    private Arena arena;
    private MemorySegment frames;

    @Setup(Level.Trial)
    public void fillPayloads()
    {
        arena = Arena.ofConfined();
        frames = arena.allocate((long)BURST * SLOT, 64);
        for (long i = 0; i < frames.byteSize(); i++)
        {
            frames.set(ValueLayout.JAVA_BYTE, i, (byte)(i * 31));
        }
        for (int i = 0; i < BURST; i++)
        {
            UdpFrames.synthesizeIpv6(frames, (long)i * SLOT, payload, MAC, V6_HIGH, 0x10, 40_000 + i, V6_HIGH, 0x20, 2);
            final long frame = (long)i * SLOT;
            if (UdpHeader.computeIpv6Checksum(frames, frame + IPV6, frame + UDP6, UdpHeader.LENGTH + payload) !=
                fourByteStepsChecksum(frames, frame + IPV6, frame + UDP6, UdpHeader.LENGTH + payload))
            {
                throw new IllegalStateException("the two IPv6 UDP checksums differ");
            }
        }
    }

    @TearDown(Level.Trial)
    public void free()
    {
        arena.close();
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int synthesizeIpv4()
    {
        int total = 0;
        for (int i = 0; i < BURST; i++)
        {
            total += UdpFrames.synthesize(frames, (long)i * SLOT, payload, MAC, 0x0A00_0001, 40_000 + i, 0x0A00_0002, 2);
        }
        return total;
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int synthesizeIpv6()
    {
        int total = 0;
        for (int i = 0; i < BURST; i++)
        {
            total += UdpFrames.synthesizeIpv6(frames, (long)i * SLOT, payload, MAC, V6_HIGH, 0x10, 40_000 + i, V6_HIGH, 0x20,
                2);
        }
        return total;
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int synthesizeIpv6WithUdpChecksum()
    {
        int total = 0;
        for (int i = 0; i < BURST; i++)
        {
            final long frame = (long)i * SLOT;
            final int length = UdpFrames.synthesizeIpv6(frames, frame, payload, MAC, V6_HIGH, 0x10, 40_000 + i, V6_HIGH, 0x20,
                2);
            total += UdpFrames.completeIpv6Checksum(frames, frame, length) ? length : 0;
        }
        if (total != BURST * (UdpFrames.IPV6_HEADERS_LENGTH + payload))
        {
            throw new IllegalStateException("a checksum was not computed");
        }
        return total;
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int ipv6UdpChecksum()
    {
        int total = 0;
        for (int i = 0; i < BURST; i++)
        {
            total += UdpHeader.computeIpv6Checksum(frames, (long)i * SLOT + IPV6, (long)i * SLOT + UDP6,
                UdpHeader.LENGTH + payload);
        }
        return total;
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int ipv6UdpChecksumFourByteSteps()
    {
        int total = 0;
        for (int i = 0; i < BURST; i++)
        {
            total += fourByteStepsChecksum(frames, (long)i * SLOT + IPV6, (long)i * SLOT + UDP6,
                UdpHeader.LENGTH + payload);
        }
        return total;
    }

    // the baseline: UdpHeader.computeIpv6Checksum as it was, its pseudo-header sum four bytes a step
    private static int fourByteStepsChecksum(final MemorySegment s, final long ip, final long l4, final int length)
    {
        long sum = 0;
        for (int i = 0; i < 32; i += 4)
        {
            sum += Integer.toUnsignedLong(Wire.i32(s, ip + Ipv6Header.SOURCE_ADDRESS_OFFSET + i));
        }
        sum += length;
        sum += Ipv6Header.NEXT_HEADER_UDP;
        int i = 0;
        for (; i + 4 <= length; i += 4)
        {
            sum += Integer.toUnsignedLong(Wire.i32(s, l4 + i));
        }
        for (; i + 2 <= length; i += 2)
        {
            sum += Wire.u16(s, l4 + i);
        }
        if (i < length)
        {
            sum += Wire.u8(s, l4 + i) << 8;
        }
        sum -= UdpHeader.checksum(s, l4);
        long folded = (sum & 0xFFFF_FFFFL) + (sum >>> 32);
        folded = (folded & 0xFFFF) + (folded >>> 16);
        folded = (folded & 0xFFFF) + (folded >>> 16);
        folded = (folded & 0xFFFF) + (folded >>> 16);
        final int checksum = (int)(~folded & 0xFFFF);
        return checksum == 0 ? 0xFFFF : checksum;
    }
}
