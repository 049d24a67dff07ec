package io.spraynic.bench.jmh;

import io.spraynic.datapath.port.UdpFrames;
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
}
