package io.spraynic.bench.jmh;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.capture.CaptureRingReader;
import io.spraynic.datapath.capture.CaptureRingWriter;
import io.spraynic.datapath.capture.TappingPacketPort;
import io.spraynic.datapath.port.PacketBurst;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
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
 * What a live capture's writer ({@link CaptureRingWriter}, called by the worker's capture tap) costs per frame: a
 * burst of 32 frames of 64 B (2 KiB apart, as mbufs lie) copied into a worker's ring, with the filter that takes
 * everything.
 * <ul>
 *   <li>{@code writeBurst}: one thread; the ring is freed after every burst as by a client that is always caught up
 *       (every frame is copied, no line is shared with another core): the worker's own cost.</li>
 *   <li>{@code shared}: the writer and a client draining the rings with {@link CaptureRingReader} on another core,
 *       as {@code spraynic capture} does (frames that find the ring full are dropped and counted).</li>
 * </ul>
 * Each must show 0 B/op under {@code -prof gc}.
 * <pre>
 *   ./spraynic jmh CaptureRingBenchmark -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
@State(Scope.Group)
public class CaptureRingBenchmark
{
    static final int BURST = 32;
    static final int FRAME_BYTES = 64;
    static final int BUFFER_STRIDE = 2048;

    @Param({"4096", "128"})
    int snapLength;

    private Arena arena;
    private MemorySegment memory;
    private CaptureRingLayout layout;
    private CaptureRingWriter writer;
    private CaptureRingReader reader;
    private FixedBurst burst;
    private long headOffset;
    private long tailOffset;
    private long timestamp;
    private long touched;
    private final CaptureRingReader.FrameHandler touch = (plane, queue, direction, ts, m, offset, captured, original) ->
        touched += m.get(ValueLayout.JAVA_BYTE, offset + captured - 1);

    @Setup
    public void start()
    {
        arena = Arena.ofShared();
        layout = CaptureRingLayout.of(1, 4096, snapLength);
        memory = arena.allocate(layout.fileLength(), 4096);
        layout.writeHeader(memory, 1, 1, new String[]{"bench0"}, "", 0, 0);
        writer = new CaptureRingWriter(memory, layout, 0);
        reader = new CaptureRingReader(memory);
        headOffset = layout.ringOffset(0) + CaptureRingLayout.HEAD_OFFSET;
        tailOffset = layout.ringOffset(0) + CaptureRingLayout.TAIL_OFFSET;
        burst = new FixedBurst(arena.allocate((long)BURST * BUFFER_STRIDE, 4096));
    }

    @TearDown
    public void stop()
    {
        arena.close();
    }

    /** One burst copied; the ring then freed by this thread (no other core involved). */
    @Benchmark
    @Group("alone")
    @OperationsPerInvocation(BURST)
    public long writeBurst()
    {
        writer.write(0, 0, TappingPacketPort.RX, burst, 0, BURST, timestamp++, CaptureFilter.ALL);
        memory.set(ValueLayout.JAVA_LONG, headOffset, (long)memory.get(ValueLayout.JAVA_LONG, tailOffset)); // all free again
        return writer.captured();
    }

    /** One burst offered, while {@link #drain} empties the ring on another core. */
    @Benchmark
    @Group("shared")
    @OperationsPerInvocation(BURST)
    public long writeShared()
    {
        writer.write(0, 0, TappingPacketPort.RX, burst, 0, BURST, timestamp++, CaptureFilter.ALL);
        return writer.captured();
    }

    /** The client's side of {@code shared}: touches the last byte of every frame, as a writer of them would. */
    @Benchmark
    @Group("shared")
    public long drain()
    {
        reader.poll(touch, 256);
        return touched;
    }

    /** {@link #BURST} frames of {@link #FRAME_BYTES}, {@link #BUFFER_STRIDE} apart. */
    static final class FixedBurst implements PacketBurst
    {
        private final MemorySegment buffers;

        FixedBurst(final MemorySegment buffers)
        {
            this.buffers = buffers;
            for (long i = 0; i < buffers.byteSize(); i++)
            {
                buffers.set(ValueLayout.JAVA_BYTE, i, (byte)i);
            }
        }

        public int size()
        {
            return BURST;
        }

        public int capacity()
        {
            return BURST;
        }

        public MemorySegment memory()
        {
            return buffers;
        }

        public long offset(final int index)
        {
            return (long)index * BUFFER_STRIDE;
        }

        public int length(final int index)
        {
            return FRAME_BYTES;
        }

        public void length(final int index, final int length)
        {
            throw new UnsupportedOperationException();
        }

        public int room(final int index)
        {
            return BUFFER_STRIDE;
        }

        public void close()
        {
        }
    }
}
