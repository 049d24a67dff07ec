package io.spraynic.datapath.fabric;

import java.lang.foreign.MemorySegment;

/**
 * What runs on a fabric host: a transport (spray, or RoCEv2 RC), a traffic generator, or a bridge to real
 * ports. It sends through its host's {@link FabricPort}s and is called back here.
 * <p>
 * The current time is always a parameter, never read from a clock, so the same endpoint runs in virtual
 * time under a {@link Simulator} and in real time under a {@link RealTimeFabricAgent}. Callbacks come on
 * the fabric's thread, one at a time; they may send and schedule timers.
 */
public interface Endpoint
{
    /**
     * A frame has arrived on one of the host's ports.
     *
     * @param nowNs     arrival time.
     * @param portIndex the port (= plane) it arrived on.
     * @param segment   the fabric's frame memory: valid only during this call, and the endpoint may modify
     *                  it in place; copy out what must outlive the call.
     * @param offset    the frame's first byte (the destination MAC).
     * @param length    the frame's length, without FCS.
     */
    void onFrame(long nowNs, int portIndex, MemorySegment segment, long offset, int length);

    /**
     * A timer set with {@link FabricPort#scheduleTimer} is due. Each call to scheduleTimer gives one call
     * here; timers cannot be cancelled, so an endpoint ignores those it no longer needs.
     *
     * @param nowNs the time now.
     */
    void onTimer(long nowNs);
}
