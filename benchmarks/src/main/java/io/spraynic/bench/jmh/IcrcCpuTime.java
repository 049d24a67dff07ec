package io.spraynic.bench.jmh;

import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.IcrcMainCopy;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The ICRC of the build on the class path ({@link Icrc#compute}) against {@link IcrcMainCopy} (main's before issue
 * 13's section 63: four reads and seven complemented look-ups for the masked bytes), alternated round by round in one
 * JVM ({@link CpuTimeRounds}) over {@link WireCpuTime}'s frames (32 IPv4 RDMA WRITE Only frames, global-scope memory
 * as DPDK's). It checks first that both agree with the ICRC each frame carries. The copy's loop runs first in each
 * round unless told {@code build-first}.
 * <pre>
 *   java -cp ... io.spraynic.bench.jmh.IcrcCpuTime [payload [rounds [copy-first|build-first]]]
 * </pre>
 */
public final class IcrcCpuTime
{
    private static final int BURSTS_PER_ROUND = 100_000;

    private IcrcCpuTime()
    {
    }

    /**
     * @param args payload bytes (64), rounds (9), which loop runs first in each round (copy-first).
     */
    public static void main(final String[] args)
    {
        final int payload = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        final int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 9;
        final boolean buildFirst = args.length > 2 && "build-first".equals(args[2]);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment frames = WireCpuTime.burstMemory(arena, "global");
            final int[] lengths = WireCpuTime.writeBurst(frames, payload);
            final long[] ip = new long[WireBenchmark.BURST];
            final long[] icrcAt = new long[WireBenchmark.BURST];
            final RoceFrame frame = new RoceFrame();
            final RoceParser parser = new RoceParser(new ParseCounters());
            final Icrc icrc = new Icrc();
            final IcrcMainCopy copy = new IcrcMainCopy();
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                parser.parse(frames, (long)i * WireBenchmark.SLOT, lengths[i], frame);
                if (!frame.isRoce() || frame.ipVersion() != 4 || frame.ipHeaderLength() != 20)
                {
                    throw new IllegalStateException("frame " + i + " is not an IPv4 RoCEv2 frame: " + frame);
                }
                ip[i] = frame.ipOffset();
                icrcAt[i] = frame.icrcOffset();
            }
            // warm both past CrcShift's per-length build, then check them against the frames' own ICRCs
            for (int k = 0; k < 4; k++)
            {
                buildBursts(icrc, frames, ip, icrcAt);
                copyBursts(copy, frames, ip, icrcAt);
            }
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                final int carried = Icrc.read(frames, icrcAt[i]);
                final int built = icrc.compute(frames, ip[i], 4, 20, icrcAt[i]);
                final int copied = copy.compute(frames, ip[i], 4, 20, icrcAt[i]);
                if (built != carried || copied != carried)
                {
                    throw new IllegalStateException("frame " + i + ": carried " + carried + ", build " + built +
                        ", main's copy " + copied);
                }
            }
            final long perRound = (long)BURSTS_PER_ROUND * WireBenchmark.BURST;
            final CpuTimeRounds timed = new CpuTimeRounds(rounds, perRound);
            if (buildFirst)
            {
                timed.add(() -> buildBursts(icrc, frames, ip, icrcAt)).add(() -> copyBursts(copy, frames, ip, icrcAt));
            }
            else
            {
                timed.add(() -> copyBursts(copy, frames, ip, icrcAt)).add(() -> buildBursts(icrc, frames, ip, icrcAt));
            }
            timed.run();
            final int c = buildFirst ? 1 : 0;
            final int b = buildFirst ? 0 : 1;
            System.out.printf("payload %d B, %s, ns CPU per ICRC best / median: main's copy %.1f / %.1f, build %.1f / " +
                "%.1f (build / copy %.3f best, %.3f median; %d rounds; sink %d)%n", payload,
                buildFirst ? "build first" : "copy first", timed.best(c), timed.median(c), timed.best(b),
                timed.median(b), timed.best(b) / timed.best(c), timed.median(b) / timed.median(c), rounds,
                timed.sink() & 1);
        }
    }

    private static long buildBursts(final Icrc icrc, final MemorySegment frames, final long[] ip, final long[] icrcAt)
    {
        long sum = 0;
        for (int burst = 0; burst < BURSTS_PER_ROUND; burst++)
        {
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                sum += icrc.compute(frames, ip[i], 4, 20, icrcAt[i]);
            }
        }
        return sum;
    }

    private static long copyBursts(final IcrcMainCopy icrc, final MemorySegment frames, final long[] ip,
        final long[] icrcAt)
    {
        long sum = 0;
        for (int burst = 0; burst < BURSTS_PER_ROUND; burst++)
        {
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                sum += icrc.compute(frames, ip[i], 4, 20, icrcAt[i]);
            }
        }
        return sum;
    }
}
