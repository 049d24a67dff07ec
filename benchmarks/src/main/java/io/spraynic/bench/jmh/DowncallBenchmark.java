package io.spraynic.bench.jmh;

import io.spraynic.dpdk.NativeLibrary;
import io.spraynic.dpdk.Shim;
import io.spraynic.dpdk.generated.Dpdk;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The cost of one downcall into the shim: the jextract binding (an ordinary downcall, with the
 * thread-state transition) against {@link Shim}'s handle bound with
 * {@code Linker.Option.critical(false)}. The callee returns its argument and does nothing else.
 * <pre>
 *   ./spraynic jmh DowncallBenchmark -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
@State(Scope.Thread)
public class DowncallBenchmark
{
    int value;

    @Setup
    public void loadShim()
    {
        NativeLibrary.load();
    }

    @Benchmark
    public int jextractBinding()
    {
        return Dpdk.spraynic_noop(value++);
    }

    @Benchmark
    public int criticalHandle()
    {
        return Shim.noop(value++);
    }

    @Benchmark
    public int javaBaseline()
    {
        return value++;
    }
}
