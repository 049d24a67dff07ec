package io.spraynic.pmd;

import java.util.List;

/**
 * A {@code kind = "udp"} port's settings, read from its {@code device} (the IPv4 address its sockets bind to)
 * and {@code args}: kernel UDP sockets instead of a DPDK port, so nothing here reaches EAL.
 * <pre>
 * [[port]]
 * name = "udp0"
 * kind = "udp"
 * device = "10.0.1.10"                                       # the plane's address
 * args = { port = "4791", peer_port = "4791", source_ports = "8" }
 * </pre>
 *
 * @param address     the IPv4 address to bind, as an int (10.0.1.10 is 0x0A00010A).
 * @param port        the UDP port to listen on.
 * @param peerPort    the UDP port peers listen on.
 * @param sourcePorts sockets per queue: the UDP source ports frames are spread over (path entropy).
 */
public record UdpPortArgs(int address, int port, int peerPort, int sourcePorts)
{
    /** The RoCEv2 port. */
    public static final int ROCE_V2_PORT = 4791;
    /** Source ports (sockets) when not given. */
    public static final int DEFAULT_SOURCE_PORTS = 8;
    /** Most source ports (sockets) per queue. */
    public static final int MAX_SOURCE_PORTS = 64;

    private static final List<String> KEYS = List.of("port", "peer_port", "source_ports");

    /**
     * @param port a port of kind {@link PortKind#UDP}.
     * @return its settings, valid.
     * @throws ConfigException naming the key for a bad address, an unknown argument or a value out of range.
     */
    public static UdpPortArgs of(final PortConfig port)
    {
        return parse(port, "port(" + port.name() + ").");
    }

    static UdpPortArgs parse(final PortConfig port, final String prefix)
    {
        final int address = parseAddress(prefix + "device", port.device());
        final List<Devargs.Entry> args = Devargs.parse(port.args(), prefix + "args");
        for (final Devargs.Entry entry : args)
        {
            if (!KEYS.contains(entry.key()))
            {
                final String closest = Toml.closest(entry.key(), KEYS);
                throw new ConfigException(prefix + "args." + Toml.key(entry.key()), Toml.quote(entry.value()),
                    "is not a udp port argument; they are port, peer_port and source_ports",
                    closest == null ? "" : "did you mean " + closest + "?");
            }
        }
        return new UdpPortArgs(address,
            integer(prefix, args, "port", ROCE_V2_PORT, 1, 65535),
            integer(prefix, args, "peer_port", ROCE_V2_PORT, 1, 65535),
            integer(prefix, args, "source_ports", DEFAULT_SOURCE_PORTS, 1, MAX_SOURCE_PORTS));
    }

    private static int integer(final String prefix, final List<Devargs.Entry> args, final String key, final int defaultValue,
        final int min, final int max)
    {
        final String text = Devargs.first(args, key);
        if (text == null)
        {
            return defaultValue;
        }
        try
        {
            final int value = Integer.parseInt(text);
            if (value >= min && value <= max)
            {
                return value;
            }
        }
        catch (final NumberFormatException ignored)
        {
            // reported below
        }
        throw new ConfigException(prefix + "args." + key, Toml.quote(text), "must be an integer between " + min + " and " + max);
    }

    private static int parseAddress(final String key, final String text)
    {
        final String allowed = "must be the IPv4 address the port's UDP sockets bind to, e.g. \"127.0.0.1\" " +
            "(one definite local address: not 0.0.0.0, multicast or broadcast)";
        final String[] parts = text.split("\\.", -1);
        if (parts.length != 4)
        {
            throw new ConfigException(key, Toml.quote(text), allowed);
        }
        int address = 0;
        for (final String part : parts)
        {
            if (part.isEmpty() || part.length() > 3 || !part.chars().allMatch(c -> c >= '0' && c <= '9'))
            {
                throw new ConfigException(key, Toml.quote(text), allowed);
            }
            final int octet = Integer.parseInt(part);
            if (octet > 255)
            {
                throw new ConfigException(key, Toml.quote(text), allowed);
            }
            address = address << 8 | octet;
        }
        final int first = address >>> 24;
        if (address == 0 || address == -1 || (first >= 224 && first <= 239) || first == 0)
        {
            throw new ConfigException(key, Toml.quote(text), allowed);
        }
        return address;
    }
}
