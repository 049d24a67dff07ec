package io.spraynic.pmd;

import java.util.List;
import java.util.Objects;

/**
 * One {@code [[port]]} table: an ethdev port, how it is created, and how its queues are set up.
 * <p>
 * Values are checked when the record becomes part of a {@link NicConfig}, where a failure can be named
 * by its key ({@code port[1].rx_descriptors}); the factories give the documented defaults.
 *
 * @param name          the port's name inside SprayNIC, unique in the configuration.
 * @param kind          how the port is created.
 * @param device        a vdev name ({@code net_pcap0}), a PCI address ({@code 0000:3b:00.0}), or for a
 *                      ring pair the ethdev name given to {@code rte_eth_from_rings()}.
 * @param args          driver arguments, {@code key=value} pairs joined by commas, or empty.
 * @param peer          for {@link PortKind#RING_PAIR}, the name of the other side; otherwise empty.
 * @param rxQueues      RX queues to configure.
 * @param txQueues      TX queues to configure.
 * @param rxDescriptors descriptors per RX queue, a power of two.
 * @param txDescriptors descriptors per TX queue, a power of two.
 * @param mtu           MTU to set, in bytes of L3 payload.
 * @param promiscuous   whether to turn promiscuous mode on; needed when the port's MAC is not the one the
 *                      peer sends to (af_packet on a veth), harmful on a shared NIC (mlx5 bifurcated).
 * @param mac           a unicast MAC address to set, {@code 02:00:00:00:00:01}, or empty to keep the device's.
 * @param ip            the NIC's address on this port's plane, {@code 10.0.1.10/24} ({@link InterfaceAddress}),
 *                      or empty when given elsewhere (the command line's {@code --ip}).
 * @param gateway       the plane's gateway for off-link peers, {@code 10.0.1.1}, or empty for none.
 */
public record PortConfig(
    String name,
    PortKind kind,
    String device,
    String args,
    String peer,
    int rxQueues,
    int txQueues,
    int rxDescriptors,
    int txDescriptors,
    int mtu,
    boolean promiscuous,
    String mac,
    String ip,
    String gateway)
{
    /** Default queues per direction. */
    public static final int DEFAULT_QUEUES = 1;

    /** Default descriptors per queue. */
    public static final int DEFAULT_DESCRIPTORS = 1024;

    /** Default MTU of devices and PCI functions: standard Ethernet. */
    public static final int DEFAULT_MTU = 1500;

    /**
     * The L3 MTU that carries RDMA packets of a 4096 B path MTU (PROTOCOL.md S11), what RoCE NICs ask their
     * port to be set to: 4096 B of payload plus at most 104 B of IPv6, UDP, BTH, extension headers and ICRC.
     * The default of ring pairs, which take any MTU.
     */
    public static final int RDMA_4096_MTU = 4200;

    /** Bytes a {@code net_af_packet} ring frame spends before the packet: TPACKET2_HDRLEN less the sockaddr_ll. */
    public static final int AF_PACKET_FRAME_HEADER = 32;

    /** {@code net_af_packet}'s default ring frame size ({@code framesz}). */
    public static final int AF_PACKET_DEFAULT_FRAME_SIZE = 2048;

    /**
     * Refuses nulls; ranges are checked as part of a {@link NicConfig}.
     */
    public PortConfig
    {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(args, "args");
        Objects.requireNonNull(peer, "peer");
        Objects.requireNonNull(mac, "mac");
        Objects.requireNonNull(ip, "ip");
        Objects.requireNonNull(gateway, "gateway");
    }

    /**
     * A virtual device with default queues, descriptors and MTU.
     *
     * @param name   port name.
     * @param device vdev name, e.g. {@code net_tap0}.
     * @param args   driver arguments, e.g. {@code iface=sn-tap0}, or empty.
     * @return the port.
     */
    public static PortConfig vdev(final String name, final String device, final String args)
    {
        return new PortConfig(name, PortKind.VDEV, device, args, "", DEFAULT_QUEUES, DEFAULT_QUEUES,
            DEFAULT_DESCRIPTORS, DEFAULT_DESCRIPTORS, DEFAULT_MTU, false, "", "", "");
    }

    /**
     * A PCI function with default queues, descriptors and MTU.
     *
     * @param name port name.
     * @param bdf  PCI address, e.g. {@code 0000:3b:00.0}.
     * @param args driver arguments, or empty.
     * @return the port.
     */
    public static PortConfig pci(final String name, final String bdf, final String args)
    {
        return new PortConfig(name, PortKind.PCI, bdf, args, "", DEFAULT_QUEUES, DEFAULT_QUEUES,
            DEFAULT_DESCRIPTORS, DEFAULT_DESCRIPTORS, DEFAULT_MTU, false, "", "", "");
    }

    /**
     * One side of a crossed ring pair, its ethdev named after the port.
     *
     * @param name port name, also the ethdev name.
     * @param peer name of the other side, which must name this port as its peer.
     * @return the port.
     */
    public static PortConfig ringPair(final String name, final String peer)
    {
        return new PortConfig(name, PortKind.RING_PAIR, name, "", peer, DEFAULT_QUEUES, DEFAULT_QUEUES,
            DEFAULT_DESCRIPTORS, DEFAULT_DESCRIPTORS, RDMA_4096_MTU, false, "", "", "");
    }

    /**
     * @param kind how a port is created.
     * @return the MTU a port of that kind gets unless configured: {@link #RDMA_4096_MTU} for ring pairs,
     * {@link #DEFAULT_MTU} for the rest, whose drivers may refuse more (DPDK 22.11's net_af_packet does).
     */
    public static int defaultMtu(final PortKind kind)
    {
        return kind == PortKind.RING_PAIR ? RDMA_4096_MTU : DEFAULT_MTU;
    }

    /**
     * @return whether this port is DPDK's {@code net_af_packet} on a kernel interface, whose MTU is the kernel
     * interface's: DPDK 22.11 can neither read it nor set it above 1500.
     */
    public boolean isAfPacket()
    {
        return kind == PortKind.VDEV && device.startsWith("net_af_packet");
    }

    /**
     * @return whether this port is DPDK's {@code net_af_xdp}, whose UMEM is the mbuf pool, one page-sized chunk per mbuf.
     */
    public boolean isAfXdp()
    {
        return kind == PortKind.VDEV && device.startsWith("net_af_xdp");
    }

    /**
     * @param key a driver argument, e.g. {@code iface}.
     * @return its first value in {@link #args()}, or null.
     */
    public String driverArgument(final String key)
    {
        return Devargs.first(Devargs.parse(args, "port " + name + " args"), key);
    }

    /**
     * @return for {@code net_af_packet}, the longest frame its socket rings carry ({@code framesz} less the
     * packet header); longer frames are cut on receive and dropped on send.
     * @throws NumberFormatException when {@code framesz} is not a number (a checked config never has that).
     */
    public int afPacketMaxFrameLength()
    {
        final String frameSize = driverArgument("framesz");
        return (null == frameSize ? AF_PACKET_DEFAULT_FRAME_SIZE : Integer.parseInt(frameSize)) - AF_PACKET_FRAME_HEADER;
    }

    /**
     * @return the device string as EAL takes it: {@code net_pcap0,tx_pcap=/tmp/x.pcap}, or the bare device.
     */
    public String devargs()
    {
        return args.isEmpty() ? device : device + ',' + args;
    }

    /**
     * @return what this port adds to the EAL argument vector: {@code --vdev=<devargs>} for a vdev,
     * {@code -a <devargs>} for PCI, nothing for a ring pair (the runtime creates it after EAL init).
     */
    public List<String> ealArguments()
    {
        return switch (kind)
        {
            case VDEV -> List.of("--vdev=" + devargs());
            case PCI -> List.of("-a", devargs());
            case RING_PAIR, UDP -> List.of();
        };
    }

    /**
     * @param rxQueues RX queues.
     * @param txQueues TX queues.
     * @return a copy with other queue counts.
     */
    public PortConfig withQueues(final int rxQueues, final int txQueues)
    {
        return new PortConfig(name, kind, device, args, peer, rxQueues, txQueues, rxDescriptors, txDescriptors,
            mtu, promiscuous, mac, ip, gateway);
    }

    /**
     * @param rxDescriptors descriptors per RX queue.
     * @param txDescriptors descriptors per TX queue.
     * @return a copy with other ring sizes.
     */
    public PortConfig withDescriptors(final int rxDescriptors, final int txDescriptors)
    {
        return new PortConfig(name, kind, device, args, peer, rxQueues, txQueues, rxDescriptors, txDescriptors,
            mtu, promiscuous, mac, ip, gateway);
    }

    /**
     * @param args driver arguments.
     * @return a copy with other driver arguments.
     */
    public PortConfig withArgs(final String args)
    {
        return new PortConfig(name, kind, device, args, peer, rxQueues, txQueues, rxDescriptors, txDescriptors,
            mtu, promiscuous, mac, ip, gateway);
    }

    /**
     * @param mtu MTU in bytes.
     * @return a copy with another MTU.
     */
    public PortConfig withMtu(final int mtu)
    {
        return new PortConfig(name, kind, device, args, peer, rxQueues, txQueues, rxDescriptors, txDescriptors,
            mtu, promiscuous, mac, ip, gateway);
    }

    /**
     * @param promiscuous promiscuous mode on or off.
     * @return a copy with promiscuous mode set.
     */
    public PortConfig withPromiscuous(final boolean promiscuous)
    {
        return new PortConfig(name, kind, device, args, peer, rxQueues, txQueues, rxDescriptors, txDescriptors,
            mtu, promiscuous, mac, ip, gateway);
    }

    /**
     * @param mac a unicast MAC address, or empty to keep the device's.
     * @return a copy with a MAC override.
     */
    public PortConfig withMac(final String mac)
    {
        return new PortConfig(name, kind, device, args, peer, rxQueues, txQueues, rxDescriptors, txDescriptors,
            mtu, promiscuous, mac, ip, gateway);
    }

    /**
     * @param ip      the NIC's address on the plane, {@code 10.0.1.10/24}, or empty.
     * @param gateway the plane's gateway, or empty.
     * @return a copy with another address.
     */
    public PortConfig withAddress(final String ip, final String gateway)
    {
        return new PortConfig(name, kind, device, args, peer, rxQueues, txQueues, rxDescriptors, txDescriptors,
            mtu, promiscuous, mac, ip, gateway);
    }

    /** @return the checked address of {@link #ip} and {@link #gateway}, or null when {@code ip} is empty. */
    public InterfaceAddress interfaceAddress()
    {
        return ip.isEmpty() ? null : InterfaceAddress.parse(ip, gateway);
    }
}
