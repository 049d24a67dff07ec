package io.spraynic.datapath.nic;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.capture.CaptureRingWriter;
import io.spraynic.datapath.capture.MbufReferenceRing;
import io.spraynic.datapath.capture.TappingPacketPort;
import io.spraynic.datapath.port.DpdkPacketBurst;
import io.spraynic.datapath.port.DpdkPacketPort;
import io.spraynic.datapath.port.PacketBurst;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.dpdk.Mbuf;
import io.spraynic.dpdk.MbufBurst;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;

/**
 * A worker's capture tap: while a live capture ({@link EmbeddedNic#startCapture}) takes frames of this worker's queue,
 * its ports ({@link Port}) hand every received and transmitted burst here, and the frames the filter takes are copied
 * into the worker's ring. With no capture the ports pay one branch per burst on {@link #enabled}. Started, stopped
 * and used on the worker's thread only (commands), so nothing here is shared.
 * <p>
 * By reference ({@link #startByReference}, when every port of the tap is a DPDK port): the worker copies nothing; it
 * takes a second reference on each frame's mbuf and puts its address into a {@link MbufReferenceRing}, from which the
 * {@link CaptureCopier} (a thread of the NIC, not the worker) copies the frame into the client's ring and frees the
 * reference. A full reference ring, or an mbuf shared already, drops the frame (counted).
 * <p>
 * Sampling (one frame in N of those the filter takes, {@link CaptureRingLayout#sample}): with a filter that reads no
 * frame, a burst none of whose frames is sampled costs one branch and a subtraction here (and a counter store), no
 * clock read, no frame visited; the frames sampled are found by stride ({@link CaptureRingWriter}). By reference, the
 * copier samples (the worker takes every reference, as without sampling).
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
    private final AtomicCounter sampledOut;
    /** Bit {@code plane * 2 + direction} set while those frames are taken; 0 with no capture. */
    private long enabled;
    private CaptureRingWriter writer;
    private CaptureFilter filter;
    /** Whether whole bursts may be sampled out before the clock is read: sampling, and a filter that reads no frame. */
    private boolean skipsBursts;
    private long epochOffsetNanos;
    /**
     * The time the frames tapped in this worker loop carry (ns since the epoch), read at the loop's first tapped burst;
     * {@link #clockDue} says the next tapped burst reads it again. A clock read costs about as much as copying a small
     * frame (28 ns on the VM of benchmarks/RESULTS.md 44), and a loop taps up to one burst per port and direction.
     */
    private long loopNanos;
    /**
     * Set by every receive (a worker loop starts with one per port) and after every tapped TX burst, cleared when a
     * tapped burst reads the clock: the TX bursts of a loop reuse the time its RX burst read, and no time outlives the
     * loop that read it (a port that only transmits reads it every burst, as before).
     */
    private boolean clockDue = true;
    private long sessionFaults;
    /** Plane and queue of each port that reports here (control path: set before the worker starts). */
    private int[] portPlanes = new int[0];
    private int[] portQueues = new int[0];
    /** Whether every port reporting here is a DPDK port (its bursts mbufs): a capture by reference is possible. */
    private boolean mbufPorts = true;
    /** Smallest mbuf pool of those ports (the references in flight are bounded by a fraction of it). */
    private long smallestPool = Long.MAX_VALUE;
    /** The capture by reference running; null when none (or one by copy). */
    private MbufReferenceRing references;
    private long startNanos;

    /**
     * @param ring       the capture ring this tap writes (one per worker thread).
     * @param sampledOut frames the filter took that sampling passed over.
     */
    public CaptureTap(final int ring, final AtomicCounter captured, final AtomicCounter dropped, final AtomicCounter filtered,
        final AtomicCounter faults, final AtomicCounter sampledOut)
    {
        this.ring = ring;
        this.captured = captured;
        this.dropped = dropped;
        this.filtered = filtered;
        this.faults = faults;
        this.sampledOut = sampledOut;
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
        if (port instanceof DpdkPacketPort dpdk)
        {
            smallestPool = Math.min(smallestPool, dpdk.pool().size());
        }
        else
        {
            mbufPorts = false;
        }
        return new Port(port, this, plane, queue);
    }

    /** @return whether every port of this tap is a DPDK port, so that a capture can take its frames by reference. */
    boolean capturesByReference()
    {
        return mbufPorts && portPlanes.length > 0;
    }

    /** @return the smallest mbuf pool of this tap's DPDK ports (Long.MAX_VALUE for none). */
    long smallestPool()
    {
        return smallestPool;
    }

    /** @return this tap's counters: captured, dropped, filtered, faults, sampled out (for the copier, which counts for it). */
    AtomicCounter[] counters()
    {
        return new AtomicCounter[]{captured, dropped, filtered, faults, sampledOut};
    }

    /** Starts taking the frames {@code filter} takes of this tap's ports of the first {@code planes} (worker thread). */
    public void start(final MemorySegment memory, final CaptureRingLayout layout, final CaptureFilter filter, final int planes)
    {
        this.writer = new CaptureRingWriter(memory, layout, ring);
        this.references = null;
        this.filter = filter;
        this.skipsBursts = layout.sample() > 1 && !filter.checksFrames();
        this.epochOffsetNanos = System.currentTimeMillis() * 1_000_000L - System.nanoTime();
        this.clockDue = true;
        this.sessionFaults = 0;
        enable(filter, planes);
    }

    /**
     * Starts taking the frames {@code filter} takes by reference into {@code references}, which a {@link CaptureCopier}
     * empties; {@code startNanos} is the {@code System.nanoTime()} the metadata counts from (worker thread).
     */
    void startByReference(final MbufReferenceRing references, final long startNanos, final CaptureFilter filter,
        final int planes)
    {
        if (!capturesByReference())
        {
            throw new IllegalStateException("tap " + ring + " has ports without mbufs: it captures by copy only");
        }
        this.writer = null;
        this.references = references;
        this.startNanos = startNanos;
        this.filter = filter;
        this.sessionFaults = 0;
        enable(filter, planes);
    }

    private void enable(final CaptureFilter filter, final int planes)
    {
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
        if (null != references)
        {
            publishOrStop(references); // the last drops counted; the copier frees what is left and ends the ring
            references = null;
        }
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
        if (null != references)
        {
            try
            {
                onFramesByReference(plane, queue, direction, burst, from, to);
            }
            catch (final RuntimeException | InternalError ex)
            {
                onFault(); // its ring is gone (the copier died): this tap stops, the worker goes on
            }
            return;
        }
        final CaptureRingWriter w = writer;
        if (skipsBursts && w.samplesNone(to - from))
        {
            sampledOut.getAndAddRelease(to - from); // no frame of this burst is the one in N: nothing read, no clock
            return;
        }
        if (clockDue)
        {
            clockDue = false;
            loopNanos = epochOffsetNanos + System.nanoTime(); // as pdump stamps a burst: frames of one loop share it
        }
        final long capturedBefore = w.captured();
        final long droppedBefore = w.dropped();
        final long filteredBefore = w.filtered();
        final long sampledOutBefore = w.sampledOut();
        try
        {
            w.write(plane, queue, direction, burst, from, to, loopNanos, filter);
            clockDue |= direction == TappingPacketPort.TX;
        }
        catch (final RuntimeException | InternalError ex)
        {
            onFault(); // InternalError: a fault on the shared memory the JVM turned into an exception
            return;
        }
        count(captured, w.captured() - capturedBefore);
        count(dropped, w.dropped() - droppedBefore);
        count(filtered, w.filtered() - filteredBefore);
        count(sampledOut, w.sampledOut() - sampledOutBefore);
        if (w.headCorrupt())
        {
            onFault();
        }
    }

    /** Per frame: a second reference on its mbuf and two stores into the reference ring; nothing copied here. */
    private void onFramesByReference(final int plane, final int queue, final int direction, final PacketBurst burst,
        final int from, final int to)
    {
        final MbufReferenceRing refs = references;
        if (!(burst instanceof DpdkPacketBurst dpdk))
        {
            onFault(); // a port without mbufs in a capture by reference: cannot happen (start checks); stop, never copy
            return;
        }
        final MbufBurst mbufs = dpdk.mbufs();
        final MemorySegment memory = mbufs.memory();
        final long base = memory.address();
        final long metadata = MbufReferenceRing.metadata(System.nanoTime() - startNanos, plane, queue, direction);
        final int wanted = to - from;
        final int room = refs.room(wanted);
        int taken = 0;
        int shared = 0;
        try
        {
            for (int i = from, end = from + room; i < end; i++)
            {
                final long mbuf = mbufs.mbufAddress(i);
                if (Mbuf.refcnt(memory, mbuf - base) == 1)
                {
                    // the entry first: should the ring be gone (its copier died), this throws before the count moves
                    refs.put(mbuf, metadata);
                    Mbuf.referenceSoleOwned(memory, mbuf - base);
                    taken++;
                }
                else
                {
                    shared++; // another owner holds it (a ring port's peer): its count is not ours to update plainly
                }
            }
        }
        catch (final RuntimeException | InternalError ex)
        {
            onFault(); // no mbuf of the worker's own burst should fail: stop the tap, not the worker
            shared += room - taken - shared;
        }
        finally
        {
            if (taken > 0)
            {
                publishOrStop(refs); // every reference taken reaches the copier, which frees it
            }
        }
        final int lost = wanted - room + shared;
        if (lost > 0)
        {
            refs.dropped(plane, direction, lost); // the copier adds them to the counter and the client's statistics
        }
    }

    private void publishOrStop(final MbufReferenceRing refs)
    {
        try
        {
            refs.publish();
        }
        catch (final RuntimeException ex)
        {
            onFault(); // the ring is gone (its copier died): nothing more goes to it; the worker goes on
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

        public int receive(final PacketBurst burst)
        {
            tap.clockDue = true; // a receive starts a worker loop (one per port): the next tapped burst reads the clock
            return super.receive(burst);
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
