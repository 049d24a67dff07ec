package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.PortPollAgent;
import io.spraynic.dpdk.EthPort;
import io.spraynic.dpdk.PortStats;
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
    private final List<PortCounters> portCounters = new ArrayList<>();

    private record PortCounters(EthPort port, AtomicCounter rxPackets, AtomicCounter txPackets, AtomicCounter rxBytes,
        AtomicCounter txBytes, AtomicCounter rxMissed, AtomicCounter rxErrors, AtomicCounter txErrors, AtomicCounter rxNoMbuf)
    {
        void publish()
        {
            final PortStats stats = port.stats();
            rxPackets.setRelease(stats.rxPackets());
            txPackets.setRelease(stats.txPackets());
            rxBytes.setRelease(stats.rxBytes());
            txBytes.setRelease(stats.txBytes());
            rxMissed.setRelease(stats.rxMissed());
            rxErrors.setRelease(stats.rxErrors());
            txErrors.setRelease(stats.txErrors());
            rxNoMbuf.setRelease(stats.rxNoMbuf());
        }
    }

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
                final String prefix = "port " + port.name();
                runtime.portCounters.add(new PortCounters(ethPort,
                    counters.newCounter(prefix + ": dpdk rx packets"), counters.newCounter(prefix + ": dpdk tx packets"),
                    counters.newCounter(prefix + ": dpdk rx bytes"), counters.newCounter(prefix + ": dpdk tx bytes"),
                    counters.newCounter(prefix + ": dpdk rx missed"), counters.newCounter(prefix + ": dpdk rx errors"),
                    counters.newCounter(prefix + ": dpdk tx errors"), counters.newCounter(prefix + ": dpdk rx no mbuf")));
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
        for (final PortCounters port : portCounters)
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
