package io.spraynic.bench.jmh;

import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.dpdk.Mbuf;
import io.spraynic.dpdk.MbufBurst;
import io.spraynic.dpdk.PacketMemory;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.HostHugepages;
import io.spraynic.pmd.HugepageChoice;
import io.spraynic.pmd.HugepageMode;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The mbuf flyweight and the burst path on real DPDK ({@code net_null}, 64 B frames), per packet:
 * <ul>
 *   <li>{@code flyweightReadHeaders}: locate each packet's data through the {@link Mbuf} flyweight
 *       and read its EtherType: the zero-copy view itself.</li>
 *   <li>{@code receiveReadRelease}: a whole RX burst through the port layer and the shim, each
 *       packet's length and EtherType read, then freed.</li>
 * </ul>
 * Both must show 0 B/op under {@code -prof gc}. {@code -p hugepages=on,off} compares the pool on 2 MiB
 * hugepages with the packed {@code --no-huge} one, a fork each (EAL starts once per JVM).
 * <pre>
 *   ./spraynic jmh MbufFlyweightBenchmark -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
@State(Scope.Thread)
public class MbufFlyweightBenchmark
{
    static final int BURST = 32;
    private static final ValueLayout.OfShort SHORT_BE = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.BIG_ENDIAN);

    /** EAL's memory: off ({@code --no-huge}), on (2 MiB hugepages, or fail), auto. */
    @Param({"off"})
    public String hugepages;

    private DpdkNic nic;
    private PacketPort port;
    private PacketBurst rxBurst;
    private MbufBurst held;
    private Mbuf mbuf;
    private MemorySegment memory;

    @Setup
    public void start()
    {
        final NicConfig config = NicConfig.of(
            EalConfig.DEFAULT.withFilePrefix("spraynic-jmh-" + ProcessHandle.current().pid()).withLogLevels(List.of("lib.eal:error")),
            MempoolConfig.DEFAULT,
            List.of(PortConfig.vdev("null", "net_null0", "size=64,copy=0")));
        nic = DpdkNic.start(HugepageChoice.choose(config, HugepageMode.parse(hugepages), HostHugepages.probe()).config());
        port = nic.packetPort("null", 0);
        port.onPollerStart();
        rxBurst = port.newBurst(BURST);
        held = new MbufBurst(BURST, PacketMemory.current());
        if (!held.allocate(nic.pool(), BURST))
        {
            throw new IllegalStateException("no mbufs");
        }
        held.dataLengthAll(64);
        mbuf = new Mbuf(PacketMemory.current());
        memory = mbuf.memory();
    }

    @TearDown
    public void stop()
    {
        held.close();
        rxBurst.close();
        port.onPollerClose();
        nic.close();
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int flyweightReadHeaders()
    {
        int sum = 0;
        for (int i = 0; i < BURST; i++)
        {
            mbuf.wrap(held.mbufAddress(i));
            sum += mbuf.dataLength() + memory.get(SHORT_BE, mbuf.dataOffset() + 12);
        }
        return sum;
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int receiveReadRelease()
    {
        final PacketBurst burst = rxBurst;
        final int received = port.receive(burst);
        int sum = received;
        final MemorySegment data = burst.memory();
        for (int i = 0; i < received; i++)
        {
            sum += burst.length(i) + data.get(SHORT_BE, burst.offset(i) + 12);
        }
        port.release(burst);
        return sum;
    }
}
