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
    private final CaptureSource source;
    private final WorkerCalls calls;
    private final CaptureTap[] taps;
    private final int planes;
    private MemorySegment memory; // of the running capture; null for none

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
