package io.spraynic.pmd;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Every rule a {@link NicConfig} must satisfy, checked in one place so that a configuration built in
 * code is held to the same rules as one read from a file, and every failure names its key.
 * <p>
 * The limits are DPDK 22.11's where DPDK has one ({@code RTE_MEMPOOL_CACHE_MAX_SIZE}, the mempool name
 * length, {@code RTE_MAX_ETHPORTS}), and SprayNIC's choice where it does not (64 queues per direction).
 */
final class ConfigRules
{
    /** How the values a rule accepts are spaced. */
    enum Step
    {
        ANY, POWER_OF_TWO, MULTIPLE_OF_8
    }

    /**
     * An integer range, shared by the parser (for values that do not even fit an int) and the rules,
     * so the message for a value is the same wherever it fails.
     *
     * @param min  smallest accepted value.
     * @param max  largest accepted value.
     * @param step spacing of accepted values.
     */
    record IntRule(long min, long max, Step step)
    {
        boolean accepts(final long value)
        {
            if (value < min || value > max)
            {
                return false;
            }

            return switch (step)
            {
                case ANY -> true;
                case POWER_OF_TWO -> Long.bitCount(value) == 1;
                case MULTIPLE_OF_8 -> (value & 7) == 0;
            };
        }

        String allowed()
        {
            return switch (step)
            {
                case ANY -> "must be an integer between " + min + " and " + max;
                case POWER_OF_TWO -> "must be a power of two between " + min + " and " + max;
                case MULTIPLE_OF_8 -> "must be a multiple of 8 between " + min + " and " + max;
            };
        }

        long nearest(final long value)
        {
            final long clamped = Math.clamp(value, min, max);
            return switch (step)
            {
                case ANY -> clamped;
                case POWER_OF_TWO ->
                {
                    final long below = Long.highestOneBit(clamped);
                    final long above = below == clamped ? clamped : below << 1;
                    yield above <= max && above - clamped < clamped - below ? above : below;
                }
                case MULTIPLE_OF_8 -> clamped & ~7L;
            };
        }

        void check(final String key, final long value)
        {
            if (!accepts(value))
            {
                throw new ConfigException(key, Long.toString(value), allowed(), "use " + nearest(value));
            }
        }
    }

    static final IntRule QUEUES = new IntRule(1, 64, Step.ANY);
    static final IntRule DESCRIPTORS = new IntRule(64, 32768, Step.POWER_OF_TWO);
    static final IntRule MTU = new IntRule(68, 9600, Step.ANY);
    static final IntRule MEMORY_MB = new IntRule(64, 1 << 20, Step.ANY);
    static final IntRule SOCKET_MEM_MB = new IntRule(0, 1 << 20, Step.ANY);
    static final IntRule MBUFS = new IntRule(64, (1 << 24) - 1, Step.ANY);
    static final IntRule CACHE = new IntRule(0, 512, Step.ANY);
    static final IntRule DATA_ROOM = new IntRule(MempoolConfig.HEADROOM + 128, 65535, Step.ANY);
    static final IntRule PRIV_SIZE = new IntRule(0, 65528, Step.MULTIPLE_OF_8);
    static final IntRule SOCKET_ID = new IntRule(MempoolConfig.SOCKET_ID_ANY, 31, Step.ANY);

    /** {@code memory_mb}: 0 leaves {@code -m} out, anything else is a real size. */
    static final String MEMORY_MB_ALLOWED =
        "must be 0 (let EAL decide) or an integer between " + MEMORY_MB.min() + " and " + MEMORY_MB.max();

    /** {@code RTE_MAX_ETHPORTS} in Debian's DPDK build. */
    static final int MAX_PORTS = 32;

    /** {@code RTE_MAX_NUMA_NODES}: entries in {@code --socket-mem}. */
    static final int MAX_SOCKETS = 32;

    /** Ethernet header and CRC, the L2 bytes an MTU does not count. */
    static final int FRAME_OVERHEAD = 18;

    /** {@code PAGE_SIZE}: the largest UMEM chunk the kernel's {@code XDP_UMEM_REG} accepts. */
    static final int AF_XDP_MAX_CHUNK = 4096;

    /** Memory EAL reserves with {@code --no-huge} and no {@code -m}. */
    static final int NO_HUGE_DEFAULT_MEMORY_MB = 64;

    /** Virtual-device drivers in DPDK 22.11's drivers/net; a vdev name is one of these plus an instance id. */
    static final List<String> VDEV_DRIVERS = List.of(
        "net_af_packet", "net_af_xdp", "net_bonding", "net_failsafe", "net_kni", "net_memif", "net_null", "net_pcap",
        "net_ring", "net_softnic", "net_tap", "net_tun", "net_vdev_netvsc", "net_vhost", "net_virtio_user");

    static final List<String> IOVA_MODES = List.of("pa", "va");

    static final List<String> LOG_LEVELS =
        List.of("emergency", "alert", "critical", "error", "warning", "notice", "info", "debug");

    private static final Pattern CORE_LIST = Pattern.compile("\\d+(?:-\\d+)?(?:,\\d+(?:-\\d+)?)*");
    private static final String RANGE = "\\d+(?:-\\d+)?";
    private static final String GROUP = "(?:" + RANGE + "|\\(" + RANGE + "(?:," + RANGE + ")*\\))";
    private static final String ELEMENT = GROUP + "(?:@" + GROUP + ")?";
    private static final Pattern LCORE_MAP = Pattern.compile(ELEMENT + "(?:," + ELEMENT + ")*");
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9_-]{1,32}");
    private static final Pattern FILE_PREFIX = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
    private static final Pattern MEMPOOL_NAME = Pattern.compile("[A-Za-z0-9_-]{1,25}");
    private static final Pattern RING_DEVICE = Pattern.compile("[A-Za-z0-9_-]{1,63}");
    private static final Pattern VDEV_INSTANCE = Pattern.compile("[A-Za-z0-9_]*");
    private static final Pattern PCI_ADDRESS =
        Pattern.compile("(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[01][0-9a-fA-F]\\.[0-7]");
    private static final Pattern MAC = Pattern.compile("[0-9a-fA-F]{2}(?::[0-9a-fA-F]{2}){5}");
    private static final Pattern LOG_LEVEL = Pattern.compile("(?:.+[:,])?([a-z]+|[1-8])");

    /** EAL options that have their own key, so must not come in through {@code extra_args}. */
    private static final Map<String, String> OPTIONS_WITH_KEYS = Map.ofEntries(
        Map.entry("-l", "eal.lcores"),
        Map.entry("-c", "eal.lcores"),
        Map.entry("--lcores", "eal.lcores"),
        Map.entry("--no-huge", "eal.no_huge"),
        Map.entry("-m", "eal.memory_mb"),
        Map.entry("--socket-mem", "eal.socket_mem"),
        Map.entry("--huge-dir", "eal.huge_dir"),
        Map.entry("--in-memory", "eal.in_memory"),
        Map.entry("--single-file-segments", "eal.single_file_segments"),
        Map.entry("--no-pci", "eal.no_pci"),
        Map.entry("--file-prefix", "eal.file_prefix"),
        Map.entry("--iova-mode", "eal.iova_mode"),
        Map.entry("--log-level", "eal.log_level"),
        Map.entry("--vdev", "a [[port]] with kind = \"vdev\""),
        Map.entry("-a", "a [[port]] with kind = \"pci\""),
        Map.entry("--allow", "a [[port]] with kind = \"pci\""));

    private ConfigRules()
    {
    }

    /**
     * @param lcores an lcores value already accepted by {@link #check}.
     * @return true when it is a plain core list, passed as {@code -l}; false for a mapping ({@code --lcores}).
     */
    static boolean isCoreList(final String lcores)
    {
        return CORE_LIST.matcher(lcores).matches();
    }

    /**
     * Checks a whole configuration, throwing on the first failure.
     *
     * @param eal     the EAL table.
     * @param mempool the mempool table.
     * @param ports   the ports in file order.
     */
    static void check(final EalConfig eal, final MempoolConfig mempool, final List<PortConfig> ports)
    {
        checkEal(eal);
        checkMempool(mempool);
        checkPortCount(ports);
        for (int i = 0; i < ports.size(); i++)
        {
            checkPort(prefix(i), ports.get(i));
        }
        checkUniqueness(ports);
        checkPortKindsAgree(ports);
        checkRingPairs(ports);
        checkDriverArguments(eal, ports);
        checkPciBus(eal, ports);
        checkMempoolSize(eal, mempool, ports);
    }

    private static void checkEal(final EalConfig eal)
    {
        if (eal.program().isBlank())
        {
            throw new ConfigException("eal.program", Toml.quote(eal.program()), "must not be blank",
                "use \"" + EalConfig.DEFAULT_PROGRAM + "\"");
        }
        if (!CORE_LIST.matcher(eal.lcores()).matches() && !LCORE_MAP.matcher(eal.lcores()).matches())
        {
            throw new ConfigException("eal.lcores", Toml.quote(eal.lcores()),
                "must be a core list such as \"0\" or \"0-3,8\", or an lcore map such as \"0@(0-1)\" or " +
                "\"(0-3)@(4-7)\"");
        }
        if (eal.memoryMb() != EalConfig.MEMORY_UNSET && !MEMORY_MB.accepts(eal.memoryMb()))
        {
            throw new ConfigException("eal.memory_mb", Integer.toString(eal.memoryMb()), MEMORY_MB_ALLOWED,
                "use " + MEMORY_MB.nearest(eal.memoryMb()));
        }
        checkSocketMem(eal.socketMem());
        if (!eal.hugeDir().isEmpty() && !eal.hugeDir().startsWith("/"))
        {
            throw new ConfigException("eal.huge_dir", Toml.quote(eal.hugeDir()),
                "must be an absolute path to a hugetlbfs mount", "use \"/dev/hugepages\"");
        }
        if (!eal.filePrefix().isEmpty() && !FILE_PREFIX.matcher(eal.filePrefix()).matches())
        {
            throw new ConfigException("eal.file_prefix", Toml.quote(eal.filePrefix()),
                "must be 1 to 64 letters, digits, '_', '-' or '.': it names a directory under /var/run/dpdk");
        }
        if (!eal.iovaMode().isEmpty() && !IOVA_MODES.contains(eal.iovaMode()))
        {
            throw new ConfigException("eal.iova_mode", Toml.quote(eal.iovaMode()),
                "must be \"pa\" or \"va\", or left out for EAL's choice",
                IOVA_MODES.contains(eal.iovaMode().toLowerCase(Locale.ROOT)) ?
                "use \"" + eal.iovaMode().toLowerCase(Locale.ROOT) + "\"" : "");
        }
        for (int i = 0; i < eal.logLevels().size(); i++)
        {
            checkLogLevel("eal.log_level[" + i + "]", eal.logLevels().get(i));
        }
        for (int i = 0; i < eal.extraArgs().size(); i++)
        {
            checkExtraArg("eal.extra_args[" + i + "]", eal.extraArgs().get(i));
        }
        checkMemoryOptions(eal);
    }

    private static void checkSocketMem(final List<Integer> socketMem)
    {
        if (socketMem.size() > MAX_SOCKETS)
        {
            throw new ConfigException("eal.socket_mem", Toml.literal(socketMem),
                "must have at most " + MAX_SOCKETS + " entries, one per NUMA socket");
        }
        for (int i = 0; i < socketMem.size(); i++)
        {
            SOCKET_MEM_MB.check("eal.socket_mem[" + i + "]", socketMem.get(i));
        }
        if (!socketMem.isEmpty() && socketMem.stream().allMatch(mb -> mb == 0))
        {
            throw new ConfigException("eal.socket_mem", Toml.literal(socketMem),
                "must reserve memory on at least one socket, e.g. [1024, 0]");
        }
    }

    private static void checkLogLevel(final String key, final String logLevel)
    {
        final var matcher = LOG_LEVEL.matcher(logLevel);
        final boolean valid = matcher.matches() &&
            (LOG_LEVELS.contains(matcher.group(1)) || Character.isDigit(matcher.group(1).charAt(0)));
        if (!valid)
        {
            throw new ConfigException(key, Toml.quote(logLevel),
                "must be a level, or a pattern and a level such as \"pmd.net.tap:debug\"; levels: " +
                String.join(", ", LOG_LEVELS) + " or 1 to 8");
        }
    }

    private static void checkExtraArg(final String key, final String arg)
    {
        if (arg.isBlank())
        {
            throw new ConfigException(key, Toml.quote(arg), "must not be blank");
        }
        final String option;
        if (arg.startsWith("--"))
        {
            final int equals = arg.indexOf('=');
            option = equals < 0 ? arg : arg.substring(0, equals);
        }
        else
        {
            option = arg.startsWith("-") && arg.length() >= 2 ? arg.substring(0, 2) : arg;
        }

        final String ownKey = OPTIONS_WITH_KEYS.get(option);
        if (ownKey != null)
        {
            throw new ConfigException(key, Toml.quote(arg),
                "must not repeat an EAL option that has its own key", "use " + ownKey);
        }
    }

    private static void checkMemoryOptions(final EalConfig eal)
    {
        if (eal.noHuge() && eal.inMemory())
        {
            throw new ConfigException("eal.in_memory", "true",
                "must be false when eal.no_huge = true: --in-memory together with --no-huge is refused",
                "remove in_memory, or set no_huge = false to use hugepages");
        }
        if (eal.noHuge() && !eal.socketMem().isEmpty())
        {
            throw new ConfigException("eal.socket_mem", Toml.literal(eal.socketMem()),
                "must be empty when eal.no_huge = true: --socket-mem reserves hugepages",
                "size the memory with memory_mb instead");
        }
        if (eal.noHuge() && !eal.hugeDir().isEmpty())
        {
            throw new ConfigException("eal.huge_dir", Toml.quote(eal.hugeDir()),
                "must be empty when eal.no_huge = true: there are no hugepages to find",
                "remove huge_dir, or set no_huge = false");
        }
        if (eal.memoryMb() != EalConfig.MEMORY_UNSET && !eal.socketMem().isEmpty())
        {
            throw new ConfigException("eal.socket_mem", Toml.literal(eal.socketMem()),
                "must be empty when eal.memory_mb is set: EAL refuses -m together with --socket-mem",
                "set memory_mb = 0, or remove socket_mem");
        }
    }

    private static void checkMempool(final MempoolConfig mempool)
    {
        if (!MEMPOOL_NAME.matcher(mempool.name()).matches())
        {
            throw new ConfigException("mempool.name", Toml.quote(mempool.name()),
                "must be 1 to 25 letters, digits, '_' or '-': DPDK names the pool's ring \"MP_<name>\" " +
                "in 29 bytes");
        }
        MBUFS.check("mempool.mbufs", mempool.mbufs());
        CACHE.check("mempool.cache", mempool.cache());
        final int maxCache = (int)(mempool.mbufs() / 1.5);
        if (mempool.cache() > maxCache)
        {
            throw new ConfigException("mempool.cache", Integer.toString(mempool.cache()),
                "must be at most mempool.mbufs / 1.5 (= " + maxCache + "), as rte_mempool_create requires",
                "use " + maxCache);
        }
        DATA_ROOM.check("mempool.data_room", mempool.dataRoom());
        PRIV_SIZE.check("mempool.priv_size", mempool.privSize());
        SOCKET_ID.check("mempool.socket_id", mempool.socketId());
    }

    private static void checkPortCount(final List<PortConfig> ports)
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

    private static void checkPort(final String prefix, final PortConfig port)
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

    private static void checkUniqueness(final List<PortConfig> ports)
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
    private static void checkPortKindsAgree(final List<PortConfig> ports)
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

    private static void checkRingPairs(final List<PortConfig> ports)
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

    /**
     * The few driver rules worth checking before EAL: those that otherwise fail late or silently.
     */
    private static void checkDriverArguments(final EalConfig eal, final List<PortConfig> ports)
    {
        for (int i = 0; i < ports.size(); i++)
        {
            final PortConfig port = ports.get(i);
            if (port.kind() != PortKind.VDEV)
            {
                continue;
            }

            final List<Devargs.Entry> args = Devargs.parse(port.args(), key(i, "args"));
            if (port.device().startsWith("net_memif"))
            {
                checkMemif(i, port, args, eal);
            }
            else if (port.device().startsWith("net_af_packet"))
            {
                checkAfPacket(i, port, args);
            }
        }
    }

    private static void checkMemif(
        final int i, final PortConfig port, final List<Devargs.Entry> args, final EalConfig eal)
    {
        final String role = Devargs.first(args, "role");
        if (role != null && !role.equals("server") && !role.equals("client"))
        {
            throw new ConfigException(key(i, "args.role"), Toml.quote(role), "must be \"server\" or \"client\"");
        }
        final String zeroCopy = Devargs.first(args, "zero-copy");
        if (zeroCopy != null && !zeroCopy.equals("yes") && !zeroCopy.equals("no"))
        {
            throw new ConfigException(key(i, "args.zero-copy"), Toml.quote(zeroCopy), "must be \"yes\" or \"no\"");
        }
        if ("yes".equals(zeroCopy))
        {
            if (!"client".equals(role))
            {
                throw new ConfigException(key(i, "args.zero-copy"), Toml.quote(zeroCopy),
                    "must be \"no\" unless role = \"client\": only a memif client maps the server's buffers",
                    "set role = \"client\", or zero-copy = \"no\"");
            }
            if (!eal.singleFileSegments())
            {
                throw new ConfigException("eal.single_file_segments", "false",
                    "must be true when port[" + i + "] (" + Toml.quote(port.name()) +
                    ") uses memif zero-copy: the client maps the memory one file per segment list",
                    "set single_file_segments = true");
            }
        }
    }

    private static void checkAfPacket(final int i, final PortConfig port, final List<Devargs.Entry> args)
    {
        if (Devargs.first(args, "iface") == null)
        {
            throw new ConfigException(key(i, "args.iface"), ConfigException.MISSING,
                "must name the kernel interface net_af_packet binds to, e.g. iface = \"veth0\"");
        }
        final String qpairsText = Devargs.first(args, "qpairs");
        final int qpairs;
        try
        {
            qpairs = qpairsText == null ? 1 : Integer.parseInt(qpairsText);
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(key(i, "args.qpairs"), Toml.quote(qpairsText),
                "must be an integer between 1 and " + QUEUES.max());
        }
        if (qpairs < 1 || qpairs > QUEUES.max())
        {
            throw new ConfigException(key(i, "args.qpairs"), Toml.quote(qpairsText),
                "must be an integer between 1 and " + QUEUES.max());
        }
        final int frameSize = positiveArgument(i, args, "framesz", PortConfig.AF_PACKET_DEFAULT_FRAME_SIZE);
        final int blockSize = positiveArgument(i, args, "blocksz", 4096);
        if (frameSize % 16 != 0 || frameSize <= PortConfig.AF_PACKET_FRAME_HEADER + 60)
        {
            throw new ConfigException(key(i, "args.framesz"), Integer.toString(frameSize),
                "must be a multiple of 16 (TPACKET_ALIGNMENT) above " + (PortConfig.AF_PACKET_FRAME_HEADER + 60),
                "use framesz=" + Math.max(PortConfig.AF_PACKET_DEFAULT_FRAME_SIZE, frameSize + 15 & ~15));
        }
        if (blockSize % 4096 != 0 || blockSize % frameSize != 0)
        {
            // net_af_packet finds frame i at i * framesz: frames must fill each block with nothing left over
            final long pages = frameSize / gcd(frameSize, 4096);
            throw new ConfigException(key(i, "args.blocksz"), Integer.toString(blockSize),
                "must be a multiple of both the 4096 B page and framesz (" + frameSize +
                "): net_af_packet lays its ring frames back to back", "use blocksz=" + pages * 4096);
        }
        final int queues = Math.max(port.rxQueues(), port.txQueues());
        if (queues > qpairs)
        {
            final String which = port.rxQueues() >= port.txQueues() ? "rx_queues" : "tx_queues";
            throw new ConfigException(key(i, which), Integer.toString(queues),
                "must be at most args.qpairs (" + qpairs + "): net_af_packet opens one socket per queue pair",
                "set args.qpairs = " + queues + ", or use " + qpairs);
        }
    }

    private static long gcd(final long a, final long b)
    {
        return b == 0 ? a : gcd(b, a % b);
    }

    private static int positiveArgument(final int i, final List<Devargs.Entry> args, final String name, final int absent)
    {
        final String text = Devargs.first(args, name);
        if (null == text)
        {
            return absent;
        }
        try
        {
            final int value = Integer.parseInt(text);
            if (value > 0 && value <= 1 << 20)
            {
                return value;
            }
        }
        catch (final NumberFormatException ignored)
        {
            // refused below
        }
        throw new ConfigException(key(i, "args." + name), Toml.quote(text), "must be an integer between 1 and " + (1 << 20));
    }

    private static void checkPciBus(final EalConfig eal, final List<PortConfig> ports)
    {
        if (!eal.noPci())
        {
            return;
        }
        for (int i = 0; i < ports.size(); i++)
        {
            if (ports.get(i).kind() == PortKind.PCI)
            {
                throw new ConfigException("eal.no_pci", "true",
                    "must be false when port[" + i + "] (" + Toml.quote(ports.get(i).name()) + ") is a PCI port",
                    "set no_pci = false");
            }
        }
    }

    private static void checkMempoolSize(final EalConfig eal, final MempoolConfig mempool, final List<PortConfig> ports)
    {
        for (int i = 0; i < ports.size(); i++)
        {
            final PortConfig port = ports.get(i);
            final int frame = port.mtu() + FRAME_OVERHEAD;
            if (frame > mempool.maxFrameLength())
            {
                throw new ConfigException(key(i, "mtu"), Integer.toString(port.mtu()),
                    "must fit one mbuf: mtu + " + FRAME_OVERHEAD + " (Ethernet header and CRC) must be at most " +
                    "mempool.data_room - " + MempoolConfig.HEADROOM + " (= " + mempool.maxFrameLength() + ")",
                    "set mempool.data_room = " + (frame + MempoolConfig.HEADROOM) + ", or use " +
                    (mempool.maxFrameLength() - FRAME_OVERHEAD));
            }
        }

        long ringMbufs = 0;
        for (final PortConfig port : ports)
        {
            ringMbufs += (long)port.rxQueues() * port.rxDescriptors() + (long)port.txQueues() * port.txDescriptors();
        }
        final long needed = ringMbufs + mempool.cache();
        if (mempool.mbufs() < needed)
        {
            throw new ConfigException("mempool.mbufs", Integer.toString(mempool.mbufs()),
                "must be at least " + needed + " to fill every port's RX and TX rings (" + ringMbufs +
                ") plus one lcore cache (" + mempool.cache() + ")",
                "use " + ((Long.highestOneBit(needed) << 1) - 1));
        }

        for (int i = 0; i < ports.size(); i++)
        {
            final PortConfig port = ports.get(i);
            if (port.isAfPacket() && port.afPacketMaxFrameLength() > mempool.maxFrameLength())
            {
                // net_af_packet refuses the RX queue (ENOMEM) when a ring frame would not fit one mbuf
                final int frameSize = mempool.maxFrameLength() + PortConfig.AF_PACKET_FRAME_HEADER;
                throw new ConfigException(key(i, "args.framesz"), Integer.toString(port.afPacketMaxFrameLength() +
                    PortConfig.AF_PACKET_FRAME_HEADER), "must fit one mbuf: framesz - " +
                    PortConfig.AF_PACKET_FRAME_HEADER + " (the packet header) must be at most mempool.data_room - " +
                    MempoolConfig.HEADROOM + " (= " + mempool.maxFrameLength() + ")",
                    "use framesz=" + (frameSize & ~15) + " or less (4352 with blocksz=69632 holds a 4 KiB-MTU frame), " +
                    "or raise mempool.data_room");
            }
        }

        for (int i = 0; i < ports.size(); i++)
        {
            final PortConfig port = ports.get(i);
            if (port.isAfXdp() && mempool.objectSize() > AF_XDP_MAX_CHUNK)
            {
                // the UMEM is the mbuf pool, one chunk per pool object: XDP_UMEM_REG refuses a chunk over a page
                // (EINVAL), which DPDK reports at start-up only as "Failed to create umem"
                final long largest = AF_XDP_MAX_CHUNK - MempoolConfig.MBUF_HEADER_SIZE - mempool.privSize() -
                    MempoolConfig.OBJECT_OVERHEAD;
                throw new ConfigException("mempool.data_room", Integer.toString(mempool.dataRoom()),
                    "must be at most " + largest + " when port[" + i + "] (" + Toml.quote(port.name()) +
                    ") is net_af_xdp: its UMEM chunk is one mbuf (" + MempoolConfig.MBUF_HEADER_SIZE +
                    " B header + mempool.priv_size + data_room + " + MempoolConfig.OBJECT_OVERHEAD +
                    " B object header = " + mempool.objectSize() + " B), and the kernel takes at most one " +
                    AF_XDP_MAX_CHUNK + " B page",
                    "set mempool.data_room = 2176 (2 KiB frames, as the net_af_xdp preset does), at most " + largest +
                    ", and the ports' mtu to fit it");
            }
        }

        final long availableMb;
        final String availableFrom;
        if (eal.memoryMb() != EalConfig.MEMORY_UNSET)
        {
            availableMb = eal.memoryMb();
            availableFrom = "eal.memory_mb";
        }
        else if (!eal.socketMem().isEmpty())
        {
            availableMb = eal.socketMem().stream().mapToLong(Integer::longValue).sum();
            availableFrom = "eal.socket_mem";
        }
        else if (eal.noHuge())
        {
            availableMb = NO_HUGE_DEFAULT_MEMORY_MB;
            availableFrom = "EAL's --no-huge default";
        }
        else
        {
            return;
        }

        final long neededMb = (mempool.bytesNeeded() + (1 << 20) - 1) >> 20;
        if (neededMb > availableMb)
        {
            throw new ConfigException("mempool.mbufs", Integer.toString(mempool.mbufs()),
                "must fit in the " + availableMb + " MiB reserved by " + availableFrom + ": " + mempool.mbufs() +
                " mbufs of " + mempool.objectSize() + " B need " + neededMb + " MiB",
                "reserve more memory, or use " + (availableMb << 20) / mempool.objectSize());
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

    private static String prefix(final int index)
    {
        return "port[" + index + "].";
    }

    private static String key(final int index, final String field)
    {
        return prefix(index) + field;
    }
}
