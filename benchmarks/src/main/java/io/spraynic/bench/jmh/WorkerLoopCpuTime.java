package io.spraynic.bench.jmh;

import io.spraynic.datapath.nic.NicWorker;
import io.spraynic.datapath.port.InMemoryLink;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.transport.rocev2.PathMtu;
import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.transport.rocev2.RcEngineConfig;
import io.spraynic.datapath.verbs.ProtectionDomain;

/**
 * What one loop of a {@link NicWorker} costs when it carries nothing (a RoCEv2 engine without queue pairs over an
 * in-memory port, the system's clock): the loop's fixed part, which its clock reads are a large share of (issue 13,
 * benchmarks/RESULTS.md sections 56 and 63), with {@code System.nanoTime()} alone timed beside it in the same rounds
 * as the yardstick. Uses the builder's public API only, so one class runs against any build's jars, alternated
 * (before and after a change of the loop): {@link CpuTimeRounds}, the thread's CPU time.
 * <pre>
 *   java --enable-native-access=ALL-UNNAMED -cp '&lt;this class&gt;:&lt;build&gt;/lib/*' io.spraynic.bench.jmh.WorkerLoopCpuTime [rounds]
 * </pre>
 */
public final class WorkerLoopCpuTime
{
    private static final int LOOPS_PER_ROUND = 2_000_000;

    private WorkerLoopCpuTime()
    {
    }

    /**
     * @param args rounds (9).
     */
    public static void main(final String[] args)
    {
        final int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
        try (InMemoryLink link = new InMemoryLink("loop", 256, InMemoryLink.HEADROOM + PathMtu.maxFrameLength(
            PathMtu.MTU_4096) + 64))
        {
            final PortFrameSink sink = new PortFrameSink(link.first(), 32, PathMtu.maxFrameLength(PathMtu.MTU_4096));
            final ProtectionDomain pd = new ProtectionDomain();
            final RcEngine engine = new RcEngine(RcEngineConfig.defaults(0x02_00_00_00_00_01L, 0x0A000001), pd, sink);
            final NicWorker worker = NicWorker.builder().ports(link.first()).rocev2(engine, sink).protectionDomain(pd)
                .build();
            worker.onStart();
            final CpuTimeRounds timed = new CpuTimeRounds(rounds, LOOPS_PER_ROUND)
                .add(() -> loops(worker))
                .add(WorkerLoopCpuTime::clockReads)
                .run();
            worker.onClose();
            System.out.printf("CPU ns per idle worker loop %.1f best, %.1f median; per System.nanoTime() %.1f best, " +
                "%.1f median (%d rounds; sink %d)%n", timed.best(0), timed.median(0), timed.best(1), timed.median(1),
                rounds, timed.sink() & 1);
        }
    }

    private static long loops(final NicWorker worker)
    {
        long work = 0;
        for (int i = 0; i < LOOPS_PER_ROUND; i++)
        {
            work += worker.doWork();
        }
        return work;
    }

    private static long clockReads()
    {
        long sum = 0;
        for (int i = 0; i < LOOPS_PER_ROUND; i++)
        {
            sum += System.nanoTime();
        }
        return sum;
    }
}
