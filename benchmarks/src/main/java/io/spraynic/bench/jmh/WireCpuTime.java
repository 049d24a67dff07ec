package io.spraynic.bench.jmh;

import io.spraynic.datapath.wire.Icrc;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.OpcodeTable;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.RoceParser;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * {@link WireBenchmark}'s parse + ICRC, ICRC-alone and header-building loops, and parse without the ICRC, timed by the thread's
 * CPU time, not the wall clock:
 * on a machine loaded by other work, where a thread waits for a core much of the time and this VM exposes no
 * hardware counters for {@code -prof perfnorm}, the CPU time a packet costs is what stays comparable between
 * runs ({@link CpuTimeRounds}). Prints the best and median of {@code rounds} rounds of 100,000 bursts of 32 frames.
 * <p>
 * The frames lie in memory of the scope given: {@code confined} (the default, as in every run recorded before section
 * 50), {@code global} (as DPDK's packet memory: a segment made from an address, the NIC's receive path over a real
 * port) or {@code shared} (as {@code InMemoryLink}'s, the simulator's and the in-memory harnesses'). Each segment
 * access checks its scope, and {@code CRC32.update(ByteBuffer)} acquires and releases it, so the scope is part of
 * what a packet costs (benchmarks/RESULTS.md, section 50a).
 * <pre>
 *   java -cp ... io.spraynic.bench.jmh.WireCpuTime [payload [rounds [confined|global|shared]]]
 * </pre>
 */
public final class WireCpuTime
{
    private static final int BURSTS_PER_ROUND = 100_000;

    private WireCpuTime()
    {
    }

    /**
     * @param args payload bytes (64), rounds (15), the frames' memory scope (confined).
     */
    public static void main(final String[] args)
    {
        final int payload = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        final int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 15;
        final String scope = args.length > 2 ? args[2] : "confined";
        try (Arena arena = "shared".equals(scope) ? Arena.ofShared() : Arena.ofConfined())
        {
            final MemorySegment frames = burstMemory(arena, scope);
            final int[] lengths = writeBurst(frames, payload);
            final RoceFrameWriter writer = burstWriter(payload);
            final RoceParser parser = new RoceParser(new ParseCounters());
            final RoceParser parserWithoutIcrc = new RoceParser(OpcodeTable.ROCE_V2, new ParseCounters(), false);
            final RoceFrame frame = new RoceFrame();
            final Icrc icrc = new Icrc();
            final CpuTimeRounds timed = new CpuTimeRounds(rounds, (long)BURSTS_PER_ROUND * WireBenchmark.BURST)
                .add(() -> parseBursts(parser, frames, lengths, frame))
                .add(() -> icrcBursts(icrc, frames, lengths))
                .add(() -> parseBursts(parserWithoutIcrc, frames, lengths, frame))
                .add(() -> buildBursts(writer, frames, payload))
                .run();
            System.out.printf("payload %d B, " + scope + " memory: parse + ICRC %.1f ns CPU/packet best, %.1f median; ICRC alone %.1f best, " +
                "%.1f median; parse without ICRC %.1f best, %.1f median; build headers + ICRC %.1f best, %.1f median " +
                "(%d rounds; sink %d)%n", payload, timed.best(0), timed.median(0), timed.best(1), timed.median(1),
                timed.best(2), timed.median(2), timed.best(3), timed.median(3), rounds, timed.sink() & 1);
        }
    }

    private static long parseBursts(final RoceParser parser, final MemorySegment frames, final int[] lengths,
        final RoceFrame frame)
    {
        long valid = 0;
        for (int burst = 0; burst < BURSTS_PER_ROUND; burst++)
        {
            valid += parseBurst(parser, frames, lengths, frame);
        }
        return valid;
    }

    private static int parseBurst(final RoceParser parser, final MemorySegment frames, final int[] lengths,
        final RoceFrame frame)
    {
        int valid = 0;
        for (int i = 0; i < WireBenchmark.BURST; i++)
        {
            parser.parse(frames, (long)i * WireBenchmark.SLOT, lengths[i], frame);
            valid += frame.isRoce() ? 1 : 0;
        }
        return valid;
    }

    // the frames are rewritten in place with the same PSNs, so the other loops keep parsing valid frames
    private static long buildBursts(final RoceFrameWriter writer, final MemorySegment frames, final int payload)
    {
        long total = 0;
        for (int burst = 0; burst < BURSTS_PER_ROUND; burst++)
        {
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                total += writer.psn(i).writeFrame(frames, (long)i * WireBenchmark.SLOT, payload);
            }
        }
        return total;
    }

    private static long icrcBursts(final Icrc icrc, final MemorySegment frames, final int[] lengths)
    {
        long crc = 0;
        for (int burst = 0; burst < BURSTS_PER_ROUND; burst++)
        {
            crc += icrcBurst(icrc, frames, lengths);
        }
        return crc;
    }

    private static int icrcBurst(final Icrc icrc, final MemorySegment frames, final int[] lengths)
    {
        int crc = 0;
        for (int i = 0; i < WireBenchmark.BURST; i++)
        {
            final long offset = (long)i * WireBenchmark.SLOT;
            crc ^= icrc.compute(frames, offset + 14, 4, 20, offset + lengths[i] - Icrc.LENGTH);
        }
        return crc;
    }

    /**
     * @return memory for a burst of {@link WireBenchmark#BURST} frame slots from {@code arena}, seen through a segment
     * of the given scope: confined or shared (the arena's), or global (unscoped, as PacketMemory's view of DPDK's pool).
     */
    static MemorySegment burstMemory(final Arena arena, final String scope)
    {
        final MemorySegment allocated = arena.allocate((long)WireBenchmark.BURST * WireBenchmark.SLOT, 64);
        return switch (scope)
        {
            case "confined", "shared" -> allocated;
            // the arena still owns the memory; this view of it is unscoped, as PacketMemory's of DPDK's pool
            case "global" -> MemorySegment.ofAddress(allocated.address()).reinterpret(allocated.byteSize());
            default -> throw new IllegalArgumentException("scope: confined, global or shared, not " + scope);
        };
    }

    /** @return the writer of the burst's frames: IPv4 RDMA WRITE Only with {@code payload} bytes. */
    static RoceFrameWriter burstWriter(final int payload)
    {
        return new RoceFrameWriter().ethernet(0x020000000001L, 0x020000000002L).ipv4(0x0A000001, 0x0A000002)
            .udpSourcePort(49152).opcode(Opcode.RC_RDMA_WRITE_ONLY).destQp(0x42).reth(0x1000_0000L, 0x1234, payload);
    }

    /** @return the lengths of the IPv4 RDMA WRITE Only frames, PSN 0.., with {@code payload} bytes, written to each slot. */
    static int[] writeBurst(final MemorySegment frames, final int payload)
    {
        final int[] lengths = new int[WireBenchmark.BURST];
        final RoceFrameWriter writer = burstWriter(payload);
        for (int i = 0; i < WireBenchmark.BURST; i++)
        {
            lengths[i] = writer.psn(i).writeFrame(frames, (long)i * WireBenchmark.SLOT, payload);
        }
        return lengths;
    }
}
