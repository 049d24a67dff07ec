package io.spraynic.bench.jmh;

import io.spraynic.datapath.wire.SprayExtendedTransportHeader;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The spray receiver's read of a data packet's SETH fields (issue 13, RESULTS section 71): main's six field reads
 * ({@code DataReceiver.onDataPacket} at 9bf48e05, copied below: path, stream, MSN, message offset and length, then the
 * attempt) against the build's two wide reads ({@link SprayExtendedTransportHeader#firstWord},
 * {@link SprayExtendedTransportHeader#secondWord} and the {@code ...Of} extractors), alternated round by round in one
 * JVM ({@link CpuTimeRounds}). Each loop reads the SETHs of a burst of 32 frames in global-scope memory (as DPDK's
 * packet memory) and applies the receiver's S4.3 checks to them, so that every field is used; both first agree on
 * every frame. The copy's loop runs first in each round unless told {@code build-first}.
 * <pre>
 *   java -cp ... io.spraynic.bench.jmh.SethReadCpuTime [rounds [copy-first|build-first]]
 * </pre>
 */
public final class SethReadCpuTime
{
    private static final int BURSTS_PER_ROUND = 200_000;
    /** Where a SETH lies in a frame: Ethernet 14 + IPv4 20 + UDP 8 + BTH 12. */
    private static final long SETH_AT = 54;
    private static final int PATHS = 8;
    private static final int STREAMS = 4;
    private static final int MTU = 4096;

    private SethReadCpuTime()
    {
    }

    /**
     * @param args rounds (9), which loop runs first in each round (copy-first).
     */
    public static void main(final String[] args)
    {
        final int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 9;
        final boolean buildFirst = args.length > 1 && "build-first".equals(args[1]);
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment frames = WireCpuTime.burstMemory(arena, "global");
            final long[] seth = new long[WireBenchmark.BURST];
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                seth[i] = (long)i * WireBenchmark.SLOT + SETH_AT;
                // one-packet 64 B messages over the paths and streams, as the throughput bench sends them
                SprayExtendedTransportHeader.write(frames, seth[i], i % PATHS, SprayExtendedTransportHeader.FLAG_LAST |
                    SprayExtendedTransportHeader.attemptFlags(i % 3), i % STREAMS, 1000 + i, 0, 64, i, 0x5EEDL * i);
            }
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                final long one = copyOne(frames, seth[i], 64);
                final long two = buildOne(frames, seth[i], 64);
                if (one != two || one < 0)
                {
                    throw new IllegalStateException("frame " + i + ": main's copy " + one + ", build " + two);
                }
            }
            final long perRound = (long)BURSTS_PER_ROUND * WireBenchmark.BURST;
            final CpuTimeRounds timed = new CpuTimeRounds(rounds, perRound);
            if (buildFirst)
            {
                timed.add(() -> buildBursts(frames, seth)).add(() -> copyBursts(frames, seth));
            }
            else
            {
                timed.add(() -> copyBursts(frames, seth)).add(() -> buildBursts(frames, seth));
            }
            timed.run();
            final int c = buildFirst ? 1 : 0;
            final int b = buildFirst ? 0 : 1;
            System.out.printf("%s, ns CPU per SETH read and checked, best / median: main's copy %.2f / %.2f, build " +
                "%.2f / %.2f (build / copy %.3f best, %.3f median; %d rounds; sink %d)%n",
                buildFirst ? "build first" : "copy first", timed.best(c), timed.median(c), timed.best(b),
                timed.median(b), timed.best(b) / timed.best(c), timed.median(b) / timed.median(c), rounds,
                timed.sink() & 1);
        }
    }

    private static long copyBursts(final MemorySegment frames, final long[] seth)
    {
        long sum = 0;
        for (int burst = 0; burst < BURSTS_PER_ROUND; burst++)
        {
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                sum += copyOne(frames, seth[i], 64);
            }
        }
        return sum;
    }

    private static long buildBursts(final MemorySegment frames, final long[] seth)
    {
        long sum = 0;
        for (int burst = 0; burst < BURSTS_PER_ROUND; burst++)
        {
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                sum += buildOne(frames, seth[i], 64);
            }
        }
        return sum;
    }

    // main's reads, verbatim from DataReceiver.onDataPacket at 9bf48e05, and its S4.3 check; -1: malformed
    private static long copyOne(final MemorySegment buffer, final long seth, final int payloadLength)
    {
        final int path = SprayExtendedTransportHeader.path(buffer, seth);
        final int streamId = SprayExtendedTransportHeader.stream(buffer, seth);
        final int msn = SprayExtendedTransportHeader.msn(buffer, seth);
        final int offset = SprayExtendedTransportHeader.messageOffset(buffer, seth);
        final int messageLength = SprayExtendedTransportHeader.messageLength(buffer, seth);
        if (malformed(path, streamId, offset, messageLength, payloadLength))
        {
            return -1;
        }
        return fold(path, streamId, msn, offset, SprayExtendedTransportHeader.attempt(buffer, seth));
    }

    // the build's reads, as DataReceiver.onDataPacket makes them now
    private static long buildOne(final MemorySegment buffer, final long seth, final int payloadLength)
    {
        final long first = SprayExtendedTransportHeader.firstWord(buffer, seth);
        final long second = SprayExtendedTransportHeader.secondWord(buffer, seth);
        final int path = SprayExtendedTransportHeader.pathOf(first);
        final int streamId = SprayExtendedTransportHeader.streamOf(first);
        final int msn = SprayExtendedTransportHeader.msnOf(first);
        final int offset = SprayExtendedTransportHeader.messageOffsetOf(second);
        final int messageLength = SprayExtendedTransportHeader.messageLengthOf(second);
        if (malformed(path, streamId, offset, messageLength, payloadLength))
        {
            return -1;
        }
        return fold(path, streamId, msn, offset, SprayExtendedTransportHeader.attemptOf(first));
    }

    private static boolean malformed(final int path, final int streamId, final int offset, final int messageLength,
        final int payloadLength)
    {
        return path >= PATHS || streamId >= STREAMS || messageLength < 0 || offset < 0 || (offset & (MTU - 1)) != 0 ||
            payloadLength > MTU || (long)offset + payloadLength > messageLength ||
            (payloadLength < MTU && offset + payloadLength != messageLength);
    }

    private static long fold(final int path, final int streamId, final int msn, final int offset, final int attempt)
    {
        return ((long)msn << 16) + (path << 8) + (streamId << 4) + attempt + offset;
    }
}
