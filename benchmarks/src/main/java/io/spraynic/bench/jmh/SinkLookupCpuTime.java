package io.spraynic.bench.jmh;

import io.spraynic.datapath.port.DpdkPacketPort;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.port.PortFrameSinkMainCopy;
import io.spraynic.dpdk.Mempool;

import java.lang.foreign.ValueLayout;

/**
 * What a frame costs through the build's {@link PortFrameSink} (the claimed mbuf looked up once for room, offset and
 * commit) against a frozen copy of main's ({@link PortFrameSinkMainCopy}: three look-ups), alternated round by round
 * in one JVM ({@link CpuTimeRounds}: the thread's CPU time), over one DPDK {@code net_null} port whose TX frees what
 * it takes (the NIC's pool: 8191 mbufs, a 256-mbuf cache). Per frame: claim 64 B, write the frame's 8 longs, commit;
 * a flush every 32 frames. Both sinks take buffers from the same reserve path ({@code allocateOne}).
 * <pre>
 *   java --enable-native-access=ALL-UNNAMED -cp ... io.spraynic.bench.jmh.SinkLookupCpuTime [rounds] [copy-first|build-first]
 * </pre>
 */
public final class SinkLookupCpuTime
{
    private static final int BURST = 32;
    private static final int BURSTS_PER_ROUND = 100_000;
    private static final int FRAME = 64;

    private SinkLookupCpuTime()
    {
    }

    /**
     * @param args rounds (9), order (copy-first).
     */
    public static void main(final String[] args)
    {
        final int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
        final boolean buildFirst = args.length > 1 && "build-first".equals(args[1]);
        try (NullPortBed bed = new NullPortBed("spraynic-lookup"))
        {
            final DpdkPacketPort port = bed.port();
            final Mempool pool = bed.pool();
            final int inUse = pool.inUseCount();
            final PortFrameSink build = new PortFrameSink(port, BURST, 2048);
            final PortFrameSinkMainCopy copy = new PortFrameSinkMainCopy(port, BURST, 2048);
            build.onStart();
            copy.onStart();
            final CpuTimeRounds timed = new CpuTimeRounds(rounds, (long)BURSTS_PER_ROUND * BURST);
            if (buildFirst)
            {
                timed.add(() -> buildBursts(build)).add(() -> copyBursts(copy));
            }
            else
            {
                timed.add(() -> copyBursts(copy)).add(() -> buildBursts(build));
            }
            timed.run();
            final int c = buildFirst ? 1 : 0;
            final int b = buildFirst ? 0 : 1;
            build.close();
            copy.close();
            System.out.printf("CPU ns per frame through the sink (%s): main's copy %.1f best, %.1f median; " +
                "build %.1f best, %.1f median; build / copy %.3f best, %.3f median (%d rounds; sink %d)%n",
                buildFirst ? "build first" : "copy first", timed.best(c), timed.median(c), timed.best(b),
                timed.median(b), timed.best(b) / timed.best(c), timed.median(b) / timed.median(c), rounds,
                timed.sink() & 1);
            System.out.printf("frames: copy %d, build %d; mbufs in use after both sinks closed, beyond before: " +
                "%d%n", copy.transmitted(), build.transmitted(), pool.inUseCount() - inUse);
        }
    }

    private static long buildBursts(final PortFrameSink sink)
    {
        for (int b = 0; b < BURSTS_PER_ROUND; b++)
        {
            for (int i = 0; i < BURST; i++)
            {
                if (!sink.claim(0, FRAME))
                {
                    throw new IllegalStateException("no buffer");
                }
                final long offset = sink.offset();
                for (int w = 0; w < FRAME; w += Long.BYTES)
                {
                    sink.buffer().set(ValueLayout.JAVA_LONG_UNALIGNED, offset + w, i + w);
                }
                sink.commit(FRAME);
            }
            sink.flush();
        }
        return sink.transmitted();
    }

    private static long copyBursts(final PortFrameSinkMainCopy sink)
    {
        for (int b = 0; b < BURSTS_PER_ROUND; b++)
        {
            for (int i = 0; i < BURST; i++)
            {
                if (!sink.claim(0, FRAME))
                {
                    throw new IllegalStateException("no buffer");
                }
                final long offset = sink.offset();
                for (int w = 0; w < FRAME; w += Long.BYTES)
                {
                    sink.buffer().set(ValueLayout.JAVA_LONG_UNALIGNED, offset + w, i + w);
                }
                sink.commit(FRAME);
            }
            sink.flush();
        }
        return sink.transmitted();
    }
}
