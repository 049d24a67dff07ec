package io.spraynic.apps.runtime;

import io.spraynic.datapath.capture.CaptureFilter;
import io.spraynic.datapath.capture.CaptureRingLayout;
import io.spraynic.datapath.nic.CaptureSource;
import io.spraynic.datapath.nic.CaptureTap;
import io.spraynic.datapath.nic.DpdkNic;
import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.PortPollAgent;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.telemetry.PortStatsCounters;
import io.spraynic.dpdk.EthPort;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * A running NIC: DPDK brought up from a {@link NicConfig}, one run-to-completion poll thread per
 * RX queue of every port (an Agrona {@link AgentRunner} with the given idle strategy), and its
 * counters in a {@link CountersFile} that {@code spraynic stat} reads from outside. Until the
 * transports are attached, each poll thread classifies what it receives ({@link RxClassifier}).
 * <p>
 * A live capture ({@link CaptureSource}, {@code spraynic capture}) takes frames through a {@link CaptureTap} on every
 * poll thread's port, one capture ring per poll thread; it is started and stopped by commands each poll thread takes
 * between bursts. Control path only: the poll threads share nothing mutable with this class but the counters.
 */
public final class NicRuntime implements AutoCloseable, CaptureSource
{
    /** Longest a poll thread may take to confirm that a capture started or stopped. */
    public static final Duration CONTROL_TIMEOUT = Duration.ofSeconds(10);

    private final DpdkNic nic;
    private final CountersFile counters;
    private final List<AgentRunner> runners = new ArrayList<>();
    private final List<PortStatsCounters> portCounters = new ArrayList<>();
    private final List<CommandedAgent> agents = new ArrayList<>();
    private final List<String> portNames = new ArrayList<>();
    private int queues;
    private MemorySegment captureMemory;

    private NicRuntime(final DpdkNic nic, final CountersFile counters)
    {
        this.nic = nic;
        this.counters = counters;
    }

    /**
     * Brings the NIC up and starts its poll threads.
     *
     * @param wrap applied to every queue's packet port before polling starts (e.g. a capture).
     */
    public static NicRuntime start(
        final NicConfig config,
        final CountersFile counters,
        final Supplier<IdleStrategy> idleStrategies,
        final UnaryOperator<PacketPort> wrap)
    {
        final DpdkNic nic = DpdkNic.start(config);
        final NicRuntime runtime = new NicRuntime(nic, counters);
        try
        {
            for (final PortConfig port : config.ports())
            {
                final EthPort ethPort = nic.port(port.name());
                final int plane = runtime.portNames.size();
                runtime.portNames.add(port.name());
                runtime.queues = Math.max(runtime.queues, port.rxQueues());
                runtime.portCounters.add(new PortStatsCounters(counters, ethPort, port.name()));
                for (int queue = 0; queue < port.rxQueues(); queue++)
                {
                    final String name = port.name() + "/q" + queue;
                    final String prefix = "port " + name + ": capture ";
                    final CaptureTap tap = new CaptureTap(runtime.agents.size(), counters.newCounter(prefix + "frames"),
                        counters.newCounter(prefix + "drops (ring full)"), counters.newCounter(prefix + "filtered out"),
                        counters.newCounter(prefix + "faults (tap stopped)"), counters.newCounter(prefix + "sampled out"));
                    final PacketPort packetPort = tap.tap(wrap.apply(nic.packetPort(port.name(), queue)), plane, queue);
                    final CommandedAgent agent = new CommandedAgent(new PortPollAgent("spraynic-rx-" + name, packetPort, 32,
                        new RxClassifier(counters.counters(), "port " + name), counters.newCounter("port " + name + ": rx packets")),
                        tap);
                    runtime.agents.add(agent);
                    final AgentRunner runner = new AgentRunner(idleStrategies.get(), Throwable::printStackTrace,
                        counters.newCounter("port " + name + ": poll thread errors"), agent);
                    runtime.runners.add(runner);
                    AgentRunner.startOnThread(runner);
                }
            }
            runtime.publishPortStats();
            return runtime;
        }
        catch (final RuntimeException ex)
        {
            runtime.close();
            throw ex;
        }
    }

    /**
     * Copies every port's DPDK statistics into the counters file (call it periodically).
     */
    public void publishPortStats()
    {
        for (final PortStatsCounters port : portCounters)
        {
            port.publish();
        }
    }

    public DpdkNic nic()
    {
        return nic;
    }

    public CountersFile counters()
    {
        return counters;
    }

    /**
     * @return poll threads running.
     */
    public int pollThreads()
    {
        return runners.size();
    }

    /** @return poll threads: each has a capture ring of its own. */
    public int workers()
    {
        return agents.size();
    }

    /** @return ports, in the config's order. */
    public int planes()
    {
        return portNames.size();
    }

    /** @return the most RX queues of any port. */
    public int queues()
    {
        return queues;
    }

    public String portName(final int plane)
    {
        return portNames.get(plane);
    }

    public synchronized void startCapture(final MemorySegment memory, final CaptureRingLayout layout,
        final CaptureFilter filter)
    {
        if (runners.isEmpty())
        {
            throw new IllegalStateException("the NIC is closed");
        }
        CaptureSource.checkStart(this, captureMemory, memory, layout, filter);
        captureMemory = memory;
        try
        {
            onEveryPollThread(tap -> tap.start(memory, layout, filter, planes()), "start a capture");
        }
        catch (final RuntimeException ex)
        {
            stopCapture();
            throw ex;
        }
    }

    public synchronized void stopCapture()
    {
        final MemorySegment memory = captureMemory;
        if (null == memory)
        {
            return;
        }
        onEveryPollThread(CaptureTap::stop, "stop a capture");
        captureMemory = null;
        CaptureRingLayout.end(memory);
    }

    /** Runs {@code action} on every poll thread's tap, on that thread, and waits for each. */
    private void onEveryPollThread(final java.util.function.Consumer<CaptureTap> action, final String what)
    {
        final List<CompletableFuture<Void>> done = new ArrayList<>();
        for (final CommandedAgent agent : agents)
        {
            final CompletableFuture<Void> future = new CompletableFuture<>();
            if (!agent.commands.offer(() ->
            {
                action.accept(agent.tap);
                future.complete(null);
            }))
            {
                future.completeExceptionally(new IllegalStateException("poll thread " + agent.roleName() + " has too many commands"));
            }
            done.add(future);
        }
        for (final CompletableFuture<Void> future : done)
        {
            try
            {
                future.get(CONTROL_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            }
            catch (final TimeoutException ex)
            {
                throw new IllegalStateException("a poll thread did not " + what + " within " + CONTROL_TIMEOUT, ex);
            }
            catch (final ExecutionException ex)
            {
                throw new IllegalStateException("could not " + what + ": " + ex.getCause().getMessage(), ex.getCause());
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting to " + what, ex);
            }
        }
    }

    /**
     * Stops the poll threads (each releases what it holds), publishes the final port statistics and
     * brings DPDK down.
     */
    public void close()
    {
        for (final AgentRunner runner : runners)
        {
            runner.close();
        }
        runners.clear();
        synchronized (this)
        {
            if (null != captureMemory)
            {
                CaptureRingLayout.end(captureMemory); // the poll threads stopped: nothing writes into it any more
                captureMemory = null;
            }
        }
        publishPortStats();
        nic.close();
    }

    /** A poll thread's agent that takes at most one control command (a capture's start or stop) before each burst. */
    private static final class CommandedAgent implements Agent
    {
        private final ManyToOneConcurrentArrayQueue<Runnable> commands = new ManyToOneConcurrentArrayQueue<>(16);
        private final PortPollAgent delegate;
        private final CaptureTap tap;

        CommandedAgent(final PortPollAgent delegate, final CaptureTap tap)
        {
            this.delegate = delegate;
            this.tap = tap;
        }

        public void onStart()
        {
            delegate.onStart();
        }

        public int doWork() throws Exception
        {
            final Runnable command = commands.poll();
            if (null != command)
            {
                command.run();
            }
            return (null == command ? 0 : 1) + delegate.doWork();
        }

        public void onClose()
        {
            tap.stop(); // a capture still running ends here: its final statistics are written
            delegate.onClose();
        }

        public String roleName()
        {
            return delegate.roleName();
        }
    }
}
