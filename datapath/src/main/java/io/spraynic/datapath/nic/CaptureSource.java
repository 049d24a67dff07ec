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
}
