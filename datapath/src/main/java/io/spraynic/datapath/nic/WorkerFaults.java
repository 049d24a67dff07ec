package io.spraynic.datapath.nic;

import io.spraynic.datapath.fault.FaultLog;
import org.agrona.concurrent.status.AtomicCounter;

import java.util.Map;

/**
 * What a {@link NicWorker} does with an exception it caught while handling one input (a frame, a command, a poller, a
 * work request, a tick): counts it ({@code frame faults} or {@code loop faults} in the counters file) and logs it at
 * most once per reason per {@link FaultLog#DEFAULT_INTERVAL_NANOS}; the loop goes on with the next input. Called from
 * {@code catch} blocks only, out of line, so that the loops stay small for the JIT; this path may allocate.
 */
final class WorkerFaults
{
    private final AtomicCounter frameFaults;
    private final AtomicCounter loopFaults;
    private final FaultLog log;

    /**
     * @param frameFaults counts frames (received or steered) whose handling threw.
     * @param loopFaults  counts commands, pollers, posts, ticks and the rest of the loop that threw.
     * @param roleName    the worker's name in the log.
     */
    WorkerFaults(final AtomicCounter frameFaults, final AtomicCounter loopFaults, final String roleName)
    {
        this.frameFaults = frameFaults;
        this.loopFaults = loopFaults;
        this.log = new FaultLog(roleName);
    }

    /** A frame's handling threw: it is dropped. */
    void onFrameFault(final Throwable fault)
    {
        frameFaults.incrementRelease();
        log.record("frame", fault);
    }

    /** @param where what threw, the reason's first word in the log and in {@link #counts()}. */
    void onLoopFault(final String where, final Throwable fault)
    {
        loopFaults.incrementRelease();
        log.record(where, fault);
    }

    /** @return frames, commands, pollers, posts and ticks that threw (caught, dropped); any thread. */
    long count()
    {
        return frameFaults.get() + loopFaults.get();
    }

    /** @return faults per reason ("where class"), a copy. */
    Map<String, Long> counts()
    {
        return log.counts();
    }

    /** @return the log itself (for tests and reports). */
    FaultLog log()
    {
        return log;
    }
}
