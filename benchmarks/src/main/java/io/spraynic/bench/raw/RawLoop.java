package io.spraynic.bench.raw;

import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.pmd.EalConfig;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.List;
import java.util.Locale;

/**
 * The raw datapath loop, one core, through the port layer and the C shim: the Java half of the
 * Java-versus-C comparison. {@code benchmarks/src/main/c/raw_loop.c} is the C half and does the same
 * work per packet through the same shim.
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
 * primed set of frames circulating.
 */
public final class RawLoop
{
    /** Which half of the datapath a run measures. */
    public enum Mode
    {
        RX, TX, IO, TXRX;

        public static Mode parse(final String text)
        {
            for (final Mode mode : values())
            {
                if (mode.name().equalsIgnoreCase(text))
                {
                    return mode;
                }
            }
            throw new IllegalArgumentException("mode '" + text + "' is not one of rx, tx, io, txrx");
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
            return name().toLowerCase(Locale.ROOT);
        }

        public static Pmd parse(final String text)
        {
            for (final Pmd pmd : values())
            {
                if (pmd.text().equalsIgnoreCase(text))
                {
                    return pmd;
                }
            }
            throw new IllegalArgumentException("pmd '" + text + "' is not one of net_null, net_ring");
        }
    }

    /**
     * @param packets    packets counted on the measured side.
     * @param seconds    measured (wall-clock) time.
     * @param cpuSeconds CPU time the loop's thread used in that time: on a shared machine the
     *                   rate per CPU second leaves out the time the thread waited for a core.
     */
    public record Result(String pmd, String mode, int burst, int frameLength, long packets, double seconds, double cpuSeconds)
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
    public static Result run(final Pmd pmd, final Mode mode, final double seconds, final int burst, final int frameLength)
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
                loop(pmd, mode, port, packets, frameLength, (long)(seconds * 0.25e9));
                final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
                final long cpuStart = threads.getCurrentThreadCpuTime();
                final long start = System.nanoTime();
                final long counted = loop(pmd, mode, port, packets, frameLength, (long)(seconds * 1e9));
                final long elapsed = System.nanoTime() - start;
                final long cpu = threads.getCurrentThreadCpuTime() - cpuStart;
                return new Result(
                    pmd.text(), mode.name().toLowerCase(Locale.ROOT), burst, frameLength, counted, elapsed / 1e9, cpu / 1e9);
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

    private static long loop(
        final Pmd pmd, final Mode mode, final PacketPort port, final PacketBurst burst, final int frameLength, final long nanos)
    {
        final long deadline = System.nanoTime() + nanos;
        long counted = 0;
        do
        {
            for (int i = 0; i < 1024; i++)
            {
                if (pmd == Pmd.NET_NULL)
                {
                    counted += switch (mode)
                    {
                        case TX -> transmitOnce(port, burst, frameLength);
                        case RX -> receiveOnce(port, burst);
                        case IO -> forwardOnce(port, burst);
                        case TXRX -> forwardInOneCall(port, burst);
                    };
                }
                else
                {
                    counted += switch (mode)
                    {
                        case IO -> forwardOnce(port, burst);
                        case TXRX -> forwardInOneCall(port, burst);
                        default -> ringRoundTrip(mode, port, burst, frameLength);
                    };
                }
            }
        }
        while (System.nanoTime() < deadline);
        return counted;
    }

    static int transmitOnce(final PacketPort port, final PacketBurst burst, final int frameLength)
    {
        if (!port.allocate(burst, burst.capacity()))
        {
            return 0;
        }
        for (int i = 0, size = burst.size(); i < size; i++)
        {
            burst.length(i, frameLength);
        }
        final int sent = port.transmit(burst);
        port.release(burst);
        return sent;
    }

    static int receiveOnce(final PacketPort port, final PacketBurst burst)
    {
        final int received = port.receive(burst);
        int bytes = 0;
        for (int i = 0; i < received; i++)
        {
            bytes += burst.length(i);
        }
        port.release(burst);
        return bytes >= 0 ? received : 0; // keeps the length reads alive
    }

    static int forwardOnce(final PacketPort port, final PacketBurst burst)
    {
        final int received = port.receive(burst);
        int bytes = 0;
        for (int i = 0; i < received; i++)
        {
            bytes += burst.length(i);
        }
        final int sent = port.transmit(burst);
        port.release(burst);
        return bytes >= 0 ? sent : 0;
    }

    static int forwardInOneCall(final PacketPort port, final PacketBurst burst)
    {
        final int sent = port.transmitAndReceive(burst);
        int bytes = 0;
        for (int i = 0, size = burst.size(); i < size; i++)
        {
            bytes += burst.length(i);
        }
        return bytes >= 0 ? sent : 0;
    }

    private static int ringRoundTrip(final Mode mode, final PacketPort port, final PacketBurst burst, final int frameLength)
    {
        final int sent = transmitOnce(port, burst, frameLength);
        final int received = receiveOnce(port, burst);
        return mode == Mode.TX ? sent : received;
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

    /**
     * One run in this process, printed as JSON: what {@link RawLoopComparison} starts per Java round.
     * Arguments as the C twin's: {@code --pmd P --mode M --seconds S --burst N --length B}.
     */
    public static void main(final String[] args)
    {
        String pmd = "net_null";
        String mode = "tx";
        double seconds = 5;
        int burst = 32;
        int length = 64;
        for (int i = 0; i + 1 < args.length; i += 2)
        {
            switch (args[i])
            {
                case "--pmd" -> pmd = args[i + 1];
                case "--mode" -> mode = args[i + 1];
                case "--seconds" -> seconds = Double.parseDouble(args[i + 1]);
                case "--burst" -> burst = Integer.parseInt(args[i + 1]);
                case "--length" -> length = Integer.parseInt(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        System.out.println(toJson(run(Pmd.parse(pmd), Mode.parse(mode), seconds, burst, length)));
    }

    public static String toJson(final Result result)
    {
        return String.format(Locale.ROOT,
            "{\"pmd\":\"%s\",\"mode\":\"%s\",\"language\":\"java\",\"burst\":%d,\"frameLength\":%d,\"packets\":%d," +
            "\"seconds\":%.6f,\"mpps\":%.4f,\"cpuSeconds\":%.6f,\"cpuMpps\":%.4f}",
            result.pmd(), result.mode(), result.burst(), result.frameLength(), result.packets(), result.seconds(), result.mpps(),
            result.cpuSeconds(), result.cpuMpps());
    }
}
