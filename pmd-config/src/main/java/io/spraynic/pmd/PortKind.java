package io.spraynic.pmd;

import java.util.Arrays;
import java.util.List;

/**
 * How a port comes into being, which decides what it adds to the EAL argument vector.
 */
public enum PortKind
{
    /**
     * A DPDK virtual device ({@code net_null0}, {@code net_tap0}, ...), created by EAL from a
     * {@code --vdev=<device>,<args>} argument.
     */
    VDEV("vdev"),

    /**
     * A PCI function probed by its poll-mode driver, named by its bus address and allow-listed with
     * {@code -a <bdf>[,<args>]}; needs the PCI bus, so {@code eal.no_pci} must be false.
     */
    PCI("pci"),

    /**
     * One side of a crossed pair of ring ports inside one process. A {@code net_ring} vdev receives
     * its own transmits, so a pair cannot come from {@code --vdev}: the runtime builds both sides with
     * {@code rte_eth_from_rings()} after EAL init, and the port adds nothing to the EAL arguments.
     */
    RING_PAIR("ring_pair"),

    /**
     * Kernel UDP sockets bound to the IPv4 address in {@code device} ({@link UdpPortArgs}): no DPDK, no root,
     * no hugepages; adds nothing to the EAL arguments, and a configuration of only udp ports never starts EAL.
     */
    UDP("udp");

    private static final List<PortKind> VALUES = List.of(values());

    private final String configName;

    PortKind(final String configName)
    {
        this.configName = configName;
    }

    /**
     * @return the spelling used in the configuration file, e.g. {@code ring_pair}.
     */
    public String configName()
    {
        return configName;
    }

    /**
     * @param configName the spelling used in the configuration file.
     * @return the kind, or null when the name is not one.
     */
    static PortKind fromConfigName(final String configName)
    {
        for (final PortKind kind : VALUES)
        {
            if (kind.configName.equals(configName))
            {
                return kind;
            }
        }

        return null;
    }

    /**
     * @return every config name, quoted, for error messages: {@code "vdev", "pci", "ring_pair"}.
     */
    static String allowedNames()
    {
        return String.join(", ", Arrays.stream(values()).map(k -> '"' + k.configName + '"').toList());
    }
}
