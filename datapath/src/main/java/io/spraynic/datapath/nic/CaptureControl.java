package io.spraynic.datapath.nic;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;

import java.lang.foreign.MemorySegment;

/**
 * Starts and stops an {@link EmbeddedNic}'s live capture: every worker's {@link CaptureTap} copies the frames a
 * filter takes into the worker's ring of the capture memory. One capture at a time.
 */
final class CaptureControl
{
    private final WorkerCalls calls;
    private final CaptureTap[] taps;
    private final int planes;
    private MemorySegment memory; // of the running capture; null for none

    CaptureControl(final WorkerCalls calls, final CaptureTap[] taps, final int planes)
    {
        this.calls = calls;
        this.taps = taps;
        this.planes = planes;
    }

    /** See {@link EmbeddedNic#startCapture}. */
    synchronized void start(final MemorySegment memory, final CaptureRingLayout layout, final CaptureFilter filter)
    {
        if (null != this.memory)
        {
            throw new IllegalStateException("a capture is running: stop it first (one at a time)");
        }
        final int workers = calls.workers().length;
        final String problem = layout.workers() != workers ? "the capture has " + layout.workers() +
            " ring(s) for " + workers + " worker(s)" : memory.byteSize() < layout.fileLength() ?
            "the capture memory is shorter than its layout" : filter.problem(planes, workers);
        if (null != problem)
        {
            throw new IllegalArgumentException(problem);
        }
        this.memory = memory;
        try
        {
            calls.onEveryWorker((w, now) ->
            {
                taps[w.index()].start(memory, layout, filter, planes);
                return null;
            }, "start a capture");
        }
        catch (final RuntimeException ex)
        {
            stop();
            throw ex;
        }
    }

    /** See {@link EmbeddedNic#stopCapture}. */
    synchronized void stop()
    {
        final MemorySegment running = memory;
        if (null == running)
        {
            return;
        }
        calls.onEveryWorker((w, now) ->
        {
            taps[w.index()].stop();
            return null;
        }, "stop a capture");
        memory = null;
        CaptureRingLayout.end(running);
    }

    /** Marks a running capture ended once the workers stopped: nothing writes into its memory any more. */
    synchronized void endAfterWorkersStopped()
    {
        if (null != memory)
        {
            CaptureRingLayout.end(memory);
            memory = null;
        }
    }
}
