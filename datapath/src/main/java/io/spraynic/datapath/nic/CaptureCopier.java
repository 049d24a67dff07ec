package io.spraynic.datapath.nic;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.capture.CaptureRingWriter;
import io.spraynic.datapath.capture.MbufReferenceRing;
import io.spraynic.dpdk.Mbuf;
import io.spraynic.dpdk.PacketMemory;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

/**
 * The copier of a live capture by reference ({@link CaptureTap#startByReference}): one thread of the NIC, not a
 * worker, that empties every worker's {@link MbufReferenceRing}: it copies each referenced frame the filter takes into
 * that worker's ring of the client's capture memory ({@link CaptureRingWriter}, as the worker does in a capture by
 * copy) and frees the references in bulk. Whatever happens to the copy (a full client ring, a client that corrupted its
 * ring, an exception), every reference is freed: an mbuf taken for a capture always goes back to its pool, and never
 * before the copier has read it. {@link #stop} (once the workers stopped putting references) copies what is left,
 * writes the final statistics and frees the rings.
 */
final class CaptureCopier
{
    private static final int BATCH = 256;
    private static final int CAPTURED = 0;
    private static final int DROPPED = 1;
    private static final int FILTERED = 2;
    private static final int FAULTS = 3;
    private static final int SAMPLED_OUT = 4;

    private final MbufReferenceRing[] rings;
    private final CaptureRingWriter[] writers;
    private final AtomicCounter[][] counters;
    private final CaptureFilter filter;
    private final boolean checksFrames;
    private final MemorySegment packets;
    private final long packetsBase;
    private final long epochNanosAtStart;
    private final long[] foldedDrops;
    private final long[] faults;
    private final boolean[] faulted;
    // spins and yields through the gaps between bursts (the reference ring holds tens of microseconds of frames, a
    // park sleeps at least the timer slack, 50 us); parks only when the capture sees no traffic
    private final IdleStrategy idle = new BackoffIdleStrategy(100, 1_000, 1_000, 20_000);
    private final Thread thread;
    private volatile boolean running = true;
    private volatile boolean finished;

    /**
     * @param rings      each worker's references (index = the worker's capture ring), freed by this copier.
     * @param memory     the client's capture memory, laid out by {@code layout}.
     * @param counters   each worker's tap counters: captured, dropped, filtered, faults, sampled out.
     * @param startNanos the {@code System.nanoTime()} the references' metadata count from.
     */
    CaptureCopier(final MbufReferenceRing[] rings, final MemorySegment memory, final CaptureRingLayout layout,
        final CaptureFilter filter, final AtomicCounter[][] counters, final long startNanos)
    {
        this.rings = rings;
        this.counters = counters;
        this.filter = filter;
        this.checksFrames = filter.checksFrames();
        this.packets = PacketMemory.current().segment();
        this.packetsBase = packets.address();
        this.epochNanosAtStart = System.currentTimeMillis() * 1_000_000L - System.nanoTime() + startNanos;
        this.writers = new CaptureRingWriter[rings.length];
        for (int r = 0; r < rings.length; r++)
        {
            writers[r] = new CaptureRingWriter(memory, layout, r);
        }
        this.foldedDrops = new long[rings.length];
        this.faults = new long[rings.length];
        this.faulted = new boolean[rings.length];
        this.thread = new Thread(this::run, "spraynic-capture-copier");
        this.thread.setDaemon(true);
    }

    void start()
    {
        thread.start();
    }

    /**
     * Copies what the workers left (they must have stopped putting references), writes the final statistics and frees
     * every reference and ring.
     *
     * @throws IllegalStateException when the copier did not finish within {@code timeoutMillis} (the capture memory
     *                               must then stay mapped).
     */
    void stop(final long timeoutMillis)
    {
        running = false;
        try
        {
            thread.join(TimeUnit.MILLISECONDS.toMillis(timeoutMillis));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
        if (!finished)
        {
            throw new IllegalStateException("the capture copier did not finish within " + timeoutMillis + " ms");
        }
    }

    private void run()
    {
        try
        {
            while (running)
            {
                idle.idle(copyAll());
            }
            while (copyAll() > 0)
            {
                // what the workers put before they stopped
            }
            for (int r = 0; r < rings.length; r++)
            {
                try
                {
                    foldWorkerDrops(r, rings[r], writers[r]);
                    foldInterfaceDrops(rings[r], writers[r]);
                    writers[r].publishFinal(faults[r]);
                }
                catch (final RuntimeException | InternalError ex)
                {
                    counters[r][FAULTS].getAndAdd(1);
                }
            }
        }
        finally
        {
            for (final MbufReferenceRing ring : rings)
            {
                ring.close(); // frees any reference left, whatever happened above
            }
            finished = true;
        }
    }

    private int copyAll()
    {
        int work = 0;
        for (int r = 0; r < rings.length; r++)
        {
            work += copy(r);
        }
        return work;
    }

    /** Copies up to a batch of worker {@code r}'s references, then frees them. */
    private int copy(final int r)
    {
        final MbufReferenceRing ring = rings[r];
        final int count = Math.min(ring.available(), BATCH);
        if (count == 0)
        {
            return 0;
        }
        if (faulted[r])
        {
            ring.release(count); // the client broke its ring: frames are only freed now, counted as dropped
            count(r, DROPPED, count);
            return count;
        }
        final CaptureRingWriter writer = writers[r];
        final long capturedBefore = writer.captured();
        final long droppedBefore = writer.dropped();
        final long filteredBefore = writer.filtered();
        final long sampledOutBefore = writer.sampledOut();
        try
        {
            for (int i = 0; i < count; i++)
            {
                copyOne(writer, ring.address(i), ring.metadata(i));
            }
            count(r, DROPPED, writer.dropped() - droppedBefore);
            foldWorkerDrops(r, ring, writer);
            writer.publish();
            count(r, CAPTURED, writer.captured() - capturedBefore);
            count(r, FILTERED, writer.filtered() - filteredBefore);
            count(r, SAMPLED_OUT, writer.sampledOut() - sampledOutBefore);
            if (writer.headCorrupt())
            {
                fault(r);
            }
        }
        catch (final RuntimeException | InternalError ex)
        {
            fault(r); // InternalError: a fault on the client's shared memory that the JVM turned into an exception
        }
        finally
        {
            ring.release(count);
        }
        return count;
    }

    private void copyOne(final CaptureRingWriter writer, final long mbufAddress, final long metadata)
    {
        final long mbufOffset = mbufAddress - packetsBase;
        final long offset = Mbuf.dataOffset(packets, packetsBase, mbufOffset);
        final int length = Mbuf.dataLength(packets, mbufOffset);
        if (checksFrames && !filter.matches(packets, offset, length))
        {
            writer.countFiltered(1);
            return;
        }
        if (!writer.sampled())
        {
            return; // counted sampled out (the worker took the reference: by reference, the copier samples)
        }
        writer.write(MbufReferenceRing.plane(metadata), MbufReferenceRing.queue(metadata),
            MbufReferenceRing.direction(metadata), packets, offset, length,
            epochNanosAtStart + MbufReferenceRing.nanos(metadata));
    }

    /**
     * The frames the worker dropped at its full reference ring go into the client's statistics and the tap's counter
     * too (the copier counts them, so the worker pays one store per burst it drops from).
     */
    private void foldWorkerDrops(final int r, final MbufReferenceRing ring, final CaptureRingWriter writer)
    {
        final long now = ring.droppedSoFar();
        if (now != foldedDrops[r])
        {
            writer.countDropped(now - foldedDrops[r]);
            count(r, DROPPED, now - foldedDrops[r]);
            foldedDrops[r] = now;
        }
    }

    /** When the workers stopped: the worker's drops by port and direction, for the final statistics. */
    private static void foldInterfaceDrops(final MbufReferenceRing ring, final CaptureRingWriter writer)
    {
        for (int plane = 0; plane < CaptureRingLayout.MAX_PLANES; plane++)
        {
            for (int direction = 0; direction < 2; direction++)
            {
                writer.countInterfaceDrops(plane, direction, ring.droppedSoFar(plane, direction));
            }
        }
    }

    private void fault(final int r)
    {
        if (!faulted[r])
        {
            faulted[r] = true;
            faults[r]++;
            counters[r][FAULTS].getAndAdd(1);
        }
    }

    private void count(final int r, final int which, final long delta)
    {
        if (delta != 0)
        {
            counters[r][which].getAndAddRelease(delta); // the copier is the one writer while it runs
        }
    }
}
