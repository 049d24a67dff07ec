package io.spraynic.bench.experiment;

import io.spraynic.datapath.fabric.Endpoint;

import java.lang.foreign.MemorySegment;

/**
 * One fabric host running an independent endpoint per port (plane), as a host with one RoCEv2 NIC
 * per plane does: frames and timers go to the port's own endpoint.
 */
final class MultiPortEndpoint implements Endpoint
{
    private final Endpoint[] endpoints;

    MultiPortEndpoint(final int ports)
    {
        this.endpoints = new Endpoint[ports];
    }

    void set(final int port, final Endpoint endpoint)
    {
        endpoints[port] = endpoint;
    }

    public void onFrame(final long nowNs, final int portIndex, final MemorySegment segment, final long offset, final int length)
    {
        endpoints[portIndex].onFrame(nowNs, portIndex, segment, offset, length);
    }

    public void onTimer(final long nowNs)
    {
        // Timers carry no port: every port's endpoint ticks (each ignores ticks it did not ask for).
        for (final Endpoint endpoint : endpoints)
        {
            endpoint.onTimer(nowNs);
        }
    }
}
