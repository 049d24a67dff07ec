package io.spraynic.bench.e2e;

import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.verbs.AccessFlags;
import io.spraynic.datapath.verbs.MemoryRegion;
import io.spraynic.datapath.verbs.PostResult;
import io.spraynic.datapath.verbs.SendWorkRequest;
import io.spraynic.datapath.verbs.WorkCompletion;
import io.spraynic.datapath.verbs.WorkCompletionStatus;
import io.spraynic.datapath.verbs.WorkRequestOpcode;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.IdleStrategy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.function.LongSupplier;

/**
 * RDMA WRITE throughput through a transport over {@code net_ring}, one busy-spinning poll thread per
 * endpoint: A keeps a window of WRITEs of one size in flight into B's registered memory for a measured
 * time after a warm-up; messages completed in the window give Mpps (data packets) and Gb/s (payload). The
 * CPU time both poll threads used in the window gives packets per second per core. At the end every byte
 * of B's memory is compared with A's.
 */
public final class Throughput
{
    private static final long IN_FLIGHT_BYTES = 4L << 20;

    /**
     * What a run puts around the two endpoints' ports and their poll threads ({@code bench capture --workload}: a
     * capture tap on each port, started while the threads run); {@link #NONE} puts nothing.
     */
    public interface PortHook
    {
        PortHook NONE = new PortHook()
        {
        };

        /** @return the port endpoint {@code name} ({@link RingNic#PORT_A} or B) uses: {@code port} or a wrapper of it. */
        default PacketPort port(final String name, final PacketPort port)
        {
            return port;
        }

        /** Called on the calling thread before the poll threads start (which see what it did). */
        default void beforeStart()
        {
        }

        /** Called once the poll threads have ended, before what is left in the rings is freed. */
        default void afterStop()
        {
        }

        /** @return the idle strategy a poll thread uses: {@code strategy} or a wrapper of it (one that counts empty loops). */
        default IdleStrategy idleStrategy(final IdleStrategy strategy)
        {
            return strategy;
        }

        /** Called at the start ({@code start}) and the end of the measured window, with the poll threads' CPU time so far. */
        default void window(final boolean start, final long pollCpuNanos)
        {
        }

        /**
         * Called once every WRITE has completed, the poll threads still running with nothing to do, before they are
         * closed; {@code pollCpuNanos} reads their CPU time so far (what an empty loop costs can be measured here).
         */
        default void drained(final LongSupplier pollCpuNanos)
        {
        }
    }

    private Throughput()
    {
    }

    /** Messages in flight for a message size: about 4 MiB, 8 to 512 messages. */
    static int outstanding(final int messageBytes)
    {
        return (int)Math.max(8, Math.min(512, IN_FLIGHT_BYTES / messageBytes));
    }

    /** The largest message a run sends. */
    public static final int MAX_MESSAGE_BYTES = 64 << 20;

    /**
     * @param threads 2: one poll thread per endpoint; 1: both endpoints' agents on one thread (the software's
     *                cost per core, whatever the machine's other load does to the scheduling of two threads).
     */
    public static ThroughputResult run(
        final DpdkNic nic, final TransportPair.Kind kind, final int messageBytes, final double warmupSeconds,
        final double seconds, final int threads, final Idle idle)
    {
        return run(nic, kind, TransportPair.MTU, messageBytes, warmupSeconds, seconds, threads, idle);
    }

    /**
     * @param mtu     the path MTU both transports cut messages into: 256..4096, a power of two.
     * @param threads 2: one poll thread per endpoint; 1: both endpoints' agents on one thread.
     */
    public static ThroughputResult run(
        final DpdkNic nic, final TransportPair.Kind kind, final int mtu, final int messageBytes, final double warmupSeconds,
        final double seconds, final int threads, final Idle idle)
    {
        return run(nic, kind, mtu, messageBytes, warmupSeconds, seconds, threads, idle, PortHook.NONE);
    }

    /** @param hook what is put around the ports and the poll threads. */
    public static ThroughputResult run(
        final DpdkNic nic, final TransportPair.Kind kind, final int mtu, final int messageBytes, final double warmupSeconds,
        final double seconds, final int threads, final Idle idle, final PortHook hook)
    {
        if (threads != 1 && threads != 2)
        {
            throw new IllegalArgumentException("threads must be 1 or 2: " + threads);
        }
        if (messageBytes < 1 || messageBytes > MAX_MESSAGE_BYTES)
        {
            throw new IllegalArgumentException("message size must be 1 B..64 MiB: " + messageBytes);
        }
        final int outstanding = outstanding(messageBytes);
        final TransportPair pair = TransportPair.create(kind, hook.port(RingNic.PORT_A, nic.packetPort(RingNic.PORT_A, 0)),
            hook.port(RingNic.PORT_B, nic.packetPort(RingNic.PORT_B, 0)), mtu);
        try (Arena arena = Arena.ofShared())
        {
            final long span = (long)messageBytes * outstanding;
            final MemorySegment src = arena.allocate(span, 64);
            final SplittableRandom random = new SplittableRandom(messageBytes);
            for (long i = 0; i + 8 <= span; i += 8)
            {
                src.set(ValueLayout.JAVA_LONG_UNALIGNED, i, random.nextLong());
            }
            final MemoryRegion source = pair.a().pd().register(src, AccessFlags.NONE);
            final MemoryRegion target = pair.b().pd().register(arena.allocate(span, 64),
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            final Writer writer = new Writer(pair.a(), source, target, messageBytes, outstanding);
            final AgentRunner runnerA = new AgentRunner(hook.idleStrategy(idle.newStrategy()), Throwable::printStackTrace, null,
                threads == 2 ? new CompositeAgent(pair.a().agent(), writer) :
                new CompositeAgent(pair.a().agent(), writer, pair.b().agent()));
            final AgentRunner runnerB = threads == 2 ?
                new AgentRunner(hook.idleStrategy(idle.newStrategy()), Throwable::printStackTrace, null, pair.b().agent()) : null;
            hook.beforeStart();
            final Thread threadB = null == runnerB ? null : AgentRunner.startOnThread(runnerB);
            final Thread threadA = AgentRunner.startOnThread(runnerA);

            PingPong.sleep((long)(warmupSeconds * 1000));
            final long startNanos = System.nanoTime();
            final long startMessages = writer.completed;
            final long startCpu = cpuNanos(threadA) + cpuNanos(threadB);
            hook.window(true, startCpu);
            PingPong.sleep((long)(seconds * 1000));
            final long endMessages = writer.completed;
            final long endNanos = System.nanoTime();
            final long endCpu = cpuNanos(threadA) + cpuNanos(threadB);
            hook.window(false, endCpu);

            writer.stopping = true;
            final long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!writer.drained && System.nanoTime() < deadline)
            {
                PingPong.sleep(5);
            }
            if (writer.drained)
            {
                hook.drained(() -> cpuNanos(threadA) + cpuNanos(threadB));
            }
            runnerA.close();
            if (null != runnerB)
            {
                runnerB.close();
            }
            hook.afterStop();
            nic.eal().registerCurrentThread();
            RingNic.drain(nic);
            if (!writer.drained)
            {
                throw new IllegalStateException(kind.text() + " " + messageBytes + " B: writes still outstanding after 30 s");
            }
            final boolean verified = writer.failures == 0 && writer.posted >= outstanding &&
                source.segment().mismatch(target.segment()) == -1;
            if (Boolean.getBoolean("spraynic.bench.describe"))
            {
                System.err.println("A: " + pair.a().describe());
                System.err.println("B: " + pair.b().describe());
            }
            final long messages = endMessages - startMessages;
            final long packetsPerMessage = Math.max(1, (messageBytes + mtu - 1) / mtu);
            return new ThroughputResult(kind.text() + (threads == 1 ? "-1t" : ""), mtu, messageBytes, messages, messages * packetsPerMessage,
                messages * messageBytes, endNanos - startNanos, endCpu - startCpu, verified,
                pair.a().retransmitted());
        }
    }

    static long cpuNanos(final Thread thread)
    {
        return null == thread ? 0 : ManagementFactory.getThreadMXBean().getThreadCpuTime(thread.threadId());
    }

    /** A's workload: keeps {@code outstanding} WRITEs in flight, slot i at offset i * size. */
    static final class Writer implements Agent
    {
        final TransportPair.Endpoint endpoint;
        final MemoryRegion source;
        final MemoryRegion target;
        final int size;
        final int outstanding;
        final SendWorkRequest request = new SendWorkRequest();
        final WorkCompletion wc = new WorkCompletion();
        long posted;
        long finished;
        volatile long completed;
        volatile long failures;
        volatile boolean stopping;
        volatile boolean drained;

        Writer(final TransportPair.Endpoint endpoint, final MemoryRegion source, final MemoryRegion target,
            final int size, final int outstanding)
        {
            this.endpoint = endpoint;
            this.source = source;
            this.target = target;
            this.size = size;
            this.outstanding = outstanding;
        }

        public int doWork()
        {
            int work = 0;
            while (!stopping && posted - finished < outstanding)
            {
                final long offset = (posted % outstanding) * size;
                request.reset().wrId(posted).opcode(WorkRequestOpcode.RDMA_WRITE)
                    .local(source, source.address() + offset, size)
                    .remote(target.address() + offset, target.rkey()).signaled(true);
                if (endpoint.postSend(request) != PostResult.OK)
                {
                    break;
                }
                posted++;
                work++;
            }
            long succeeded = completed;
            while (endpoint.cq().poll(wc))
            {
                if (wc.status() == WorkCompletionStatus.SUCCESS)
                {
                    succeeded++;
                }
                else
                {
                    failures++;
                }
                finished++;
                work++;
            }
            completed = succeeded; // only successful WRITEs count towards throughput
            if (stopping && finished == posted)
            {
                drained = true;
            }
            return work;
        }

        public String roleName()
        {
            return "writer";
        }
    }
}
