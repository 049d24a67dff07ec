package io.spraynic.pmd;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

import static io.spraynic.pmd.ConfigRules.MEMORY_MB;
import static io.spraynic.pmd.ConfigRules.MEMORY_MB_ALLOWED;
import static io.spraynic.pmd.ConfigRules.SOCKET_MEM_MB;

/**
 * The {@code [eal]} table's rules, and the one between it and the ports ({@code no_pci}): part of {@link ConfigRules}.
 */
final class EalRules
{
    /** {@code RTE_MAX_NUMA_NODES}: entries in {@code --socket-mem}. */
    static final int MAX_SOCKETS = 32;

    static final List<String> IOVA_MODES = List.of("pa", "va");

    static final List<String> LOG_LEVELS =
        List.of("emergency", "alert", "critical", "error", "warning", "notice", "info", "debug");

    private static final Pattern CORE_LIST = Pattern.compile("\\d+(?:-\\d+)?(?:,\\d+(?:-\\d+)?)*");
    private static final String RANGE = "\\d+(?:-\\d+)?";
    private static final String GROUP = "(?:" + RANGE + "|\\(" + RANGE + "(?:," + RANGE + ")*\\))";
    private static final String ELEMENT = GROUP + "(?:@" + GROUP + ")?";
    private static final Pattern LCORE_MAP = Pattern.compile(ELEMENT + "(?:," + ELEMENT + ")*");
    private static final Pattern FILE_PREFIX = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
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

    private EalRules()
    {
    }

    /**
     * @param lcores an lcores value already accepted by {@link ConfigRules#check}.
     * @return true when it is a plain core list, passed as {@code -l}; false for a mapping ({@code --lcores}).
     */
    static boolean isCoreList(final String lcores)
    {
        return CORE_LIST.matcher(lcores).matches();
    }

    static void check(final EalConfig eal)
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

    static void checkPciBus(final EalConfig eal, final List<PortConfig> ports)
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
}
