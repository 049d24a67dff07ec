package io.spraynic.bench.jmh;

import io.spraynic.datapath.wire.OpcodeTable;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameMainCopy;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.RoceParserMainCopy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The parser of the build on the class path against {@link RoceParserMainCopy} (main's parser before issue 13's
 * header-walk change, RESULTS section 57), with and without the ICRC, alternated round by round in one JVM
 * ({@link CpuTimeRounds}) over {@link WireCpuTime}'s frames: 32 IPv4 RDMA WRITE Only frames. The copy is the
 * yardstick: the ratio new ÷ copy within one JVM is what a change to the parser gained, free of the drift between
 * JVMs that a loaded host puts into before/after pairs (section 50a). Each run also checks that both parsers agree
 * on every frame. Each round runs the copy's loop before the build's unless told {@code build-first}: running both orders
 * shows what the order itself is worth.
 * <pre>
 *   java -cp ... io.spraynic.bench.jmh.RoceParseCpuTime [payload [rounds [confined|global|shared [copy-first|build-first]]]]
 * </pre>
 */
public final class RoceParseCpuTime
{
    private static final int BURSTS_PER_ROUND = 100_000;

    private RoceParseCpuTime()
    {
    }

    /**
     * @param args payload bytes (64), rounds (9), the frames' memory scope (global, as DPDK's packet memory), which
     *             parser's loops run first in each round (copy-first).
     */
    public static void main(final String[] args)
    {
        final int payload = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        final int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 9;
        final String scope = args.length > 2 ? args[2] : "global";
        final boolean buildFirst = args.length > 3 && "build-first".equals(args[3]);
        try (Arena arena = "shared".equals(scope) ? Arena.ofShared() : Arena.ofConfined())
        {
            final MemorySegment frames = WireCpuTime.burstMemory(arena, scope); // the same frames as WireCpuTime's
            final int[] lengths = WireCpuTime.writeBurst(frames, payload);
            final RoceParser parser = new RoceParser(new ParseCounters());
            final RoceParser parserWithoutIcrc = new RoceParser(OpcodeTable.ROCE_V2, new ParseCounters(), false);
            final RoceParserMainCopy copy = new RoceParserMainCopy(new ParseCounters());
            final RoceParserMainCopy copyWithoutIcrc =
                new RoceParserMainCopy(OpcodeTable.ROCE_V2, new ParseCounters(), false);
            final RoceFrame frame = new RoceFrame();
            final RoceFrameMainCopy copyFrame = new RoceFrameMainCopy();
            checkAgree(parser, copy, frames, lengths, frame, copyFrame);
            final long perRound = (long)BURSTS_PER_ROUND * WireBenchmark.BURST;
            final CpuTimeRounds.Loop[] loops = {
                () -> copyBursts(copy, frames, lengths, copyFrame),
                () -> buildBursts(parser, frames, lengths, frame),
                () -> copyBursts(copyWithoutIcrc, frames, lengths, copyFrame),
                () -> buildBursts(parserWithoutIcrc, frames, lengths, frame)};
            // loop k of the printout is timed as loop order[k]
            final int[] order = buildFirst ? new int[]{1, 0, 3, 2} : new int[]{0, 1, 2, 3};
            final CpuTimeRounds rounded = new CpuTimeRounds(rounds, perRound);
            for (int k = 0; k < loops.length; k++)
            {
                rounded.add(loops[order[k]]);
            }
            final CpuTimeRounds timed = rounded.run();
            if (timed.sink() != 0 && timed.sink() % perRound != 0)
            {
                throw new IllegalStateException("a frame did not parse as RoCE: " + timed.sink());
            }
            final double[] best = new double[loops.length];
            final double[] median = new double[loops.length];
            for (int k = 0; k < loops.length; k++)
            {
                best[order[k]] = timed.best(k);
                median[order[k]] = timed.median(k);
            }
            System.out.printf("payload %d B, %s memory, %s, ns CPU/packet best / median: parse + ICRC main copy %.1f / %.1f, " +
                "build %.1f / %.1f (build ÷ copy %.2f best, %.2f median); parse without ICRC main copy %.1f / %.1f, " +
                "build %.1f / %.1f (build ÷ copy %.2f best, %.2f median) (%d rounds)%n", payload, scope,
                buildFirst ? "build first" : "copy first", best[0], median[0], best[1], median[1], best[1] / best[0],
                median[1] / median[0], best[2], median[2], best[3], median[3], best[3] / best[2], median[3] / median[2],
                rounds);
        }
    }

    /** Both parsers see every frame alike: class and every field the receive path reads. */
    private static void checkAgree(final RoceParser parser, final RoceParserMainCopy copy, final MemorySegment frames,
        final int[] lengths, final RoceFrame frame, final RoceFrameMainCopy copyFrame)
    {
        for (int i = 0; i < WireBenchmark.BURST; i++)
        {
            parser.parse(frames, (long)i * WireBenchmark.SLOT, lengths[i], frame);
            copy.parse(frames, (long)i * WireBenchmark.SLOT, lengths[i], copyFrame);
            if (!frame.isRoce() || !frame.toString().equals(copyFrame.toString()) || frame.psn() != copyFrame.psn() ||
                frame.rethVirtualAddress() != copyFrame.rethVirtualAddress() ||
                frame.payloadOffset() != copyFrame.payloadOffset() || frame.ttl() != copyFrame.ttl())
            {
                throw new IllegalStateException("the parsers disagree on frame " + i + ": " + frame + " against " +
                    copyFrame);
            }
        }
    }

    private static long buildBursts(final RoceParser parser, final MemorySegment frames, final int[] lengths,
        final RoceFrame frame)
    {
        long valid = 0;
        for (int burst = 0; burst < BURSTS_PER_ROUND; burst++)
        {
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                parser.parse(frames, (long)i * WireBenchmark.SLOT, lengths[i], frame);
                valid += frame.isRoce() ? 1 : 0;
            }
        }
        return valid;
    }

    private static long copyBursts(final RoceParserMainCopy parser, final MemorySegment frames, final int[] lengths,
        final RoceFrameMainCopy frame)
    {
        long valid = 0;
        for (int burst = 0; burst < BURSTS_PER_ROUND; burst++)
        {
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                parser.parse(frames, (long)i * WireBenchmark.SLOT, lengths[i], frame);
                valid += frame.isRoce() ? 1 : 0;
            }
        }
        return valid;
    }
}
