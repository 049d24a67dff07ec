package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.PortPollAgent;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.telemetry.PortStatsCounters;
import io.spraynic.dpdk.EthPort;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.status.AtomicCounter;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * A running NIC: DPDK brought up from a {@link NicConfig}, one run-to-completion poll thread per
 * RX queue of every port (an Agrona {@link AgentRunner} with the given idle strategy), and its
 * counters in a {@link CountersFile} that {@code spraynic stat} reads from outside. Until the
 * transports are attached, each poll thread classifies what it receives ({@link RxClassifier}).
 * <p>
 * Control path only: the poll threads share nothing mutable with this class but the counters.
 */
public final class NicRuntime implements AutoCloseable
{
    private final DpdkNic nic;
    private final CountersFile counters;
    private final List<AgentRunner> runners = new ArrayList<>();
    private final List<PortStatsCounters> portCounters = new ArrayList<>();

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
                runtime.portCounters.add(new PortStatsCounters(counters, ethPort, port.name()));
                for (int queue = 0; queue < port.rxQueues(); queue++)
                {
                    final String name = port.name() + "/q" + queue;
                    final PacketPort packetPort = wrap.apply(nic.packetPort(port.name(), queue));
                    final PortPollAgent agent = new PortPollAgent("spraynic-rx-" + name, packetPort, 32,
                        new RxClassifier(counters.counters(), "port " + name), counters.newCounter("port " + name + ": rx packets"));
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
        publishPortStats();
        nic.close();
    }
}
