package io.spraynic.cli;

import io.spraynic.pmd.UdpPortArgs;

import java.util.ArrayList;
import java.util.List;

/**
 * The kind of port the NIC processes on the Linux ECMP lab ({@code deploy/lab/lab}) run on, one per plane: what
 * {@code demo --fabric linux --port-kind} and the lab tests' {@code -Dspraynic.lab.port} choose.
 * <ul>
 * <li>{@link #AF_PACKET}: {@code net_af_packet} on the host's plane interfaces, the NIC owning their addresses (the
 * lab built with {@code --host-stack none}: the hosts' kernels hold no address, the routers' neighbour entries for
 * the NICs' MACs static).</li>
 * <li>{@link #AF_XDP}: {@code net_af_xdp} on the same interfaces, native XDP on veth, the same lab.</li>
 * <li>{@link #UDP}: kernel UDP sockets (port 4791) bound to the host's plane addresses, which the host's kernel
 * holds (the lab's default {@code --host-stack kernel}), its routes to the plane's router choosing the interface:
 * no DPDK in the NIC processes.</li>
 * </ul>
 {@code net_af_xdp}'s mbufs hold 2 KiB frames (a UMEM chunk is at most a page) and the UDP port's buffers the same
 * (with the default 4 KiB room its datagrams would be fragmented by the hosts' kernels on the 1500 B veths);
 * {@code net_af_packet}'s 2 KiB ring frames bound it alike: every kind runs at a 1024 B path MTU, and its data
 * packets are the same size on the routers' links.
 */
enum LabPortKind
{
    AF_PACKET("af_packet", "net_af_packet"),
    AF_XDP("af_xdp", "net_af_xdp"),
    UDP("udp", "kernel UDP sockets");

    /**
     * A UDP port's sockets per plane, the most a port holds: spray's port rotation (S7.7) moves each path among
     * them, so a router link's share of a plane is the share of these fixed 5-tuples its hash takes.
     */
    static final int UDP_SOURCE_PORTS = UdpPortArgs.MAX_SOURCE_PORTS;
    /** The mbufs' (and UDP buffers') data room: 2 KiB frames and their headroom, net_af_xdp's preset's. */
    static final int DATA_ROOM = 2176;

    private final String option;
    private final String description;

    LabPortKind(final String option, final String description)
    {
        this.option = option;
        this.description = description;
    }

    /** @return the name the option takes: af_packet, af_xdp or udp. */
    String option()
    {
        return option;
    }

    /** @return what the NICs run on, in words (net_af_packet, net_af_xdp, kernel UDP sockets). */
    String description()
    {
        return description;
    }

    /**
     * @param option how {@code value} was given, for the refusal (e.g. {@code --port-kind}).
     * @return the kind named {@code value}.
     * @throws BadOption for any other name.
     */
    static LabPortKind parse(final String option, final String value)
    {
        for (final LabPortKind kind : values())
        {
            if (kind.option.equals(value))
            {
                return kind;
            }
        }
        throw new BadOption(option, value, "must be af_packet, af_xdp or udp (the NICs' ports on the lab: " +
            "net_af_packet, net_af_xdp on veth, or kernel UDP sockets)", "try " + option + " af_packet");
    }

    /**
     * @return the options of {@code lab up} this kind needs: the DPDK kinds' NICs own the hosts' addresses (no kernel
     * stack there, static neighbour entries in the routers, no IPv6); UDP sockets use the hosts' kernels' addresses
     * and routes (IPv4 only, as the NICs are given).
     */
    List<String> labUpOptions()
    {
        return this == UDP ? List.of("--no-ipv6") : List.of("--host-stack", "none", "--static-neighbours", "--no-ipv6");
    }

    /**
     * A TOML NIC config with one port of this kind per plane, no hugepages; the parameters are those
     * {@code spraynic transfer} fills (file_prefix, queues).
     *
     * @param interfaces the host's interface in each plane (the DPDK kinds bind to it).
     * @param addresses  the host's IPv4 address in each plane, bare or with its prefix (a UDP port binds to it).
     */
    String config(final String filePrefix, final List<String> interfaces, final List<String> addresses)
    {
        final List<String> lines = new ArrayList<>(List.of("[eal]", "lcores = \"0\"", "no_huge = true",
            "memory_mb = 512", "no_pci = true", "file_prefix = \"${file_prefix:-" + filePrefix + "}\"", ""));
        if (this != AF_PACKET) // af_packet keeps the default pool, as the lab ran it before; its ring frames bound it
        {
            lines.addAll(List.of("[mempool]", "data_room = " + DATA_ROOM, ""));
        }
        for (int i = 0; i < interfaces.size(); i++)
        {
            lines.addAll(List.of("[[port]]", "name = \"" + portName(i) + "\""));
            lines.addAll(switch (this)
            {
                // socket rings of 8192 frames of 2 KiB; qdisc bypass off, so a TBF on the interface still applies
                case AF_PACKET -> List.of("kind = \"vdev\"", "device = \"net_af_packet" + i + "\"",
                    "args = { iface = \"" + interfaces.get(i) + "\", qpairs = \"${queues:-1}\", blocksz = 4096, " +
                    "framesz = 2048, framecnt = 8192 }", "promiscuous = true");
                case AF_XDP -> List.of("kind = \"vdev\"", "device = \"net_af_xdp" + i + "\"",
                    "args = { iface = \"" + interfaces.get(i) + "\", start_queue = \"0\", queue_count = " +
                    "\"${queues:-1}\" }", "promiscuous = true");
                case UDP -> List.of("kind = \"udp\"", "device = \"" + bare(addresses.get(i)) + "\"",
                    "args = { port = \"4791\", peer_port = \"4791\", source_ports = \"" + UDP_SOURCE_PORTS + "\" }");
            });
            lines.addAll(List.of("rx_queues = ${queues:-1}", "tx_queues = ${queues:-1}", ""));
        }
        return String.join("\n", lines);
    }

    private String portName(final int plane)
    {
        return switch (this)
        {
            case AF_PACKET -> "afp";
            case AF_XDP -> "afx";
            case UDP -> "udp";
        } + plane;
    }

    private static String bare(final String address)
    {
        final int slash = address.indexOf('/');
        return slash < 0 ? address : address.substring(0, slash);
    }
}
