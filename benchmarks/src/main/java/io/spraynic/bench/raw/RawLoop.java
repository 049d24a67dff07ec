package io.spraynic.bench.raw;

import io.spraynic.bench.OptionEnums;
import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.port.DpdkPacketPort;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The raw datapath loop, one core, through the port layer and the C shim: the Java half of the
 * Java-versus-C comparison. {@code benchmarks/src/main/c/raw_loop_core.c} is the C half and does the same
 * work per packet through the same shim, either in a process of its own ({@code spraynic-rawloop}) or loaded
 * into this one ({@link CRawLoop}, {@link #runSameProcess}).
 * <ul>
 *   <li>{@code tx}: allocate a burst, set every frame's length, transmit, free what was not taken.</li>
 *   <li>{@code rx}: receive a burst, read every frame's length, free the burst.</li>
 *   <li>{@code io}: receive a burst, read every length, transmit it back on the same port.</li>
 *   <li>{@code txrx}: the same forwarding with one crossing per burst: one call
 *   ({@link PacketPort#transmitAndReceive}) transmits the previous burst and receives the next, then
 *   every length is read.</li>
 * </ul>
 * On {@code net_null} RX produces frames out of nothing and TX swallows them. A {@code net_ring}
 * port receives its own transmits, so there every mode runs as a loop: {@code tx} and {@code rx}
 * allocate-transmit-receive-free (counting their side), and {@code io} and {@code txrx} keep a
 * primed set of frames circulating. With {@link Touch#NONE} no mode reads or writes an mbuf, which is
 * DPDK testpmd's {@code io} forwarding: what is left is the crossings into C and the driver's work.
 */
public final class RawLoop
{
    /** Which half of the datapath a run measures. */
    public enum Mode
    {
        RX, TX, IO, TXRX;

        public String text()
        {
            return OptionEnums.text(this);
        }

        public static Mode parse(final String text)
        {
            return OptionEnums.parse(values(), text, "mode");
        }
    }

    /** The PMDs the loop runs on. */
    public enum Pmd
    {
        NET_NULL("net_null0"), NET_RING("net_ring0");

        private final String device;

        Pmd(final String device)
        {
            this.device = device;
        }

        public String text()
        {
            return OptionEnums.text(this);
        }

        public static Pmd parse(final String text)
        {
            return OptionEnums.parse(values(), text, "pmd");
        }
    }

    /** Whether the loop touches every frame's mbuf, or only moves pointers (DPDK testpmd's {@code io} forwarding). */
    public enum Touch
    {
        /** rx, io and txrx read every frame's length; tx sets it. */
        LENGTH,
        /** No mbuf is read or written: what is left is the crossings into C and the driver's work. */
        NONE;

        public String text()
        {
            return OptionEnums.text(this);
        }

        public static Touch parse(final String text)
        {
            return OptionEnums.parse(values(), text, "touch");
        }
    }

    /**
     * @param packets    packets counted on the measured side.
     * @param seconds    measured (wall-clock) time.
     * @param cpuSeconds CPU time the loop's thread used in that time: on a shared machine the
     *                   rate per CPU second leaves out the time the thread waited for a core.
     */
    public record Result(
        String pmd, String mode, String touch, int burst, int frameLength, long packets, double seconds, double cpuSeconds)
    {
        public double mpps()
        {
            return packets / seconds / 1e6;
        }

        public double cpuMpps()
        {
            return packets / cpuSeconds / 1e6;
        }
    }

    /** Frames primed into the ring for {@code io} on {@code net_ring}. */
    static final int RING_PRIMED_FRAMES = 512;

    /** Bursts between two reads of the clock, in both languages. */
    static final int BURSTS_PER_CLOCK_READ = 1024;

    private RawLoop()
    {
    }

    /**
     * The EAL and port configuration a raw run uses: no hugepages, no PCI, one vdev.
     */
    public static NicConfig config(final Pmd pmd, final int frameLength)
    {
        final String args = pmd == Pmd.NET_NULL ? "size=" + frameLength + ",copy=0" : "";
        return NicConfig.of(
            EalConfig.DEFAULT.withFilePrefix("spraynic-raw-" + ProcessHandle.current().pid())
                .withLogLevels(List.of("lib.eal:warning")),
            MempoolConfig.DEFAULT,
            List.of(PortConfig.vdev("raw", pmd.device, args)));
    }

    /**
     * Runs the loop for {@code seconds} after a warm-up of a quarter of that, in this process's one
     * EAL.
     */
    public static Result run(
        final Pmd pmd, final Mode mode, final Touch touch, final double seconds, final int burst, final int frameLength)
    {
        try (DpdkNic nic = DpdkNic.start(config(pmd, frameLength)))
        {
            final PacketPort port = nic.packetPort("raw", 0);
            port.onPollerStart();
            final PacketBurst packets = port.newBurst(burst);
            try
            {
                if (pmd == Pmd.NET_RING && (mode == Mode.IO || mode == Mode.TXRX))
                {
                    prime(port, packets, frameLength);
                }
                final boolean touching = touch == Touch.LENGTH;
                loop(pmd, mode, touching, port, packets, frameLength, (long)(seconds * 0.25e9));
                final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
                final long cpuStart = threads.getCurrentThreadCpuTime();
                final long start = System.nanoTime();
                final long counted = loop(pmd, mode, touching, port, packets, frameLength, (long)(seconds * 1e9));
                final long elapsed = System.nanoTime() - start;
                final long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
                return new Result(
                    pmd.text(), mode.text(), touch.text(), burst, frameLength, counted, elapsed / 1e9,
                    cpu / 1e9);
            }
            finally
            {
                if (pmd == Pmd.NET_RING)
                {
                    drain(port, packets); // net_null's RX never runs dry
                }
                port.release(packets);
                packets.close();
                port.onPollerClose();
            }
        }
    }

    /**
     * Java and C (the same loop in {@code libspraynic_rawloop.so}, loaded into this process) in alternating
     * slices of {@code seconds} on one port, one pool and one set of circulating mbufs, so that a round's two
     * halves differ only in the language that drives them. Which language goes first alternates by round.
     */
    public static SameProcessRounds runSameProcess(
        final Pmd pmd, final Mode mode, final Touch touch, final double seconds, final int burst, final int frameLength,
        final int rounds, final Path cLibrary)
    {
        try (DpdkNic nic = DpdkNic.start(config(pmd, frameLength)))
        {
            final DpdkPacketPort port = nic.packetPort("raw", 0);
            port.onPollerStart();
            final PacketBurst packets = port.newBurst(burst);
            try (CRawLoop c = CRawLoop.create(
                cLibrary, nic.pool(), port.ethPort().portId(), pmd, mode, touch, burst, frameLength))
            {
                if (pmd == Pmd.NET_RING && (mode == Mode.IO || mode == Mode.TXRX))
                {
                    prime(port, packets, frameLength);
                }
                final boolean touching = touch == Touch.LENGTH;
                final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
                final double[][] measured = new double[4][rounds]; // java wall, c wall, java cpu, c cpu
                final long sliceNanos = (long)(seconds * 1e9);
                for (int round = -1; round < rounds; round++) // round -1 warms both up
                {
                    for (int half = 0; half < 2; half++)
                    {
                        final boolean java = (half == 0) == (round % 2 == 0);
                        final long cpuStart = threads.getCurrentThreadCpuTime();
                        final long start = System.nanoTime();
                        final long counted = java ?
                            loop(pmd, mode, touching, port, packets, frameLength, sliceNanos) : c.loop(sliceNanos);
                        final long elapsed = System.nanoTime() - start;
                        final long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
                        // hand what the loop holds back to the ring, so the other one circulates the same frames
                        if (java)
                        {
                            flush(port, packets);
                        }
                        else
                        {
                            c.flush();
                        }
                        if (round >= 0)
                        {
                            measured[java ? 0 : 1][round] = counted / (elapsed / 1e9) / 1e6;
                            measured[java ? 2 : 3][round] = counted / (cpu / 1e9) / 1e6;
                        }
                    }
                }
                return new SameProcessRounds(
                    pmd.text(), mode.text(), touch.text(), burst, frameLength,
                    measured[0], measured[1], measured[2], measured[3], c.sharesShim());
            }
            finally
            {
                if (pmd == Pmd.NET_RING)
                {
                    drain(port, packets);
                }
                port.release(packets);
                packets.close();
                port.onPollerClose();
            }
        }
    }

    /**
     * What {@link #runSameProcess} measured: Mpps per round by wall-clock time and per CPU second.
     *
     * @param sameShim whether the C library called the very shim functions this process's Java calls.
     */
    public record SameProcessRounds(
        String pmd, String mode, String touch, int burst, int frameLength, double[] javaMpps, double[] cMpps,
        double[] javaCpuMpps, double[] cCpuMpps, boolean sameShim)
    {
        public String toJson()
        {
            return String.format(Locale.ROOT,
                "{\"pmd\":\"%s\",\"mode\":\"%s\",\"touch\":\"%s\",\"burst\":%d,\"frameLength\":%d,\"sameShim\":%b," +
                "\"javaRounds\":%s,\"cRounds\":%s,\"javaCpuRounds\":%s,\"cCpuRounds\":%s}",
                pmd, mode, touch, burst, frameLength, sameShim, Arrays.toString(javaMpps).replace(" ", ""),
                Arrays.toString(cMpps).replace(" ", ""), Arrays.toString(javaCpuMpps).replace(" ", ""),
                Arrays.toString(cCpuMpps).replace(" ", ""));
        }
    }

    private static long loop(
        final Pmd pmd,
        final Mode mode,
        final boolean touch,
        final PacketPort port,
        final PacketBurst burst,
        final int frameLength,
        final long nanos)
    {
        final long deadline = System.nanoTime() + nanos;
        long counted = 0;
        do
        {
            for (int i = 0; i < BURSTS_PER_CLOCK_READ; i++)
            {
                counted += switch (mode)
                {
                    case IO -> forwardOnce(port, burst, touch);
                    case TXRX -> forwardInOneCall(port, burst, touch);
                    case TX -> pmd == Pmd.NET_RING ?
                        ringRoundTrip(true, port, burst, frameLength, touch) : transmitOnce(port, burst, frameLength, touch);
                    case RX -> pmd == Pmd.NET_RING ?
                        ringRoundTrip(false, port, burst, frameLength, touch) : receiveOnce(port, burst, touch);
                };
            }
        }
        while (System.nanoTime() < deadline);
        return counted;
    }

    static int transmitOnce(final PacketPort port, final PacketBurst burst, final int frameLength, final boolean touch)
    {
        if (!port.allocate(burst, burst.capacity()))
        {
            return 0;
        }
        if (touch)
        {
            for (int i = 0, size = burst.size(); i < size; i++)
            {
                burst.length(i, frameLength);
            }
        }
        final int sent = port.transmit(burst);
        port.release(burst);
        return sent;
    }

    static int receiveOnce(final PacketPort port, final PacketBurst burst, final boolean touch)
    {
        final int received = port.receive(burst);
        final int bytes = touch ? sumLengths(burst) : 0;
        port.release(burst);
        return bytes >= 0 ? received : 0; // keeps the length reads alive
    }

    static int forwardOnce(final PacketPort port, final PacketBurst burst, final boolean touch)
    {
        port.receive(burst);
        final int bytes = touch ? sumLengths(burst) : 0;
        final int sent = port.transmit(burst);
        port.release(burst);
        return bytes >= 0 ? sent : 0;
    }

    static int forwardInOneCall(final PacketPort port, final PacketBurst burst, final boolean touch)
    {
        final int sent = port.transmitAndReceive(burst);
        final int bytes = touch ? sumLengths(burst) : 0;
        return bytes >= 0 ? sent : 0;
    }

    private static int sumLengths(final PacketBurst burst)
    {
        int bytes = 0;
        for (int i = 0, size = burst.size(); i < size; i++)
        {
            bytes += burst.length(i);
        }
        return bytes;
    }

    private static int ringRoundTrip(
        final boolean countSent, final PacketPort port, final PacketBurst burst, final int frameLength, final boolean touch)
    {
        final int sent = transmitOnce(port, burst, frameLength, touch);
        final int received = receiveOnce(port, burst, touch);
        return countSent ? sent : received;
    }

    private static void prime(final PacketPort port, final PacketBurst burst, final int frameLength)
    {
        for (int primed = 0; primed < RING_PRIMED_FRAMES; primed += burst.capacity())
        {
            if (!port.allocate(burst, burst.capacity()))
            {
                throw new IllegalStateException("mbuf pool too small to prime " + RING_PRIMED_FRAMES + " frames");
            }
            for (int i = 0; i < burst.size(); i++)
            {
                burst.length(i, frameLength);
            }
            port.transmit(burst);
            port.release(burst);
        }
    }

    private static void drain(final PacketPort port, final PacketBurst burst)
    {
        port.release(burst);
        while (port.receive(burst) > 0)
        {
            port.release(burst);
        }
    }

    // what a txrx burst holds goes back out, so that the circulating set stays whole between slices
    private static void flush(final PacketPort port, final PacketBurst burst)
    {
        if (burst.size() > 0)
        {
            port.transmit(burst);
            port.release(burst);
        }
    }

    /**
     * One run in this process, printed as JSON: what {@link RawLoopComparison} starts per Java round.
     * Arguments as the C twin's: {@code --pmd P --mode M --touch T --seconds S --burst N --length B}; with
     * {@code --same-process LIBRARY --rounds R} the Java and C loops alternate in this process instead
     * ({@link #runSameProcess}).
     */
    public static void main(final String[] args)
    {
        String pmd = "net_null";
        String mode = "tx";
        String touch = "length";
        double seconds = 5;
        int burst = 32;
        int length = 64;
        String cLibrary = null;
        int rounds = 1;
        for (int i = 0; i + 1 < args.length; i += 2)
        {
            switch (args[i])
            {
                case "--pmd" -> pmd = args[i + 1];
                case "--mode" -> mode = args[i + 1];
                case "--touch" -> touch = args[i + 1];
                case "--seconds" -> seconds = Double.parseDouble(args[i + 1]);
                case "--burst" -> burst = Integer.parseInt(args[i + 1]);
                case "--length" -> length = Integer.parseInt(args[i + 1]);
                case "--same-process" -> cLibrary = args[i + 1];
                case "--rounds" -> rounds = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        if (null != cLibrary)
        {
            System.out.println(runSameProcess(
                Pmd.parse(pmd), Mode.parse(mode), Touch.parse(touch), seconds, burst, length, rounds, Path.of(cLibrary)).toJson());
            return;
        }
        System.out.println(toJson(run(Pmd.parse(pmd), Mode.parse(mode), Touch.parse(touch), seconds, burst, length)));
    }

    public static String toJson(final Result result)
    {
        return String.format(Locale.ROOT,
            "{\"pmd\":\"%s\",\"mode\":\"%s\",\"touch\":\"%s\",\"language\":\"java\",\"burst\":%d,\"frameLength\":%d," +
            "\"packets\":%d,\"seconds\":%.6f,\"mpps\":%.4f,\"cpuSeconds\":%.6f,\"cpuMpps\":%.4f}",
            result.pmd(), result.mode(), result.touch(), result.burst(), result.frameLength(), result.packets(), result.seconds(),
            result.mpps(), result.cpuSeconds(), result.cpuMpps());
    }
}
