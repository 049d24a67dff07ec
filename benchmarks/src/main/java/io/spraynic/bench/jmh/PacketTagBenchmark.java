package io.spraynic.bench.jmh;

import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.NegativeAckHeader;
import io.spraynic.datapath.wire.ProbeHeader;
import io.spraynic.datapath.wire.SelectiveAckHeader;
import io.spraynic.datapath.wire.SipHash;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * What the spray transport's authentication (docs/PROTOCOL.md S12.3, S12.4) costs per packet: the SipHash-2-4
 * tag of a control packet over the span it covers (BTH and header up to the tag: 12 + 52 bytes for an ACK,
 * 12 + 16 for a NACK or QUERY, 12 + 8 for a PROBE), read from off-heap memory as from an mbuf, and the message
 * tag of a data packet over its five invariant words. The sender computes a tag once per control packet and once
 * per message; the receiver verifies it once per control packet and once per new message (later packets of a
 * message compare 8 bytes). Each must show 0 B/op under {@code -prof gc}.
 * <pre>
 *   ./spraynic jmh PacketTagBenchmark -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
@State(Scope.Thread)
public class PacketTagBenchmark
{
    private Arena arena;
    private MemorySegment frame;
    private long k0;
    private long k1;
    private int msn;

    @Setup
    public void start()
    {
        arena = Arena.ofConfined();
        frame = arena.allocate(256, 64);
        final SplittableRandom random = new SplittableRandom(5);
        for (int i = 0; i < 256; i++)
        {
            frame.set(java.lang.foreign.ValueLayout.JAVA_BYTE, i, (byte)random.nextInt());
        }
        k0 = random.nextLong();
        k1 = random.nextLong();
    }

    @TearDown
    public void stop()
    {
        arena.close();
    }

    /** An ACK's tag: 12 + 52 bytes. */
    @Benchmark
    public long ackTag()
    {
        return SipHash.hash(k0, k1, frame, 2, BaseTransportHeader.LENGTH + SelectiveAckHeader.TAG_OFFSET);
    }

    /** A NACK's or QUERY's tag: 12 + 16 bytes. */
    @Benchmark
    public long nackTag()
    {
        return SipHash.hash(k0, k1, frame, 2, BaseTransportHeader.LENGTH + NegativeAckHeader.TAG_OFFSET);
    }

    /** A PROBE's tag: 12 + 8 bytes. */
    @Benchmark
    public long probeTag()
    {
        return SipHash.hash(k0, k1, frame, 2, BaseTransportHeader.LENGTH + ProbeHeader.TAG_OFFSET);
    }

    /** A message tag: five words (S12.4). */
    @Benchmark
    public long messageTag()
    {
        final int m = msn++;
        return SipHash.hash5(k0, k1, 0xC0L << 56 | (long)3 << 32 | (m & 0xFFFF_FFFFL), (long)(1 << 20) << 32,
            0x7F00_0000_1000L + m, (long)0x1234_5678 << 32 | 0xB02, 0);
    }

    /** The same over four words, the design's first choice, for comparison. */
    @Benchmark
    public long messageTag4()
    {
        final int m = msn++;
        return SipHash.hash4(k0, k1, 0xC0L << 56 | (long)3 << 32 | (m & 0xFFFF_FFFFL), (long)(1 << 20) << 32,
            0x7F00_0000_1000L + m, (long)0x1234_5678 << 32 | 0xB02);
    }
}
