package io.spraynic.bench.nic;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.capture.CaptureRingReader;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.nic.EmbeddedNic;
import io.spraynic.datapath.nic.EmbeddedNicConfig;
import io.spraynic.pmd.NicConfig;
import org.agrona.concurrent.BusySpinIdleStrategy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What a live capture of every frame costs the workers: one embedded NIC alone on {@code net_null} (its workers
 * receive, parse and count zero-filled frames of a chosen size, as {@code bench workers --mode receive}), measured in
 * alternating rounds with no capture and with a capture of every frame ({@link EmbeddedNic#startCapture}, the shipped
 * tap and ring) that a drainer thread empties as a capture client would, after one such round untimed; the workers'
 * frames per second are read from their own counters, and the capture's cost per frame captured
 * ({@link CaptureCost}) from the same windows. Also the share of frames the capture took (the rest it dropped: its
 * ring was full because the drainer, one thread, did not keep up). One process, one EAL.
 */
public final class CaptureOverhead
{
    /**
     * One round: frames per second without and with the capture, by the clock and per second of the workers' own CPU
     * time (what the workers can do, whatever else shares their cores), and what the capture took and dropped.
     */
    public record Round(Rate off, Rate on, long captured, long dropped, long sampledOut, double copierCpuShare)
    {
        /** @return frames per worker CPU second while capturing ÷ without: the workers' throughput ratio. */
        public double ratio()
        {
            return on.cpuMpps() / off.cpuMpps();
        }

        /**
         * @return ns of the workers' CPU per frame captured in the window, beyond their own cost for the frames they
         * received (NaN when nothing was captured). The workers on net_null never idle ({@link Rate#emptyLoops} says
         * so): all their CPU time is busy time.
         */
        public double nanosPerCapturedFrame()
        {
            return CaptureCost.nanosPerCapturedFrame(off.frames(), off.cpuNanos(), on.frames(), on.cpuNanos(), on.captured());
        }

        /** @return ns of the workers' CPU per frame received without capture: their own cost of a frame. */
        public double nanosPerFrameOff()
        {
            return CaptureCost.nanosPerWork(off.frames(), off.cpuNanos());
        }

        public String toString()
        {
            return String.format(Locale.ROOT, "off %.2f Mpps (%.2f per worker CPU s), capturing %.2f Mpps (%.2f per worker " +
                "CPU s): ratio %.3f; the capture %.1f ns of worker CPU per frame captured, the worker's own %.1f ns a " +
                "frame (empty loops: off %,d, capturing %,d); captured %,d, dropped %,d (ring full), sampled out %,d; " +
                "capture copier thread %.0f %% of a CPU", off.mpps(), off.cpuMpps(), on.mpps(), on.cpuMpps(), ratio(),
                nanosPerCapturedFrame(), nanosPerFrameOff(), off.emptyLoops(), on.emptyLoops(), captured, dropped,
                sampledOut, 100 * copierCpuShare);
        }
    }

    /**
     * Frames received per second, in millions: by the clock, and per second of the workers' CPU time; and the counts
     * of the window they come from.
     *
     * @param frames     frames the workers received in the window.
     * @param cpuNanos   the workers' CPU time in the window.
     * @param emptyLoops the workers' loops in the window that found no frame (their spin; 0 on net_null).
     * @param captured   frames the capture took in the window (0 without one).
     */
    public record Rate(double mpps, double cpuMpps, long frames, long cpuNanos, long emptyLoops, long captured)
    {
    }

    /** Frames the drainer reads in one go before it waits, as spraynic capture does. */
    static final long READ_LIMIT = 1 << 20;

    /** The ring of 4,096 whole frames of the default snap length that earlier sections' rings held: 16,842,752 B. */
    public static final long DEFAULT_RING_BYTES = 2 * CaptureRingLayout.DEFAULT_RING_BYTES;

    /**
     * @return bytes of each ring unless told otherwise: {@link #DEFAULT_RING_BYTES} whatever the snap length, or 4,096
     * records of a longer one.
     */
    public static long defaultRingBytes(final int snapLength)
    {
        return Math.max(DEFAULT_RING_BYTES, CaptureRingLayout.ringBytes(4096, snapLength));
    }

    private CaptureOverhead()
    {
    }

    /**
     * @param frameBytes size of each frame net_null hands out.
     * @param snapLength bytes the capture keeps of each frame.
     * @param sample     the workers write one frame in this many of those the filter takes.
     * @param ringBytes  bytes of records of each worker's ring.
     * @param drain      whether a drainer empties the rings (false: a client that never drains; every frame is dropped).
     * @param filter     which frames the capture takes.
     */
    public static List<Round> run(final int workers, final int frameBytes, final int snapLength, final int sample,
        final long ringBytes, final double seconds, final int rounds, final boolean drain, final CaptureFilter filter) throws Exception
    {
        final NicConfig config = io.spraynic.pmd.PmdConfigs.load("net_null", java.util.Map.of("queues",
            Integer.toString(workers), "size", Integer.toString(frameBytes), "file_prefix", "spraynic-capture-bench-" +
            ProcessHandle.current().pid()));
        final Path directory = Files.createTempDirectory("spraynic-capture-bench");
        final CaptureRingLayout layout = CaptureRingLayout.ofRingBytes(workers, ringBytes, snapLength, sample);
        final List<CountingIdleStrategy> idles = new java.util.concurrent.CopyOnWriteArrayList<>();
        try (CountersFile counters = CountersFile.create(directory, "capture", 8192); Arena arena = Arena.ofShared())
        {
            final EmbeddedNic nic = EmbeddedNic.startOnDpdk(config.withEal(config.eal().withLogLevels(List.of("lib.eal:warning"))),
                new EmbeddedNicConfig().workers(workers).planes(1).local(0, 0x0A00_0001, 0).idleStrategy(() ->
                {
                    final CountingIdleStrategy idle = new CountingIdleStrategy(new BusySpinIdleStrategy());
                    idles.add(idle);
                    return idle;
                }),
                counters, port -> port);
            final List<Round> results = new ArrayList<>();
            try
            {
                final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
                Thread.sleep((long)(seconds * 500)); // warm-up
                // round -1 is untimed: a first capture deoptimises the worker's loop compiled without the capture's
                // branch (RESULTS.md 13), so a first timed round would time the JIT (0.09-0.34 in sections 31 and 51)
                for (int r = -1; r < rounds; r++)
                {
                    final Rate off = mpps(counters, idles, seconds);
                    memory.fill((byte)0);
                    layout.writeHeader(memory, ProcessHandle.current().pid(), r + 1, new String[]{nic.portName(0)}, "", 0, 0);
                    final long capturedBefore = sum(counters, ": capture frames");
                    final long droppedBefore = sum(counters, ": capture drops (ring full)");
                    final long sampledOutBefore = sum(counters, ": capture sampled out");
                    nic.startCapture(memory, layout, filter);
                    final AtomicBoolean stop = new AtomicBoolean();
                    final Thread drainer = new Thread(() -> drain(memory, stop), "capture-drainer");
                    if (drain)
                    {
                        drainer.start();
                    }
                    final long copierBefore = cpuNanos("spraynic-capture-copier");
                    final long onStart = System.nanoTime();
                    final Rate on = mpps(counters, idles, seconds);
                    // a capture by reference copies on a thread of its own (0 when the workers copy)
                    final double copierShare = (cpuNanos("spraynic-capture-copier") - copierBefore) /
                        (double)(System.nanoTime() - onStart);
                    nic.stopCapture();
                    stop.set(true);
                    if (drain)
                    {
                        drainer.join();
                    }
                    if (r >= 0)
                    {
                        results.add(new Round(off, on, sum(counters, ": capture frames") - capturedBefore,
                            sum(counters, ": capture drops (ring full)") - droppedBefore,
                            sum(counters, ": capture sampled out") - sampledOutBefore, copierShare));
                    }
                }
                return results;
            }
            finally
            {
                nic.close(Duration.ofSeconds(1));
            }
        }
    }

    private static void drain(final MemorySegment memory, final AtomicBoolean stop)
    {
        final CaptureRingReader reader = new CaptureRingReader(memory);
        final long[] bytes = new long[1];
        final CaptureRingReader.FrameHandler handler = (plane, queue, direction, timestamp, m, offset, captured, original) ->
            bytes[0] += m.get(java.lang.foreign.ValueLayout.JAVA_BYTE, offset + captured - 1); // touch it, as a writer would
        while (!stop.get())
        {
            if (reader.pollAll(handler, READ_LIMIT) < READ_LIMIT)
            {
                reader.pause(); // as spraynic capture
            }
        }
        if (bytes[0] == 42)
        {
            System.out.print(""); // keeps the reads
        }
    }

    /** @return the workers' received frames per second over {@code seconds}, in millions, and the window's counts. */
    private static Rate mpps(final CountersFile counters, final List<CountingIdleStrategy> idles, final double seconds)
        throws InterruptedException
    {
        final long before = sum(counters, ": rx frames");
        final long capturedBefore = sum(counters, ": capture frames");
        final long emptyBefore = emptyLoops(idles);
        final long cpuBefore = cpuNanos("spraynic-worker-");
        final long start = System.nanoTime();
        Thread.sleep((long)(seconds * 1000));
        final long frames = sum(counters, ": rx frames") - before;
        final long cpu = cpuNanos("spraynic-worker-") - cpuBefore;
        final long nanos = System.nanoTime() - start;
        return new Rate(frames / (nanos / 1e9) / 1e6, frames / (cpu / 1e9) / 1e6, frames, cpu,
            emptyLoops(idles) - emptyBefore, sum(counters, ": capture frames") - capturedBefore);
    }

    private static long emptyLoops(final List<CountingIdleStrategy> idles)
    {
        long loops = 0;
        for (final CountingIdleStrategy idle : idles)
        {
            loops += idle.emptyLoops();
        }
        return loops;
    }

    /** @return CPU time the threads whose names start with {@code prefix} used so far (the live ones). */
    private static long cpuNanos(final String prefix)
    {
        final java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        long nanos = 0;
        for (final Thread t : Thread.getAllStackTraces().keySet())
        {
            if (t.getName().startsWith(prefix))
            {
                nanos += Math.max(0, threads.getThreadCpuTime(t.threadId()));
            }
        }
        return nanos;
    }

    private static long sum(final CountersFile counters, final String suffix)
    {
        final long[] sum = new long[1];
        counters.counters().forEach((value, id, label) ->
        {
            if (label.startsWith("worker ") && label.endsWith(suffix))
            {
                sum[0] += value;
            }
        });
        return sum[0];
    }
}
