package io.spraynic.datapath.fabric;

import io.spraynic.datapath.transport.spray.SprayConfig;
import io.spraynic.datapath.transport.spray.SprayConnectionConfig;
import io.spraynic.datapath.transport.spray.SprayEngine;
import io.spraynic.datapath.wire.FrameClass;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.datapath.wire.RoceFrame;
import io.spraynic.datapath.wire.RoceParser;
import io.spraynic.datapath.wire.SprayOpcodes;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Runs a {@link SprayEngine} on a host of the emulated fabric, in virtual or real time (the fabric's adapter of
 * the spray transport: the protocol classes know no fabric): the host's ports are the planes, frames arrive
 * through {@link #onFrame}, and the engine is ticked every {@code tickNanos} by fabric timers while it has work ({@link SprayEngine#isIdle()}),
 * so a simulation that runs until idle ends. Call {@link #kick()} after posting work requests.
 * <p>
 * The engine writes into the host's ports through a {@link FabricFrameSink}, whose claims are refused while a
 * port's transmit queue could not take the frame, as a NIC's full TX ring pushes back: the engine keeps the
 * packet queued, counts {@code OUTPUT_FULL} and retries on a later tick, so a burst larger than the NIC queue is
 * delayed, not lost.
 * <pre>
 *   SprayFabricEndpoint endpoint = new SprayFabricEndpoint(fabric.host(0), 1_000, new ParseCounters());
 *   SprayEngine engine = new SprayEngine(endpoint.configure(new SprayConfig()), pd, endpoint.output());
 *   endpoint.bind(engine);
 * </pre>
 */
public final class SprayFabricEndpoint implements Endpoint
{
    private final Host host;
    private final FabricPort[] ports;
    private final FabricFrameSink output;
    private final RoceParser parser;
    private final RoceFrame frame = new RoceFrame();
    private final long tickNanos;
    private SprayEngine engine;
    private long timerAt = Long.MAX_VALUE;

    /**
     * @param host          the fabric host this endpoint runs on (attached by {@link #bind}).
     * @param tickNanos     how often the engine's timers run while it is busy.
     * @param parseCounters where parse outcomes are counted.
     */
    public SprayFabricEndpoint(final Host host, final long tickNanos, final ParseCounters parseCounters)
    {
        this.host = host;
        this.tickNanos = tickNanos;
        this.ports = new FabricPort[host.portCount()];
        for (int i = 0; i < ports.length; i++)
        {
            ports[i] = host.port(i);
        }
        this.output = new FabricFrameSink(ports, Arena.ofAuto());
        this.parser = new RoceParser(SprayOpcodes.TABLE, parseCounters, true);
    }

    /**
     * Sets the planes and this host's addresses on them.
     *
     * @return {@code config}.
     */
    public SprayConfig configure(final SprayConfig config)
    {
        config.planes(ports.length);
        for (int p = 0; p < ports.length; p++)
        {
            config.local(p, ports[p].localAddress(), ports[p].localMac());
        }
        return config;
    }

    /**
     * Sets the peer's addresses on every plane.
     *
     * @return {@code connection}.
     */
    public SprayConnectionConfig remote(final SprayConnectionConfig connection, final int peerHost)
    {
        for (int p = 0; p < ports.length; p++)
        {
            connection.remote(p, ports[p].addressOf(peerHost), ports[p].macOf(peerHost));
        }
        return connection;
    }

    /** Attaches this endpoint to its host, driving {@code engine}, whose output must be {@link #output()}. */
    public void bind(final SprayEngine engine)
    {
        this.engine = engine;
        host.attach(this);
    }

    /** Asks for a tick now (after posting work requests). */
    public void kick()
    {
        schedule(ports[0].now());
    }

    public void onFrame(final long nowNs, final int portIndex, final MemorySegment segment, final long offset,
        final int length)
    {
        if (parser.parse(segment, offset, length, frame) == FrameClass.ROCE)
        {
            engine.onFrame(frame, nowNs);
        }
        schedule(nowNs + tickNanos);
    }

    public void onTimer(final long nowNs)
    {
        if (nowNs < timerAt)
        {
            return; // a timer superseded by an earlier one that already ran
        }
        timerAt = Long.MAX_VALUE;
        engine.onTick(nowNs);
        if (!engine.isIdle())
        {
            schedule(nowNs + tickNanos);
        }
    }

    private void schedule(final long atNs)
    {
        if (atNs < timerAt)
        {
            timerAt = atNs;
            ports[0].scheduleTimer(atNs);
        }
    }

    /** @return where the engine writes its frames: this host's ports, one per plane. */
    public FabricFrameSink output()
    {
        return output;
    }

    /** @return claims refused because the host port's transmit queue could not take the frame (push-back). */
    public long claimsRefused()
    {
        return output.claimsRefused();
    }

    /** @return frames the fabric refused (no free frame slot), lost to the transport. */
    public long framesRefused()
    {
        return output.framesRefused();
    }

    /** @return the engine. */
    public SprayEngine engine()
    {
        return engine;
    }
}
