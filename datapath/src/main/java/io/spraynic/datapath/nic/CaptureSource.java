package io.spraynic.datapath.nic;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;

import java.lang.foreign.MemorySegment;

/**
 * A running NIC whose poll threads can copy frames into a live capture's rings ({@link CaptureRingLayout}, one ring
 * per thread), as {@code spraynic capture} asks through IPC: an {@link EmbeddedNic} (a ring per worker, a worker per
 * queue) or the apps' {@code NicRuntime} in classify mode (a ring per poll thread, a poll thread per port queue).
 */
public interface CaptureSource
{
    /** @return poll threads, each with a capture ring of its own. */
    int workers();

    /** @return ports (planes) a filter may name. */
    int planes();

    /** @return queues per port a filter may name. */
    default int queues()
    {
        return workers();
    }

    /** @return the name of the port of {@code plane}. */
    String portName(int plane);

    /**
     * Starts a live capture: each poll thread copies the frames {@code filter} takes into its ring in {@code memory}
     * (laid out by {@code layout}, header written), dropping what does not fit, until {@link #stopCapture}. One at a
     * time.
     *
     * @throws IllegalStateException when a capture runs already; IllegalArgumentException when the layout or filter
     *                               does not fit this NIC.
     */
    void startCapture(MemorySegment memory, CaptureRingLayout layout, CaptureFilter filter);

    /**
     * Stops the live capture, if one runs: returns once no poll thread writes into its memory any more (which the caller
     * may then free) and marked it ended.
     *
     * @throws IllegalStateException when a poll thread did not confirm (the memory must then stay mapped).
     */
    void stopCapture();

    /**
     * What every source checks before it starts a capture, in one place: one capture at a time, and a layout, memory
     * and filter that fit the source's poll threads, ports and queues.
     *
     * @param source  the source about to start it.
     * @param running the memory of the capture running now; null for none.
     * @throws IllegalStateException when a capture runs; IllegalArgumentException when this one does not fit.
     */
    static void checkStart(final CaptureSource source, final MemorySegment running, final MemorySegment memory,
        final CaptureRingLayout layout, final CaptureFilter filter)
    {
        if (null != running)
        {
            throw new IllegalStateException("a capture is running: stop it first (one at a time)");
        }
        final int planes = source.planes();
        final int workers = source.workers();
        final String problem = planes > CaptureRingLayout.MAX_PLANES ? "a capture covers at most " +
            CaptureRingLayout.MAX_PLANES + " ports, this NIC has " + planes : layout.workers() != workers ?
            "the capture has " + layout.workers() + " ring(s) for " + workers + " poll thread(s)" :
            memory.byteSize() < layout.fileLength() ? "the capture memory is shorter than its layout" :
            filter.problem(planes, source.queues());
        if (null != problem)
        {
            throw new IllegalArgumentException(problem);
        }
    }
}
