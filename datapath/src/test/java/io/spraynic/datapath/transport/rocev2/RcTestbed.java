package io.spraynic.datapath.transport.rocev2;

import io.spraynic.datapath.nic.NicWorker;
import io.spraynic.datapath.port.PortFrameSink;

import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.CompletionQueue;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.wire.ParseCounters;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;

/**
 * Two RC endpoints, A and B, over two packet ports, each driven by a NIC worker (the loop an embedded NIC runs),
 * stepped in one thread in virtual time: each {@link #step()} runs both workers once and advances the clock by {@link #STEP_NANOS}. Deterministic
 * whatever the machine's load, as long as the ports are.
 */
final class RcTestbed implements AutoCloseable
{
    static final long STEP_NANOS = 1_000;
    static final long MAC_A = 0x02_53_50_00_00_0AL;
    static final long MAC_B = 0x02_53_50_00_00_0BL;
    static final int IP_A = 0x0A_00_00_01;
    static final int IP_B = 0x0A_00_00_02;

    final Arena arena = Arena.ofShared();
    final PacketPort portA;
    final PacketPort portB;
    final ProtectionDomain pdA = new ProtectionDomain(new SplittableRandom(1));
    final ProtectionDomain pdB = new ProtectionDomain(new SplittableRandom(2));
    final ParseCounters parseA = new ParseCounters();
    final ParseCounters parseB = new ParseCounters();
    final PortFrameSink sinkA;
    final PortFrameSink sinkB;
    final RcEngine engineA;
    final RcEngine engineB;
    final NicWorker workerA;
    final NicWorker workerB;
    final CompletionQueue cqA = new CompletionQueue(4096);
    final CompletionQueue cqB = new CompletionQueue(4096);
    final WorkCompletion wc = new WorkCompletion();
    RcQueuePair qpA;
    RcQueuePair qpB;
    long now = 1_000_000;

    RcTestbed(final PacketPort portA, final PacketPort portB, final UnaryOperator<RcEngineConfig> tweak)
    {
        this(portA, portB, PathMtu.maxFrameLength(PathMtu.MTU_4096), tweak);
    }

    RcTestbed(
        final PacketPort portA, final PacketPort portB, final int maxFrameLength, final UnaryOperator<RcEngineConfig> tweak)
    {
        this.portA = portA;
        this.portB = portB;
        sinkA = new PortFrameSink(portA, 32, maxFrameLength);
        sinkB = new PortFrameSink(portB, 32, maxFrameLength);
        engineA = new RcEngine(tweak.apply(RcEngineConfig.defaults(MAC_A, IP_A)), pdA, sinkA);
        engineB = new RcEngine(tweak.apply(RcEngineConfig.defaults(MAC_B, IP_B)), pdB, sinkB);
        workerA = NicWorker.builder().roleName("a").ports(portA).rocev2(engineA, sinkA).parseCounters(parseA)
            .protectionDomain(pdA).clock(() -> now).burst(32).build();
        workerB = NicWorker.builder().roleName("b").ports(portB).rocev2(engineB, sinkB).parseCounters(parseB)
            .protectionDomain(pdB).clock(() -> now).burst(32).build();
    }

    /**
     * Creates one QP on each side and brings both to RTS.
     */
    void connect(final int mtu, final int psnA, final int psnB, final UnaryOperator<RcConnectionAttributes> tweak)
    {
        qpA = engineA.createQueuePair(cqA, cqA, 256, 256);
        qpB = engineB.createQueuePair(cqB, cqB, 256, 256);
        final int access = AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ;
        qpA.toInit(access);
        qpB.toInit(access);
        qpA.toRtr(tweak.apply(RcConnectionAttributes.of(qpB.qpNumber(), MAC_B, IP_B, 0xC001, mtu, psnA, psnB)));
        qpB.toRtr(tweak.apply(RcConnectionAttributes.of(qpA.qpNumber(), MAC_A, IP_A, 0xC002, mtu, psnB, psnA)));
        qpA.toRts();
        qpB.toRts();
    }

    void connect(final int mtu)
    {
        connect(mtu, 100, 5000, a -> a);
    }

    int step()
    {
        final int work = workerA.doWork() + workerB.doWork();
        now += STEP_NANOS;
        return work;
    }

    /**
     * Steps until {@code cq} has a completion, then polls it into {@link #wc}.
     */
    WorkCompletion await(final CompletionQueue cq, final long maxSteps)
    {
        for (long i = 0; i < maxSteps; i++)
        {
            if (cq.poll(wc))
            {
                return wc;
            }
            step();
        }
        if (cq.poll(wc))
        {
            return wc;
        }
        throw new AssertionError("no completion after " + maxSteps + " steps; A " + qpA + " " + engineA.counters() +
            "; B " + qpB + " " + engineB.counters());
    }

    void steps(final long count)
    {
        for (long i = 0; i < count; i++)
        {
            step();
        }
    }

    MemoryRegion register(final ProtectionDomain pd, final long size, final int access)
    {
        return pd.register(arena.allocate(Math.max(size, 1), 64), access);
    }

    static void fill(final MemorySegment segment, final long seed)
    {
        final SplittableRandom random = new SplittableRandom(seed);
        final long size = segment.byteSize();
        long i = 0;
        for (; i + 8 <= size; i += 8)
        {
            segment.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
        }
        for (; i < size; i++)
        {
            segment.set(ValueLayout.JAVA_BYTE, i, (byte)random.nextInt());
        }
    }

    public void close()
    {
        workerA.onClose();
        workerB.onClose();
        arena.close();
    }
}
