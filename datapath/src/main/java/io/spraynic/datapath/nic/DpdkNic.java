package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.DpdkPacketPort;
import io.spraynic.dpdk.Eal;
import io.spraynic.dpdk.EthPort;
import io.spraynic.dpdk.Mempool;
import io.spraynic.dpdk.RingPortPair;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import io.spraynic.pmd.PortKind;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The DPDK side of a NIC, brought up from a {@link NicConfig} (control path only): EAL, the mbuf
 * pool, every port configured and started, crossed ring pairs built. Poll threads then take
 * {@link #packetPort(String, int)} views, one per queue.
 * <p>
 * Closing stops and closes the ports, frees rings and pool and cleans up EAL; EAL cannot start
 * again in the same process.
 */
public final class DpdkNic implements AutoCloseable
{
    private final NicConfig config;
    private final Eal eal;
    private final Mempool pool;
    private final Map<String, EthPort> ports;
    private final List<RingPortPair> ringPairs;

    private DpdkNic(
        final NicConfig config,
        final Eal eal,
        final Mempool pool,
        final Map<String, EthPort> ports,
        final List<RingPortPair> ringPairs)
    {
        this.config = config;
        this.eal = eal;
        this.pool = pool;
        this.ports = ports;
        this.ringPairs = ringPairs;
    }

    /**
     * Starts EAL with the configuration's arguments and brings every port up.
     */
    public static DpdkNic start(final NicConfig config)
    {
        for (final PortConfig port : config.ports())
        {
            if (port.kind() == PortKind.UDP)
            {
                throw new IllegalArgumentException("port " + port.name() + " is a kernel UDP socket port, not a DPDK " +
                    "port: only an embedded NIC (spray or rocev2 mode) runs on udp ports");
            }
        }
        final Eal eal = Eal.init(config.ealArguments());
        final Map<String, EthPort> ports = new LinkedHashMap<>();
        final List<RingPortPair> ringPairs = new ArrayList<>();
        Mempool pool = null;
        try
        {
            eal.registerCurrentThread();
            final MempoolConfig mempool = config.mempool();
            pool = Mempool.createPacketPool(
                mempool.name(), mempool.mbufs(), mempool.cache(), mempool.dataRoom(), mempool.socketId());

            for (final PortConfig port : config.ports())
            {
                if (port.kind() == PortKind.RING_PAIR)
                {
                    if (!ports.containsKey(port.name()))
                    {
                        final RingPortPair pair = RingPortPair.create(port.name(), port.rxQueues(), port.rxDescriptors());
                        ringPairs.add(pair);
                        ports.put(port.name(), pair.first());
                        ports.put(port.peer(), pair.second());
                    }
                }
                else
                {
                    ports.put(port.name(), EthPort.byName(port.device()));
                }
            }
            for (final PortConfig port : config.ports())
            {
                bringUp(ports.get(port.name()), port, pool);
            }
            return new DpdkNic(config, eal, pool, ports, ringPairs);
        }
        catch (final RuntimeException ex)
        {
            closeAll(ports, ringPairs, pool, eal);
            throw ex;
        }
    }

    private static void bringUp(final EthPort port, final PortConfig config, final Mempool pool)
    {
        port.configure(config.rxQueues(), config.txQueues());
        if (port.mtu() != config.mtu())
        {
            port.mtu(config.mtu());
        }
        for (int queue = 0; queue < config.rxQueues(); queue++)
        {
            port.setupRxQueue(queue, config.rxDescriptors(), pool);
        }
        for (int queue = 0; queue < config.txQueues(); queue++)
        {
            port.setupTxQueue(queue, config.txDescriptors());
        }
        port.start();
        if (config.promiscuous())
        {
            port.promiscuous(true);
        }
    }

    public NicConfig config()
    {
        return config;
    }

    public Eal eal()
    {
        return eal;
    }

    public Mempool pool()
    {
        return pool;
    }

    /**
     * @return the DPDK port configured under {@code name}.
     */
    public EthPort port(final String name)
    {
        final EthPort port = ports.get(name);
        if (null == port)
        {
            throw new IllegalArgumentException("no port named '" + name + "'; configured ports: " + ports.keySet());
        }
        return port;
    }

    /**
     * @return the ports by configured name.
     */
    public Map<String, EthPort> ports()
    {
        return Map.copyOf(ports);
    }

    /**
     * @return a packet-port view of one queue, for one poll thread.
     */
    public DpdkPacketPort packetPort(final String name, final int queue)
    {
        return new DpdkPacketPort(port(name), queue, pool);
    }

    public void close()
    {
        closeAll(ports, ringPairs, pool, eal);
    }

    private static void closeAll(
        final Map<String, EthPort> ports, final List<RingPortPair> ringPairs, final Mempool pool, final Eal eal)
    {
        for (final EthPort port : ports.values())
        {
            port.close();
        }
        for (final RingPortPair pair : ringPairs)
        {
            pair.close();
        }
        if (null != pool)
        {
            pool.close();
        }
        eal.close();
    }
}
