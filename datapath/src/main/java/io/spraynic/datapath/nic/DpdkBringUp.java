package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.datapath.telemetry.PortStatsCounters;
import io.spraynic.datapath.wire.Icmpv6Header;
import io.spraynic.dpdk.EthPort;
import io.spraynic.pmd.InterfaceAddress;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * Brings the ports of a pmd-config up for an {@link EmbeddedNic}: DPDK (EAL, mempool, ports) or, for a config of only
 * {@code udp} ports, kernel UDP sockets; then starts the NIC on them, which owns and closes them.
 */
final class DpdkBringUp
{
    private DpdkBringUp()
    {
    }

    /** See {@link EmbeddedNic#startOnDpdk}. */
    static EmbeddedNic start(final NicConfig nicConfig, final EmbeddedNicConfig config, final CountersFile counters,
        final UnaryOperator<PacketPort> wrap)
    {
        final List<PortConfig> portConfigs = nicConfig.ports();
        requireFit(portConfigs, config);
        if (nicConfig.onlyUdpPorts())
        {
            // kernel UDP sockets: no EAL, no mempool, no hugepages
            final UdpSocketPorts sockets = UdpSocketPorts.open(nicConfig, config, counters, wrap);
            try
            {
                return EmbeddedNic.start(config, sockets.ports(), counters, sockets);
            }
            catch (final RuntimeException ex)
            {
                sockets.close();
                throw ex;
            }
        }
        final DpdkNic dpdk = DpdkNic.start(nicConfig);
        try
        {
            for (final PortConfig port : portConfigs)
            {
                config.maxFrameLength = Math.min(config.maxFrameLength, dpdk.maxFrameLength(port.name()));
            }
            final PacketPort[][] ports = new PacketPort[config.workers][config.planes()];
            for (int p = 0; p < config.planes(); p++)
            {
                final String name = portConfigs.get(p).name();
                final EthPort ethPort = dpdk.port(name);
                if (config.localMac[p] == 0)
                {
                    config.localMac[p] = macOf(ethPort.macAddress());
                }
                final InterfaceAddress address = config.addresses[p];
                if (null != address && address.isIpv6())
                {
                    // neighbour solicitations come to the address's solicited-node group, announcements to all nodes
                    ethPort.acceptMulticast(Icmpv6Header.multicastMac(Icmpv6Header.solicitedNodeLow(address.ipv6Low())),
                        Icmpv6Header.multicastMac(Icmpv6Header.ALL_NODES_LOW));
                }
                for (int w = 0; w < config.workers; w++)
                {
                    ports[w][p] = wrap.apply(dpdk.packetPort(name, w));
                }
            }
            final EmbeddedNic nic = EmbeddedNic.start(config, ports, counters, dpdk);
            final List<PortStatsCounters> stats = new ArrayList<>();
            for (final PortConfig port : portConfigs)
            {
                stats.add(new PortStatsCounters(counters, dpdk.port(port.name()), port.name()));
            }
            nic.publishPortStats(PortStatsPublisher.start(stats, nic::isClosing));
            return nic;
        }
        catch (final RuntimeException ex)
        {
            dpdk.close();
            throw ex;
        }
    }

    /**
     * @throws IllegalArgumentException unless the config has one port per plane, each with a queue (RX and TX) per
     *                                  worker and no RX queue that no worker polls.
     */
    static void requireFit(final List<PortConfig> portConfigs, final EmbeddedNicConfig config)
    {
        if (portConfigs.size() != config.planes())
        {
            throw new IllegalArgumentException("the embedded NIC has " + config.planes() + " plane(s) but the pmd config has " +
                portConfigs.size() + " port(s): give one port per plane (or set planes to " + portConfigs.size() + ")");
        }
        for (final PortConfig port : portConfigs)
        {
            if (port.rxQueues() < config.workers || port.txQueues() < config.workers)
            {
                throw new IllegalArgumentException("port " + port.name() + " has " + port.rxQueues() + " RX and " +
                    port.txQueues() + " TX queue(s) for " + config.workers + " worker(s): set rx_queues and tx_queues to at least " +
                    config.workers);
            }
            if (port.rxQueues() > config.workers)
            {
                // worker w polls RX queue w only: what RSS (or a socket fan-out) spreads to the others is never read,
                // lost without a counter, and holds the mbufs it arrived in
                throw new IllegalArgumentException("port " + port.name() + " has " + port.rxQueues() + " RX queues for " +
                    config.workers + " worker(s): frames the device spreads to " + (port.rxQueues() - config.workers == 1 ?
                    "queue " + config.workers : "queues " + config.workers + ".." + (port.rxQueues() - 1)) +
                    " would never be read; set rx_queues to " + config.workers + " (-p queues=" + config.workers +
                    " with a preset), or run " + port.rxQueues() + " workers");
            }
        }
    }

    /** @return a MAC's 6 bytes as a long, first byte highest. */
    static long macOf(final byte[] mac)
    {
        long value = 0;
        for (final byte b : mac)
        {
            value = value << 8 | (b & 0xFF);
        }
        return value;
    }
}
