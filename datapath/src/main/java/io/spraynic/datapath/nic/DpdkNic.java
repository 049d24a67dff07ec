package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.DpdkPacketPort;
import io.spraynic.datapath.wire.Wire;
import io.spraynic.dpdk.DpdkException;
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
        // the MTU goes in with the configuration, so drivers without mtu_set (net_ring) take it too; net_af_packet's
        // is its kernel interface's, which DPDK 22.11 caps at 1500 and cannot set (see mtu(String))
        port.configure(config.rxQueues(), config.txQueues(), config.isAfPacket() ? 0 : config.mtu());
        if (!config.mac().isEmpty())
        {
            setMac(port, config);
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

    private static final int ENOTSUP = 95;

    private static void setMac(final EthPort port, final PortConfig config)
    {
        try
        {
            port.macAddress(Wire.parseMac(config.mac()));
        }
        catch (final DpdkException ex)
        {
            // a port that kept its own MAC would answer ARP and send with one the config did not ask for
            throw new IllegalArgumentException("port " + config.name() + ": cannot set mac = \"" + config.mac() +
                "\" (" + (ex.errno() == ENOTSUP ? "its driver cannot set a MAC address" : ex.getMessage()) +
                "): remove mac to keep the device's own", ex);
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
     * The MTU frames sent on a port must respect: the one configured and set on the port, and for
     * {@code net_af_packet} the smaller of the configured one and its kernel interface's, read from sysfs
     * (DPDK 22.11's af_packet reports 1500 whatever the interface has, and the kernel drops what exceeds it).
     *
     * @param name a configured port.
     * @return its MTU, bytes of L3 packet.
     */
    public int mtu(final String name)
    {
        final PortConfig portConfig = portConfig(name);
        if (portConfig.isAfPacket())
        {
            return Math.min(portConfig.mtu(), kernelMtu(portConfig.driverArgument("iface")));
        }
        return port(name).mtu();
    }

    /**
     * @param name a configured port.
     * @return the longest frame (Ethernet header included, no CRC) that one mbuf holds, the port's MTU allows with
     * a VLAN tag, and for {@code net_af_packet} its socket ring's frames carry: what a sender may build.
     */
    public int maxFrameLength(final String name)
    {
        int limit = Math.min(config.mempool().maxFrameLength(), mtu(name) + VLAN_ETHERNET_HEADER);
        final PortConfig portConfig = portConfig(name);
        if (portConfig.isAfPacket())
        {
            limit = Math.min(limit, portConfig.afPacketMaxFrameLength());
        }
        return limit;
    }

    /** Ethernet header with one VLAN tag: what a frame adds to its L3 packet, the MTU. */
    static final int VLAN_ETHERNET_HEADER = 18;

    private PortConfig portConfig(final String name)
    {
        for (final PortConfig port : config.ports())
        {
            if (port.name().equals(name))
            {
                return port;
            }
        }
        // a ring pair's peer is configured as a port of its own; anything else is unknown
        throw new IllegalArgumentException("no port named '" + name + "'; configured ports: " + ports.keySet());
    }

    static int kernelMtu(final String iface)
    {
        if (null == iface || !iface.matches("[A-Za-z0-9_.:-]{1,15}"))
        {
            throw new IllegalArgumentException("net_af_packet interface name '" + iface + "' is not a Linux interface name");
        }
        final java.nio.file.Path file = java.nio.file.Path.of("/sys/class/net", iface, "mtu");
        try
        {
            return Integer.parseInt(java.nio.file.Files.readString(file).trim());
        }
        catch (final java.io.IOException | NumberFormatException ex)
        {
            throw new IllegalStateException("cannot read the MTU of interface " + iface + " from " + file + ": " + ex, ex);
        }
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
