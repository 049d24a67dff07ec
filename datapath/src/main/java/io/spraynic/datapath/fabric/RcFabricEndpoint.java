package io.spraynic.datapath.fabric;

import io.spraynic.datapath.nic.NicWorker;
import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.transport.rocev2.RcEngineConfig;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.ParseCounters;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The RoCEv2 RC engine on one port of a fabric host, so the baseline runs on the same emulated
 * fabric as the spray transport, in virtual or real time. RC is single-path: every QP's packets
 * leave through this one port (plane) and follow the one ECMP route of its UDP source port.
 * <p>
 * A {@link NicWorker}, the loop a NIC runs, drives the engine; this is only the fabric's adapter: a frame the fabric
 * delivers is offered to the worker's port and the worker runs one loop at its arrival time, and from {@link #start}
 * the worker ticks the engine every {@code tickNanos}, busy or not (queue pairs are posted to directly), woken by
 * fabric timers: timers, pacing and transmission happen on ticks; arrivals are handled at once.
 */
public final class RcFabricEndpoint implements Endpoint
{
    private final FabricPort port;
    private final RcEngine engine;
    private final FabricFrameSink sink;
    private final FabricWorkerStepper stepper;
    private boolean running;

    /**
     * @param configure builds the engine's configuration from this port's MAC and IPv4 address.
     */
    public RcFabricEndpoint(
        final FabricPort port,
        final ProtectionDomain protectionDomain,
        final java.util.function.BiFunction<Long, Integer, RcEngineConfig> configure,
        final ParseCounters parseCounters,
        final long tickNanos,
        final Arena arena)
    {
        if (tickNanos <= 0)
        {
            throw new IllegalArgumentException("tick interval must be positive: " + tickNanos);
        }
        this.port = port;
        this.sink = new FabricFrameSink(port, arena);
        this.engine = new RcEngine(configure.apply(port.localMac(), port.localAddress()), protectionDomain, sink);
        this.stepper = new FabricWorkerStepper("host" + port.hostIndex() + "/rc" + port.portIndex(), port, 1);
        stepper.drive(NicWorker.builder().ports(stepper.ports()).rocev2(engine, sink).parseCounters(parseCounters)
            .protectionDomain(protectionDomain).clock(stepper).tickInterval(tickNanos, true)
            .roleName("fabric-host" + port.hostIndex() + "-rc" + port.portIndex()).build());
    }

    /**
     * Starts ticking the engine (call after creating and connecting its queue pairs).
     */
    public void start()
    {
        if (!running)
        {
            running = true;
            stepper.resume();
            stepper.kick();
        }
    }

    /**
     * Stops the timers that tick the engine; frames still arriving are handled.
     */
    public void stop()
    {
        running = false;
        stepper.stop();
    }

    public void onFrame(final long nowNs, final int portIndex, final MemorySegment segment, final long offset, final int length)
    {
        stepper.onFrame(nowNs, 0, segment, offset, length); // the worker's one port is this endpoint's port
    }

    /**
     * One loop of the worker when its timer is due. A host may share timers among several endpoints (one per
     * port): a call before this endpoint's due time is someone else's and is ignored, so each endpoint keeps
     * exactly one timer outstanding.
     */
    public void onTimer(final long nowNs)
    {
        stepper.onTimer(nowNs);
    }

    public RcEngine engine()
    {
        return engine;
    }

    /** @return the worker that drives the engine: its counters, its faults. */
    public NicWorker worker()
    {
        return stepper.worker();
    }

    public FabricPort port()
    {
        return port;
    }

    public FabricFrameSink sink()
    {
        return sink;
    }
}
