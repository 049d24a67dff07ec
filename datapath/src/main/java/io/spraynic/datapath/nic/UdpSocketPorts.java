package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.UdpPortCounters;
import io.spraynic.datapath.port.UdpSocketPacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.pmd.MempoolConfig;
import io.spraynic.pmd.NicConfig;
import io.spraynic.pmd.PortConfig;
import io.spraynic.pmd.UdpPortArgs;
import io.spraynic.datapath.wire.Wire;

import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

/**
 * The ports of a NIC whose pmd-config has only {@code kind = "udp"} ports (control path): one
 * {@link UdpSocketPacketPort} per worker and plane, no EAL, no mempool, no hugepages. Each plane's sockets bind
 * to its port's address, which becomes the plane's IP address; with several workers, each worker's listening
 * socket shares the port ({@code SO_REUSEPORT}).
 */
final class UdpSocketPorts implements AutoCloseable
{
    private final List<UdpSocketPacketPort> opened = new ArrayList<>();
    private final List<UdpPortCounters> counters = new ArrayList<>();
    private final PacketPort[][] ports;

    private UdpSocketPorts(final int workers, final int planes)
    {
        ports = new PacketPort[workers][planes];
    }

    /**
     * Opens every worker's socket port of every plane, filling in the planes' addresses (and MACs, {@code 02:00:}
     * and the address) in {@code config} where they are 0.
     *
     * @throws IllegalArgumentException when a plane's configured address is not its port's bind address.
     * @throws IllegalStateException when a socket cannot be bound (the errno named).
     */
    static UdpSocketPorts open(final NicConfig nicConfig, final EmbeddedNicConfig config, final CountersFile file,
        final UnaryOperator<PacketPort> wrap)
    {
        final List<PortConfig> portConfigs = nicConfig.ports();
        final UdpSocketPorts result = new UdpSocketPorts(config.workers, portConfigs.size());
        final int buffersMin = 2 * UdpSocketPacketPort.MAX_BURST;
        final int frameRoom = Math.min(config.maxFrameLength, nicConfig.mempool().dataRoom() - MempoolConfig.HEADROOM);
        try
        {
            for (int p = 0; p < portConfigs.size(); p++)
            {
                final PortConfig port = portConfigs.get(p);
                final UdpPortArgs args = UdpPortArgs.of(port);
                if (null != config.addresses[p] && config.addresses[p].isIpv6())
                {
                    throw new IllegalArgumentException("plane " + p + " has IPv6 address " + config.addresses[p] + " but its " +
                        "port " + port.name() + " is a udp port, whose sockets carry IPv4 only: give the plane an IPv4 address");
                }
                if (config.localIpv4[p] == 0)
                {
                    config.localIpv4[p] = args.address(); // loopback allowed: the kernel routes it
                }
                else if (config.localIpv4[p] != args.address())
                {
                    throw new IllegalArgumentException("plane " + p + " has address " + Wire.ipv4ToString(config.localIpv4[p]) +
                        " but its udp port " + port.name() + " binds " + port.device() + ": a socket port sends from and " +
                        "receives on its bind address, so give the plane that address (or bind the port to the plane's)");
                }
                if (config.localMac[p] == 0)
                {
                    config.localMac[p] = 0x0200_0000_0000L | Integer.toUnsignedLong(args.address());
                }
                final int buffers = Math.max(buffersMin, port.rxDescriptors() + port.txDescriptors());
                for (int w = 0; w < config.workers; w++)
                {
                    final String name = port.name() + "/q" + w;
                    final UdpPortCounters portCounters = new UdpPortCounters(file::newCounter, "port " + name + ": ");
                    result.counters.add(portCounters);
                    final UdpSocketPacketPort socketPort = new UdpSocketPacketPort(name, args.address(), args.port(),
                        args.peerPort(), args.sourcePorts(), config.workers > 1, frameRoom, buffers, config.localMac[p],
                        portCounters);
                    result.opened.add(socketPort);
                    result.ports[w][p] = wrap.apply(socketPort);
                }
            }
            config.maxFrameLength = frameRoom;
            config.linkLayer = false; // the kernel resolves neighbours for its sockets
            return result;
        }
        catch (final RuntimeException ex)
        {
            result.close();
            throw ex;
        }
    }

    /** @return {@code ports[worker][plane]}. */
    PacketPort[][] ports()
    {
        return ports;
    }

    /** Closes the sockets and frees the buffers: after the workers stopped. */
    public void close()
    {
        for (final UdpSocketPacketPort port : opened)
        {
            port.close();
        }
        opened.clear();
        for (final UdpPortCounters c : counters)
        {
            c.close();
        }
        counters.clear();
    }
}
