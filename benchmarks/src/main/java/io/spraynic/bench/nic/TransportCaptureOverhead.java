package io.spraynic.bench.nic;

import io.spraynic.bench.e2e.Idle;
import io.spraynic.bench.e2e.RingNic;
import io.spraynic.bench.e2e.Throughput;
import io.spraynic.bench.e2e.ThroughputResult;
import io.spraynic.bench.e2e.TransportPair;
import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.capture.CaptureRingReader;
import io.spraynic.datapath.nic.CaptureTap;
import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.dpdk.PortStats;
import org.agrona.BufferUtil;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * What a live capture of every frame costs the NIC's workers while they carry a transfer: the set-up of
 * {@code bench throughput --threads 1} ({@link Throughput#run}: two endpoints of one transport, each driven by its
 * {@code NicWorker}, both on one thread, over a crossed {@code net_ring} pair), each endpoint's port wrapped in a
 * {@link CaptureTap} as an embedded NIC wraps its workers' ports (the shipped tap and ring writer), in alternating runs
 * with the taps idle (the one branch per burst a NIC always pays) and with every frame of both directions of both
 * endpoints captured, emptied by a drainer thread with the {@link CaptureRingReader} that {@code spraynic capture}
 * uses. The workers' throughput: messages completed per second of the poll thread's CPU time. Each run is a fresh
 * connection whose every byte is verified; each capturing run also checks that every frame the two ports received or
 * transmitted reached the capture (taken or counted dropped). Rounds alternate which run goes first.
 */
public final class TransportCaptureOverhead
{
    /** Ring of each endpoint's tap in the capture memory: A's worker 0, B's worker 1. */
    static final int RING_A = 0;
    static final int RING_B = 1;
    private static final int COUNTERS_PER_TAP = 5;

    /**
     * One round: the transfer without and with the capture, and what the capturing run's capture saw.
     *
     * @param captured     frames the taps wrote into their rings.
     * @param dropped      frames the taps counted dropped (ring full).
     * @param sampledOut   frames the taps passed over (sampling one in N).
     * @param drained      frames the drainer read out of the rings.
     * @param portFrames   frames the two ports received and transmitted while the capture ran (the driver's count).
     * @param capturedRxTx frames captured: {A rx, A tx, B rx, B tx}, as the drainer read them.
     * @param everyFrame   the capture took every frame (no filter) and was drained: {@link #complete} applies.
     */
    public record Round(ThroughputResult off, ThroughputResult on, long captured, long dropped, long sampledOut,
        long drained, long portFrames, long[] capturedRxTx, boolean everyFrame, PollWindow offWindow, PollWindow onWindow)
    {
        /** @return messages per second of worker CPU time while capturing ÷ without: the workers' throughput ratio. */
        public double ratio()
        {
            return messagesPerCpuSecond(on) / messagesPerCpuSecond(off);
        }

        /** @return the poll thread's CPU time in the window without capture, less its empty loops'. */
        public long busyOffNanos()
        {
            return offWindow.busyCpuNanos(off);
        }

        /** @return the poll thread's CPU time in the capturing window, less its empty loops'. */
        public long busyOnNanos()
        {
            return onWindow.busyCpuNanos(on);
        }

        /** @return messages per busy second of the poll thread, capturing ÷ without: the ratio without the idle spin. */
        public double busyRatio()
        {
            return CaptureCost.busyRatio(off.messages(), busyOffNanos(), on.messages(), busyOnNanos());
        }

        /** @return ns of the poll thread's busy CPU per frame captured in the window, beyond the transfer's own cost. */
        public double nanosPerCapturedFrame()
        {
            return CaptureCost.nanosPerCapturedFrame(off.messages(), busyOffNanos(), on.messages(), busyOnNanos(),
                onWindow.captured());
        }

        /** @return ns of the poll thread's busy CPU per message without capture (both endpoints' work for it). */
        public double nanosPerMessageOff()
        {
            return CaptureCost.nanosPerWork(off.messages(), busyOffNanos());
        }

        /**
         * @return every frame the ports received or sent was captured, counted dropped or counted sampled out, and the
         * drainer read each one captured.
         */
        public boolean complete()
        {
            return captured + dropped + sampledOut == portFrames && drained == captured;
        }

        public String toString()
        {
            return String.format(Locale.ROOT, "off %.3f M messages per worker CPU s (%.3f Mpps by the clock), capturing " +
                "%.3f (%.3f Mpps): ratio %.3f; without the empty loops (off %.0f %% of the CPU at %.1f ns each, capturing " +
                "%.0f %% at %.1f ns) %.3f, the capture %.1f ns of busy CPU per frame captured (a message %.1f ns off); " +
                "captured %,d (A rx %,d tx %,d, B rx %,d tx %,d), dropped %,d (ring full), sampled out %,d, drained %,d, " +
                "frames on the ports %,d%s; transfers %s", messagesPerCpuSecond(off) / 1e6, off.mpps(), messagesPerCpuSecond(on) / 1e6,
                on.mpps(), ratio(), spinPercent(off.cpuNanos(), busyOffNanos()), offWindow.emptyLoopNanos(),
                spinPercent(on.cpuNanos(), busyOnNanos()),
                onWindow.emptyLoopNanos(), busyRatio(), nanosPerCapturedFrame(), nanosPerMessageOff(), captured,
                capturedRxTx[0], capturedRxTx[1], capturedRxTx[2], capturedRxTx[3], dropped, sampledOut, drained, portFrames,
                !everyFrame || complete() ? "" : " (NOT ALL CAPTURED)", off.verified() && on.verified() ? "verified" :
                "NOT VERIFIED");
        }
    }

    /**
     * What the poll thread did in one run's measured window besides its messages: its loops and empty loops
     * ({@link CountingIdleStrategy}), what one empty loop cost it (measured once the transfer had drained, the thread
     * still spinning with nothing to do: {@link #IDLE_MEASURE_NANOS} of its CPU time over its loops), and the frames
     * its taps captured in the window (0 without capture).
     */
    public record PollWindow(long loops, long emptyLoops, double emptyLoopNanos, long captured)
    {
        /**
         * @return the run's CPU time in the window less its empty loops'; -1 when that is unknown: the empty loop's cost
         * was not measured, or the window's empty loops at that cost exceed its CPU time (an empty loop of the drained
         * thread cost more than one in the window: a test run saw 270 ns drained against at most 192 in its window).
         */
        public long busyCpuNanos(final ThroughputResult result)
        {
            return CaptureCost.busyCpuNanos(result.cpuNanos(), emptyLoops, emptyLoopNanos);
        }
    }

    /** How long the drained poll thread spins to measure what an empty loop costs it. */
    static final long IDLE_MEASURE_NANOS = 100_000_000L;

    private TransportCaptureOverhead()
    {
    }

    /** @return the share of {@code cpuNanos} spent on empty loops, in %; NaN when the busy time is unknown. */
    static double spinPercent(final long cpuNanos, final long busyNanos)
    {
        return busyNanos < 0 ? Double.NaN : 100.0 * (cpuNanos - busyNanos) / Math.max(1, cpuNanos);
    }

    /** @return messages completed per second of the poll thread's CPU time. */
    public static double messagesPerCpuSecond(final ThroughputResult result)
    {
        return result.cpuNanos() == 0 ? 0 : result.messages() * 1e9 / result.cpuNanos();
    }

    /**
     * @param messageBytes bytes per RDMA WRITE.
     * @param snapLength   bytes the capture keeps of each frame.
     * @param sample       the taps write one frame in this many of those the filter takes.
     * @param ringBytes    bytes of records of each tap's ring ({@link CaptureOverhead#defaultRingBytes}).
     * @param warmup       seconds of each run before its measured window (the capture runs through both).
     * @param drain        whether a drainer empties the rings (false: a client that never drains).
     * @param filter       which frames the capture takes.
     * @param log          each round's line as it ends.
     */
    public static List<Round> run(final DpdkNic nic, final TransportPair.Kind kind, final int messageBytes,
        final int snapLength, final int sample, final long ringBytes, final double warmup, final double seconds, final int rounds,
        final boolean drain, final CaptureFilter filter, final Consumer<String> log)
    {
        final CaptureRingLayout layout = CaptureRingLayout.ofRingBytes(2, ringBytes, snapLength, sample);
        try (Arena arena = Arena.ofShared())
        {
            final MemorySegment memory = arena.allocate(layout.fileLength(), 4096);
            // untimed: compiles the transport's paths with the capture's branch taken and not, before the first measured
            // run (a first capture deoptimises a loop compiled without it, RESULTS.md 13, and the first run without one
            // after it was still at a fifth of its later rate: section 31); on a loaded machine the JIT needs seconds
            final double untimed = Math.max(3, warmup);
            run(nic, kind, messageBytes, 0, untimed, new Taps(nic, memory, layout, filter, false, drain, 0));
            run(nic, kind, messageBytes, 0, untimed, new Taps(nic, memory, layout, filter, true, drain, 0));
            run(nic, kind, messageBytes, 0, untimed, new Taps(nic, memory, layout, filter, false, drain, 0));
            final List<Round> results = new ArrayList<>();
            for (int r = 0; r < rounds; r++)
            {
                // off first in even rounds, capturing first in odd ones: a drift (the JIT, the host's load) favours neither
                final Taps capture = new Taps(nic, memory, layout, filter, true, drain, r + 1);
                final Taps idle = new Taps(nic, memory, layout, filter, false, drain, r + 1);
                final ThroughputResult first = run(nic, kind, messageBytes, warmup, seconds, r % 2 == 0 ? idle : capture);
                final ThroughputResult second = run(nic, kind, messageBytes, warmup, seconds, r % 2 == 0 ? capture : idle);
                final Round round = new Round(r % 2 == 0 ? first : second, r % 2 == 0 ? second : first, capture.captured(),
                    capture.dropped(), capture.sampledOut(), capture.drained(), capture.portFrames(), capture.drainedByDirection(),
                    drain && filter.equals(CaptureFilter.ALL), idle.pollWindow(), capture.pollWindow());
                log.accept(round.toString());
                results.add(round);
            }
            return results;
        }
    }

    private static ThroughputResult run(final DpdkNic nic, final TransportPair.Kind kind, final int messageBytes,
        final double warmup, final double seconds, final Taps taps)
    {
        return Throughput.run(nic, kind, TransportPair.MTU, messageBytes, warmup, seconds, 1, Idle.SPIN, taps);
    }

    /**
     * Each endpoint's port through a capture tap of its own (ring A or B of one capture memory); when capturing, both
     * taps take what the filter takes while the poll thread runs. Taps are started before the thread and stopped after
     * it, so that, as in a NIC, only the worker's thread uses them while it runs.
     */
    private static final class Taps implements Throughput.PortHook
    {
        private final DpdkNic nic;
        private final MemorySegment memory;
        private final CaptureRingLayout layout;
        private final CaptureFilter filter;
        private final boolean capturing;
        private final boolean drain;
        private final long captureId;
        private final CaptureTap[] taps = new CaptureTap[2];
        private final AtomicCounter[][] counters = new AtomicCounter[2][];
        private final long[] drainedByDirection = new long[4];
        private final AtomicBoolean stop = new AtomicBoolean();
        private Thread drainer;
        private long portFramesBefore;
        private long portFrames;
        private CountingIdleStrategy pollIdle;
        private long loopsAtStart;
        private long emptyLoopsAtStart;
        private long capturedAtStart;
        private PollWindow window = new PollWindow(0, 0, Double.NaN, 0);
        private double emptyLoopNanos = Double.NaN;

        Taps(final DpdkNic nic, final MemorySegment memory, final CaptureRingLayout layout, final CaptureFilter filter,
            final boolean capturing, final boolean drain, final long captureId)
        {
            this.nic = nic;
            this.memory = memory;
            this.layout = layout;
            this.filter = filter;
            this.capturing = capturing;
            this.drain = drain;
            this.captureId = captureId;
        }

        public PacketPort port(final String name, final PacketPort port)
        {
            final int ring = RingNic.PORT_A.equals(name) ? RING_A : RING_B;
            final CountersManager manager = new CountersManager(
                new UnsafeBuffer(BufferUtil.allocateDirectAligned(COUNTERS_PER_TAP * CountersReader.METADATA_LENGTH, 64)),
                new UnsafeBuffer(BufferUtil.allocateDirectAligned(COUNTERS_PER_TAP * CountersReader.COUNTER_LENGTH, 64)));
            counters[ring] = new AtomicCounter[]{manager.newCounter("captured"), manager.newCounter("dropped"),
                manager.newCounter("filtered"), manager.newCounter("faults"), manager.newCounter("sampled out")};
            taps[ring] = new CaptureTap(ring, counters[ring][0], counters[ring][1], counters[ring][2], counters[ring][3],
                counters[ring][4]);
            // the endpoint as the frames' queue, so that the drainer tells A's frames from B's
            return taps[ring].tap(port, 0, ring);
        }

        public IdleStrategy idleStrategy(final IdleStrategy strategy)
        {
            if (null != pollIdle)
            {
                throw new IllegalStateException("one poll thread carries both endpoints here (threads 1)");
            }
            pollIdle = new CountingIdleStrategy(strategy);
            return pollIdle;
        }

        public void window(final boolean start, final long pollCpuNanos)
        {
            if (start)
            {
                loopsAtStart = pollIdle.loops();
                emptyLoopsAtStart = pollIdle.emptyLoops();
                capturedAtStart = captured();
            }
            else
            {
                window = new PollWindow(pollIdle.loops() - loopsAtStart, pollIdle.emptyLoops() - emptyLoopsAtStart,
                    Double.NaN, captured() - capturedAtStart);
            }
        }

        public void drained(final LongSupplier pollCpuNanos)
        {
            final long loops = pollIdle.loops();
            final long cpu = pollCpuNanos.getAsLong();
            java.util.concurrent.locks.LockSupport.parkNanos(IDLE_MEASURE_NANOS);
            final long idleLoops = pollIdle.loops() - loops;
            // every loop counted, the few that found a late ACK or timer too: an empty loop's cost, if anything, high
            emptyLoopNanos = idleLoops > 0 ? (pollCpuNanos.getAsLong() - cpu) / (double)idleLoops : Double.NaN;
        }

        PollWindow pollWindow()
        {
            return new PollWindow(window.loops(), window.emptyLoops(), emptyLoopNanos, window.captured());
        }

        public void beforeStart()
        {
            if (!capturing)
            {
                return;
            }
            memory.fill((byte)0);
            layout.writeHeader(memory, ProcessHandle.current().pid(), captureId, new String[]{RingNic.PORT_A}, "", 0, 0);
            portFramesBefore = portFramesNow();
            for (final CaptureTap tap : taps)
            {
                tap.start(memory, layout, filter, 1);
            }
            if (drain)
            {
                drainer = new Thread(this::drain, "capture-drainer");
                drainer.setDaemon(true); // a run that fails between start and stop must not keep the process alive
                drainer.start();
            }
        }

        public void afterStop()
        {
            if (!capturing)
            {
                return;
            }
            for (final CaptureTap tap : taps)
            {
                tap.stop();
            }
            portFrames = portFramesNow() - portFramesBefore;
            CaptureRingLayout.end(memory);
            stop.set(true);
            if (null != drainer)
            {
                try
                {
                    drainer.join();
                }
                catch (final InterruptedException ex)
                {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException("interrupted while the drainer ends", ex);
                }
            }
            for (final AtomicCounter[] tapCounters : counters)
            {
                if (tapCounters[3].get() != 0)
                {
                    throw new IllegalStateException("a capture tap stopped on a fault: " + tapCounters[3].get());
                }
            }
        }

        /** Empties both rings as spraynic capture would, until stopped, then what is left. */
        private void drain()
        {
            final CaptureRingReader reader = new CaptureRingReader(memory);
            final long[] touched = new long[1];
            final CaptureRingReader.FrameHandler handler = (plane, queue, direction, timestamp, frames, offset, captured,
                original) ->
            {
                touched[0] += frames.get(ValueLayout.JAVA_BYTE, offset + captured - 1); // read it, as a writer would
                drainedByDirection[(queue & 1) * 2 + (direction & 1)]++; // queue: the endpoint (see port)
            };
            while (!stop.get())
            {
                if (reader.pollAll(handler, CaptureOverhead.READ_LIMIT) < CaptureOverhead.READ_LIMIT)
                {
                    reader.pause(); // as spraynic capture
                }
            }
            reader.pollAll(handler, Long.MAX_VALUE); // the taps have stopped: what is left in the rings
            if (touched[0] == 42)
            {
                System.out.print(""); // keeps the reads
            }
        }

        /** @return frames both ports received and transmitted so far, by the driver's count. */
        private long portFramesNow()
        {
            long frames = 0;
            for (final String name : List.of(RingNic.PORT_A, RingNic.PORT_B))
            {
                final PortStats stats = nic.port(name).stats();
                frames += stats.rxPackets() + stats.txPackets();
            }
            return frames;
        }

        long portFrames()
        {
            return portFrames;
        }

        long captured()
        {
            return counters[RING_A][0].get() + counters[RING_B][0].get();
        }

        long dropped()
        {
            return counters[RING_A][1].get() + counters[RING_B][1].get();
        }

        long sampledOut()
        {
            return counters[RING_A][4].get() + counters[RING_B][4].get();
        }

        long drained()
        {
            long frames = 0;
            for (final long count : drainedByDirection)
            {
                frames += count;
            }
            return frames;
        }

        long[] drainedByDirection()
        {
            return drainedByDirection.clone();
        }
    }
}
