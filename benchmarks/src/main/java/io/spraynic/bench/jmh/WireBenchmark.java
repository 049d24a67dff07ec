package io.spraynic.bench.jmh;

import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.RoceParser;
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
import java.util.concurrent.TimeUnit;

/**
 * The wire format's per-packet work, per packet of a 32-packet burst, by payload size: parse with
 * ICRC verification, ICRC alone, and building every header (with IP checksum and ICRC) in place.
 * Each must show 0 B/op under {@code -prof gc}.
 * <pre>
 *   ./spraynic jmh WireBenchmark -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
@State(Scope.Thread)
public class WireBenchmark
{
    static final int BURST = 32;
    static final int SLOT = 8192;

    @Param({"64", "1024", "4096"})
    int payload;

    private Arena arena;
    private MemorySegment frames;
    private final int[] lengths = new int[BURST];
    private final RoceParser parser = new RoceParser(new ParseCounters());
    private final RoceFrame frame = new RoceFrame();
    private final Icrc icrc = new Icrc();
    private RoceFrameWriter writer;

    @Setup(Level.Trial)
    public void writeFrames()
    {
        arena = Arena.ofConfined();
        frames = arena.allocate((long)BURST * SLOT, 64);
        writer = new RoceFrameWriter()
            .ethernet(0x020000000001L, 0x020000000002L)
            .ipv4(0x0A000001, 0x0A000002)
            .udpSourcePort(49152)
            .opcode(Opcode.RC_RDMA_WRITE_ONLY)
            .destQp(0x42)
            .reth(0x1000_0000L, 0x1234, payload);
        for (int i = 0; i < BURST; i++)
        {
            writer.psn(i);
            lengths[i] = writer.writeFrame(frames, (long)i * SLOT, payload);
        }
    }

    @TearDown(Level.Trial)
    public void free()
    {
        arena.close();
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int parseAndVerifyIcrc()
    {
        int valid = 0;
        for (int i = 0; i < BURST; i++)
        {
            parser.parse(frames, (long)i * SLOT, lengths[i], frame);
            valid += frame.isRoce() ? 1 : 0;
        }
        if (valid != BURST)
        {
            throw new IllegalStateException("frames did not parse");
        }
        return valid;
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int icrcOnly()
    {
        int crc = 0;
        for (int i = 0; i < BURST; i++)
        {
            final long offset = (long)i * SLOT;
            crc ^= icrc.compute(frames, offset + 14, 4, 20, offset + lengths[i] - Icrc.LENGTH);
        }
        return crc;
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int buildHeadersInPlace()
    {
        int total = 0;
        for (int i = 0; i < BURST; i++)
        {
            writer.psn(i);
            total += writer.writeFrame(frames, (long)i * SLOT, payload);
        }
        return total;
    }
}
