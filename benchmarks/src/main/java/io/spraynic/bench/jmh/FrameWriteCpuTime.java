package io.spraynic.bench.jmh;

import io.spraynic.datapath.wire.RoceFrameTemplate;
import io.spraynic.datapath.wire.RoceFrameWriter;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * What {@link RoceFrameWriter#writeFrame} costs a spray sender per frame, timed by the thread's CPU time as
 * {@link WireCpuTime} does ({@link CpuTimeRounds}: robust to a loaded machine, where the wall clock is not): bursts of 32 frames into one
 * buffer, each preceded by the setter calls the spray frame builder makes per packet (the plane's addresses, the
 * path's UDP source port, one of four, BTH fields), in two loops:
 * <ul>
 *     <li>data: a spray WRITE (BTH, SETH, RETH) with a 64 B payload already in place, ICRC included;</li>
 *     <li>ACK: a spray ACK (BTH, SACKH) tagged with SipHash-2-4 over its 64 covered bytes, ICRC included;</li>
 *     <li>probe: a spray PROBE (BTH, PRBH) tagged over 20 bytes (two words and a 4-byte tail), ICRC included;</li>
 *     <li>data from the template: the data frame of the first loop as {@code SprayFrames.data} writes it since issue
 *     13's section 36, from the writer's {@link RoceFrameTemplate} (the owner check, then only the fields that
 *     change), with the ACK and probe loops changing the writer's settings in between as the engine's other frames
 *     do.</li>
 * </ul>
 * Public writer API only; the fourth loop needs a build with {@link RoceFrameTemplate} (issue 13).
 * <pre>
 *   java -cp ... io.spraynic.bench.jmh.FrameWriteCpuTime [payload [rounds]]
 * </pre>
 */
public final class FrameWriteCpuTime
{
    private static final int BURSTS_PER_ROUND = 50_000;
    private static final int PATH_PORTS = 4;
    private static final long LOCAL_MAC = 0x02_00_00_00_00_01L;
    private static final long REMOTE_MAC = 0x02_00_00_00_00_02L;
    private static final int LOCAL_IPV4 = 0x0A00_0001;
    private static final int REMOTE_IPV4 = 0x0A00_0002;

    private FrameWriteCpuTime()
    {
    }

    /**
     * @param args payload bytes (64), rounds (9).
     */
    public static void main(final String[] args)
    {
        final int payload = args.length > 0 ? Integer.parseInt(args[0]) : 64;
        final int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 9;
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment frames = arena.allocate((long)WireBenchmark.BURST * WireBenchmark.SLOT, 64);
            final RoceFrameWriter writer = new RoceFrameWriter(SprayOpcodes.TABLE);
            final CpuTimeRounds timed = new CpuTimeRounds(rounds, (long)BURSTS_PER_ROUND * WireBenchmark.BURST)
                .add(() -> dataBursts(writer, frames, payload))
                .add(() -> taggedBursts(writer, frames, SprayOpcodes.ACK))
                .add(() -> taggedBursts(writer, frames, SprayOpcodes.PROBE))
                .add(() -> templateDataBursts(writer, frames, payload))
                .run();
            System.out.printf("writeFrame, CPU ns per frame: data (%d B payload) %.1f best, %.1f median; tagged ACK " +
                "%.1f best, %.1f median; tagged probe %.1f best, %.1f median; data from the template %.1f best, " +
                "%.1f median (%d rounds; sink %d)%n", payload, timed.best(0), timed.median(0), timed.best(1),
                timed.median(1), timed.best(2), timed.median(2), timed.best(3), timed.median(3), rounds,
                timed.sink() & 1);
        }
    }

    // the setters SprayFrames.address makes before every frame: the plane's addresses and the path's port
    private static void address(final RoceFrameWriter writer, final int path)
    {
        writer.ethernet(LOCAL_MAC, REMOTE_MAC).vlan(-1).ipv4(LOCAL_IPV4, REMOTE_IPV4).ipv4Identification(0)
            .dscp(26).udpSourcePort(0xC000 + path % PATH_PORTS).destQp(0x42).solicited(false).ackReq(false).ecn(0);
    }

    private static long dataBursts(final RoceFrameWriter writer, final MemorySegment frames, final int payload)
    {
        long sink = 0;
        for (int burst = 0; burst < BURSTS_PER_ROUND; burst++)
        {
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                address(writer, i);
                writer.opcode(SprayOpcodes.WRITE).ecn(2).ackReq((i & 7) == 7).psn(burst * WireBenchmark.BURST + i)
                    .reth(0x1000_0000L, 0x1234, payload);
                sink += writer.writeFrame(frames, (long)i * WireBenchmark.SLOT, payload);
            }
        }
        return sink;
    }

    private static long taggedBursts(final RoceFrameWriter writer, final MemorySegment frames, final int opcode)
    {
        long sink = 0;
        for (int burst = 0; burst < BURSTS_PER_ROUND; burst++)
        {
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                address(writer, i);
                writer.opcode(opcode).psn(0).tagNext(0x0706050403020100L, 0x0f0e0d0c0b0a0908L);
                sink += writer.writeFrame(frames, (long)i * WireBenchmark.SLOT, 0);
            }
        }
        return sink;
    }

    // the data frame of dataBursts as SprayFrames.data writes it from the writer's template: captured when the
    // flow does not hold it (once here), then per frame only the changing fields; the RETH values of dataBursts are
    // writer fields a spray opcode does not write, so neither loop writes RETH bytes
    private static long templateDataBursts(final RoceFrameWriter writer, final MemorySegment frames, final int payload)
    {
        final RoceFrameTemplate template = writer.template();
        final int extensions = SprayOpcodes.TABLE.extensionHeadersLength(SprayOpcodes.WRITE);
        long sink = 0;
        for (int burst = 0; burst < BURSTS_PER_ROUND; burst++)
        {
            for (int i = 0; i < WireBenchmark.BURST; i++)
            {
                if (!template.heldBy(1, REMOTE_MAC))
                {
                    address(writer, 0);
                    writer.opcode(SprayOpcodes.WRITE).ecn(2);
                    template.capture(1, REMOTE_MAC);
                }
                sink += template.write(frames, (long)i * WireBenchmark.SLOT, 0xC000 + i % PATH_PORTS,
                    SprayOpcodes.WRITE, false, (i & 7) == 7, burst * WireBenchmark.BURST + i, extensions, payload);
            }
        }
        return sink;
    }
}
