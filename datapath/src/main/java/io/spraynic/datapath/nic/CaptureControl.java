package io.spraynic.datapath.nic;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.capture.MbufReferenceRing;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;

/**
 * Starts and stops an {@link EmbeddedNic}'s live capture, one at a time. By default each worker's {@link CaptureTap}
 * copies the frames the filter takes into the worker's ring of the capture memory. With
 * {@value #BY_REFERENCE_PROPERTY}{@code =true}, and every worker's ports DPDK ports, the capture is by reference
 * instead: each tap takes a reference on the mbufs and a {@link CaptureCopier} thread copies them, so the workers copy
 * nothing. Not the default: on the 2-core VM it was measured on (benchmarks/RESULTS.md 13b) the copier, without a core
 * of its own, took a fraction of the frames, and the workers paid no less per frame it took.
 */
final class CaptureControl
{
    /** System property: {@code true} takes frames by reference where every worker's ports are DPDK ports. */
    static final String BY_REFERENCE_PROPERTY = "spraynic.capture.byReference";
    private static final long COPIER_STOP_MILLIS = 5_000;

    private final CaptureSource source;
    private final WorkerCalls calls;
    private final CaptureTap[] taps;
    private final int planes;
    private MemorySegment memory; // of the running capture; null for none
    private CaptureCopier copier; // of the running capture by reference; null for none
    private CaptureCopier unconfirmedCopier; // of a capture whose stop a worker did not confirm; null for none

    CaptureControl(final CaptureSource source, final WorkerCalls calls, final CaptureTap[] taps, final int planes)
    {
        this.source = source;
        this.calls = calls;
        this.taps = taps;
        this.planes = planes;
    }

    /** See {@link EmbeddedNic#startCapture}. */
    synchronized void start(final MemorySegment memory, final CaptureRingLayout layout, final CaptureFilter filter)
    {
        CaptureSource.checkStart(source, this.memory, memory, layout, filter);
        this.memory = memory;
        try
        {
            if (byReference())
            {
                startByReference(memory, layout, filter);
            }
            else
            {
                calls.onEveryWorker((w, now) ->
                {
                    taps[w.index()].start(memory, layout, filter, planes);
                    return null;
                }, "start a capture");
            }
        }
        catch (final RuntimeException ex)
        {
            try
            {
                stop(); // a worker that missed the start runs it later, then this stop: queued after it
            }
            catch (final MemoryStillNamedException stillNamed)
            {
                stillNamed.addSuppressed(ex);
                throw stillNamed; // the memory stays mapped until that worker stopped writing into it
            }
            throw ex;
        }
    }

    /** @return whether this capture goes by reference: the property asks for it and every tap's ports are DPDK ports. */
    private boolean byReference()
    {
        if (!Boolean.parseBoolean(System.getProperty(BY_REFERENCE_PROPERTY, "false")) || taps.length == 0)
        {
            return false;
        }
        for (final CaptureTap tap : taps)
        {
            if (!tap.capturesByReference())
            {
                return false;
            }
        }
        return true;
    }

    private void startByReference(final MemorySegment memory, final CaptureRingLayout layout, final CaptureFilter filter)
    {
        long pool = Long.MAX_VALUE;
        for (final CaptureTap tap : taps)
        {
            pool = Math.min(pool, tap.smallestPool());
        }
        // a quarter of the pool at most is held by the capture, shared by the workers: a slow copier drops, never starves
        final int capacity = MbufReferenceRing.capacityFor(pool, taps.length);
        final MbufReferenceRing[] rings = new MbufReferenceRing[taps.length];
        final AtomicCounter[][] counters = new AtomicCounter[taps.length][];
        for (int r = 0; r < taps.length; r++)
        {
            rings[r] = new MbufReferenceRing(capacity);
            counters[r] = taps[r].counters();
        }
        final long startNanos = System.nanoTime();
        copier = new CaptureCopier(rings, memory, layout, filter, counters, startNanos);
        copier.start();
        calls.onEveryWorker((w, now) ->
        {
            taps[w.index()].startByReference(rings[w.index()], startNanos, filter, planes);
            return null;
        }, "start a capture by reference");
    }

    /**
     * See {@link EmbeddedNic#stopCapture}. The capture is over for this NIC either way, so that another may start (a
     * worker runs its commands in order: a later start's after this stop); when a worker did not confirm in time, a
     * {@link MemoryStillNamedException} tells when the memory may be freed, and a copier by reference, which frees the
     * references that worker may still put, stops then.
     */
    synchronized void stop()
    {
        final MemorySegment running = memory;
        if (null == running)
        {
            return;
        }
        memory = null;
        final java.util.List<java.util.concurrent.CompletableFuture<?>> stopped = calls.submitToEveryWorker((w, now) ->
        {
            taps[w.index()].stop();
            return null;
        });
        try
        {
            calls.awaitEach(stopped, "stop a capture");
        }
        catch (final RuntimeException notConfirmed)
        {
            stopUnconfirmedCopier(); // of an earlier such stop, if any: its workers have stopped since or never will
            unconfirmedCopier = copier;
            copier = null;
            CaptureRingLayout.end(running); // the client stops reading; a late write lands in memory still mapped
            throw new MemoryStillNamedException("could not stop the capture: " + notConfirmed.getMessage() +
                "; its memory stays mapped until every worker stopped writing into it", notConfirmed,
                WorkerCalls.allAnswered(stopped).thenRunAsync(this::stopUnconfirmedCopier));
        }
        stopCopier();
        CaptureRingLayout.end(running);
    }

    /**
     * Marks a running capture ended once the workers stopped: nothing writes into its memory any more, and every mbuf
     * a capture by reference held is back in its pool (before the NIC frees the pool).
     */
    synchronized void endAfterWorkersStopped()
    {
        stopUnconfirmedCopier(); // the NIC closes: its workers stopped, whether they confirmed the stop or not
        if (null != memory)
        {
            stopCopier();
            CaptureRingLayout.end(memory);
            memory = null;
        }
    }

    /** The copier of a capture whose stop a worker did not confirm, once that worker stopped (or the NIC closes). */
    private synchronized void stopUnconfirmedCopier()
    {
        final CaptureCopier late = unconfirmedCopier;
        if (null != late)
        {
            unconfirmedCopier = null;
            late.stop(COPIER_STOP_MILLIS);
        }
    }

    /** The workers put no more references: the copier copies what is left, frees every reference and ends. */
    private void stopCopier()
    {
        final CaptureCopier running = copier;
        if (null != running)
        {
            copier = null;
            running.stop(COPIER_STOP_MILLIS);
        }
    }
}
