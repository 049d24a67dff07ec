package io.spraynic.pmd;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

import static io.spraynic.pmd.ConfigRules.DESCRIPTORS;
import static io.spraynic.pmd.ConfigRules.MTU;
import static io.spraynic.pmd.ConfigRules.QUEUES;
import static io.spraynic.pmd.ConfigRules.key;
import static io.spraynic.pmd.ConfigRules.prefix;

/**
 * The {@code [[port]]} tables' rules: each port alone (name, device for its kind, queues, MAC, address), then the
 * ports together (unique names and devices, one family of kinds, crossed ring pairs). Part of {@link ConfigRules}.
 */
final class PortRules
{
    /** {@code RTE_MAX_ETHPORTS} in Debian's DPDK build. */
    static final int MAX_PORTS = 32;

    /** Virtual-device drivers in DPDK 22.11's drivers/net; a vdev name is one of these plus an instance id. */
    static final List<String> VDEV_DRIVERS = List.of(
        "net_af_packet", "net_af_xdp", "net_bonding", "net_failsafe", "net_kni", "net_memif", "net_null", "net_pcap",
        "net_ring", "net_softnic", "net_tap", "net_tun", "net_vdev_netvsc", "net_vhost", "net_virtio_user");

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,32}");
    private static final Pattern RING_DEVICE = Pattern.compile("[A-Za-z0-9_-]{1,63}");
    private static final Pattern VDEV_INSTANCE = Pattern.compile("[A-Za-z0-9_]*");
    private static final Pattern PCI_ADDRESS =
        Pattern.compile("(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[01][0-9a-fA-F]\\.[0-7]");
    private static final Pattern MAC = Pattern.compile("[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}");

    private PortRules()
    {
    }

    static void checkCount(final List<PortConfig> ports)
    {
        if (ports.isEmpty())
        {
            throw new ConfigException("port", ConfigException.MISSING, "must declare at least one [[port]] table");
        }
        if (ports.size() > MAX_PORTS)
        {
            throw new ConfigException("port", "(" + ports.size() + " tables)",
                "must declare at most " + MAX_PORTS + " [[port]] tables (RTE_MAX_ETHPORTS)");
        }
    }

    static void check(final String prefix, final PortConfig port)
    {
        if (!NAME.matcher(port.name()).matches())
        {
            throw new ConfigException(prefix + "name", Toml.quote(port.name()),
                "must be 1 to 32 letters, digits, '_' or '-'");
        }
        switch (port.kind())
        {
            case VDEV -> checkVdevDevice(prefix, port);
            case PCI -> checkPciDevice(prefix, port);
            case RING_PAIR -> checkRingPairDevice(prefix, port);
            case UDP -> UdpPortArgs.parse(port, prefix);
        }
        if (!port.args().isEmpty())
        {
            for (final Devargs.Entry entry : Devargs.parse(port.args(), prefix + "args"))
            {
                Devargs.checkValue(prefix + "args." + Toml.key(entry.key()), entry.value());
            }
        }
        if (port.kind() != PortKind.RING_PAIR && !port.peer().isEmpty())
        {
            throw new ConfigException(prefix + "peer", Toml.quote(port.peer()),
                "must be left out: only ring_pair ports have a peer", "remove peer, or set kind = \"ring_pair\"");
        }
        QUEUES.check(prefix + "rx_queues", port.rxQueues());
        QUEUES.check(prefix + "tx_queues", port.txQueues());
        DESCRIPTORS.check(prefix + "rx_descriptors", port.rxDescriptors());
        DESCRIPTORS.check(prefix + "tx_descriptors", port.txDescriptors());
        MTU.check(prefix + "mtu", port.mtu());
        if (!port.mac().isEmpty())
        {
            checkMac(prefix + "mac", port.mac());
        }
        checkAddress(prefix, port);
    }

    private static void checkVdevDevice(final String prefix, final PortConfig port)
    {
        final String device = port.device();
        if (PCI_ADDRESS.matcher(device).matches())
        {
            throw new ConfigException(prefix + "device", Toml.quote(device),
                "must be a virtual device name for kind = \"vdev\", e.g. \"net_null0\"", "set kind = \"pci\"");
        }

        String driver = null;
        for (final String candidate : VDEV_DRIVERS)
        {
            if (device.startsWith(candidate) && (driver == null || candidate.length() > driver.length()))
            {
                driver = candidate;
            }
        }
        if (driver == null || !VDEV_INSTANCE.matcher(device.substring(driver.length())).matches() ||
            device.length() >= 64)
        {
            final String stem = device.replaceFirst("[0-9]+$", "");
            final String closest = Toml.closest(stem, VDEV_DRIVERS);
            throw new ConfigException(prefix + "device", Toml.quote(device),
                "must be a DPDK virtual device: a driver name followed by an instance id, e.g. \"net_null0\"; " +
                "drivers: " + String.join(", ", VDEV_DRIVERS),
                closest == null ? "" : "use \"" + closest + device.substring(stem.length()) + "\"");
        }
    }

    private static void checkPciDevice(final String prefix, final PortConfig port)
    {
        if (!PCI_ADDRESS.matcher(port.device()).matches())
        {
            throw new ConfigException(prefix + "device", Toml.quote(port.device()),
                "must be a PCI address domain:bus:device.function for kind = \"pci\", e.g. \"0000:3b:00.0\"",
                port.device().startsWith("net_") ? "set kind = \"vdev\"" : "");
        }
    }

    private static void checkRingPairDevice(final String prefix, final PortConfig port)
    {
        if (!RING_DEVICE.matcher(port.device()).matches())
        {
            throw new ConfigException(prefix + "device", Toml.quote(port.device()),
                "must be 1 to 63 letters, digits, '_' or '-': the ethdev name given to rte_eth_from_rings",
                "leave device out to use the port name");
        }
        if (!port.args().isEmpty())
        {
            throw new ConfigException(prefix + "args", Toml.quote(port.args()),
                "must be left out for a ring_pair port: rte_eth_from_rings takes no driver arguments");
        }
        if (port.peer().isEmpty())
        {
            throw new ConfigException(prefix + "peer", ConfigException.MISSING,
                "must name the other ring_pair port of the crossed pair");
        }
        if (port.peer().equals(port.name()))
        {
            throw new ConfigException(prefix + "peer", Toml.quote(port.peer()),
                "must name another port: a net_ring vdev already receives its own transmits, a ring pair is two ports");
        }
    }

    private static void checkAddress(final String prefix, final PortConfig port)
    {
        if (port.ip().isEmpty())
        {
            if (!port.gateway().isEmpty())
            {
                throw new ConfigException(prefix + "gateway", Toml.quote(port.gateway()),
                    "needs the plane's address beside it", "add ip = \"10.0.1.10/24\" to the port");
            }
            return;
        }
        try
        {
            port.interfaceAddress();
        }
        catch (final IllegalArgumentException ex)
        {
            final boolean gatewayAtFault = !port.gateway().isEmpty() && ex.getMessage().startsWith("gateway");
            throw new ConfigException(prefix + (gatewayAtFault ? "gateway" : "ip"),
                Toml.quote(gatewayAtFault ? port.gateway() : port.ip()), ex.getMessage());
        }
    }

    private static void checkMac(final String key, final String mac)
    {
        if (!MAC.matcher(mac).matches())
        {
            throw new ConfigException(key, Toml.quote(mac),
                "must be a MAC address of six hex octets separated by ':', e.g. \"02:00:00:00:00:01\"");
        }
        final int firstOctet = Integer.parseInt(mac.substring(0, 2), 16);
        if ((firstOctet & 1) != 0 || mac.replace(":", "").chars().allMatch(c -> c == '0'))
        {
            throw new ConfigException(key, Toml.quote(mac),
                "must be a unicast address that is not all zeros (the first octet even)",
                "use a locally administered address such as \"02:00:00:00:00:01\"");
        }
    }

    static void checkUniqueness(final List<PortConfig> ports)
    {
        final Map<String, Integer> names = new HashMap<>();
        final Map<String, Integer> devices = new HashMap<>();
        for (int i = 0; i < ports.size(); i++)
        {
            final PortConfig port = ports.get(i);
            final Integer sameName = names.putIfAbsent(port.name(), i);
            if (sameName != null)
            {
                throw new ConfigException(key(i, "name"), Toml.quote(port.name()),
                    "must be unique; port[" + sameName + "] has the same name");
            }
            final Integer sameDevice = devices.putIfAbsent(canonicalDevice(port), i);
            if (sameDevice != null)
            {
                throw new ConfigException(key(i, "device"), Toml.quote(port.device()),
                    "must be unique; port[" + sameDevice + "] (" + Toml.quote(ports.get(sameDevice).name()) +
                    ") already uses it");
            }
        }
    }

    private static String canonicalDevice(final PortConfig port)
    {
        if (port.kind() == PortKind.PCI)
        {
            final String address = port.device().toLowerCase(Locale.ROOT);
            return address.length() == 7 ? "0000:" + address : address;
        }
        if (port.kind() == PortKind.UDP)
        {
            final UdpPortArgs udp = UdpPortArgs.of(port);
            // two planes may share an address on distinct ports; the address as parsed, so ::1 and 0::1 are one
            return "udp " + udp.addressText() + " port " + udp.port();
        }

        return port.device();
    }

    /** A NIC runs either on kernel UDP sockets (no EAL at all) or on DPDK ports, never on both. */
    static void checkKindsAgree(final List<PortConfig> ports)
    {
        final boolean firstUdp = ports.getFirst().kind() == PortKind.UDP;
        for (int i = 1; i < ports.size(); i++)
        {
            final PortConfig port = ports.get(i);
            if ((port.kind() == PortKind.UDP) != firstUdp)
            {
                throw new ConfigException(prefix(i) + "kind", Toml.quote(port.kind().configName()),
                    "must be " + (firstUdp ? "\"udp\" like" : "a DPDK kind like") + " port[0]'s (" +
                    Toml.quote(ports.getFirst().kind().configName()) + "): a NIC runs either on kernel UDP sockets or on DPDK",
                    "give every plane a port of the same kind");
            }
        }
    }

    static void checkRingPairs(final List<PortConfig> ports)
    {
        for (int i = 0; i < ports.size(); i++)
        {
            final PortConfig port = ports.get(i);
            if (port.kind() != PortKind.RING_PAIR)
            {
                continue;
            }

            final int p = indexOf(ports, port.peer());
            if (p < 0 || ports.get(p).kind() != PortKind.RING_PAIR)
            {
                final List<String> candidates = new ArrayList<>();
                for (final PortConfig other : ports)
                {
                    if (other.kind() == PortKind.RING_PAIR && other != port)
                    {
                        candidates.add(other.name());
                    }
                }
                throw new ConfigException(key(i, "peer"), Toml.quote(port.peer()),
                    "must name another [[port]] of kind \"ring_pair\"; " + (candidates.isEmpty() ?
                    "there is none: declare both sides of the pair" : "ring_pair ports: " +
                    String.join(", ", candidates)));
            }

            final PortConfig peer = ports.get(p);
            if (!peer.peer().equals(port.name()))
            {
                throw new ConfigException(key(p, "peer"), Toml.quote(peer.peer()),
                    "must be " + Toml.quote(port.name()) + ", because port[" + i + "] names " +
                    Toml.quote(peer.name()) + " as its peer: a pair is crossed both ways",
                    "set peer = " + Toml.quote(port.name()));
            }
            if (port.txQueues() != peer.rxQueues())
            {
                throw new ConfigException(key(i, "tx_queues"), Integer.toString(port.txQueues()),
                    "must equal port[" + p + "].rx_queues (" + peer.rxQueues() +
                    "): a ring pair's TX rings are its peer's RX rings", "use " + peer.rxQueues());
            }
            if (port.txDescriptors() != peer.rxDescriptors())
            {
                throw new ConfigException(key(i, "tx_descriptors"), Integer.toString(port.txDescriptors()),
                    "must equal port[" + p + "].rx_descriptors (" + peer.rxDescriptors() +
                    "): one ring carries both", "use " + peer.rxDescriptors());
            }
        }
    }

    private static int indexOf(final List<PortConfig> ports, final String name)
    {
        for (int i = 0; i < ports.size(); i++)
        {
            if (ports.get(i).name().equals(name))
            {
                return i;
            }
        }

        return -1;
    }
}
