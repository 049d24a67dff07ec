package io.spraynic.datapath.fabric;

import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.transport.rocev2.RcEngineConfig;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The RoCEv2 RC engine on one port of a fabric host, so the baseline runs on the same emulated
 * fabric as the spray transport, in virtual or real time. RC is single-path: every QP's packets
 * leave through this one port (plane) and follow the one ECMP route of its UDP source port.
 * <p>
 * The engine is ticked every {@code tickNanos} while the endpoint runs: timers, pacing and
 * transmission happen on ticks; arrivals are handled at once.
 */
public final class RcFabricEndpoint implements Endpoint
{
    private final FabricPort port;
    private final RcEngine engine;
    private final FabricFrameSink sink;
    private final RoceParser parser;
    private final RoceFrame frame = new RoceFrame();
    private final long tickNanos;
    private long nextTickNanos = Long.MAX_VALUE;
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
        this.parser = new RoceParser(parseCounters);
        this.tickNanos = tickNanos;
    }

    /**
     * Starts ticking the engine (call after creating and connecting its queue pairs).
     */
    public void start()
    {
        if (!running)
        {
            running = true;
            nextTickNanos = port.now();
            port.scheduleTimer(nextTickNanos);
        }
    }

    /**
     * Stops ticking; frames still arriving are handled.
     */
    public void stop()
    {
        running = false;
    }

    public void onFrame(final long nowNs, final int portIndex, final MemorySegment segment, final long offset, final int length)
    {
        if (parser.parse(segment, offset, length, frame) == io.spraynic.datapath.wire.FrameClass.ROCE)
        {
            engine.onFrame(frame, nowNs);
        }
    }

    /**
     * Ticks the engine when its own timer is due. A host may share timers among several endpoints
     * (one per port): a call before this endpoint's due time is someone else's and is ignored, so each
     * endpoint keeps exactly one timer outstanding.
     */
    public void onTimer(final long nowNs)
    {
        if (running && nowNs >= nextTickNanos)
        {
            engine.onTick(nowNs);
            nextTickNanos = nowNs + tickNanos;
            port.scheduleTimer(nextTickNanos);
        }
    }

    public RcEngine engine()
    {
        return engine;
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
