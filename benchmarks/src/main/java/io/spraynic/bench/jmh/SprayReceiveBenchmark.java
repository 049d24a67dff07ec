package io.spraynic.bench.jmh;

import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.verbs.AccessCheck;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.BaseTransportHeader;
import io.spraynic.datapath.wire.EthernetHeader;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.Ipv4Header;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RdmaExtendedTransportHeader;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayExtendedTransportHeader;
import io.spraynic.datapath.wire.SprayOpcodes;
import io.spraynic.datapath.wire.UdpHeader;
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
 * The spray receive path per packet of a 32-packet burst of valid one-packet RDMA WRITEs, by payload size,
 * all through the real code:
 * <ul>
 *   <li>{@code placeAccessCheckAndCopy}: the calls the connection's placement makes for a WRITE packet
 *       ({@link ProtectionDomain#checkRemoteAccess}, {@link ProtectionDomain#regionByRkey},
 *       {@link MemoryRegion#offsetOf}, then {@code MemorySegment.copy} into the region): the floor.</li>
 *   <li>{@code engineOnFrame}: already-parsed frames through {@code SprayEngine.onFrame}: connection lookup,
 *       path window, message bookkeeping, access check, placement, ACK generation, then the ACKs flushed.</li>
 *   <li>{@code rxBurst}: the whole receive side, one {@code NicWorker.doWork()} (the NIC's own poll loop): RX
 *       burst from the port, parse with ICRC check, engine, placement, ACKs, timers, TX flush.</li>
 *   <li>{@code rocev2RxBurst}: the same for the RoCEv2 RC transport ({@code NicWorker} over an RC engine, one QP,
 *       one-packet RDMA WRITE Only frames): the baseline in the same run.</li>
 * </ul>
 * The frames come from a real sender engine over an in-memory link ({@link InMemoryTransportPair}), made fresh
 * for every burst in an untimed per-invocation set-up (each burst takes microseconds, so the set-up's
 * timestamps cost under 1 %). Each must show 0 B/op under {@code -prof gc}.
 * <pre>
 *   ./spraynic jmh SprayReceiveBenchmark -prof gc
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 2) // the per-invocation set-up leaves fewer timed calls to warm the JIT with
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class SprayReceiveBenchmark
{
    static final int BURST = 32;

    /** Frames in B's port, handed to the whole agent of the transport {@link #newPair} builds. */
    @State(Scope.Thread)
    public abstract static class ReceiveAgentState
    {
        @Param({"64", "256", "1024", "4096"})
        int payload;

        InMemoryTransportPair pair;
        long invocations;
        long receivedBefore;

        abstract InMemoryTransportPair newPair(int payload);

        @Setup(Level.Trial)
        public void start()
        {
            pair = newPair(payload);
            pair.fillReceiveRing(BURST);
            pair.receiveBurst(); // the first burst runs the receive side's lazy set-up
            receivedBefore = pair.receivedPackets();
        }

        @Setup(Level.Invocation)
        public void refill()
        {
            pair.fillReceiveRing(BURST);
            invocations++;
        }

        @TearDown(Level.Trial)
        public void check()
        {
            final long received = pair.receivedPackets() - receivedBefore;
            final long anomalies = pair.receiveAnomalies();
            pair.close();
            if (received < invocations * BURST || anomalies != 0)
            {
                throw new IllegalStateException("B accepted " + received + " packets in " + invocations +
                    " bursts of " + BURST + ", anomalies " + anomalies);
            }
        }
    }

    /** Spray: frames in B's port, handed to the whole agent. */
    @State(Scope.Thread)
    public static class AgentState extends ReceiveAgentState
    {
        InMemoryTransportPair newPair(final int payload)
        {
            return new SprayInMemoryPair(payload);
        }
    }

    /** The RoCEv2 baseline: frames in B's port, handed to the whole RC agent. */
    @State(Scope.Thread)
    public static class RcAgentState extends ReceiveAgentState
    {
        InMemoryTransportPair newPair(final int payload)
        {
            return new RcInMemoryPair(payload);
        }
    }

    /** Frames received from B's port and parsed before the timed part. */
    @State(Scope.Thread)
    public static class EngineState
    {
        @Param({"64", "256", "1024", "4096"})
        int payload;

        SprayInMemoryPair pair;
        PacketBurst held;
        final RoceFrame[] frames = new RoceFrame[BURST];
        final RoceParser parser = new RoceParser(SprayOpcodes.TABLE, new ParseCounters(), true);
        long invocations;
        long receivedBefore;

        @Setup(Level.Trial)
        public void start()
        {
            pair = new SprayInMemoryPair(payload);
            held = pair.portB.newBurst(BURST);
            for (int i = 0; i < BURST; i++)
            {
                frames[i] = new RoceFrame();
            }
            receivedBefore = pair.receivedPackets();
        }

        @Setup(Level.Invocation)
        public void receiveAndParse()
        {
            pair.portB.release(held); // the previous burst: its payload was placed
            pair.engineB.onTick(pair.now()); // B's timers (delayed ACKs), untimed
            pair.outputB.flush();
            pair.fillReceiveRing(BURST);
            if (pair.portB.receive(held) != BURST)
            {
                throw new IllegalStateException("expected a burst of " + BURST);
            }
            for (int i = 0; i < BURST; i++)
            {
                if (parser.parse(held.memory(), held.offset(i), held.length(i), frames[i]) != FrameClass.ROCE ||
                    !SprayOpcodes.isData(frames[i].opcode()))
                {
                    throw new IllegalStateException("frame " + i + " is not spray data");
                }
            }
            invocations++;
        }

        @TearDown(Level.Trial)
        public void check()
        {
            pair.portB.release(held);
            held.close();
            final long received = pair.receivedPackets() - receivedBefore;
            final long anomalies = pair.receiveAnomalies();
            pair.close();
            if (received != invocations * BURST || anomalies != 0)
            {
                throw new IllegalStateException("B accepted " + received + " packets in " + invocations +
                    " bursts of " + BURST + ", anomalies " + anomalies);
            }
        }
    }

    /** A registered region and a burst's payloads, for the placement calls alone. */
    @State(Scope.Thread)
    public static class PlaceState
    {
        static final int SLOT = 8192;
        /** Where the payload starts in a frame: Ethernet, IPv4, UDP, BTH, SETH, RETH. */
        static final int PAYLOAD_OFFSET = EthernetHeader.LENGTH + Ipv4Header.LENGTH + UdpHeader.LENGTH +
            BaseTransportHeader.LENGTH + SprayExtendedTransportHeader.LENGTH + RdmaExtendedTransportHeader.LENGTH;

        @Param({"64", "256", "1024", "4096"})
        int payload;

        Arena arena;
        MemorySegment frames;
        ProtectionDomain pd;
        MemoryRegion target;
        long next;

        @Setup(Level.Trial)
        public void start()
        {
            arena = Arena.ofConfined();
            frames = arena.allocate((long)BURST * SLOT, 64);
            frames.fill((byte)0x5A);
            pd = new ProtectionDomain();
            target = pd.register(arena.allocate(InMemoryTransportPair.REGION_BYTES, 64),
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        }

        @TearDown(Level.Trial)
        public void free()
        {
            arena.close();
        }
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int rxBurst(final AgentState state)
    {
        return state.pair.receiveBurst();
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int rocev2RxBurst(final RcAgentState state)
    {
        return state.pair.receiveBurst();
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public int engineOnFrame(final EngineState state)
    {
        final long now = state.pair.now();
        for (int i = 0; i < BURST; i++)
        {
            state.pair.engineB.onFrame(state.frames[i], now);
        }
        return state.pair.outputB.flush();
    }

    @Benchmark
    @OperationsPerInvocation(BURST)
    public long placeAccessCheckAndCopy(final PlaceState state)
    {
        final ProtectionDomain pd = state.pd;
        final int rkey = state.target.rkey();
        final int payload = state.payload;
        final long span = InMemoryTransportPair.REGION_BYTES - (long)BURST * payload;
        long at = state.next;
        for (int i = 0; i < BURST; i++)
        {
            final long va = state.target.address() + at;
            if (pd.checkRemoteAccess(rkey, va, payload, AccessFlags.REMOTE_WRITE) != AccessCheck.OK)
            {
                throw new IllegalStateException("access refused");
            }
            final MemoryRegion mr = pd.regionByRkey(rkey);
            MemorySegment.copy(state.frames, (long)i * PlaceState.SLOT + PlaceState.PAYLOAD_OFFSET,
                mr.segment(), mr.offsetOf(va), payload);
            at += payload;
        }
        state.next = at > span ? 0 : at;
        return at;
    }
}
