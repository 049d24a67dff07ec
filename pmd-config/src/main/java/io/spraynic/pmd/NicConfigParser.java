package io.spraynic.pmd;

import com.fasterxml.jackson.core.JsonLocation;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.toml.TomlMapper;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads a TOML document into a {@link NicConfig}.
 * <p>
 * Jackson parses the TOML into a tree; the tree is then read by hand rather than bound to classes,
 * so that every failure can name its full key path ({@code port[1].rx_queues}), unknown keys are
 * refused with the list of known ones, and defaults are decided in one visible place.
 */
final class NicConfigParser
{
    static final List<String> ROOT_KEYS = List.of("description", "capture", "eal", "mempool", "port", "dcqcn");

    static final List<String> EAL_KEYS = List.of(
        "program", "lcores", "no_huge", "memory_mb", "socket_mem", "huge_dir", "in_memory", "single_file_segments",
        "no_pci", "file_prefix", "iova_mode", "log_level", "extra_args");

    static final List<String> MEMPOOL_KEYS = List.of("name", "mbufs", "cache", "data_room", "priv_size", "socket_id");

    static final List<String> PORT_KEYS = List.of(
        "name", "kind", "device", "args", "peer", "rx_queues", "tx_queues", "rx_descriptors", "tx_descriptors", "mtu",
        "promiscuous", "mac", "ip", "gateway");

    /** Thread-safe once configured; the defaults keep TOML dates as strings, which the reader then refuses. */
    private static final TomlMapper MAPPER = new TomlMapper();

    private NicConfigParser()
    {
    }

    /**
     * @param tomlText   the document.
     * @param sourceName file path or preset name, put in front of every error message.
     * @return the configuration, valid.
     * @throws ConfigException naming the first key that is wrong.
     */
    static NicConfig parse(final String tomlText, final String sourceName)
    {
        try
        {
            return read(readTree(tomlText));
        }
        catch (final ConfigException ex)
        {
            throw ex.withSource(sourceName);
        }
    }

    private static ObjectNode readTree(final String tomlText)
    {
        try
        {
            final JsonNode root = MAPPER.readTree(tomlText);
            return root instanceof ObjectNode object ? object : JsonNodeFactory.instance.objectNode();
        }
        catch (final JsonProcessingException ex)
        {
            final JsonLocation location = ex.getLocation();
            final String[] lines = tomlText.split("\r?\n", -1);
            int line = location == null ? -1 : location.getLineNr();
            final boolean reportedAfterCulprit = line > lines.length || line >= 1 && lines[line - 1].isBlank() ||
                String.valueOf(ex.getOriginalMessage()).startsWith("Duplicate key");
            if (location != null && location.getColumnNr() <= 1 && reportedAfterCulprit)
            {
                // The parser reports where it stopped, which for these is the start of the line after the culprit.
                int previous = line - 1;
                while (previous >= 1 && (previous > lines.length || lines[previous - 1].isBlank()))
                {
                    previous--;
                }
                line = previous >= 1 ? previous : line;
            }
            final String text = line >= 1 && line <= lines.length ? lines[line - 1].strip() : "";
            throw new ConfigException(
                line >= 1 ? "line " + line : "(document)",
                Toml.quote(text),
                "must be valid TOML: " + ex.getOriginalMessage());
        }
    }

    private static NicConfig read(final ObjectNode root)
    {
        final Table top = new Table(root, "", "the top level", ROOT_KEYS);
        final String description = top.string("description", "");
        final String capture = top.string("capture", "");
        final JsonNode portNodes = root.get("port");
        final EalConfig eal = readEal(top.table("eal", "[eal]", EAL_KEYS), anyPciPort(portNodes));
        final MempoolConfig mempool = readMempool(top.table("mempool", "[mempool]", MEMPOOL_KEYS));
        final List<PortConfig> ports = readPorts(portNodes);
        final Map<String, String> dcqcn = readDcqcn(top.table("dcqcn", "[dcqcn]", NicConfig.DCQCN_KEYS));

        return new NicConfig(description, eal, mempool, ports, capture, dcqcn);
    }

    /** {@code [dcqcn]}: each value a string, number or boolean, kept as written for the NIC to check. */
    private static Map<String, String> readDcqcn(final Table table)
    {
        final Map<String, String> values = new java.util.LinkedHashMap<>();
        for (final Map.Entry<String, JsonNode> field : table.node.properties())
        {
            final JsonNode value = field.getValue();
            if (!value.isTextual() && !value.isNumber() && !value.isBoolean())
            {
                throw new ConfigException(table.keyPath(field.getKey()), Toml.literal(value),
                    "must be a string, number or boolean, e.g. rate_ai = \"4kbit\" or threshold = 5");
            }
            values.put(field.getKey(), value.asText());
        }
        return values;
    }

    private static boolean anyPciPort(final JsonNode portNodes)
    {
        if (portNodes != null && portNodes.isArray())
        {
            for (final JsonNode port : portNodes)
            {
                final JsonNode kind = port.get("kind");
                if (kind != null && PortKind.PCI.configName().equals(kind.asText()))
                {
                    return true;
                }
            }
        }

        return false;
    }

    private static EalConfig readEal(final Table table, final boolean anyPciPort)
    {
        final String program = table.string("program", EalConfig.DEFAULT_PROGRAM);
        final String lcores = table.string("lcores", EalConfig.DEFAULT_LCORES);
        final boolean noHuge = table.bool("no_huge", true);
        final int memoryMb = table.integer("memory_mb", ConfigRules.MEMORY_MB_ALLOWED, ConfigRules.MEMORY_MB,
            noHuge ? EalConfig.DEFAULT_NO_HUGE_MEMORY_MB : EalConfig.MEMORY_UNSET);
        final List<Integer> socketMem = table.integers("socket_mem", ConfigRules.SOCKET_MEM_MB,
            "must be an array of MiB per NUMA socket, e.g. [1024, 0]");
        final String hugeDir = table.string("huge_dir", "");
        final boolean inMemory = table.bool("in_memory", false);
        final boolean singleFileSegments = table.bool("single_file_segments", false);
        final boolean noPci = table.bool("no_pci", !anyPciPort);
        final String filePrefix = table.string("file_prefix", "");
        final String iovaMode = table.string("iova_mode", "");
        final List<String> logLevels = table.strings("log_level", true,
            "must be a string such as \"notice\" or \"pmd.net.tap:debug\", or an array of them");
        final List<String> extraArgs = table.strings("extra_args", false,
            "must be an array of strings, one argument each, e.g. [\"--no-telemetry\"]");

        return new EalConfig(program, lcores, noHuge, memoryMb, socketMem, hugeDir, inMemory, singleFileSegments,
            noPci, filePrefix, iovaMode, logLevels, extraArgs);
    }

    private static MempoolConfig readMempool(final Table table)
    {
        return new MempoolConfig(
            table.string("name", MempoolConfig.DEFAULT_NAME),
            table.integer("mbufs", ConfigRules.MBUFS, MempoolConfig.DEFAULT_MBUFS),
            table.integer("cache", ConfigRules.CACHE, MempoolConfig.DEFAULT_CACHE),
            table.integer("data_room", ConfigRules.DATA_ROOM, MempoolConfig.DEFAULT_DATA_ROOM),
            table.integer("priv_size", ConfigRules.PRIV_SIZE, 0),
            table.integer("socket_id", ConfigRules.SOCKET_ID, MempoolConfig.SOCKET_ID_ANY));
    }

    private static List<PortConfig> readPorts(final JsonNode portNodes)
    {
        final List<PortConfig> ports = new ArrayList<>();
        if (portNodes == null)
        {
            return ports;
        }
        if (portNodes.isObject())
        {
            throw new ConfigException("port", Toml.literal(portNodes),
                "must be an array of tables: write [[port]], not [port]", "write [[port]]");
        }
        if (!portNodes.isArray())
        {
            throw new ConfigException("port", Toml.literal(portNodes),
                "must be an array of tables, each starting with a [[port]] line");
        }

        for (int i = 0; i < portNodes.size(); i++)
        {
            final String path = "port[" + i + "]";
            if (!(portNodes.get(i) instanceof ObjectNode portNode))
            {
                throw new ConfigException(path, Toml.literal(portNodes.get(i)), "must be a table: write [[port]]");
            }
            ports.add(readPort(new Table(portNode, path, "[[port]]", PORT_KEYS)));
        }

        return ports;
    }

    private static PortConfig readPort(final Table table)
    {
        final String name = table.requiredString("name", "must be the port's name, e.g. \"port0\"");
        final PortKind kind = readKind(table);
        final String device = kind == PortKind.RING_PAIR ?
            table.string("device", name) :
            table.requiredString("device", kind == PortKind.PCI ?
                "must be the PCI address of the port, e.g. \"0000:3b:00.0\"" : kind == PortKind.UDP ?
                "must be the IPv4 or IPv6 address the port's UDP sockets bind to, e.g. \"127.0.0.1\" or \"::1\"" :
                "must be the virtual device to create, e.g. \"net_null0\"");
        final String args = readArgs(table);
        final String peer = table.string("peer", "");

        return new PortConfig(
            name,
            kind,
            device,
            args,
            peer,
            table.integer("rx_queues", ConfigRules.QUEUES, PortConfig.DEFAULT_QUEUES),
            table.integer("tx_queues", ConfigRules.QUEUES, PortConfig.DEFAULT_QUEUES),
            table.integer("rx_descriptors", ConfigRules.DESCRIPTORS, PortConfig.DEFAULT_DESCRIPTORS),
            table.integer("tx_descriptors", ConfigRules.DESCRIPTORS, PortConfig.DEFAULT_DESCRIPTORS),
            table.integer("mtu", ConfigRules.MTU, PortConfig.defaultMtu(kind)),
            table.bool("promiscuous", false),
            table.string("mac", ""),
            table.string("ip", ""),
            table.string("gateway", ""));
    }

    private static PortKind readKind(final Table table)
    {
        final String allowed = "must be one of " + PortKind.allowedNames();
        final String kindName = table.requiredString("kind", allowed);
        final PortKind kind = PortKind.fromConfigName(kindName);
        if (kind == null)
        {
            final List<String> names = new ArrayList<>();
            for (final PortKind k : PortKind.values())
            {
                names.add(k.configName());
            }
            final String closest = Toml.closest(kindName, names);
            throw new ConfigException(table.keyPath("kind"), Toml.quote(kindName), allowed,
                closest == null ? "" : "use \"" + closest + "\"");
        }

        return kind;
    }

    /**
     * Driver arguments come either as the string EAL takes, or as a table whose values are strings,
     * integers, or arrays of them for a key that repeats (one {@code rx_pcap} per queue).
     */
    private static String readArgs(final Table table)
    {
        final JsonNode args = table.get("args");
        final String keyPath = table.keyPath("args");
        if (args == null)
        {
            return "";
        }
        if (args.isTextual())
        {
            return args.textValue();
        }
        if (!args.isObject())
        {
            throw new ConfigException(keyPath, Toml.literal(args),
                "must be a table such as { iface = \"veth0\", qpairs = 1 } or a string such as \"iface=veth0,qpairs=1\"");
        }

        final List<Devargs.Entry> entries = new ArrayList<>();
        for (final Map.Entry<String, JsonNode> field : args.properties())
        {
            Devargs.checkKey(keyPath, field.getKey());
            final String valuePath = keyPath + '.' + Toml.key(field.getKey());
            final JsonNode value = field.getValue();
            if (value.isArray())
            {
                for (int i = 0; i < value.size(); i++)
                {
                    entries.add(new Devargs.Entry(field.getKey(), argValue(valuePath + "[" + i + "]", value.get(i))));
                }
            }
            else
            {
                entries.add(new Devargs.Entry(field.getKey(), argValue(valuePath, value)));
            }
        }

        return Devargs.format(entries);
    }

    private static String argValue(final String keyPath, final JsonNode value)
    {
        final String text;
        if (value.isTextual())
        {
            text = value.textValue();
        }
        else if (value.isIntegralNumber())
        {
            text = value.asText();
        }
        else
        {
            throw new ConfigException(keyPath, Toml.literal(value),
                "must be a string or an integer: drivers spell flags differently, so write what the driver " +
                "expects, e.g. \"yes\" or 1",
                value.isBoolean() ? "write \"yes\"/\"no\" or 1/0, as the driver documents" : "");
        }
        Devargs.checkValue(keyPath, text);

        return text;
    }

    /**
     * One TOML table being read: typed getters that name the full key path on failure.
     */
    private static final class Table
    {
        private final ObjectNode node;
        private final String path;

        Table(final ObjectNode node, final String path, final String displayName, final List<String> allowedKeys)
        {
            this.node = node;
            this.path = path;
            for (final Map.Entry<String, JsonNode> field : node.properties())
            {
                if (!allowedKeys.contains(field.getKey()))
                {
                    final String closest = Toml.closest(field.getKey(), allowedKeys);
                    throw new ConfigException(keyPath(field.getKey()), Toml.literal(field.getValue()),
                        "is not a key of " + displayName + "; allowed keys: " + String.join(", ", allowedKeys),
                        closest == null ? "" : "did you mean " + closest + "?");
                }
            }
        }

        String keyPath(final String key)
        {
            return path.isEmpty() ? Toml.key(key) : path + '.' + Toml.key(key);
        }

        JsonNode get(final String key)
        {
            return node.get(key);
        }

        Table table(final String key, final String displayName, final List<String> allowedKeys)
        {
            final JsonNode value = node.get(key);
            if (value == null)
            {
                return new Table(JsonNodeFactory.instance.objectNode(), keyPath(key), displayName, allowedKeys);
            }
            if (!(value instanceof ObjectNode object))
            {
                throw new ConfigException(keyPath(key), Toml.literal(value),
                    "must be a table: write " + displayName + " on a line of its own, then its keys");
            }

            return new Table(object, keyPath(key), displayName, allowedKeys);
        }

        String requiredString(final String key, final String allowed)
        {
            if (node.get(key) == null)
            {
                throw new ConfigException(keyPath(key), ConfigException.MISSING, allowed);
            }

            return string(key, "");
        }

        String string(final String key, final String defaultValue)
        {
            final JsonNode value = node.get(key);
            if (value == null)
            {
                return defaultValue;
            }
            if (!value.isTextual())
            {
                throw new ConfigException(keyPath(key), Toml.literal(value), "must be a string",
                    value.isValueNode() ? "write " + Toml.quote(value.asText()) : "");
            }
            if (value.textValue().isEmpty())
            {
                throw new ConfigException(keyPath(key), "\"\"", "must not be empty", "leave " + key + " out");
            }

            return value.textValue();
        }

        boolean bool(final String key, final boolean defaultValue)
        {
            final JsonNode value = node.get(key);
            if (value == null)
            {
                return defaultValue;
            }
            if (!value.isBoolean())
            {
                final String text = value.asText();
                throw new ConfigException(keyPath(key), Toml.literal(value), "must be true or false",
                    text.equals("true") || text.equals("false") ? "write " + text + " without quotes" : "");
            }

            return value.booleanValue();
        }

        int integer(final String key, final ConfigRules.IntRule rule, final int defaultValue)
        {
            return integer(key, rule.allowed(), rule, defaultValue);
        }

        /**
         * Reads an int, or fails with the rule's wording. The range itself is checked by
         * {@link ConfigRules}, except for values too large even to hold.
         */
        int integer(final String key, final String allowed, final ConfigRules.IntRule rule, final int defaultValue)
        {
            final JsonNode value = node.get(key);
            if (value == null)
            {
                return defaultValue;
            }

            return integer(keyPath(key), value, allowed, rule);
        }

        List<Integer> integers(final String key, final ConfigRules.IntRule rule, final String allowed)
        {
            final JsonNode value = node.get(key);
            if (value == null)
            {
                return List.of();
            }
            if (!value.isArray())
            {
                final boolean looksLikeList = value.isTextual() && value.textValue().matches("\\d+(,\\d+)*");
                throw new ConfigException(keyPath(key), Toml.literal(value), allowed,
                    looksLikeList ? "write [" + value.textValue().replace(",", ", ") + "]" : "");
            }

            final List<Integer> values = new ArrayList<>();
            for (int i = 0; i < value.size(); i++)
            {
                values.add(integer(keyPath(key) + "[" + i + "]", value.get(i), rule.allowed(), rule));
            }

            return values;
        }

        List<String> strings(final String key, final boolean singleAllowed, final String allowed)
        {
            final JsonNode value = node.get(key);
            if (value == null)
            {
                return List.of();
            }
            if (value.isTextual() && singleAllowed)
            {
                return List.of(string(key, ""));
            }
            if (!value.isArray())
            {
                throw new ConfigException(keyPath(key), Toml.literal(value), allowed,
                    value.isTextual() ? "write [" + Toml.quote(value.textValue()) + "]" : "");
            }

            final List<String> values = new ArrayList<>();
            for (int i = 0; i < value.size(); i++)
            {
                final JsonNode element = value.get(i);
                if (!element.isTextual())
                {
                    throw new ConfigException(keyPath(key) + "[" + i + "]", Toml.literal(element), "must be a string",
                        element.isValueNode() ? "write " + Toml.quote(element.asText()) : "");
                }
                values.add(element.textValue());
            }

            return values;
        }

        private static int integer(
            final String keyPath, final JsonNode value, final String allowed, final ConfigRules.IntRule rule)
        {
            if (value.isIntegralNumber() && value.canConvertToInt())
            {
                return value.intValue();
            }

            final String fix;
            if (value.isIntegralNumber())
            {
                final long clamped = value.canConvertToLong() ? value.longValue() :
                    value.bigIntegerValue().signum() > 0 ? Long.MAX_VALUE : Long.MIN_VALUE;
                fix = "use " + rule.nearest(clamped);
            }
            else if (value.isTextual() && value.textValue().matches("-?\\d{1,9}"))
            {
                fix = "write " + value.textValue() + " without quotes";
            }
            else if (value.isFloatingPointNumber() && value.canConvertToExactIntegral())
            {
                fix = "write " + value.asLong();
            }
            else
            {
                fix = "";
            }

            throw new ConfigException(keyPath, Toml.literal(value), allowed, fix);
        }
    }
}
