package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.transport.FrameSink;
import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.transport.spray.SprayEngine;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.ParseCounters;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

import java.lang.foreign.Arena;
import java.util.Objects;

/**
 * Builds a lone {@link NicWorker} (index 0 of 1, no steering, no neighbour agents) around any ports and one engine:
 * a spray engine over every port (one per plane), or one RoCEv2 engine per port. What an {@link EmbeddedNic} adds
 * (control commands, connections with request rings, counters in a counters file) stays available through the
 * worker; test beds and benchmarks that call their engine directly do so from the thread that steps the worker.
 * <pre>
 *   NicWorker worker = NicWorker.builder().ports(ports).spray(engine, output).clock(() -&gt; now).build();
 *   worker.doWork(); // one loop: receive, parse, hand to the engine, tick, transmit
 * </pre>
 */
public final class NicWorkerBuilder
{
    /** A lone worker's inbox: nothing is steered to it, so the smallest ring that still takes a jumbo frame. */
    static final int LONE_INBOX_BYTES = 1 << 16;

    private PacketPort[] ports;
    private SprayEngine sprayEngine;
    private FrameSink sprayOutput;
    private RcEngine[] rcEngines;
    private FrameSink[] rcSinks;
    private ParseCounters parseCounters;
    private ProtectionDomain protectionDomain;
    private NanoClock clock;
    private int burst = 32;
    private Arena arena;
    private NicWorker.WorkerCounters counters;
    private IdleStrategy idleStrategy;
    private String roleName = "spraynic-worker-0";
    private long tickIntervalNanos; // 0: tick on every loop
    private int rxBurstsPerLoop = NicWorker.RX_BURSTS_PER_LOOP;
    private boolean tickWhileIdle;

    NicWorkerBuilder()
    {
    }

    /** @param ports one per plane, polled by the worker. @return this. */
    public NicWorkerBuilder ports(final PacketPort... ports)
    {
        this.ports = ports.clone();
        return this;
    }

    /**
     * @param engine a spray engine over every port.
     * @param output its output: a {@link PortFrameSink} over the same ports, which the worker starts, flushes every
     *               loop and closes; or a sink that hands each frame on at its commit (a fabric's link).
     * @return this.
     */
    public NicWorkerBuilder spray(final SprayEngine engine, final FrameSink output)
    {
        this.sprayEngine = Objects.requireNonNull(engine, "engine");
        this.sprayOutput = Objects.requireNonNull(output, "output");
        this.rcEngines = null;
        return this;
    }

    /** @param engine the RoCEv2 engine of the one port. @param sink its sink, over the port (see {@link #spray}). @return this. */
    public NicWorkerBuilder rocev2(final RcEngine engine, final FrameSink sink)
    {
        return rocev2(new RcEngine[] {engine}, new FrameSink[] {sink});
    }

    /** @param engines one RoCEv2 engine per port. @param sinks each engine's sink, over its port. @return this. */
    public NicWorkerBuilder rocev2(final RcEngine[] engines, final FrameSink[] sinks)
    {
        if (engines.length != sinks.length)
        {
            throw new IllegalArgumentException(engines.length + " engine(s) for " + sinks.length + " sink(s)");
        }
        this.rcEngines = engines.clone();
        this.rcSinks = sinks.clone();
        this.sprayEngine = null;
        return this;
    }

    /** @param parseCounters where parse outcomes are counted (default: counters of the worker's own). @return this. */
    public NicWorkerBuilder parseCounters(final ParseCounters parseCounters)
    {
        this.parseCounters = parseCounters;
        return this;
    }

    /** @param domain the engine's domain, which checks the regions of the worker's connections. @return this. */
    public NicWorkerBuilder protectionDomain(final ProtectionDomain domain)
    {
        this.protectionDomain = domain;
        return this;
    }

    /** @param clock the time the engine sees (default: the system's; a test injects virtual time). @return this. */
    public NicWorkerBuilder clock(final NanoClock clock)
    {
        this.clock = clock;
        return this;
    }

    /**
     * Ticks the engine at most every {@code intervalNanos} instead of on every loop, for a worker stepped by a
     * virtual-time fabric at each frame arrival and at the times {@link NicWorker#nextTickNanos()} asks for.
     *
     * @param intervalNanos the engine's tick interval, positive.
     * @param whileIdle     true: every interval from the first {@link NicWorker#kick()}, busy or not (an engine
     *                      posted to directly); false: within an interval of an arrival or a kick, then while busy.
     * @return this.
     */
    public NicWorkerBuilder tickInterval(final long intervalNanos, final boolean whileIdle)
    {
        if (intervalNanos <= 0)
        {
            throw new IllegalArgumentException("tick interval must be positive: " + intervalNanos);
        }
        this.tickIntervalNanos = intervalNanos;
        this.tickWhileIdle = whileIdle;
        return this;
    }

    /**
     * @param bursts full receive bursts one loop takes from each port before it goes on (default 4, as a NIC's
     *               worker); 1 for a benchmark that times one burst per loop. @return this.
     */
    public NicWorkerBuilder rxBurstsPerLoop(final int bursts)
    {
        if (bursts < 1)
        {
            throw new IllegalArgumentException("receive bursts per loop must be at least 1: " + bursts);
        }
        this.rxBurstsPerLoop = bursts;
        return this;
    }

    /** @param burst frames per RX burst (1..512, default 32). @return this. */
    public NicWorkerBuilder burst(final int burst)
    {
        if (burst < 1 || burst > 512)
        {
            throw new IllegalArgumentException("burst " + burst + " is not 1..512");
        }
        this.burst = burst;
        return this;
    }

    /** @param arena where the worker's inbox lives (default: an automatic arena). @return this. */
    public NicWorkerBuilder arena(final Arena arena)
    {
        this.arena = arena;
        return this;
    }

    /** @param counters the worker's own counters (default: {@link NicWorker.WorkerCounters#unpublished()}). @return this. */
    public NicWorkerBuilder counters(final NicWorker.WorkerCounters counters)
    {
        this.counters = counters;
        return this;
    }

    /** @param idleStrategy what {@link #buildRunner} idles with (default: a {@link BackoffIdleStrategy}). @return this. */
    public NicWorkerBuilder idleStrategy(final IdleStrategy idleStrategy)
    {
        this.idleStrategy = idleStrategy;
        return this;
    }

    /** @param roleName the worker's name, in logs and as its thread's. @return this. */
    public NicWorkerBuilder roleName(final String roleName)
    {
        this.roleName = Objects.requireNonNull(roleName, "roleName");
        return this;
    }

    /**
     * @return a worker, not started: the first {@link NicWorker#doWork()} (or its runner) starts it.
     * @throws IllegalArgumentException without ports, without an engine, or with RoCEv2 engines not one per port.
     */
    public NicWorker build()
    {
        if (null == ports || 0 == ports.length)
        {
            throw new IllegalArgumentException("a worker needs at least one port");
        }
        final ParseCounters parse = null == parseCounters ? new ParseCounters() : parseCounters;
        final WorkerTransport transport;
        if (null != sprayEngine)
        {
            transport = new SprayWorkerTransport(sprayEngine, sprayOutput, parse);
        }
        else if (null != rcEngines)
        {
            if (rcEngines.length != ports.length)
            {
                throw new IllegalArgumentException(rcEngines.length + " RoCEv2 engine(s) for " + ports.length +
                    " port(s): one engine per port");
            }
            transport = new RocevWorkerTransport(rcEngines, rcSinks, parse);
        }
        else
        {
            throw new IllegalArgumentException("a worker needs an engine: spray(...) or rocev2(...)");
        }
        final NicWorker worker = new NicWorker(0, 1, ports, transport, parse,
            null == protectionDomain ? new ProtectionDomain() : protectionDomain,
            null == clock ? new SystemNanoClock() : clock, burst, LONE_INBOX_BYTES,
            null == arena ? Arena.ofAuto() : arena, null == counters ? NicWorker.WorkerCounters.unpublished() : counters,
            roleName, tickSchedule());
        worker.peers(new NicWorker[] {worker});
        worker.rxBurstsPerLoop(rxBurstsPerLoop);
        return worker;
    }

    private TickSchedule tickSchedule()
    {
        if (0 == tickIntervalNanos)
        {
            return null;
        }
        return tickWhileIdle ? TickSchedule.periodic(tickIntervalNanos) : TickSchedule.whileBusy(tickIntervalNanos);
    }

    /** @return a runner (not started) of a worker this builder {@link #build builds}, with its idle strategy. */
    public AgentRunner buildRunner(final ErrorHandler errorHandler)
    {
        return new AgentRunner(null == idleStrategy ? new BackoffIdleStrategy() : idleStrategy, errorHandler, null,
            build());
    }
}
