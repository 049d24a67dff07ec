package io.spraynic.pmd;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A whole SprayNIC device configuration: how EAL starts, the packet-buffer pool, and the ports.
 * <p>
 * Every instance is valid: the constructor checks all rules (see {@link ConfigRules}), so a
 * configuration built in code or changed with a {@code with...} copy is held to the same rules as one
 * read from a file, and fails with the same {@link ConfigException}.
 *
 * @param description free text, shown by {@link #describe()}; empty when none.
 * @param eal         the {@code [eal]} table.
 * @param mempool     the {@code [mempool]} table.
 * @param ports       the {@code [[port]]} tables, in file order, which is also ethdev creation order.
 * @param capture     a pcapng file that every frame received and sent is recorded into (top-level key
 *                    {@code capture}); empty for none. A command's {@code --capture} takes precedence.
 * @param dcqcn       the {@code [dcqcn]} table: a RoCEv2 NIC's congestion control as the operator sets it, each key
 *                    one of {@link #DCQCN_KEYS} with its value as written (a rate such as {@code "10mbit"}, a period
 *                    such as {@code "55us"}, a number); checked by the NIC that uses it, which names the key when one
 *                    is wrong. A command's {@code --rocev2-line-rate} and {@code --dcqcn} take precedence.
 */
public record NicConfig(String description, EalConfig eal, MempoolConfig mempool, List<PortConfig> ports, String capture,
    java.util.Map<String, String> dcqcn)
{
    /** The keys of {@code [dcqcn]}: DcqcnConfig.PARAMETERS in the datapath (a test holds the two equal). */
    public static final List<String> DCQCN_KEYS = List.of("enabled", "line_rate", "min_rate", "rate_ai", "rate_hai",
        "g", "initial_alpha", "alpha_period", "time_reset", "byte_reset", "threshold", "cnp_interval", "pacing_burst");

    private static final Pattern SHELL_SAFE = Pattern.compile("[A-Za-z0-9_@%+=:,./-]+");

    /**
     * Copies the port list and checks every rule.
     *
     * @throws ConfigException naming the first key that is wrong.
     */
    public NicConfig
    {
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(eal, "eal");
        Objects.requireNonNull(mempool, "mempool");
        Objects.requireNonNull(capture, "capture");
        dcqcn = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(Objects.requireNonNull(dcqcn,
            "dcqcn")));
        for (final String key : dcqcn.keySet())
        {
            if (!DCQCN_KEYS.contains(key))
            {
                throw new ConfigException("dcqcn." + key, Toml.quote(dcqcn.get(key)), "is not a key of [dcqcn]; " +
                    "allowed keys: " + String.join(", ", DCQCN_KEYS), "");
            }
        }
        if (!capture.isEmpty() && !capture.endsWith(".pcapng"))
        {
            throw new ConfigException("capture", Toml.quote(capture), "must be a file name ending in .pcapng",
                "write e.g. capture = \"nic.pcapng\", or leave the key out for no capture");
        }
        ports = List.copyOf(ports);
        ConfigRules.check(eal, mempool, ports);
    }

    /**
     * A configuration without a {@code [dcqcn]} table (the NIC derives DCQCN from its line rate).
     */
    public NicConfig(final String description, final EalConfig eal, final MempoolConfig mempool,
        final List<PortConfig> ports, final String capture)
    {
        this(description, eal, mempool, ports, capture, java.util.Map.of());
    }

    /**
     * A configuration without a description.
     *
     * @param eal     the EAL settings.
     * @param mempool the pool.
     * @param ports   the ports.
     * @return the configuration, valid.
     */
    public static NicConfig of(final EalConfig eal, final MempoolConfig mempool, final List<PortConfig> ports)
    {
        return new NicConfig("", eal, mempool, ports, "");
    }

    /**
     * Parses a TOML document (see {@code pmd-config/README.md} for the format). Placeholders are not
     * expanded here: use {@link PmdConfigs} or {@link ConfigTemplate} for documents that have them.
     *
     * @param tomlText   the document.
     * @param sourceName a file path or preset name, put in front of every error message.
     * @return the configuration, valid.
     * @throws ConfigException naming the source, the key, the value and what is allowed.
     */
    public static NicConfig parse(final String tomlText, final String sourceName)
    {
        return NicConfigParser.parse(tomlText, sourceName);
    }

    /**
     * @return the exact argument vector for {@code rte_eal_init}, program name first, devices included.
     */
    public List<String> ealArguments()
    {
        return eal.toArguments(ports);
    }

    /**
     * @return true when the NIC runs on kernel UDP sockets only: then it starts no EAL and needs no hugepages (the
     * rules refuse a configuration that mixes udp ports with DPDK ones).
     */
    public boolean onlyUdpPorts()
    {
        return ports.getFirst().kind() == PortKind.UDP;
    }

    /**
     * @param name a port name.
     * @return the port of that name, if any.
     */
    public Optional<PortConfig> port(final String name)
    {
        return ports.stream().filter(port -> port.name().equals(name)).findFirst();
    }

    /**
     * @param description free text.
     * @return a copy with another description.
     */
    public NicConfig withDescription(final String description)
    {
        return new NicConfig(description, eal, mempool, ports, capture, dcqcn);
    }

    /**
     * @param capture a pcapng file name, or empty for none.
     * @return a checked copy with that capture.
     */
    public NicConfig withCapture(final String capture)
    {
        return new NicConfig(description, eal, mempool, ports, capture, dcqcn);
    }

    /**
     * @param eal EAL settings.
     * @return a checked copy with other EAL settings.
     */
    public NicConfig withEal(final EalConfig eal)
    {
        return new NicConfig(description, eal, mempool, ports, capture, dcqcn);
    }

    /**
     * @param mempool pool settings.
     * @return a checked copy with another pool.
     */
    public NicConfig withMempool(final MempoolConfig mempool)
    {
        return new NicConfig(description, eal, mempool, ports, capture, dcqcn);
    }

    /**
     * @param ports the ports.
     * @return a checked copy with other ports.
     */
    public NicConfig withPorts(final List<PortConfig> ports)
    {
        return new NicConfig(description, eal, mempool, ports, capture, dcqcn);
    }

    /**
     * @param port a port; it replaces the port of the same name, or is added last when there is none.
     * @return a checked copy with that port.
     */
    public NicConfig withPort(final PortConfig port)
    {
        final List<PortConfig> newPorts = new ArrayList<>(ports);
        boolean replaced = false;
        for (int i = 0; i < newPorts.size(); i++)
        {
            if (newPorts.get(i).name().equals(port.name()))
            {
                newPorts.set(i, port);
                replaced = true;
            }
        }
        if (!replaced)
        {
            newPorts.add(port);
        }

        return new NicConfig(description, eal, mempool, newPorts, capture, dcqcn);
    }

    /**
     * The effective configuration as a TOML document, every value written out, defaults included.
     * Parsing it gives back an equal {@code NicConfig}.
     *
     * @return the document.
     */
    public String toToml()
    {
        final StringBuilder sb = new StringBuilder(1024);
        if (!description.isEmpty())
        {
            line(sb, "description", Toml.quote(description)).append('\n');
        }
        if (!capture.isEmpty())
        {
            line(sb, "capture", Toml.quote(capture)).append('\n');
        }

        sb.append("[eal]\n");
        line(sb, "program", Toml.quote(eal.program()));
        line(sb, "lcores", Toml.quote(eal.lcores()));
        line(sb, "no_huge", eal.noHuge());
        line(sb, "memory_mb", eal.memoryMb());
        if (!eal.socketMem().isEmpty())
        {
            line(sb, "socket_mem", Toml.literal(eal.socketMem()));
        }
        optional(sb, "huge_dir", eal.hugeDir());
        line(sb, "in_memory", eal.inMemory());
        line(sb, "single_file_segments", eal.singleFileSegments());
        line(sb, "no_pci", eal.noPci());
        optional(sb, "file_prefix", eal.filePrefix());
        optional(sb, "iova_mode", eal.iovaMode());
        if (!eal.logLevels().isEmpty())
        {
            line(sb, "log_level", Toml.literal(eal.logLevels()));
        }
        if (!eal.extraArgs().isEmpty())
        {
            line(sb, "extra_args", Toml.literal(eal.extraArgs()));
        }

        sb.append("\n[mempool]\n");
        line(sb, "name", Toml.quote(mempool.name()));
        line(sb, "mbufs", mempool.mbufs());
        line(sb, "cache", mempool.cache());
        line(sb, "data_room", mempool.dataRoom());
        line(sb, "priv_size", mempool.privSize());
        line(sb, "socket_id", mempool.socketId());

        for (final PortConfig port : ports)
        {
            sb.append("\n[[port]]\n");
            line(sb, "name", Toml.quote(port.name()));
            line(sb, "kind", Toml.quote(port.kind().configName()));
            line(sb, "device", Toml.quote(port.device()));
            optional(sb, "args", port.args());
            optional(sb, "peer", port.peer());
            line(sb, "rx_queues", port.rxQueues());
            line(sb, "tx_queues", port.txQueues());
            line(sb, "rx_descriptors", port.rxDescriptors());
            line(sb, "tx_descriptors", port.txDescriptors());
            line(sb, "mtu", port.mtu());
            line(sb, "promiscuous", port.promiscuous());
            optional(sb, "mac", port.mac());
            optional(sb, "ip", port.ip());
            optional(sb, "gateway", port.gateway());
        }
        if (!dcqcn.isEmpty())
        {
            sb.append("\n[dcqcn]\n");
            dcqcn.forEach((key, value) -> line(sb, key, Toml.quote(value)));
        }

        return sb.toString();
    }

    /**
     * The effective configuration in a few lines for a {@code --dry-run}: the EAL command line as a
     * shell would take it, the pool, and one line per port.
     *
     * @return the text, ending with a newline.
     */
    public String describe()
    {
        final StringBuilder sb = new StringBuilder(512);
        if (!description.isEmpty())
        {
            sb.append(description).append('\n');
        }
        sb.append("eal: ").append(shellCommand(ealArguments())).append('\n');
        if (!capture.isEmpty())
        {
            sb.append("capture: every frame received and sent to ").append(capture).append('\n');
        }
        if (!dcqcn.isEmpty())
        {
            sb.append("dcqcn: ");
            dcqcn.forEach((key, value) -> sb.append(key).append('=').append(value).append(' '));
            sb.setLength(sb.length() - 1);
            sb.append('\n');
        }
        sb.append("mempool ").append(mempool.name()).append(": ")
            .append(mempool.mbufs()).append(" mbufs of ").append(mempool.objectSize()).append(" B (~")
            .append((mempool.bytesNeeded() + (1 << 20) - 1) >> 20).append(" MiB), cache ").append(mempool.cache())
            .append(", data room ").append(mempool.dataRoom())
            .append(", priv ").append(mempool.privSize())
            .append(", socket ").append(mempool.socketId() == MempoolConfig.SOCKET_ID_ANY ? "any" : mempool.socketId())
            .append('\n');

        for (int i = 0; i < ports.size(); i++)
        {
            final PortConfig port = ports.get(i);
            sb.append("port[").append(i).append("] ").append(port.name()).append(": ");
            switch (port.kind())
            {
                case VDEV -> sb.append("vdev ").append(port.devargs());
                case PCI -> sb.append("pci ").append(port.devargs());
                case RING_PAIR -> sb.append("ring_pair ").append(port.device()).append(" <-> ").append(port.peer())
                    .append(" (rte_eth_from_rings)");
                case UDP -> sb.append("udp ").append(port.devargs()).append(" (kernel sockets, no EAL)");
            }
            sb.append(", rx ").append(port.rxQueues()).append('x').append(port.rxDescriptors())
                .append(", tx ").append(port.txQueues()).append('x').append(port.txDescriptors())
                .append(", mtu ").append(port.mtu())
                .append(", promiscuous ").append(port.promiscuous() ? "on" : "off");
            if (!port.mac().isEmpty())
            {
                sb.append(", mac ").append(port.mac());
            }
            if (!port.ip().isEmpty())
            {
                sb.append(", ip ").append(port.ip()).append(port.gateway().isEmpty() ? "" : " via " + port.gateway());
            }
            sb.append('\n');
        }

        return sb.toString();
    }

    /**
     * @param arguments an argument vector.
     * @return the arguments joined by spaces, each single-quoted when a shell would otherwise read it differently.
     */
    public static String shellCommand(final List<String> arguments)
    {
        final StringBuilder sb = new StringBuilder();
        for (final String argument : arguments)
        {
            if (!sb.isEmpty())
            {
                sb.append(' ');
            }
            if (SHELL_SAFE.matcher(argument).matches())
            {
                sb.append(argument);
            }
            else
            {
                sb.append('\'').append(argument.replace("'", "'\\''")).append('\'');
            }
        }

        return sb.toString();
    }

    private static StringBuilder line(final StringBuilder sb, final String key, final Object literal)
    {
        return sb.append(key).append(" = ").append(literal).append('\n');
    }

    private static void optional(final StringBuilder sb, final String key, final String value)
    {
        if (!value.isEmpty())
        {
            line(sb, key, Toml.quote(value));
        }
    }
}
