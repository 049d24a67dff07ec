package io.spraynic.bench.jmh;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.capture.CaptureRingReader;
import io.spraynic.datapath.nic.CaptureTap;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * What a worker's capture tap ({@link CaptureTap}, the shipped one: its port wrapper, the ring writer, the counters)
 * costs per frame, timed by the worker thread's CPU time (robust to a loaded machine, where wall-clock ratios swing):
 * a loop shaped as a worker's, a receive of a burst then a transmit of a burst on one port, each burst {@code frames}
 * frames of {@code length} bytes (the RoCEv2 workload of {@code bench capture --workload rocev2 --size 64}: 138 B data
 * frames, a few per burst), run in alternating rounds with the tap idle and with every frame captured, the rings
 * emptied by a client thread with {@link CaptureRingReader} every {@link CaptureRingReader#READ_INTERVAL_NANOS}, as
 * {@code spraynic capture} reads. Tap cost per frame = (CPU ns of the capturing round - CPU ns of the idle round) ÷
 * frames tapped. The port itself does nothing (no driver), so what is left is the tap; each loop also does some work
 * of its own ({@code work} steps of a random number generator, a few hundred ns, as a transport does per burst) so
 * that the client keeps up as it does on the transport's workload: a frame dropped at a full ring costs the tap far
 * less than one copied, and a harness that drops would flatter a faster tap.
 * <pre>
 *   java -cp ... io.spraynic.bench.jmh.CaptureTapCpuTime [frames per burst (4) [frame bytes (138) [rounds (9)
 *       [loops per round (1,000,000) [snap length (4096) [work per loop (256 steps) [ring slots (4096)]]]]]]]
 * </pre>
 */
public final class CaptureTapCpuTime
{
    private static final int BUFFER_STRIDE = 2048;
    /** The loops' own work (kept, so that it is done). */
    private static long random;

    private CaptureTapCpuTime()
    {
    }

    /**
     * @param args frames per burst, frame bytes, rounds, loops per round, snap length.
     */
    public static void main(final String[] args) throws InterruptedException
    {
        final int frames = args.length > 0 ? Integer.parseInt(args[0]) : 4;
        final int length = args.length > 1 ? Integer.parseInt(args[1]) : 138;
        final int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 9;
        final int loops = args.length > 3 ? Integer.parseInt(args[3]) : 1_000_000;
        final int snapLength = args.length > 4 ? Integer.parseInt(args[4]) : CaptureRingLayout.DEFAULT_SNAP_LENGTH;
        final int work = args.length > 5 ? Integer.parseInt(args[5]) : 256;
        final int slots = args.length > 6 ? Integer.parseInt(args[6]) : 4096; // as bench capture --workload
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final CaptureRingLayout layout = CaptureRingLayout.of(1, slots, snapLength);
        final double[] costs = new double[rounds];
        final double[] offNs = new double[rounds];
        try (Arena arena = Arena.ofShared())
        {
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            final MemorySegment buffers = arena.allocate((long)frames * BUFFER_STRIDE, 4096);
            for (long i = 0; i < buffers.byteSize(); i++)
            {
                buffers.set(ValueLayout.JAVA_BYTE, i, (byte)i);
            }
            final CountersManager manager = new CountersManager(
                new UnsafeBuffer(BufferUtil.allocateDirectAligned(5 * CountersReader.METADATA_LENGTH, 64)),
                new UnsafeBuffer(BufferUtil.allocateDirectAligned(5 * CountersReader.COUNTER_LENGTH, 64)));
            final AtomicCounter captured = manager.newCounter("captured");
            final AtomicCounter dropped = manager.newCounter("dropped");
            final CaptureTap tap = new CaptureTap(0, captured, dropped, manager.newCounter("filtered"),
                manager.newCounter("faults"), manager.newCounter("sampled out"));
            final PacketPort port = tap.tap(new LoopbackPort(buffers, frames, length), 0, 0);
            final PacketBurst rx = port.newBurst(frames);
            final PacketBurst tx = port.newBurst(frames);
            for (int round = -3; round < rounds; round++) // three rounds of warm-up, each both ways
            {
                final long idle = timed(threads, port, rx, tx, loops, work);
                layout.writeHeader(memory, ProcessHandle.current().pid(), round, new String[]{"bench0"}, "", 0, 0);
                final Drainer drainer = new Drainer(memory);
                drainer.start();
                tap.start(memory, layout, CaptureFilter.ALL, 1);
                final long capturedBefore = captured.get();
                final long droppedBefore = dropped.get();
                final long capturing = timed(threads, port, rx, tx, loops, work);
                tap.stop();
                CaptureRingLayout.end(memory);
                drainer.finish();
                memory.fill((byte)0);
                final long tapped = 2L * loops * frames;
                final long took = captured.get() - capturedBefore;
                final long lost = dropped.get() - droppedBefore;
                if (took + lost != tapped || drainer.read != took)
                {
                    throw new IllegalStateException("tapped " + tapped + ", captured " + took + " + dropped " + lost +
                        ", the client read " + drainer.read);
                }
                if (round >= 0)
                {
                    costs[round] = (double)(capturing - idle) / tapped;
                    offNs[round] = (double)idle / tapped;
                    System.out.printf(Locale.ROOT, "round %d: idle tap %.1f CPU ns a frame, capturing %.1f: the tap " +
                        "costs %.1f ns a frame (captured %,d, dropped %,d)%n", round, offNs[round],
                        (double)capturing / tapped, costs[round], took, lost);
                }
            }
        }
        final double[] sorted = costs.clone();
        Arrays.sort(sorted);
        System.out.printf(Locale.ROOT, "capture tap, CPU ns per %d B frame in bursts of %d: median %.1f, best %.1f, " +
            "worst %.1f (%d rounds of %,d loops of %d steps of work; %s)%n", length, frames, sorted[rounds / 2], sorted[0],
            sorted[rounds - 1], rounds, loops, work, layout);
        if (random == 42)
        {
            System.out.print(""); // keeps the loops' work
        }
    }

    private static long timed(final ThreadMXBean threads, final PacketPort port, final PacketBurst rx,
        final PacketBurst tx, final int loops, final int work)
    {
        final long start = threads.getCurrentThreadCpuTime();
        for (int i = 0; i < loops; i++)
        {
            for (int step = 0; step < work; step++)
            {
                random = random * 6364136223846793005L + 1442695040888963407L;
            }
            rx.close();
            port.receive(rx);
            tx.close();
            port.allocate(tx, tx.capacity());
            port.transmit(tx);
        }
        return threads.getCurrentThreadCpuTime() - start;
    }

    /** The capture client: reads what the rings hold every millisecond, as spraynic capture does. */
    private static final class Drainer extends Thread
    {
        private final CaptureRingReader reader;
        private final AtomicBoolean stop = new AtomicBoolean();
        private long read;
        private long touched;

        Drainer(final MemorySegment memory)
        {
            super("capture-client");
            setDaemon(true);
            this.reader = new CaptureRingReader(memory);
        }

        public void run()
        {
            final CaptureRingReader.FrameHandler handler = (plane, queue, direction, timestamp, frames, offset, captured,
                original) -> touched += frames.get(ValueLayout.JAVA_BYTE, offset + captured - 1);
            while (!stop.get())
            {
                read += reader.pollAll(handler, Long.MAX_VALUE);
                reader.pause();
            }
            read += reader.pollAll(handler, Long.MAX_VALUE);
        }

        void finish() throws InterruptedException
        {
            stop.set(true);
            join();
            if (touched == 42)
            {
                System.out.print(""); // keeps the reads
            }
        }
    }

    /** A port whose every receive returns a full burst of the same frames and whose transmit takes everything. */
    private static final class LoopbackPort implements PacketPort
    {
        private final MemorySegment buffers;
        private final int frames;
        private final int length;

        LoopbackPort(final MemorySegment buffers, final int frames, final int length)
        {
            this.buffers = buffers;
            this.frames = frames;
            this.length = length;
        }

        public String name()
        {
            return "bench0";
        }

        public PacketBurst newBurst(final int capacity)
        {
            return new Burst(buffers, capacity, length);
        }

        public int receive(final PacketBurst burst)
        {
            ((Burst)burst).size = frames;
            return frames;
        }

        public boolean allocate(final PacketBurst burst, final int count)
        {
            ((Burst)burst).size = count;
            return true;
        }

        public int transmit(final PacketBurst burst)
        {
            final int sent = burst.size();
            ((Burst)burst).size = 0;
            return sent;
        }

        public void release(final PacketBurst burst)
        {
            ((Burst)burst).size = 0;
        }

        public void close()
        {
        }
    }

    /** Frames {@link #BUFFER_STRIDE} apart, as mbufs lie. */
    private static final class Burst implements PacketBurst
    {
        private final MemorySegment buffers;
        private final int capacity;
        private final int length;
        private int size;

        Burst(final MemorySegment buffers, final int capacity, final int length)
        {
            this.buffers = buffers;
            this.capacity = capacity;
            this.length = length;
        }

        public int size()
        {
            return size;
        }

        public int capacity()
        {
            return capacity;
        }

        public MemorySegment memory()
        {
            return buffers;
        }

        public long offset(final int index)
        {
            return (long)index * BUFFER_STRIDE;
        }

        public int length(final int index)
        {
            return length;
        }

        public void length(final int index, final int length)
        {
            throw new UnsupportedOperationException();
        }

        public int room(final int index)
        {
            return BUFFER_STRIDE;
        }

        public void close()
        {
            size = 0;
        }
    }
}
