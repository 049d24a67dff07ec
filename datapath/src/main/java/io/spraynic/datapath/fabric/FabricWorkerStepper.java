package io.spraynic.datapath.fabric;

import io.spraynic.datapath.nic.NicWorker;
import io.spraynic.datapath.port.PacketPort;
import org.agrona.concurrent.NanoClock;

import java.lang.foreign.MemorySegment;

/**
 * Steps a {@link NicWorker} in the fabric's time, which the worker reads as its clock: at every frame the fabric
 * delivers (offered to the worker's {@link FabricDeliveryPort} of that plane, then one loop of the worker, so the
 * engine sees the frame at its arrival time) and at a host timer set for the time the worker's tick schedule asks
 * for ({@link NicWorker#nextTickNanos()}). The fabric endpoints are thin adapters over it; the worker's loop is the
 * only one that drives their engine.
 * <p>
 * Host timers cannot be cancelled and a host may share them among endpoints (one per port): a timer before the time
 * this stepper asked for is someone else's, or superseded, and is ignored, so it keeps one timer outstanding.
 * Fabric thread only; allocation-free per frame and per timer.
 */
final class FabricWorkerStepper implements NanoClock
{
    private final FabricPort timers;
    private final FabricDeliveryPort[] ports;
    private NicWorker worker;
    private long nowNanos;
    private long timerAt = Long.MAX_VALUE;
    private boolean stopped;

    /**
     * @param name   names the delivery ports, {@code name/plane}.
     * @param timers the port whose host's timers wake the worker.
     * @param planes delivery ports, one per plane the worker polls.
     */
    FabricWorkerStepper(final String name, final FabricPort timers, final int planes)
    {
        this.timers = timers;
        this.ports = new FabricDeliveryPort[planes];
        for (int p = 0; p < planes; p++)
        {
            ports[p] = new FabricDeliveryPort(name + "/" + p);
        }
        this.nowNanos = timers.now();
    }

    /** @return the ports the worker polls, one per plane. */
    PacketPort[] ports()
    {
        return ports.clone();
    }

    /** @param worker the worker to step, built over {@link #ports()} with this as its clock. */
    void drive(final NicWorker worker)
    {
        this.worker = worker;
    }

    /** @return the worker, or null before {@link #drive}. */
    NicWorker worker()
    {
        return worker;
    }

    public long nanoTime()
    {
        return nowNanos;
    }

    /** A frame arrived on {@code plane}: one loop of the worker takes it, at its arrival time. */
    void onFrame(final long nowNs, final int plane, final MemorySegment segment, final long offset, final int length)
    {
        nowNanos = nowNs;
        final FabricDeliveryPort port = ports[plane];
        if (port.offer(segment, offset, length))
        {
            try
            {
                worker.doWork();
            }
            finally
            {
                port.clear(); // the frame's memory is the fabric's again once this delivery returns
            }
        }
        wake();
    }

    /** A host timer: one loop of the worker when it is the one this stepper asked for. */
    void onTimer(final long nowNs)
    {
        if (stopped || nowNs < timerAt)
        {
            return;
        }
        timerAt = Long.MAX_VALUE;
        nowNanos = nowNs;
        worker.doWork();
        wake();
    }

    /** Makes the engine's next tick due now (after work requests were posted to it directly). */
    void kick()
    {
        nowNanos = Math.max(nowNanos, timers.now());
        worker.kick();
        wake();
    }

    /**
     * No more timers (those outstanding are ignored): frames still arriving are handled, and tick the engine when its
     * schedule says, until {@link #resume}.
     */
    void stop()
    {
        stopped = true;
        timerAt = Long.MAX_VALUE;
    }

    /** Timers wake the worker again (after {@link #stop}). */
    void resume()
    {
        stopped = false;
    }

    private void wake()
    {
        if (stopped)
        {
            return;
        }
        final long at = Math.max(worker.nextTickNanos(), nowNanos);
        if (at < timerAt)
        {
            timerAt = at;
            timers.scheduleTimer(at);
        }
    }
}
