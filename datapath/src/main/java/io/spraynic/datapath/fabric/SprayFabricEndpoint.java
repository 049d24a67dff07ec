package io.spraynic.datapath.fabric;

import io.spraynic.datapath.nic.NicWorker;
import io.spraynic.datapath.transport.spray.SprayConfig;
import io.spraynic.datapath.transport.spray.SprayConnectionConfig;
import io.spraynic.datapath.transport.spray.SprayEngine;
import io.spraynic.datapath.wire.ParseCounters;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * Runs a {@link SprayEngine} on a host of the emulated fabric, in virtual or real time, through a {@link NicWorker},
 * the loop a NIC runs: this is only the fabric's adapter (the protocol classes know no fabric). The host's ports are
 * the planes; a frame the fabric delivers is offered to the worker's port of its plane and the worker runs one loop
 * at its arrival time (receive, parse, the engine); the worker ticks the engine every {@code tickNanos} while it has
 * work, woken by fabric timers ({@link NicWorker#nextTickNanos()}), and not while it is idle, so a simulation that
 * runs until idle ends. Call {@link #kick()} after posting work requests to the engine.
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
    private final ParseCounters parseCounters;
    private final long tickNanos;
    private final FabricWorkerStepper stepper;
    private SprayEngine engine;

    /**
     * @param host          the fabric host this endpoint runs on (attached by {@link #bind}).
     * @param tickNanos     how often the engine's timers run while it is busy.
     * @param parseCounters where parse outcomes are counted.
     */
    public SprayFabricEndpoint(final Host host, final long tickNanos, final ParseCounters parseCounters)
    {
        this.host = host;
        this.tickNanos = tickNanos;
        this.parseCounters = parseCounters;
        this.ports = new FabricPort[host.portCount()];
        for (int i = 0; i < ports.length; i++)
        {
            ports[i] = host.port(i);
        }
        this.output = new FabricFrameSink(ports, Arena.ofAuto());
        this.stepper = new FabricWorkerStepper(host.name(), ports[0], ports.length);
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

    /**
     * Builds the worker that drives {@code engine}, whose output must be {@link #output()}, and attaches this
     * endpoint to its host.
     */
    public void bind(final SprayEngine engine)
    {
        this.engine = engine;
        stepper.drive(NicWorker.builder().ports(stepper.ports()).spray(engine, output).parseCounters(parseCounters)
            .clock(stepper).tickInterval(tickNanos, false).roleName("fabric-" + host.name()).build());
        host.attach(this);
    }

    /** Asks for a tick now (after posting work requests). */
    public void kick()
    {
        stepper.kick();
    }

    public void onFrame(final long nowNs, final int portIndex, final MemorySegment segment, final long offset,
        final int length)
    {
        stepper.onFrame(nowNs, portIndex, segment, offset, length);
    }

    public void onTimer(final long nowNs)
    {
        stepper.onTimer(nowNs);
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

    /** @return the worker that drives the engine (null before {@link #bind}): its counters, its faults. */
    public NicWorker worker()
    {
        return stepper.worker();
    }
}
