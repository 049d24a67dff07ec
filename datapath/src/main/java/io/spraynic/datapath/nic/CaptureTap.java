package io.spraynic.datapath.nic;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.capture.CaptureRingWriter;
import io.spraynic.datapath.capture.TappingPacketPort;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;

/**
 * A worker's capture tap: while a live capture ({@link EmbeddedNic#startCapture}) takes frames of this worker's queue,
 * its ports ({@link Port}) hand every received and transmitted burst here, and the frames the filter takes are copied
 * into the worker's ring. With no capture the ports pay one branch per burst on {@link #enabled}. Started, stopped
 * and used on the worker's thread only (commands), so nothing here is shared.
 * <p>
 * Nothing the capture client does reaches the worker: a full ring counts drops; a ring the client corrupted stops
 * this tap (counted as a fault); an exception while copying, which no client should be able to cause, stops the tap
 * too rather than the worker.
 */
public final class CaptureTap
{
    private final int ring;
    private final AtomicCounter captured;
    private final AtomicCounter dropped;
    private final AtomicCounter filtered;
    private final AtomicCounter faults;
    /** Bit {@code plane * 2 + direction} set while those frames are taken; 0 with no capture. */
    private long enabled;
    private CaptureRingWriter writer;
    private CaptureFilter filter;
    private long epochOffsetNanos;
    private long sessionFaults;
    /** Plane and queue of each port that reports here (control path: set before the worker starts). */
    private int[] portPlanes = new int[0];
    private int[] portQueues = new int[0];

    /** @param ring the capture ring this tap writes (one per worker thread). */
    public CaptureTap(final int ring, final AtomicCounter captured, final AtomicCounter dropped, final AtomicCounter filtered,
        final AtomicCounter faults)
    {
        this.ring = ring;
        this.captured = captured;
        this.dropped = dropped;
        this.filtered = filtered;
        this.faults = faults;
    }

    /** @return {@code port} reporting to this tap as {@code plane}, its queue the tap's ring (a worker's queue). */
    PacketPort tap(final PacketPort port, final int plane)
    {
        return tap(port, plane, ring);
    }

    /** @return {@code port}, queue {@code queue} of {@code plane}, reporting to this tap (control path). */
    public PacketPort tap(final PacketPort port, final int plane, final int queue)
    {
        portPlanes = java.util.Arrays.copyOf(portPlanes, portPlanes.length + 1);
        portQueues = java.util.Arrays.copyOf(portQueues, portQueues.length + 1);
        portPlanes[portPlanes.length - 1] = plane;
        portQueues[portQueues.length - 1] = queue;
        return new Port(port, this, plane, queue);
    }

    /** Starts taking the frames {@code filter} takes of this tap's ports of the first {@code planes} (worker thread). */
    public void start(final MemorySegment memory, final CaptureRingLayout layout, final CaptureFilter filter, final int planes)
    {
        this.writer = new CaptureRingWriter(memory, layout, ring);
        this.filter = filter;
        this.epochOffsetNanos = System.currentTimeMillis() * 1_000_000L - System.nanoTime();
        this.sessionFaults = 0;
        long bits = 0;
        for (int p = 0; p < portPlanes.length; p++)
        {
            final int plane = portPlanes[p];
            for (int direction = TappingPacketPort.RX; direction <= TappingPacketPort.TX; direction++)
            {
                if (plane < planes && filter.takes(plane, portQueues[p], direction))
                {
                    bits |= 1L << (plane * 2 + direction);
                }
            }
        }
        enabled = bits;
    }

    /** Stops taking frames and writes the final statistics (worker thread); the memory may go once this returns. */
    public void stop()
    {
        enabled = 0;
        if (null != writer)
        {
            try
            {
                writer.publishFinal(sessionFaults);
            }
            catch (final RuntimeException | InternalError ex)
            {
                faults.incrementRelease();
            }
            writer = null;
            filter = null;
        }
    }

    private void onFrames(final int plane, final int queue, final int direction, final PacketBurst burst, final int from,
        final int to)
    {
        final CaptureRingWriter w = writer;
        final long capturedBefore = w.captured();
        final long droppedBefore = w.dropped();
        final long filteredBefore = w.filtered();
        try
        {
            w.write(plane, queue, direction, burst, from, to, epochOffsetNanos + System.nanoTime(), filter);
        }
        catch (final RuntimeException | InternalError ex)
        {
            onFault(); // InternalError: a fault on the shared memory the JVM turned into an exception
            return;
        }
        count(captured, w.captured() - capturedBefore);
        count(dropped, w.dropped() - droppedBefore);
        count(filtered, w.filtered() - filteredBefore);
        if (w.headCorrupt())
        {
            onFault();
        }
    }

    private static void count(final AtomicCounter counter, final long delta)
    {
        if (delta != 0)
        {
            counter.getAndAddRelease(delta);
        }
    }

    // out of line: the client corrupted its ring, or the copy failed: this tap stops, the worker goes on
    private void onFault()
    {
        enabled = 0;
        sessionFaults++;
        faults.incrementRelease();
    }

    /** A port of the worker whose received and transmitted frames the tap sees. */
    static final class Port extends TappingPacketPort
    {
        private final CaptureTap tap;
        private final int plane;
        private final int queue;
        private final long rxBit;
        private final long txBit;

        Port(final PacketPort delegate, final CaptureTap tap, final int plane, final int queue)
        {
            super(delegate);
            this.tap = tap;
            this.plane = plane;
            this.queue = queue;
            this.rxBit = 1L << (plane * 2 + RX);
            this.txBit = 1L << (plane * 2 + TX);
        }

        protected boolean tapping(final int direction)
        {
            return (tap.enabled & (direction == RX ? rxBit : txBit)) != 0;
        }

        protected void tap(final int direction, final PacketBurst burst, final int from, final int to)
        {
            tap.onFrames(plane, queue, direction, burst, from, to);
        }
    }
}
