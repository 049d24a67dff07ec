package io.spraynic.datapath.nic;

import io.spraynic.datapath.port.PacketPort;
import io.spraynic.datapath.port.UdpPortCounters;
import io.spraynic.datapath.port.UdpSocketPacketPort;
import io.spraynic.datapath.telemetry.CountersFile;
import io.spraynic.pmd.InterfaceAddress;
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
 * to its port's address, IPv4 or IPv6, which becomes the plane's IP address; with several workers, each worker's
 * listening socket shares the port ({@code SO_REUSEPORT}). A plane whose configured address is not its port's
 * (of the other family, or another address) is refused before any socket opens.
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
     * @throws IllegalArgumentException when a plane's configured address is not its port's bind address (or not of
     *                                  its family).
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
                planeAddress(config, p, port, args);
                if (config.localMac[p] == 0)
                {
                    // 02:00 and the address's last 32 bits, as the synthesized frames' source MACs of its peers
                    config.localMac[p] = 0x0200_0000_0000L | (args.isIpv6() ? args.addressLow() & 0xFFFF_FFFFL :
                        Integer.toUnsignedLong(args.address()));
                }
                final int buffers = Math.max(buffersMin, port.rxDescriptors() + port.txDescriptors());
                for (int w = 0; w < config.workers; w++)
                {
                    final String name = port.name() + "/q" + w;
                    final UdpPortCounters portCounters = new UdpPortCounters(file::newCounter, "port " + name + ": ");
                    result.counters.add(portCounters);
                    final UdpSocketPacketPort socketPort = args.isIpv6() ?
                        new UdpSocketPacketPort(name, args.addressHigh(), args.addressLow(), args.port(), args.peerPort(),
                            args.sourcePorts(), config.workers > 1, frameRoom, buffers, config.localMac[p], portCounters) :
                        new UdpSocketPacketPort(name, args.address(), args.port(), args.peerPort(), args.sourcePorts(),
                            config.workers > 1, frameRoom, buffers, config.localMac[p], portCounters);
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

    /**
     * Gives plane {@code p} its port's bind address where it has none, else checks that it has that one: a socket
     * port sends from and receives on its bind address only.
     */
    private static void planeAddress(final EmbeddedNicConfig config, final int p, final PortConfig port,
        final UdpPortArgs args)
    {
        final InterfaceAddress given = config.addresses[p];
        final String fix = ": a socket port sends from and receives on its bind address, so give the plane that " +
            "address (or bind the port to the plane's)";
        if (null == given && config.localIpv4[p] == 0)
        {
            // loopback allowed: the kernel routes it
            config.local(p, args.isIpv6() ? InterfaceAddress.ipv6(args.addressHigh(), args.addressLow(), 0, 0, 0) :
                new InterfaceAddress(args.address(), 0, 0), config.localMac[p]);
            return;
        }
        final boolean givenIpv6 = null != given && given.isIpv6();
        if (givenIpv6 != args.isIpv6())
        {
            throw new IllegalArgumentException("plane " + p + " has " + (givenIpv6 ? "IPv6" : "IPv4") + " address " +
                (null != given ? given.toString() : Wire.ipv4ToString(config.localIpv4[p])) + " but its udp port " +
                port.name() + " binds " + (args.isIpv6() ? "IPv6" : "IPv4") + " address " + args.addressText() +
                ": a plane and its port are of one family" + fix);
        }
        final boolean same = args.isIpv6() ? given.ipv6High() == args.addressHigh() && given.ipv6Low() == args.addressLow() :
            config.localIpv4[p] == args.address();
        if (!same)
        {
            throw new IllegalArgumentException("plane " + p + " has address " + (args.isIpv6() ? given.toString() :
                Wire.ipv4ToString(config.localIpv4[p])) + " but its udp port " + port.name() + " binds " +
                args.addressText() + fix);
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
