package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CounterMirror;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.port.PortFrameSink;
import io.spraynic.datapath.transport.rocev2.RcEngine;
import io.spraynic.datapath.transport.rocev2.RcEngineConfig;
import io.spraynic.datapath.transport.spray.SprayConfig;
import io.spraynic.datapath.transport.spray.SprayCounters;
import io.spraynic.datapath.transport.spray.SprayEngine;
import io.spraynic.datapath.verbs.ProtectionDomain;
import io.spraynic.datapath.wire.ParseCounters;
import io.spraynic.dpdk.CpuAffinity;
import io.spraynic.pmd.InterfaceAddress;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.Arena;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds an {@link EmbeddedNic}'s workers: each worker's transport (a spray engine, or one RoCEv2 engine per plane),
 * its capture taps, its counters in the counters file, and the thread it runs on (its own, or a poll thread shared with other agents). Owns the counters it creates and
 * frees them on {@link #closeCounters}, once the workers stopped.
 */
final class WorkerFactory
{
    private static final SecureRandom SEEDS = new SecureRandom();
    /** The engine counters every worker mirrors into the counters file (spray). */
    private static final int[] SPRAY_ENGINE_SLOTS = {SprayCounters.UNKNOWN_CONNECTION, SprayCounters.MALFORMED,
        SprayCounters.CONNECT_RETRIES_SENT, SprayCounters.CONNECT_REJECTS_SENT, SprayCounters.CONNECT_RESPONSES_RATE_LIMITED,
        SprayCounters.COOKIE_FAILURES, SprayCounters.HANDSHAKE_AUTH_FAILURES, SprayCounters.SOURCE_LIMITED,
        SprayCounters.IDLE_CLOSED, SprayCounters.REFUSED_NO_LISTENER, SprayCounters.REFUSED_VERSION,
        SprayCounters.REFUSED_BAD_PARAMETERS, SprayCounters.REFUSED_NO_RESOURCES, SprayCounters.CONNECT_REJECTS_RECEIVED,
        SprayCounters.AUTH_FAILURES, SprayCounters.ADDRESS_MISMATCHES, SprayCounters.RESYNCS_REFUSED,
        SprayCounters.MSN_OUT_OF_WINDOW, SprayCounters.NACKS_UNMATCHED, SprayCounters.NO_RESOURCES, SprayCounters.NOT_SPRAY};

    private final EmbeddedNicConfig config;
    private final CountersFile counters;
    private final Arena arena;
    private final NicNeighbours neighbours;
    private final CaptureTap[] taps;
    private final String[] portNames;
    private final List<AtomicCounter> ownCounters = new ArrayList<>();
    private final List<CounterMirror> ownMirrors = new ArrayList<>();
    private Agent[] pollThreadMembers = new Agent[0];

    WorkerFactory(final EmbeddedNicConfig config, final CountersFile counters, final Arena arena,
        final NicNeighbours neighbours)
    {
        this.config = config;
        this.counters = counters;
        this.arena = arena;
        this.neighbours = neighbours;
        this.taps = new CaptureTap[config.workers];
        this.portNames = new String[config.planes()];
    }

    /**
     * Builds one worker per row of {@code ports}, each over its own queue of every plane's port, and introduces them to
     * each other (steering) and to the neighbour tables.
     *
     * @param ports {@code ports[worker][plane]}.
     */
    NicWorker[] build(final PacketPort[][] ports)
    {
        final int w = config.workers;
        final int planes = config.planes();
        if (ports.length != w)
        {
            throw new IllegalArgumentException("an embedded NIC with " + w + " worker(s) needs one row of ports per worker, not " +
                ports.length);
        }
        final NicWorker[] workers = new NicWorker[w];
        for (int i = 0; i < w; i++)
        {
            if (ports[i].length != planes)
            {
                throw new IllegalArgumentException("worker " + i + " has " + ports[i].length + " port(s) for " + planes +
                    " plane(s): give one queue of every plane's port to every worker");
            }
            workers[i] = newWorker(i, tapped(i, ports[i]));
        }
        for (final NicWorker worker : workers)
        {
            worker.peers(workers);
        }
        neighbours.workers(workers);
        return workers;
    }

    /** @return each worker's capture tap, by worker index. */
    CaptureTap[] taps()
    {
        return taps;
    }

    /** @return the name of each plane's port (worker 0's queue). */
    String[] portNames()
    {
        return portNames;
    }

    /** Every port of worker {@code index} through the worker's capture tap. */
    private PacketPort[] tapped(final int index, final PacketPort[] ports)
    {
        final String prefix = "worker " + index + ": capture ";
        taps[index] = new CaptureTap(index, counter(prefix + "frames"), counter(prefix + "drops (ring full)"),
            counter(prefix + "filtered out"), counter(prefix + "faults (tap stopped)"), counter(prefix + "sampled out"));
        final PacketPort[] tapped = new PacketPort[ports.length];
        for (int p = 0; p < ports.length; p++)
        {
            tapped[p] = taps[index].tap(ports[p], p);
            portNames[p] = null == portNames[p] ? ports[p].name() : portNames[p];
        }
        return tapped;
    }

    private NicWorker newWorker(final int index, final PacketPort[] ports)
    {
        final ProtectionDomain domain = new ProtectionDomain();
        final ParseCounters parseCounters = new ParseCounters();
        final String prefix = "worker " + index + ": ";
        final WorkerTransport transport;
        final List<CounterMirror> engineMirrors = new ArrayList<>();
        if (config.mode == NicConnection.Kind.SPRAY)
        {
            // each worker draws its own seed: source ports must differ between workers and between NICs, which a
            // configured (deterministic) seed would repeat; secrets (tokens, CIDs, initial PSNs, keys) come from
            // SecureRandom in the engine (S12.2)
            final SprayConfig spray = config.workerSprayConfig().planes(config.planes()).cidPartition(index, config.workers)
                .seed(SEEDS.nextLong());
            for (int p = 0; p < config.planes(); p++)
            {
                spray.local(p, config.localIpv4[p], config.localMac[p]);
                spray.ipv6UdpChecksum(p, !ports[p].writesUdpChecksum()); // the kernel's UDP port writes its own
                final InterfaceAddress address = config.addresses[p];
                if (null != address && address.isIpv6())
                {
                    spray.localIpv6(p, address.ipv6High(), address.ipv6Low()); // towards peers named by IPv6
                }
            }
            // declared, so that the engine refuses an MTU whose frames the ports cannot carry
            final PortFrameSink output = new PortFrameSink(ports, config.burst, config.maxFrameLength);
            final SprayEngine engine = new SprayEngine(spray, domain, output);
            transport = new SprayWorkerTransport(engine, output, parseCounters);
            engineMirrors.add(new CounterMirror(counters, prefix + "spray ", engine.counters(), SPRAY_ENGINE_SLOTS));
            // the connection-table pool (issue 13): how many connections hold tables now and at most, refusals
            engineMirrors.add(new CounterMirror(counters, prefix + "spray ", engine::storageFigure,
                SprayEngine.STORAGE_FIGURE_LABELS::get, new int[]{SprayEngine.STORAGE_SETS_LENT,
                SprayEngine.STORAGE_SETS_LENT_PEAK, SprayEngine.STORAGE_SETS_MADE, SprayEngine.STORAGE_TAKES_REFUSED,
                SprayEngine.STORAGE_BYTES}));
            // S6.5-3: the reordering window the engine learnt, and the losses it found spurious
            engineMirrors.add(new CounterMirror(counters, prefix + "spray ", engine::reorderFigure,
                SprayEngine.REORDER_FIGURE_LABELS::get, new int[]{SprayEngine.REORDER_WINDOW_NANOS,
                SprayEngine.REORDER_SPURIOUS_LOSSES}));
        }
        else
        {
            final RcEngine[] engines = new RcEngine[config.planes()];
            final PortFrameSink[] sinks = new PortFrameSink[config.planes()];
            for (int p = 0; p < engines.length; p++)
            {
                sinks[p] = new PortFrameSink(ports[p], config.burst, config.maxFrameLength);
                engines[p] = new RcEngine(RcEngineConfig.defaults(config.localMac[p], config.localIpv4[p])
                    .withDcqcn(config.rocevDcqcn()), domain, sinks[p]);
                engines[p].qpNumberPartition(index, config.workers);
                engineMirrors.add(new CounterMirror(counters, prefix + "plane " + p + " rocev2 ", engines[p].counters(), null));
            }
            transport = new RocevWorkerTransport(engines, sinks, parseCounters);
        }
        if (index == 0)
        {
            neighbours.addAgents(ports, prefix, engineMirrors); // one table per plane, on worker 0
        }
        final NicWorker.WorkerCounters workerCounters = new NicWorker.WorkerCounters(
            counter(prefix + "rx frames"), counter(prefix + "steered to other workers"),
            counter(prefix + "steered from other workers"), counter(prefix + "steering drops (inbox full)"),
            counter(prefix + "work requests with unknown lkey"), counter(prefix + "control commands"),
            counter(prefix + "frame faults (exception handling a frame, dropped)"),
            counter(prefix + "loop faults (exception in a command, poller, post or tick)"),
            new CounterMirror(counters, prefix + "parse ", parseCounters), engineMirrors.toArray(new CounterMirror[0]));
        ownMirrors.addAll(engineMirrors);
        ownMirrors.add(workerCounters.parse());
        final NicWorker worker = new NicWorker(index, config.workers, ports, transport, parseCounters, domain, config.clock,
            config.burst, config.inboxBytes, arena, workerCounters, "spraynic-worker-" + index, null);
        worker.queuesIdle(config.queuesIdleNanos);
        if (index == 0)
        {
            neighbours.attach(worker);
        }
        return worker;
    }

    /** @return the workers as members of {@link EmbeddedNicConfig#pollThread}, for {@link SharedPollThread#leave}. */
    Agent[] pollThreadMembers()
    {
        return pollThreadMembers;
    }

    /**
     * Starts each worker on a thread of its own, pinned to its CPU of {@code cpus} where one is given.
     *
     * @return the runners, by worker index.
     */
    AgentRunner[] startRunners(final NicWorker[] workers)
    {
        if (null != config.pollThread)
        {
            pollThreadMembers = SharedPollThread.join(config.pollThread, workers, EmbeddedNic.CONTROL_TIMEOUT);
            return new AgentRunner[0]; // the poll thread's runner is its owner's
        }
        final AgentRunner[] runners = new AgentRunner[workers.length];
        for (int i = 0; i < workers.length; i++)
        {
            final NicWorker worker = workers[i];
            final int cpu = i < config.cpus.length ? config.cpus[i] : -1;
            runners[i] = new AgentRunner(config.idleStrategy.get(), Throwable::printStackTrace,
                counter("worker " + i + ": errors"), worker);
            AgentRunner.startOnThread(runners[i], runnable -> new Thread(() ->
            {
                if (cpu >= 0)
                {
                    CpuAffinity.pinCurrentThread(cpu);
                }
                runnable.run();
            }, worker.roleName()));
        }
        return runners;
    }

    /**
     * A counter of the NIC's own, freed by {@link #closeCounters}.
     *
     * @throws IllegalStateException when the counters file is full.
     */
    AtomicCounter counter(final String label)
    {
        final AtomicCounter c = CounterMirror.tryNewCounter(counters, label);
        if (null == c)
        {
            throw new IllegalStateException("the counters file " + counters.path() + " is full: create it with room for more counters");
        }
        ownCounters.add(c);
        return c;
    }

    /** Frees every counter this factory created (the workers stopped). */
    void closeCounters()
    {
        for (final CounterMirror mirror : ownMirrors)
        {
            mirror.close();
        }
        for (final AtomicCounter c : ownCounters)
        {
            c.close();
        }
    }
}
