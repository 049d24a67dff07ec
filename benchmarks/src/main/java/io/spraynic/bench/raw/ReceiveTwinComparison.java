package io.spraynic.bench.raw;

import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.port.DpdkPacketPort;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.wire.Opcode;
import io.spraynic.datapath.wire.RoceFrameWriter;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * The Java receive twin ({@link ReceiveTwin}) against its C twin ({@link CReceiveTwin}) in alternating slices on one
 * {@code net_ring} port, one pool and one set of circulating RoCEv2 RDMA WRITE Only frames: per packet, one crossing
 * per burst ({@code spraynic_tx_rx_burst}: the last burst goes back into the ring as the next comes out), parse,
 * ICRC, placement into a region. Rates are per CPU second of the one thread (robust to waiting for a core on a
 * loaded machine) and by wall clock.
 * <pre>
 *   java ... io.spraynic.bench.raw.ReceiveTwinComparison --library target/native/libspraynic_rxtwin.so \
 *       --payload 64 --seconds 1 --rounds 6 [--crc tables|pclmul|vpclmul]
 * </pre>
 */
public final class ReceiveTwinComparison
{
    /** Frames circulating in the ring. */
    static final int FRAMES = 512;
    static final int BURST = 32;
    static final long REGION_BASE = 0x7000_0000_0000L;
    static final int RKEY = 0x1234;

    /** Writes frame {@code index} at {@code offset} of {@code memory}, returning its length. */
    @FunctionalInterface
    interface FrameFiller
    {
        int fill(MemorySegment memory, long offset, int index);
    }

    /**
     * @param cCpuMpps    the C twin's frames per CPU microsecond, per round.
     * @param javaCpuMpps the Java twin's, per round.
     * @param javaCounters and cCounters: the outcomes each twin counted, in {@link ReceiveTwin}'s order.
     */
    public record Summary(
        int payload, CReceiveTwin.CrcFolding crcFolding, double[] javaMpps, double[] cMpps, double[] javaCpuMpps, double[] cCpuMpps,
        long[] javaCounters, long[] cCounters)
    {
        /** @return Java ÷ C packets per CPU second, per round. */
        public double[] ratios()
        {
            final double[] ratios = new double[javaCpuMpps.length];
            for (int i = 0; i < ratios.length; i++)
            {
                ratios[i] = javaCpuMpps[i] / cCpuMpps[i];
            }
            return ratios;
        }

        public String toText()
        {
            final double[] ratios = ratios();
            final double[] sorted = ratios.clone();
            Arrays.sort(sorted);
            return String.format(Locale.ROOT,
                "payload %d B, ICRC in C by %s: Java %s Mpps/CPU-s, C %s; Java/C per round %s (median %.3f); " +
                "wall Java %s, C %s; Java outcomes %s, C outcomes %s",
                payload, crcFolding, format(javaCpuMpps), format(cCpuMpps),
                format(ratios), sorted[sorted.length / 2], format(javaMpps), format(cMpps),
                Arrays.toString(javaCounters), Arrays.toString(cCounters));
        }

        private static String format(final double[] values)
        {
            final StringBuilder text = new StringBuilder("[");
            for (int i = 0; i < values.length; i++)
            {
                text.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%.3f", values[i]));
            }
            return text.append(']').toString();
        }
    }

    private ReceiveTwinComparison()
    {
    }

    /**
     * The writer of the frames both twins receive: IPv4 RC RDMA WRITE Only, each to its own {@code payload}-byte
     * slot of the region.
     */
    static FrameFiller writeOnlyFrames(final int payload)
    {
        final RoceFrameWriter writer = new RoceFrameWriter()
            .ethernet(0x020000000001L, 0x020000000002L)
            .ipv4(0x0A000001, 0x0A000002)
            .udpSourcePort(49152)
            .opcode(Opcode.RC_RDMA_WRITE_ONLY)
            .destQp(0x42);
        return (memory, offset, index) ->
        {
            writer.psn(index).reth(REGION_BASE + (long)index * payload, RKEY, payload);
            // a recognisable payload, its index in every byte, in place before the frame (and its ICRC) is written
            memory.asSlice(offset + writer.payloadOffset(), payload).fill((byte)index);
            return writer.writeFrame(memory, offset, payload);
        };
    }

    /**
     * Sends {@code count} frames into the port, bursts of {@code burst.capacity()}.
     */
    static void prime(final PacketPort port, final PacketBurst burst, final int count, final FrameFiller filler)
    {
        for (int primed = 0; primed < count; )
        {
            final int n = Math.min(burst.capacity(), count - primed);
            if (!port.allocate(burst, n))
            {
                throw new IllegalStateException("mbuf pool too small to prime " + count + " frames");
            }
            for (int i = 0; i < burst.size(); i++)
            {
                burst.length(i, filler.fill(burst.memory(), burst.offset(i), primed + i));
            }
            primed += port.transmit(burst);
            port.release(burst);
        }
    }

    /**
     * Alternates the two twins for {@code rounds} rounds (after one of warm-up) of {@code seconds} each.
     */
    public static Summary run(
        final Path library, final int payload, final double seconds, final int rounds, final CReceiveTwin.CrcFolding crcFolding)
    {
        final int frameLength = 14 + 20 + 8 + 12 + 16 + payload + 4;
        try (DpdkNic nic = DpdkNic.start(RawLoop.config(RawLoop.Pmd.NET_RING, frameLength));
            Arena arena = Arena.ofShared())
        {
            final MemorySegment region = arena.allocate((long)FRAMES * payload, 64);
            final DpdkPacketPort port = nic.packetPort("raw", 0);
            port.onPollerStart();
            final PacketBurst packets = port.newBurst(BURST);
            final ReceiveTwin java = new ReceiveTwin(region, REGION_BASE, RKEY);
            try (CReceiveTwin c = CReceiveTwin.create(
                library, port.ethPort().portId(), BURST, region, REGION_BASE, RKEY, crcFolding))
            {
                prime(port, packets, FRAMES, writeOnlyFrames(payload));
                final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
                final double[][] measured = new double[4][rounds]; // java wall, c wall, java cpu, c cpu
                final long sliceNanos = (long)(seconds * 1e9);
                for (int round = -1; round < rounds; round++) // round -1 warms both up
                {
                    for (int half = 0; half < 2; half++)
                    {
                        final boolean inJava = (half == 0) == (round % 2 == 0);
                        final long cpuStart = threads.getCurrentThreadCpuTime();
                        final long start = System.nanoTime();
                        final long received = inJava ? javaLoop(java, port, packets, sliceNanos) : c.loop(sliceNanos);
                        final long elapsed = System.nanoTime() - start;
                        final long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
                        if (inJava)
                        {
                            flush(port, packets);
                        }
                        else
                        {
                            c.flush();
                        }
                        if (round >= 0)
                        {
                            measured[inJava ? 0 : 1][round] = received / (elapsed / 1e9) / 1e6;
                            measured[inJava ? 2 : 3][round] = received / (cpu / 1e9) / 1e6;
                        }
                    }
                }
                return new Summary(payload, c.crcFolding(), measured[0], measured[1], measured[2], measured[3],
                    java.counters(), c.counters());
            }
            finally
            {
                port.release(packets);
                while (port.receive(packets) > 0)
                {
                    port.release(packets);
                }
                packets.close();
                port.onPollerClose();
            }
        }
    }

    private static long javaLoop(
        final ReceiveTwin twin, final PacketPort port, final PacketBurst burst, final long nanos)
    {
        final long deadline = System.nanoTime() + nanos;
        long received = 0;
        do
        {
            received += twin.bursts(port, burst, RawLoop.BURSTS_PER_CLOCK_READ);
        }
        while (System.nanoTime() < deadline);
        return received;
    }

    // what a burst holds goes back out, so that the circulating set stays whole between slices
    static void flush(final PacketPort port, final PacketBurst burst)
    {
        if (burst.size() > 0)
        {
            port.transmit(burst);
            port.release(burst);
        }
    }

    /**
     * {@code --library PATH --payload B --seconds S --rounds R [--crc tables|pclmul|vpclmul]} (default: the fastest the CPU has): prints the summary.
     */
    public static void main(final String[] args)
    {
        Path library = Path.of("benchmarks", "target", "native", "libspraynic_rxtwin.so");
        int payload = 64;
        double seconds = 1;
        int rounds = 6;
        CReceiveTwin.CrcFolding crcFolding = CReceiveTwin.CrcFolding.VPCLMUL;
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--library" -> library = Path.of(args[++i]);
                case "--payload" -> payload = Integer.parseInt(args[++i]);
                case "--seconds" -> seconds = Double.parseDouble(args[++i]);
                case "--rounds" -> rounds = Integer.parseInt(args[++i]);
                case "--crc" -> crcFolding = CReceiveTwin.CrcFolding.valueOf(args[++i].toUpperCase(Locale.ROOT));
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        System.out.println(run(library, payload, seconds, rounds, crcFolding).toText());
    }
}
